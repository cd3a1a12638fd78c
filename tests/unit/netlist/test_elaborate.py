"""Elaboration: parameters, .subckt expansion with hierarchical names, domains, options."""

from __future__ import annotations

import dataclasses
import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mna
from mna.domains import Domain


def read(body: str) -> mna.Circuit:
    return mna.read_string("elaborate test\n" + body)


def op(body: str) -> mna.OperatingPointResult:
    return mna.operating_point(read(body))


# -- names ------------------------------------------------------------------------------------


def test_names_are_case_insensitive_and_keep_their_first_spelling():
    result = op("Vsup InP 0 dc 9\nrA inp MID 1K\nRb mid 0 2k\nlX Mid gnd 1m\nRl mId 0 1\n"
                ".OP\n")
    assert result.names == ("V(InP)", "V(MID)", "I(Vsup)", "I(lX)")
    assert result["v(inp)"] == pytest.approx(9.0, rel=1e-12)
    assert result["V(mid)"] == pytest.approx(0.0, abs=1e-12)  # lX shorts mid to ground
    assert result["i(LX)"] == pytest.approx(9e-3, rel=1e-12)


def test_element_defined_twice_in_another_case():
    with pytest.raises(mna.NetlistError, match="element 'r1' is defined twice") as info:
        read("V1 a 0 1\nR1 a 0 1\nr1 a 0 2\n")
    assert info.value.location.line == 4


def test_a_node_is_placed_where_it_is_first_named():
    circuit = read("V1 a 0 dc 1\nR1  a  b 1k\nR2 b c {2k}\nC1 c 0 1p\n.op\n")
    assert {key: (node.location.line, node.location.column) for key, node in
            circuit.nodes.items()} == {"a": (2, 4), "b": (3, 8), "c": (4, 6)}


def test_gnd_is_the_reference():
    assert op("V1 a GND 2\nR1 a gnd 1\n")["I(V1)"] == pytest.approx(-2.0, rel=1e-12)


def test_skipped_cards_and_unused_options_warn(caplog):
    with caplog.at_level(logging.WARNING):
        circuit = read("V1 a 0 1\nR1 a 0 1\n.options reltol=1e-4 itl6=50 method=gear\n"
                       ".probe\n.width out=80\n")
    assert circuit.options.reltol == 1e-4
    assert circuit.options.method == "gear2"  # ngspice's spelling is accepted
    text = caplog.text
    assert "itl6" in text and ".probe" in text and ".width" in text


def test_options_are_checked():
    with pytest.raises(mna.NetlistError, match="option method must be one of") as info:
        read("V1 a 0 1\nR1 a 0 1\n.options method=euler\n")
    assert (info.value.location.line, info.value.location.column) == (4, 17)


# -- parameters ----------------------------------------------------------------------------------


def test_parameters_in_dependency_order_whatever_the_card_order():
    result = op(".param c={a*b}\n.param a={b+1} b=2\nV1 x 0 {c}\nR1 x 0 1\n")
    assert result["V(x)"] == pytest.approx(6.0, rel=1e-12)


def test_parameter_names_are_case_insensitive():
    result = op(".param Vsup=5\nV1 x 0 {VSUP*2}\nR1 x 0 {vsup}\n")
    assert result["I(V1)"] == pytest.approx(-2.0, rel=1e-12)


# -- subcircuits ---------------------------------------------------------------------------------

SUBCKT = """.subckt div top out params: rt=1k rb={2*rbase}
R1 top out {rt}
R2 out mid {rb}
R3 mid 0 {rb}
.ends div
.param rbase=1k
V1 in 0 9
X1 in o DIV rt=500
xTwo o o2 div params: rb=1k
.save V(X1.mid) V(xtwo.MID) I(X1.R2) I(Xtwo.r3) V(o) V(o2)
"""


def test_subcircuit_expansion_names_and_parameters():
    circuit = read(SUBCKT)
    names = [e.name for e in circuit.elements]
    assert names == ["V1", "X1.R1", "X1.R2", "X1.R3", "xTwo.R1", "xTwo.R2", "xTwo.R3"]
    result = mna.operating_point(circuit)
    # xTwo: 1k + 1k + 1k = 3k from o; X1: R2 + R3 = 4k from o in parallel; X1.R1 = 500
    load = 1 / (1 / 3e3 + 1 / 4e3)
    vo = 9 * load / (500 + load)
    assert result.names == ("V(X1.mid)", "V(xTwo.mid)", "I(X1.R2)", "I(xTwo.R3)", "V(o)",
                            "V(o2)")
    assert result["V(o)"] == pytest.approx(vo, rel=1e-12)
    assert result["V(X1.mid)"] == pytest.approx(vo / 2, rel=1e-12)
    assert result["V(o2)"] == pytest.approx(vo * 2 / 3, rel=1e-12)
    assert result["V(xTwo.mid)"] == pytest.approx(vo / 3, rel=1e-12)
    assert result["I(X1.R2)"] == pytest.approx(vo / 4e3, rel=1e-12)
    assert result["I(xTwo.R3)"] == pytest.approx(vo / 3e3, rel=1e-12)


