"""``.tf OUT SRC``: the small-signal DC transfer function and the impedances at the source and
at the output, against values derived by hand (resistor networks, a damper's mobility, a
diode's dynamic resistance) and against ngspice 39 on the same decks."""

from __future__ import annotations

import math

import pytest

import mna
from mna.errors import NetlistError

DIVIDER = """divider
V1 in 0 DC 1
R1 in a 1k
R2 a 0 2k
R3 a out 500
R4 out 0 1k
"""


def tf(text: str) -> list:
    circuit = mna.read_string(text)
    return [result for result in mna.run(circuit) if result.kind == "tf"]


def test_voltage_source_to_a_node_voltage():
    (result,) = tf(DIVIDER + ".tf V(out) V1\n")
    ra = 2e3 * 1.5e3 / 3.5e3                  # R2 || (R3 + R4), seen from node a
    assert result["transfer_function"] == pytest.approx(ra / (1e3 + ra) * 1e3 / 1.5e3,
                                                        rel=1e-12)
    assert result["V1#input_impedance"] == pytest.approx(1e3 + ra, rel=1e-12)
    behind = 500 + 1e3 * 2e3 / 3e3            # R3 + R1 || R2, the source shorted
    assert result["output_impedance_at_V(out)"] == pytest.approx(
        1e3 * behind / (1e3 + behind), rel=1e-12)
    assert result.column_units() == {"transfer_function": "V/V",
                                     "V1#input_impedance": "V/A",
                                     "output_impedance_at_V(out)": "V/A"}


def test_an_open_input_is_infinite():
    """No DC current flows into a capacitor: ngspice writes 1e20, mna infinity."""
    (result,) = tf("open\nV1 in 0 DC 1\nR1 in a 1k\nC1 a 0 1u\n.tf V(a) V1\n")
    assert result["V1#input_impedance"] == math.inf
    assert result["transfer_function"] == 1.0
    assert result["output_impedance_at_V(a)"] == pytest.approx(1e3, rel=1e-12)


def test_current_source_and_a_differential_output():
    """A current source's input impedance is what it drives; the output V(out,a)."""
    (result,) = tf(DIVIDER.replace("V1 in 0 DC 1", "I1 0 a DC 1m") + ".tf V(out,a) I1\n")
    seen = 1 / (1 / 2e3 + 1 / 1.5e3)   # R2 and R3 + R4 at node a (R1 leads nowhere)
    assert result["I1#input_impedance"] == pytest.approx(seen, rel=1e-12)
    assert result["transfer_function"] == pytest.approx(-seen * 500 / 1.5e3, rel=1e-12)
    # between out and a: R3 in parallel with R4 + R2, the current source open
    assert result["output_impedance_at_V(out,a)"] == pytest.approx(
        1 / (1 / 500 + 1 / 3e3), rel=1e-12)


def test_current_of_a_voltage_source_and_its_series_impedance():
    """``I(VX)`` out: the impedance in series with VX's branch (R3 + R1 || R2), where
    ngspice 39 writes 1e20 (its 1/max(1e-20, I) takes SPICE's sign of I the wrong way)."""
    text = DIVIDER.replace("R3 a out 500", "VX a b 0\nR3 b 0 500").replace("R4 out 0 1k\n", "")
    (result, same) = tf(text + ".tf I(VX) V1\n.tf I(V1) V1\n")
    parallel = 1e3 * 2e3 / 3e3
    loop = 500 + parallel
    assert result["transfer_function"] == pytest.approx(
        1 / (1e3 + 2e3 * 500 / 2.5e3) * 2e3 / 2.5e3, rel=1e-12)
    assert result["VX#output_impedance"] == pytest.approx(loop, rel=1e-12)
    assert same["V1#output_impedance"] == same["V1#input_impedance"] == pytest.approx(
        1e3 + 2e3 * 500 / 2.5e3, rel=1e-12)
    assert same["transfer_function"] == pytest.approx(-1 / (1e3 + 2e3 * 500 / 2.5e3),
                                                      rel=1e-12)


def test_a_mechanical_mobility():
    """A force into a mass on a damper and a spring-coupled second damper: at DC the mass is
    no load (A-type open), the spring a rigid link (T-type short), so the velocity per force
    is 1 / (b1 + b2), in m/s per N."""
    (result,) = tf("mass\nF1 0 v DC 1\nCm v 0 m=2\nRb1 v 0 b=3\nLk v w k=100\nRb2 w 0 b=5\n"
                   ".tf V(w) F1\n".replace("F1", "I1"))
    assert result["transfer_function"] == pytest.approx(1 / 8, rel=1e-12)
    assert result["I1#input_impedance"] == pytest.approx(1 / 8, rel=1e-12)
    assert result["output_impedance_at_V(w)"] == pytest.approx(1 / 8, rel=1e-12)
    assert result.column_units()["transfer_function"] == "m/s/N"


