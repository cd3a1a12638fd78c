"""Tokens to cards: words, braced expressions, calls and key=value fields, nothing evaluated."""

from __future__ import annotations

import pytest

from mna.errors import NetlistError
from mna.netlist.model import Assign, Braced, Call, Word
from mna.netlist.parser import field_text, parse_text


def card(text: str):
    (only,) = parse_text("title\n" + text + "\n").cards
    return only


def test_element_fields_in_order():
    c = card("V1 a 0 DC 5 AC 1 90 PULSE(0 1 2n) ; comment")
    assert c.head.text == "V1" and not c.is_dot
    kinds = [type(f) for f in c.fields]
    assert kinds == [Word, Word, Word, Word, Word, Word, Word, Call]
    pulse = c.fields[-1]
    assert pulse.name.text == "PULSE"
    assert [a.text for a in pulse.args] == ["0", "1", "2n"]
    assert (pulse.location.line, pulse.location.column) == (2, 21)


def test_keyword_values_and_probes():
    c = card(".ic V(a)=1 I(L1)={2*x}")
    assert c.is_dot and c.head.key == ".ic"
    first, second = c.fields
    assert isinstance(first, Assign) and isinstance(first.key, Call)
    assert field_text(first) == "V(a)=1"
    assert isinstance(second.values[0], Braced) and second.values[0].text == "2*x"


def test_model_parameter_list():
    c = card(".model dm D(IS=1e-14 N=1.5)")
    name, call = c.fields
    assert name.text == "dm"
    assert [field_text(a) for a in call.args] == ["IS=1e-14", "N=1.5"]


def test_param_joins_spaced_expressions_up_to_the_next_name():
    c = card(".param a = 2 * b c={3} d=4")
    assert [(f.key.text, f.values[0].text) for f in c.fields] == [
        ("a", "2 * b"), ("c", "3"), ("d", "4")]


def test_comma_separated_values():
    c = card(".options key=1,2")
    assert [v.text for v in c.fields[0].values] == ["1", "2"]


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