def test_nested_subcircuits():
    text = """.subckt leg a b params: r=1
Ra a m {r}
Rb m b {r}
.ends
.subckt bridge p params: r=2
Xl p 0 leg r={r}
Xr p 0 leg r={3*r}
.ends
V1 in 0 12
X1 in bridge
.save V(X1.Xl.m) V(X1.Xr.m) I(X1.Xl.Ra) I(V1)
"""
    result = op(text)
    assert result["V(X1.Xl.m)"] == pytest.approx(6.0, rel=1e-12)
    assert result["V(X1.Xr.m)"] == pytest.approx(6.0, rel=1e-12)
    assert result["I(X1.Xl.Ra)"] == pytest.approx(12 / 4, rel=1e-12)
    assert result["I(V1)"] == pytest.approx(-(12 / 4 + 12 / 12), rel=1e-12)


def test_controlled_sources_inside_a_subcircuit_refer_to_local_elements():
    text = """.subckt amp in out
Vsense in x 0
Rin x 0 1k
F1 0 out Vsense 10
Rl out 0 100
.ends
V1 a 0 1
X1 a y amp
"""
    result = op(text + ".save V(y) I(X1.Vsense)\n")
    assert result["I(X1.Vsense)"] == pytest.approx(1e-3, rel=1e-12)
    assert result["V(y)"] == pytest.approx(1e-3 * 10 * 100, rel=1e-12)


def test_subcircuit_port_takes_the_domain_of_what_it_joins():
    text = ".subckt shaft a b\nLs a b k=100\nCj b 0 J=1\n.ends\nI1 0 w 2\nCj w 0 J=1\n" \
           "Rb w 0 b=0.5\nX1 w load shaft\nRl load 0 b=1.5\n"
    circuit = read(text)
    assert {n.name: n.domain for n in circuit.nodes.values()} == {
        "w": Domain.ROTATIONAL, "load": Domain.ROTATIONAL}
    result = mna.operating_point(circuit)
    assert result["V(load)"] == pytest.approx(2 / (0.5 + 1.5), rel=1e-12)
    assert result["I(X1.Ls)"] == pytest.approx(1.5, rel=1e-12)


def test_a_local_param_is_not_visible_outside_its_subcircuit():
    with pytest.raises(mna.NetlistError, match=r"undefined parameter 'r'") as info:
        read(".subckt s a\n.param r=1\nR1 a 0 {r}\n.ends\nV1 n 0 1\nX1 n s\nR2 n 0 {r}\n")
    assert info.value.location.line == 8


# -- domains -------------------------------------------------------------------------------------


def test_domain_from_keywords_propagation_and_cards():
    circuit = read("""I1 0 v 1
Cm v 0 m=3
Rb v w b=2
Lk w 0 k=10
Vt hot 0 300
Rt hot cold 0.1
Rt2 cold 0 0.2
.domain thermal cold
L1 p 0 I=1e6
Rp p 0 1e8
Re e1 0 1
TF1 e1 0 v 0 2
""")
    domains = {n.name: n.domain for n in circuit.nodes.values()}
    assert domains == {
        "v": Domain.TRANSLATIONAL, "w": Domain.TRANSLATIONAL,  # m=, then along Rb
        "hot": Domain.THERMAL, "cold": Domain.THERMAL,  # .domain, against the card order
        "p": Domain.FLUID,  # I= on an L line
        "e1": Domain.ELECTRICAL,  # a coupler does not carry domains across
    }


def test_controlled_sources_join_domains_only_by_their_ports():
    circuit = read("Vt t 0 300\nRt t 0 1\n.domain thermal t\nE1 out 0 t 0 0.01\nR1 out 0 1\n")
    domains = {n.name: n.domain for n in circuit.nodes.values()}
    assert domains == {"t": Domain.THERMAL, "out": Domain.ELECTRICAL}
    assert mna.operating_point(circuit)["V(out)"] == pytest.approx(3.0, rel=1e-12)


# -- outputs -------------------------------------------------------------------------------------


def test_default_outputs_are_nodes_then_sources_T_types_and_couplers():
    circuit = read("V1 a 0 1\nR1 a b 1\nL1 b c 1\nC1 c 0 1\nR2 c 0 1\nE1 d 0 c 0 2\nR3 d 0 1\n"
                   "I1 0 c 1\nTF1 d 0 e 0 2\nR4 e 0 1\n")
    system = mna.assemble(circuit)
    assert system.outputs == ("V(a)", "V(b)", "V(c)", "V(d)", "V(e)",
                              "I(V1)", "I(L1)", "I(E1)", "I(I1)", "I(TF1)")


