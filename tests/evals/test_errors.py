"""Every error of NETLIST.md's "Errors" list: its message, at the right line and column.

A bad netlist stops with ``file:line:col: error: message``, the offending line and a caret
under the column. Line 1 is the title, so the first card of each netlist below is line 2.
"""

from __future__ import annotations

import pytest

import mna
from mna.errors import NetlistError, TopologyError


def error_of(text: str, filename: str = "bad.net") -> NetlistError:
    with pytest.raises(NetlistError) as info:
        circuit = mna.read_string(text, filename)
        mna.run(circuit)
    return info.value


# (netlist, message regex, line, column): the message names what is wrong and where. A missing
# field is reported one column after the last field, where it would go.
CASES = {
    "unknown element": (
        "t\nR1 a 0 1\n_1 a b c\n",
        r"unknown element type '_1' \(known prefixes: .*R.*\)", 3, 1),
    "unknown card": (
        "t\nR1 a 0 1\nV1 a 0 1\n.frobnicate 3\n",
        r"unknown card '\.frobnicate'", 4, 1),
    "missing node": (
        "t\nV1 a 0 1\nR1 a\n",
        r"R1: missing n-\n  usage: Rname n\+ n- ", 3, 6),
    "missing value": (
        "t\nV1 a 0 1\nR1 a 0\n",
        r"R1: missing value", 3, 1),
    "missing controlled-source gain": (
        "t\nV1 a 0 1\nE1 b 0 a 0\nR1 b 0 1\n",
        r"E1: missing gain\n  usage: Ename n\+ n- nc\+ nc- gain", 3, 12),
    "extra field": (
        "t\nV1 a 0 1\nR1 a 0 1k 2k\n",
        r"unexpected field '2k'\n  usage: Rname", 3, 11),
    "extra field on a coupler": (
        "t\nV1 a 0 1\nTF1 a 0 b 0 2 3\nR1 b 0 1\n",
        r"unexpected field '3'", 3, 15),
    "RKM code": (
        "t\nV1 a 0 1\nR1 a 0 4K7\n",
        r"bad number '4K7' for value \(the code 4K7 is not read: write 4\.7K\)", 3, 8),
    "unknown keyword": (
        "t\nV1 a 0 1\nR1 a 0 1 tcx=2\n",
        r"unknown parameter 'tcx=' \(allowed: .*r=, scale=, tc=, tc1=", 3, 10),
    "bad number": (
        "t\nV1 a 0 1\nR1 a 0 1x2\n",
        r"bad number '1x2' for value", 3, 8),
    "bad number (a name)": (
        "t\nV1 a 0 1\nR1 a 0 rload\n",
        r"bad number 'rload' for value \(write \{rload\} for an expression\)", 3, 8),
    "bad number in an option": (
        "t\nV1 a 0 1\nR1 a 0 1\n.options reltol=tight\n",
        r"bad number 'tight' for option reltol", 4, 17),
    "undefined parameter": (
        "t\n.param r0=1k\nV1 a 0 1\nR1 a 0 {2*r0 + rx}\n",
        r"undefined parameter 'rx'", 4, 16),
    "undefined parameter in .param": (
        "t\n.param a=1 b={a+c}\nV1 x 0 {b}\nR1 x 0 1\n",
        r"undefined parameter 'c'", 2, 17),
    "undefined parameter in a subcircuit": (
        "t\n.subckt s p\nR1 p 0 {rs}\n.ends\nV1 a 0 1\nX1 a s\n",
        r"undefined parameter 'rs'", 3, 9),
    "parameter cycle": (
        "t\n.param a={b+1} b={2*c}\n.param c={a}\nV1 x 0 {a}\nR1 x 0 1\n",
        r"parameter cycle: (a -> c -> b -> a|b -> a -> c -> b|c -> b -> a -> c)", None, None),
    "unknown subcircuit": (
        "t\nV1 a 0 1\nX1 a 0 nosuch\n",
        r"unknown subcircuit 'nosuch'", 3, 8),
    "wrong port count": (
        "t\n.subckt div top out bot\nR1 top out 1\nR2 out bot 1\n.ends\nV1 a 0 1\nX1 a b div\n",
        r"subcircuit 'div' has 3 ports \(top out bot\), X1 connects 2", 7, 1),
    "unknown subcircuit parameter": (
        "t\n.subckt s p params: r=1\nR1 p 0 {r}\n.ends\nV1 a 0 1\nX1 a s q=2\n",
        r"subcircuit 's' has no parameter 'q'", 6, 8),
    "domain conflict": (
        "t\nI1 0 x 1\nCm x 0 m=2\nRb x y 1\nCj y 0 J=1\n",
        r"domain conflict at node 'y': translational by m= on Cm, rotational by j= on Cj", 5, 1),
    "domain conflict with .domain": (
        "t\n.domain thermal x\nI1 0 x 1\nCm x 0 m=2\n",
        r"domain conflict at node 'x': thermal by \.domain thermal .*translational by m= on Cm",
        4, 1),
    "A-type element off ground (mass)": (
        "t\nI1 0 a 1\nCm a b m=2\nR1 a 0 b=1\nR2 b 0 b=1\n",
        r"Cm: in the translational domain an A-type element must have n- = 0.*not b", 3, 1),
    "A-type element off ground (fluid)": (
        "t\n.domain fluid p q\nV1 p 0 1\nCt p q 1e-9\nR1 q 0 1\n",
        r"Ct: in the fluid domain an A-type element must have n- = 0", 4, 1),
    "thermal inductor": (
        "t\n.domain thermal h\nI1 0 h 1\nR1 h 0 1\nL1 h 0 1\n",
        r"L1: the thermal domain has no T-type element", 5, 1),
    "undefined model": (
        "t\nV1 a 0 1\nR1 a k 1\nD1 k 0 dnope\n",
        r"D1: undefined model 'dnope'", 4, 1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_error_message_line_and_column(name):
    text, message, line, column = CASES[name]
    error = error_of(text)
    assert error.location is not None
    assert error.location.file == "bad.net"
    if line is not None:
        assert (error.location.line, error.location.column) == (line, column)
    with pytest.raises(NetlistError, match=message):
        raise error


def test_parameter_cycle_names_the_cycle_and_points_at_a_member():
    text = "t\n.param a={b+1} b={2*c}\n.param c={a}\nV1 x 0 {a}\nR1 x 0 1\n"
    error = error_of(text)
    assert "parameter cycle" in error.message
    cycle = error.message.split(": ", 1)[1].split(" -> ")
    assert cycle[0] == cycle[-1] and sorted(cycle[:-1]) == ["a", "b", "c"]
    # the location is where the first-named parameter of the cycle is defined
    where = {"a": (2, 8), "b": (2, 16), "c": (3, 8)}[cycle[0]]
    assert (error.location.line, error.location.column) == where


def test_self_referencing_parameter_is_a_cycle():
    error = error_of("t\n.param a={a+1}\nV1 x 0 {a}\nR1 x 0 1\n")
    assert "parameter cycle: a -> a" in error.message


def test_rendering_has_file_line_column_the_line_and_a_caret():
    error = error_of("title\nV1 a 0 1\nR1 a 0 1x2\n", "deck.net")
    lines = str(error).splitlines()
    assert lines[0] == "deck.net:3:8: error: bad number '1x2' for value"
    assert lines[1] == "    R1 a 0 1x2"
    assert lines[2] == "    " + " " * 7 + "^"


def test_error_in_an_included_file_names_that_file(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "bad.inc").write_text("* a part\nR1 a 0 1\nR2 a 0 oops\n")
    (tmp_path / "top.net").write_text("top\n.include parts/bad.inc\nV1 a 0 1\n.op\n")
    with pytest.raises(NetlistError, match="bad number 'oops'") as info:
        mna.read(tmp_path / "top.net")
    location = info.value.location
    assert location.file.endswith("bad.inc")
    assert (location.line, location.column) == (3, 8)


def test_missing_include_file_points_at_the_path(tmp_path):
    (tmp_path / "top.net").write_text("top\nV1 a 0 1\n.include nothere.inc\n")
    with pytest.raises(NetlistError, match="cannot include nothere.inc") as info:
        mna.read(tmp_path / "top.net")
    assert (info.value.location.line, info.value.location.column) == (3, 10)


def test_error_inside_a_subcircuit_points_at_its_body_line():
    text = "t\n.subckt s p\nR1 p 0 1\nR2 p 0 bad\n.ends\nV1 a 0 1\nX1 a s\n"
    error = error_of(text)
    assert (error.location.line, error.location.column) == (4, 8)


# -- topological errors ----------------------------------------------------------------------


def test_node_with_no_dc_path_on_op():
    text = "t\nV1 a 0 1\nR1 a b 1k\nC1 b c 1u\nR2 c d 1k\n.op\n"
    error = error_of(text)
    assert isinstance(error, TopologyError)
    assert "node(s) c, d have no DC path to the reference" in error.message
    assert "A-type elements C1" in error.message
    assert (error.location.line, error.location.column) == (4, 1)


def test_node_with_no_dc_path_is_fine_without_a_dc_analysis():
    # the capacitor-only node is a matter for .op/.dc, not for reading the netlist
    circuit = mna.read_string("t\nV1 a 0 1\nR1 a b 1k\nC1 b c 1u\nR2 c d 1k\n")
    assert len(circuit.elements) == 4
    with pytest.raises(TopologyError, match=r"c, d have no DC path"):
        mna.operating_point(circuit)


def test_mechanical_node_with_only_masses_has_no_dc_path():
    # a force pushing a free mass: at DC the mass is open, so only the force source joins x
    text = "t\nI1 0 x 1\nCm x 0 m=2\n.op\n"
    error = error_of(text)
    assert "cut-set of through sources at DC: I1 (with A-type Cm)" in error.message
    assert error.location.line == 2


def test_loop_of_across_sources():
    text = "t\nV1 a 0 1\nV2 a b 2\nR1 b 0 1\nV3 b 0 1\n"
    error = error_of(text)
    assert isinstance(error, TopologyError)
    assert "loop of across sources" in error.message
    assert all(name in error.message for name in ("V1", "V2", "V3"))
    assert (error.location.line, error.location.column) == (5, 1)


def test_loop_of_across_sources_and_T_type_elements_at_dc():
    text = "t\nVw w 0 10\nLk w 0 k=100\nR1 w 0 b=1\n.domain rotational w\n.op\n"
    error = error_of(text)
    assert "loop of across sources and T-type elements (a short at DC): Vw, Lk" in error.message
    assert (error.location.line, error.location.column) == (3, 1)


def test_a_loop_closed_far_down_a_chain_names_exactly_its_elements():
    # inductors n0 - n1 - ... - n30 with side branches, closed by a source from n30 to n0:
    # the loop is the chain and the source, not the side branches
    chain = [f"L{k} n{k} n{k + 1} 1m\nLs{k} n{k + 1} s{k} 1m\nR{k} s{k} 0 1k" for k in range(30)]
    text = "t\n" + "\n".join(chain) + "\nVc n30 n0 1\nRg n0 0 1k\n.op\n"
    error = error_of(text)
    named = error.message.split(": ", 1)[1].split(" (")[0].split(", ")
    assert sorted(named) == sorted([f"L{k}" for k in range(30)] + ["Vc"])
    assert error.location.line == 92


def test_parallel_voltage_sources_in_a_subcircuit_name_the_instance():
    text = "t\n.subckt s p\nVa p 0 1\nVb p 0 2\n.ends\nX1 n s\nR1 n 0 1\n"
    error = error_of(text)
    assert "loop of across sources: X1.Va, X1.Vb" in error.message
    assert error.location.line == 4


def test_cut_set_of_through_sources():
    text = "t\nR1 a 0 1\nI1 a b 1m\nR2 b c 1k\nI2 c a 2m\n"
    error = error_of(text)
    assert isinstance(error, TopologyError)
    assert "cut-set of through sources: I1, I2" in error.message
    assert "node(s) b, c" in error.message
    assert error.location.line == 3


def test_floating_piece_with_no_path_at_all():
    text = "t\nV1 a 0 1\nR1 a 0 1\nR2 b c 1\n"
    error = error_of(text)
    assert "node(s) b, c have no path to the reference node 0" in error.message
    assert error.location.line == 4


@pytest.mark.parametrize(
    "text, message, line",
    [
        ("t\nV1 a 0 1\nR1 a 0 {1/0}\n", r"R1|1/0|infinite|zoo|complex|value", 3),
        ("t\nV1 a 0 1\nR1 a 0 {sqrt(-1)}\n", r"sqrt\(-1\) is not a real number", 3),
        ("t\nV1 a 0 1\nR1 a 0 {ln(0)}\n", r"ln\(0\) is not a real number", 3),
        ("t\nV1 a 0 1\nR1 a 0 {asin(2)}\n", r"asin\(2\) is not a real number", 3),
        ("t\nV1 a 0 1\nR1 a 0 {0.0/0.0}\n", r"division by zero", 3),
        ("t\nV1 a 0 1\nR1 a 0 {9**9**9}\n", r"overflows", 3),
    ],
)
def test_values_that_are_not_real_numbers_are_netlist_errors(text, message, line):
    error = error_of(text)
    assert error.location is not None and error.location.line == line
    with pytest.raises(NetlistError, match=message):
        raise error


def test_initial_condition_on_a_dissipator_is_refused():
    error = error_of("t\nV1 a 0 1\nR1 a 0 1 IC=2\n")
    assert "unknown parameter 'ic='" in error.message
    assert (error.location.line, error.location.column) == (3, 10)


def test_parameter_that_is_undefined_only_numerically_names_the_parameter():
    with pytest.raises(NetlistError, match=r"parameter y: division by zero: 1 / 0") as info:
        mna.operating_point(mna.read_string("t\n.param x=0 y={1/x}\nV1 a 0 {y}\nR1 a 0 1\n"))
    assert (info.value.location.line, info.value.location.column) == (2, 16)   # the '/'
