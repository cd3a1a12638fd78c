"""``m=`` on a subcircuit instance (ngspice's multiplier): the instance stands for that many
copies in parallel. Checked against the copies written out (every kind of element that
takes it, in .op, .ac, .tran and .noise), against ngspice 39 where its expansion is that of
copies, and for the elements that cannot stand there."""

from __future__ import annotations

import numpy as np
import pytest

import mna
from mna.errors import NetlistError

# every kind of element an instance may hold: those that take m= (R, C, L, D, Q, J, M, G, F,
# I, B current), those whose copies act as one (V, E, H, B voltage, TF, K), and a GY
BLOCK = """.subckt blk a
R1 a 0 1k
R2 a b 1k
C1 b 0 1u
L1 a c 1m
R3 c 0 10
L2 a d 2m
Rd d 0 20
K1 L1 L2 0.5
D1 a 0 dd
I1 a 0 DC 1m AC 0.2m
G1 a 0 a 0 1m
B1 a 0 I=V(a)*V(a)*1m
B2 g 0 V=2*V(a)
Rg g 0 1k
E1 f 0 a 0 2
Rf f 0 1k
Vs a e 0
Re e 0 1k
F1 a 0 Vs 0.5
H1 h 0 Vs 100
Rh h 0 1k
TF1 a 0 t 0 2
Rt t 0 5k
GY1 a 0 y 0 2k
Ry y 0 1k
Cy y 0 1n
Q1 a f 0 qq
J1 a f 0 jj
M1 a f 0 0 mm W=10u L=1u
.model dd D(IS=1e-14 RS=1 CJO=2p KF=1e-14 AF=1.2)
.model qq NPN(IS=1e-16 BF=50 RB=10 CJE=1p KF=1e-15 AF=1.1)
.model jj NJF(VTO=-2 BETA=1e-4 CGS=1p KF=1e-16)
.model mm NMOS(VTO=-1 KP=1e-4 CGSO=1e-10 KF=1e-26)
.ends
"""
ANALYSES = """.options reltol=1e-9 abstol=1e-15 vntol=1e-12 stepcontrol=fixed
.op
.ac dec 5 10 1meg
.noise V(in) V1 dec 5 10 1meg
.tran 1u 200u
"""
SOURCE = "V1 src 0 DC 0.6 AC 1 PULSE(0.6 0.7 20u 10u 10u 50u)\nRs src in 50\n"
INSIDE = ["V(x1.b)", "V(x1.f)", "V(x1.g)", "V(x1.h)", "V(x1.t)", "V(x1.y)", "V(x1.e)"]


def results(text: str) -> dict[str, mna.Result]:
    return {result.kind: result for result in mna.run(mna.read_string(text))}


def deck(instances: str, block: str = BLOCK, inside: str = "x1.") -> str:
    saves = " ".join(["V(in)", "I(V1)", *(v.replace("x1.", inside) for v in INSIDE)])
    return f"multiplier\n{block}{SOURCE}{instances}.save {saves}\n{ANALYSES}"


@pytest.fixture(scope="module")
def copies_two_ways():
    """One instance with m=3, and three instances written out."""
    return (results(deck("X1 in blk m=3\n")),
            results(deck("X1 in blk\nX2 in blk\nX3 in blk\n")))


@pytest.mark.parametrize("kind", ["op", "ac", "tran"])
def test_an_instance_with_m_is_that_many_copies_in_parallel(copies_two_ways, kind):
    merged, written = (r[kind] for r in copies_two_ways)
    for name in ["V(in)", "I(V1)", *INSIDE]:
        ours, theirs = np.asarray(merged[name]), np.asarray(written[name])
        assert np.allclose(ours, theirs, rtol=1e-7, atol=1e-15), name   # fixed steps: alike
    op = merged if kind == "op" else copies_two_ways[0]["op"]
    assert abs(op["I(V1)"]) > 1e-3   # the copies carry a current: the check has teeth


def test_the_noise_of_an_instance_with_m_is_that_of_its_copies(copies_two_ways):
    merged, written = (r["noise"] for r in copies_two_ways)
    # (each device's gmin stands for all its copies, as ngspice's D and M take m=: a MOSFET
    # in cutoff would make its copies' flicker noise from gmin's current)
    for name in ("onoise_spectrum", "inoise_spectrum"):
        assert np.allclose(merged[name], written[name], rtol=1e-9, atol=0), name