def test_a_diode_at_its_operating_point():
    """The diode is linearised where it conducts: its small-signal resistance n Vt / Id."""
    (result,) = tf("diode\nV1 in 0 DC 5\nR1 in d 1k\nD1 d 0 dx\n.model dx D(is=1e-14 n=1)\n"
                   ".tf V(d) V1\n")
    op = mna.run(mna.read_string("diode\nV1 in 0 DC 5\nR1 in d 1k\nD1 d 0 dx\n"
                                 ".model dx D(is=1e-14 n=1)\n.op\n"))[0]
    current = (5 - op["V(d)"]) / 1e3
    vt = 1.380649e-23 * 300.15 / 1.602176634e-19
    rd = vt / (current + 1e-14) / (1 + 1e-12 * vt / (current + 1e-14))   # gmin in parallel
    assert result["transfer_function"] == pytest.approx(rd / (1e3 + rd), rel=1e-6)
    assert result["V1#input_impedance"] == pytest.approx(1e3 + rd, rel=1e-6)
    assert result["output_impedance_at_V(d)"] == pytest.approx(1e3 * rd / (1e3 + rd), rel=1e-6)


def test_stepped_tables_stack():
    circuit = mna.read_string(DIVIDER.replace("R4 out 0 1k", "R4 out 0 {r4}")
                              + ".param r4=1k\n.step param r4 list 1k 3k\n.tf V(out) V1\n")
    (stepped,) = mna.run(circuit)
    table = stepped.table()
    assert list(table["r4"]) == [1e3] * 3 + [3e3] * 3
    gains = [value for name, value in zip(table["name"], table["value"])
             if name == "transfer_function"]
    for gain, r4 in zip(gains, (1e3, 3e3)):
        ra = 2e3 * (500 + r4) / (2.5e3 + r4)        # R2 || (R3 + R4), seen from node a
        assert gain == pytest.approx(ra / (1e3 + ra) * r4 / (500 + r4), rel=1e-12)


@pytest.mark.parametrize("card, message, column", [
    (".tf I(R1) V1", "must be that of an independent voltage", 5),
    (".tf V(out) R1", "'R1' is not an independent source", 1),
    (".tf V(out)", "missing input source", 12),
    (".tf out V1", "expected V(node), V(a,b) or I(Vsource), found 'out'", 5),
    (".tf V(out) V1 V2", "unexpected field 'V2'", 15),
    (".tf V(nowhere) V1", "nowhere", 5),
])
def test_refused_cards_are_located(card, message, column):
    with pytest.raises(NetlistError, match=message.replace("(", r"\(").replace(")", r"\)")) \
            as caught:
        mna.run(mna.read_string(DIVIDER + card + "\n"))
    assert caught.value.location.line == 7
    assert caught.value.location.column == column


DIFFERENTIAL_PAIR = """emitter-degenerated differential pair with a mirrored tail and a cascode load
.model qa npn(bf=120 br=2 is=2e-16 rb=60 re=2 rc=15 va=80 cje=1p cjc=0.5p)
.model qb pnp(bf=60 is=5e-16 rb=40 va=40)
Q1 c1 b1 e1 qa
Q2 c2 b2 e2 qa
RE1 e1 t 220
RE2 e2 t 220
Q3 t m vee qa
Q4 m m vee qa
RM vcc m 27k
Q5 c1 c1 vcc qb
Q6 c2 c1 vcc qb
RL c2 0 47k
RB1 in b1 2.2k
RB2 b2 0 2.2k
VIN in 0 DC 0 AC 1
VCC vcc 0 9
VEE vee 0 -9
.tf V(c2) VIN
.tf V(c2,c1) VIN
.tf I(VCC) VIN
"""


@pytest.mark.ngspice
@pytest.mark.parametrize("deck", [DIFFERENTIAL_PAIR,
                                  DIVIDER + ".tf V(out) V1\n.tf V(out,a) V1\n",
                                  DIVIDER.replace("V1 in 0 DC 1", "I1 0 a DC 1m")
                                  + ".tf V(a) I1\n"],
                         ids=["differential_pair", "divider", "current_source"])
def test_against_ngspice(deck, ngspice):
    plots = [{name[2:-1]: value for name, value in zip(plot.variables, plot.data.iloc[0])}
             for plot in ngspice.run(deck).plots]
    results = tf(deck)
    assert len(results) == len(plots)
    for result in results:
        names = [name.lower() for name in result.names]
        theirs = next(plot for plot in plots if set(plot) == set(names))
        for name, value in zip(names, result.values):
            if name.endswith("#output_impedance"):   # ngspice's is 1e20, see above
                continue
            assert math.isclose(value, theirs[name], rel_tol=1e-6), (name, value, theirs[name])
