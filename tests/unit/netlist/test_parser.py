"""Tokens to cards: words, braced expressions, calls and key=value fields, nothing evaluated."""

from __future__ import annotations

import pytest

from mna.errors import NetlistError
from mna.netlist.model import Assign, Braced, Call, field_text
from mna.netlist.parser import parse_text


def card(text: str):
    (only,) = parse_text("title\n" + text + "\n").cards
    return only


def test_element_fields_in_order():
    c = card("V1 a 0 DC 5 AC 1 90 PULSE(0 1 2n) ; comment")
    assert c.head == "V1" and not c.is_dot
    kinds = [type(f) for f in c.fields]
    assert kinds == [str, str, str, str, str, str, str, Call]
    pulse = c.fields[-1]
    assert pulse.name == "PULSE"
    assert list(pulse.args) == ["0", "1", "2n"]
    assert (pulse.location.line, pulse.location.column) == (2, 21)
    assert [p.column for p in pulse.places] == [27, 29, 31]


def test_keyword_values_and_probes():
    c = card(".ic V(a)=1 I(L1)={2*x}")
    assert c.is_dot and c.key == ".ic"
    assert not c.fields
    first, second = c.options
    assert isinstance(first, Assign) and isinstance(first.key, Call)
    assert field_text(first) == "V(a)=1"
    assert isinstance(second.values[0], Braced) and second.values[0].text == "2*x"


def test_model_parameter_list():
    c = card(".model dm D(IS=1e-14 N=1.5)")
    name, call = c.fields
    assert name == "dm"
    assert [field_text(a) for a in call.args] == ["IS=1e-14", "N=1.5"]


def test_param_joins_spaced_expressions_up_to_the_next_name():
    c = card(".param a = 2 * b c={3} d=4")
    assert [(f.key, f.values[0].text) for f in c.options] == [
        ("a", "2 * b"), ("c", "3"), ("d", "4")]
    assert c.options[0].values[0].location.column == 12


def test_comma_separated_values():
    c = card(".options key=1,2")
    assert list(c.options[0].values) == ["1", "2"]


def test_behavioural_expression_takes_the_rest_of_the_line():
    c = card("B1 99 0 V=.5*V(3)+.5*V(4) ; comment")
    (assign,) = c.options
    assert isinstance(assign.values[0], Braced)
    assert assign.values[0].text == ".5*V(3)+.5*V(4)"
    assert assign.values[0].location.column == 11


def test_quoted_expression_is_an_expression():
    c = card("R1 a b r='2 * (x + 1)'")
    assert c.options[0].values[0] == Braced("2 * (x + 1)", c.options[0].values[0].location)
    assert c.options[0].values[0].location.column == 11


@pytest.mark.parametrize(
    "line, message, column",
    [
        ("R1 a 0 1, =3", r"'=' has no name before it", 11),
        ("R1 a 0 1)", r"'\)' has no matching '\('", 9),
        ("R1 a 0 r=", r"'r=' has no value", 9),
        ("= a", r"a line must start with an element name or a dot card", 1),
    ],
)
def test_syntax_errors(line, message, column):
    with pytest.raises(NetlistError, match=message) as info:
        card(line)
    assert (info.value.location.line, info.value.location.column) == (2, column)


def test_unmatched_parenthesis_points_at_it():
    with pytest.raises(NetlistError, match=r"'\(' has no matching '\)'") as info:
        card("V1 a 0 SIN(0 1 2")
    assert (info.value.location.line, info.value.location.column) == (2, 11)
