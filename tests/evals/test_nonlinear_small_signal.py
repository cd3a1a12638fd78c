"""`.ac` and `.ss` of nonlinear netlists linearise about the operating point."""

from __future__ import annotations

import numpy as np
import pytest

import mna
from mna.elements.diode import BOLTZMANN_OVER_CHARGE, NOMINAL_TEMPERATURE

DIODE = """diode small signal
V1 in 0 DC 5 AC 1
R1 in a 1k
D1 a 0 dmod
C1 a 0 1u
.model dmod D(IS=1e-14 N=1.5)
.options reltol=1e-9
.op
.ac lin 3 10 1k
.ss in=V1 out=V(a)
"""


def diode_resistance(op) -> float:
    """``n vte / (Id + IS)``: the junction's small-signal resistance at its bias (plus gmin)."""
    vte = 1.5 * BOLTZMANN_OVER_CHARGE * NOMINAL_TEMPERATURE
    current = (5 - op["V(a)"]) / 1e3
    return 1 / ((current + 1e-14) / vte + 1e-12)


def test_ac_of_a_diode_uses_its_resistance_at_the_operating_point():
    op, ac, _ = mna.run(mna.read_string(DIODE))
    rd = diode_resistance(op)
    for f, value in zip(ac["frequency"], ac["V(a)"]):
        admittance = 1 / 1e3 + 1 / rd + 2j * np.pi * f * 1e-6
        assert value == pytest.approx((1 / 1e3) / admittance, rel=1e-7)


def test_state_space_of_a_diode_circuit_is_its_linearisation():
    op, _, ss = mna.run(mna.read_string(DIODE))
    rd = diode_resistance(op)
    assert ss.states == ("V(a)",)
    assert ss.A[0][0] == pytest.approx(-(1 / 1e3 + 1 / rd) / 1e-6, rel=1e-7)
    assert ss.B[0][0] == pytest.approx(1 / (1e3 * 1e-6), rel=1e-12)


@pytest.mark.parametrize(("bias", "expression", "gain"), [
    (0, "max(V(in), 0)", 0.0), (0, "max(0, V(in))", 1.0), (0, "min(V(in), 0)", 0.0),
    (0, "min(0, V(in))", 1.0), (0, "max(max(V(in), 0), V(in))", 1.0),
    (0, "2*max(V(in), V(in))", 2.0), (1, "max(V(in), 0)", 1.0), (1, "min(0, V(in))", 0.0),
])
def test_min_and_max_at_a_tie_take_the_slope_of_their_second_argument(bias, expression, gain):
    """At a tie (an AC source with no DC value, max(V(in), 0)) min and max have no slope of
    their own: ngspice 39 takes the second argument's, which is what these gains are (each
    measured in ngspice). sympy's Min and Max sorted their arguments and split a tie in
    halves: a gain of 0.5 (the differential sweep's behavioural deck 6088, 7.6e7 tolerances
    off ngspice in .ac)."""
    (ac,) = mna.run(mna.read_string(f"tie\nV1 in 0 DC {bias} AC 1\nB1 out 0 V={{{expression}}}\n"
                                    "R1 out 0 1k\n.ac lin 1 1k 1k\n"))
    assert abs(ac.to_dataframe()["V(out)"].iloc[0]) == pytest.approx(gain, abs=1e-12)