def test_instances_nested_with_m_multiply():
    # ngspice 39 lets the outer m= replace the inner one (the inner instance gets m={m}
    # appended): 2 x 3 copies here, where ngspice makes 3
    nested = ".subckt pair a\nX1 a blk m=2\n.ends\n"
    merged = results(deck("X1 in pair m=3\n", BLOCK + nested, inside="x1.x1."))["op"]
    written = results(deck("".join(f"X{k} in blk\n" for k in range(1, 7))))["op"]
    assert merged["I(V1)"] == pytest.approx(written["I(V1)"], rel=1e-9)
    for name in INSIDE:
        assert merged[name.replace("x1.", "x1.x1.")] == pytest.approx(written[name], rel=1e-9)


@pytest.mark.parametrize("line, copies", [
    ("D1 a 0 dd m=3", "D1{k} a 0 dd"),
    ("Q1 a f 0 qq m=3", "Q1{k} a f 0 qq"),
    ("I1 a 0 DC 1m m=3", "I1{k} a 0 DC 1m"),
    ("G1 a 0 a 0 1m m=3", "G1{k} a 0 a 0 1m"),
    ("F1 a 0 Vs 0.5 m=3", "F1{k} a 0 Vs 0.5"),
    ("B1 a 0 I=V(a)*V(a)*1m m=3", "B1{k} a 0 I=V(a)*V(a)*1m"),
    ("R1 a 0 1k m=3", "R1{k} a 0 1k"),
])
def test_an_element_m_is_that_many_of_it_in_parallel(line, copies):
    head = (".options reltol=1e-9 abstol=1e-15 vntol=1e-12\nV1 in 0 DC 0.65\nRs in a 20\n"
            "Vs a e 0\nRe e 0 1k\nE1 f 0 a 0 2\nRf f 0 1k\n.model dd D(IS=1e-14 RS=1)\n"
            ".model qq NPN(IS=1e-16 BF=50 RB=10)\n")
    merged = mna.operating_point(mna.read_string("own m\n" + head + line + "\n"))
    written = mna.operating_point(mna.read_string(
        "own m written out\n" + head + "".join(copies.format(k=k) + "\n" for k in "abc")))
    for name in ("V(a)", "I(V1)"):
        assert merged[name] == pytest.approx(written[name], rel=1e-10), name
    alone = mna.operating_point(mna.read_string("one\n" + head + copies.format(k="") + "\n"))
    assert merged["I(V1)"] != pytest.approx(alone["I(V1)"], rel=1e-3)


def test_an_inductor_initial_current_is_each_copy_s():
    """IC= of an inductor is one copy's current: three copies carry three times it (ngspice
    39 gives the merged inductor IC= itself, as if one copy)."""
    block = ".subckt lr a\nL1 a b 1m IC=1m\nR1 b 0 1\n.ends\n"
    text = (f"ic\n{block}X1 a lr m=3\nRa a 0 1k\nX2 c lr\nX3 c lr\nX4 c lr\nRc c 0 1k\n"
            ".tran 1u 5u uic\n")
    (result,) = mna.run(mna.read_string(text))
    assert result["V(a)"][0] == pytest.approx(-3.0, rel=1e-9)
    assert np.allclose(result["V(a)"], result["V(c)"], rtol=1e-9, atol=0)


def test_a_subcircuit_parameter_named_m_is_set_by_the_instance():
    merged = mna.operating_point(mna.read_string(
        "parameter m\nV1 in 0 DC 1\n.subckt r a params: m=1\nR1 a 0 {m*1k}\n.ends\n"
        "X1 in r m=4\n"))
    assert merged["I(V1)"] == pytest.approx(-1 / 4e3, rel=1e-12)