def test_save_of_unknown_names_is_an_error():
    with pytest.raises(mna.NetlistError, match="no node 'zz' in the circuit") as info:
        read("V1 a 0 1\nR1 a 0 1\n.save V(a) V(zz)\n")
    assert (info.value.location.line, info.value.location.column) == (4, 12)
    with pytest.raises(mna.NetlistError, match="no element 'r9' in the circuit"):
        read("V1 a 0 1\nR1 a 0 1\n.save I(R9)\n")


def test_save_of_a_difference_and_of_any_element():
    result = op("V1 a 0 6\nR1 a b 1k\nR2 b 0 2k\nC1 b 0 1u\n.save V(a,b) I(R1) I(C1)\n")
    assert result.names == ("V(a,b)", "I(R1)", "I(C1)")
    assert result["V(a,b)"] == pytest.approx(2.0, rel=1e-12)
    assert result["I(R1)"] == pytest.approx(2e-3, rel=1e-12)
    assert result["I(C1)"] == 0.0


def test_param_inside_a_subcircuit_is_local_to_each_instance():
    circuit = mna.read_string(
        "local params\n.subckt div a b params: r=1k\n.param rb={2*r}\nR1 a m {r}\nR2 m b {rb}\n"
        ".ends\nV1 in 0 9\nX1 in 0 div r=2k\nX2 in 0 div\n"
    )
    op = mna.operating_point(circuit)
    # X1: rb = 4k below 2k, X2: rb = 2k below 1k; both divide 9 V by 2/3 to 6 V
    assert op["V(X1.m)"] == pytest.approx(6.0, rel=1e-12)
    assert op["V(X2.m)"] == pytest.approx(6.0, rel=1e-12)
    assert op["I(V1)"] == pytest.approx(-(9 / 6e3 + 9 / 3e3), rel=1e-12)


# -- lines of words only, read without a field reader ----------------------------------------

PLAIN_WORDS = {   # per letter: numbers, models of the letter's types, and some that fail
    "R": ("1k", "100", "0.5", "2.2u", "3meg", "10Ohm", "rmod", "RMOD", "2n", "brake", "1k5"),
    "C": ("1p", "2.2u", "0", "1e-12", "10uF", "3n", "1e400"),
    "L": ("1m", "10u", "2", "spring1", "dlad"),
    "D": ("dlad", "DLAD", "dloc", "off"),
}
PLAIN_MODELS = (".model dlad D(IS=1e-14)\n.model rmod R(r=5)\n.model 2n R(r=7)\n"
                ".model brake friction(fc=1)\n.model spring1 spring(k=10)\n.global g1\n")
PLAIN_NODES = ("a", "B", "b", "0", "gnd", "GND", "n1", "N1", "g1")


def _read_each_way(text: str, monkeypatch) -> tuple[object, object]:
    """`text` read as it is and with every card going through its class's field reader: the
    circuit or the error, each way."""
    def outcome():
        try:
            return mna.read_string(text)
        except mna.MnaError as error:
            return f"{type(error).__name__}: {error}"

    plain = outcome()
    with monkeypatch.context() as patch:
        patch.setattr("mna.netlist.elaborate._Elaborator._plain", lambda *args: None)
        return plain, outcome()


@st.composite
def _plain_lines(draw) -> str:
    lines = []
    for k in range(draw(st.integers(1, 6))):
        letter = draw(st.sampled_from("RCLD"))
        head = letter if draw(st.booleans()) else letter.lower()
        a, b = draw(st.sampled_from(PLAIN_NODES)), draw(st.sampled_from(PLAIN_NODES))
        lines.append(f"{head}{k} {a} {b} {draw(st.sampled_from(PLAIN_WORDS[letter]))}\n")
    return "".join(lines)


@settings(max_examples=150, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_plain_lines(), st.booleans())
def test_a_line_of_words_only_reads_as_its_field_reader_reads_it(monkeypatch, body, inside):
    if inside:
        body = f".subckt cell a b\n.model dloc D(IS=2e-14)\n{body}.ends\nX1 a b cell\n"
    text = (f"plain lines\nV1 a 0 1\nRa a 0 1k\nRb b 0 1k\nRn n1 0 1k\nRg g1 0 1k\n"
            f"{PLAIN_MODELS}{body}.op\n")
    quick, read = _read_each_way(text, monkeypatch)
    if isinstance(read, str) or isinstance(quick, str):
        assert quick == read
        return
    assert [(type(e), dataclasses.astuple(e)) for e in quick.elements] == [
        (type(e), dataclasses.astuple(e)) for e in read.elements]
    assert quick.nodes == read.nodes
