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