@pytest.mark.ngspice
def test_an_instance_with_m_matches_ngspice(ngspice):
    # without mna's own TF and GY, and the elements where ngspice 39's m= is no copies in
    # parallel: an F or H that reads a source inside (ngspice multiplies F's gain and
    # leaves H's), a K (it keeps the mutual inductance of one pair) and a B current source
    # (it stays single); nested m= and an element's own m= (the instance's replaces them)
    block = "\n".join(line for line in BLOCK.splitlines()
                      if line[:1] not in "FHK" and line[:2] not in ("TF", "GY", "B1"))
    text = (f"multiplier\n{block}\n{SOURCE}X1 in blk m=3\n"
            ".options reltol=1e-9 abstol=1e-15 vntol=1e-12\n")
    ours = results(text + ".op\n.ac lin 3 1k 100k\n")
    theirs = ngspice.run(text + ".op\n")["op"].data.iloc[0]
    for name in ["V(in)", "V(x1.b)", "V(x1.f)", "V(x1.g)", "V(x1.e)"]:
        assert ours["op"][name] == pytest.approx(theirs[name], rel=1e-8), name
    assert abs(theirs["V(in)"] - 0.6) > 1e-3   # the instance loads the source
    ac = ngspice.run(text + ".ac lin 3 1k 100k\n")["ac"].data
    for name in ["V(in)", "V(x1.b)", "V(x1.f)"]:
        assert np.allclose(ours["ac"][name], ac[name], rtol=1e-7), name


@pytest.mark.parametrize("inside, message", [
    ("S1 a 0 a 0 sw\n.model sw SW(VT=1)", "X1.S1 cannot stand in an instance with m="),
    ("R1 a 0 brake\n.model brake friction(fc=1)", "X1.R1 cannot stand in an instance with m="),
    ("Vs a b 0\nRb b 0 1k\nB1 a 0 I=I(Vs)*2", "B1: reads a through variable I(...)"),
])
def test_an_element_that_cannot_be_copied_is_refused_in_an_instance_with_m(inside, message):
    text = f"refused\nV1 in 0 DC 1\n.subckt blk a\n{inside}\nR9 a 0 1k\n.ends\nX1 in blk m=2\n.op\n"
    with pytest.raises(NetlistError, match=message.replace("(", r"\(").replace(")", r"\)")):
        mna.read_string(text)


@pytest.mark.parametrize("value, message", [
    ("0", "an instance's m= must be positive, got 0"),
    ("-2", "an instance's m= must be positive, got -2"),
    ("{k}", "the instance's m= reads 'k', and .step varies it: an instance's copies are made "
            "once, at the nominal values"),
])
def test_an_instance_m_must_be_a_positive_number(value, message):
    text = (f"bad m\n.param k=2\n.step param k 1 3 1\nV1 in 0 DC 1\n.subckt blk a\nR1 a 0 1k\n"
            f".ends\nX1 in blk m={value}\n.op\n")
    with pytest.raises(NetlistError, match=message) as raised:
        mna.read_string(text)
    assert raised.value.location.line == 8
    assert raised.value.location.column == len("X1 in blk m=") + 1


@pytest.mark.parametrize("line", ["R1 a 0 1k m=0", "R1 a 0 1k m={1-1}", "C1 a 0 1u m=0",
                                  "L1 a 0 1m m=-1", "I1 a 0 1m m=-1", "D1 a 0 dd m=0",
                                  "Q1 a a 0 qq m=0", "J1 a a 0 jj m=0", "M1 a a 0 0 mm m=0",
                                  "G1 a 0 a 0 1m m=0", "F1 a 0 V1 2 m=-1", "B1 a 0 I=1 m=-2"])
def test_an_element_m_must_be_positive(line):
    text = (f"bad m\nV1 a 0 1\nR9 a 0 1k\n{line}\n.model dd D\n.model qq NPN\n"
            ".model jj NJF\n.model mm NMOS\n.op\n")
    with pytest.raises(NetlistError, match="m(=)? must be positive") as raised:
        mna.run(mna.read_string(text))
    assert raised.value.location.line == 4


def test_an_instance_m_may_read_a_parameter_nothing_varies():
    text = ("m of a parameter\n.param p=2\n.subckt sub a b\nR1 a b 1k\n.ends\nV1 in 0 1\n"
            "X1 in 0 sub m={p}\n.op\n")
    assert mna.operating_point(mna.read_string(text))["I(V1)"] == pytest.approx(-2e-3,
                                                                               rel=1e-12)


def test_instances_whose_m_multiply_beyond_the_float_range_are_refused_at_the_instance():
    text = ("tiny\n.subckt s a\nVh a h 0\nRh h 0 1k\nH1 a 0 Vh 2\n.ends\n.subckt t a\n"
            "X1 a s m=1e-300\n.ends\nV1 x 0 1\nR0 x y 1\nX1 y t m=1e-300\n.op\n")
    with pytest.raises(NetlistError, match="multiply to 0") as raised:
        mna.read_string(text)
    assert raised.value.location.line == 8   # the inner instance's line
