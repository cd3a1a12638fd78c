"""Integrators: coefficient tables, measured convergence order, exact stiff recursions,
forward Euler's refusal and stability warning."""

from __future__ import annotations

import contextlib
import logging
from fractions import Fraction

import numpy as np
import pytest
import scipy.linalg

import mna
from mna.analysis.integrators import METHODS, divided_difference, truncation_limit, truncation_step
from mna.errors import SingularSystemError


@pytest.mark.parametrize("name", list(METHODS))
def test_coefficients_are_consistent(name):
    """sum alpha = 0 (exact for constants) and sum j*alpha_j = -sum beta (exact for t)."""
    alpha, beta = METHODS[name].coefficients(1.0)
    j = np.arange(len(alpha))
    assert abs(sum(alpha)) < 1e-15
    assert abs(-(j * np.array(alpha)).sum() - sum(beta)) < 1e-15


@pytest.mark.parametrize("ratio", [0.25, 0.5, 2.0])
def test_variable_gear2_is_exact_for_quadratics(ratio):
    """BDF2 with step ratio w differentiates t^2 exactly at the new point."""
    h1, h0 = 1.0, 1.0 / ratio          # h_n and h_{n-1}
    t = np.array([0.0, -h1, -h1 - h0])  # t_n, t_{n-1}, t_{n-2}
    alpha, beta = METHODS["gear2"].coefficients(ratio)
    for f, df in ((lambda s: s**2 + 3 * s + 1, lambda s: 2 * s + 3), (lambda s: s, lambda s: 1)):
        assert abs(np.dot(alpha, f(t)) - h1 * beta[0] * df(t[0])) < 1e-12


def test_divided_difference_of_a_cubic():
    times = np.array([0.0, 0.3, 1.0, 1.7])
    values = [np.array([2 * t**3 - t]) for t in times]
    assert abs(divided_difference(times, values)[0] - 2.0) < 1e-12


def test_divided_difference_cancels_a_large_common_part_exactly():
    """A charge's bias (1 pF at 5 V) dwarfs what changes over nanosecond steps; the third
    divided difference must still match the exact one of the same float inputs."""
    times = [0.0, 1e-9, 2.5e-9, 3e-9]
    points = [np.array([5e-12 + 2e9 * t**3]) for t in times]
    exact = Fraction(0)
    for i, t_i in enumerate(times):
        weight = Fraction(1)
        for j, t_j in enumerate(times):
            if j != i:
                weight *= Fraction(t_i) - Fraction(t_j)
        exact += Fraction(float(points[i][0])) / weight
    assert abs(divided_difference(times, points)[0] - float(exact)) < 1e-12 * abs(float(exact))


def test_a_confluent_divided_difference_takes_the_rate_at_the_doubled_point():
    """x = 1 + 3 t - 2 t^2: x[0, 0, h] is the t^2 coefficient whatever h, from x(0), x'(0)
    and x(h) (Hermite's difference, which checks a run's first step)."""
    for h in (1e-6, 0.1, 3.0):
        points = [np.array([1.0]), np.array([1.0]), np.array([1 + 3 * h - 2 * h * h])]
        got = divided_difference([0.0, 0.0, h], points, rate=np.array([3.0]))
        assert abs(got[0] + 2) < 1e-9 * max(1, 1 / h)


def test_the_first_step_is_estimated_from_the_rate_at_the_start():
    """Q = 1 + 3 t - 2 t^2 from t = 0 (rate 3) to h by backward Euler: x[0, 0, h] = -2, so
    the error is 1/2 * 2 per unit of time against the larger tolerance of the two points."""
    h = 0.01
    charges = [np.array([1.0]), np.array([1 + 3 * h - 2 * h * h])]
    flows = [np.array([3.0]), np.array([3 - 2 * h])]     # backward Euler's: (Q1 - Q0) / h
    reltol, abstol, chgtol, trtol = 1e-3, 1e-12, 1e-14, 7.0
    allowed = truncation_step(METHODS["be"], [0.0, h], charges, flows,
                              (reltol, abstol, chgtol, trtol), np.array([True]), starting=True)
    tolerance = max(abstol + reltol * 3, reltol * float(charges[1][0]) / h)
    assert abs(allowed - trtol * tolerance / (0.5 * 2)) < 1e-9 * allowed


def test_truncation_step_of_a_cubic_charge_leaves_out_equations_without_charge():
    """Q = 2 t^3 has the third divided difference 2 at any points, so the trapezoidal rule's
    error is 2/12 per unit of time, against the tolerance of the larger of its last rates
    and charges; an equation that holds no charge does not count, however wild its values."""
    times = [0.0, 0.1, 0.25, 0.3]
    charges = [np.array([2 * t**3, 1e9 * (-1) ** k]) for k, t in enumerate(times)]
    flows = [np.array([6 * t**2, 1e9]) for t in times]
    reltol, abstol, chgtol, trtol = 1e-3, 1e-12, 1e-14, 7.0
    stores = np.array([True, False])
    allowed = truncation_step(METHODS["trap"], times, charges, flows,
                              (reltol, abstol, chgtol, trtol), stores)
    tolerance = max(abstol + reltol * 6 * 0.3**2, reltol * 2 * 0.3**3 / 0.05)
    assert abs(allowed - (trtol * tolerance / (2 / 12)) ** 0.5) < 1e-12 * allowed



def test_the_limiting_equation_is_the_one_with_the_least_tolerance_for_its_error():
    """Three cubic charges, the second ten times steeper and the third holding none: the
    second limits the step, its tolerance the larger of its rate's and its charge's."""
    times = [0.0, 0.1, 0.25, 0.3]
    charges = [np.array([2 * t**3, 20 * t**3, 1e9]) for t in times]
    flows = [np.array([6 * t**2, 60 * t**2, 0.0]) for t in times]
    tolerances = (1e-3, 1e-12, 1e-14, 7.0)
    worst, tolerance = truncation_limit(METHODS["trap"], times, charges, flows, tolerances,
                                        np.array([True, True, False]))
    assert worst == 1
    assert tolerance == pytest.approx(max(1e-12 + 1e-3 * 60 * 0.3**2,
                                          1e-3 * 20 * 0.3**3 / 0.05), rel=1e-12)

# -- convergence order --------------------------------------------------------------------------

OMEGA = np.pi  # SIN at 0.5 Hz into R = 1 || C = 1: v' + v = sin(pi t), v(0) = 0
NORTON_RC = """sine into an RC (Norton form, so C is invertible and forward Euler applies)
I1 0 n SIN(0 1 0.5)
R1 n 0 1
C1 n 0 1 IC=0
.options method={method} stepcontrol=fixed
.tran {h} 2 uic
"""


def _rc_exact(t):
    return (OMEGA * np.exp(-t) + np.sin(OMEGA * t) - OMEGA * np.cos(OMEGA * t)) / (1 + OMEGA**2)


def _order(name: str) -> float:
    steps = np.array([0.04, 0.02, 0.01, 0.005])
    errors = []
    for h in steps:
        result = mna.run(mna.read_string(NORTON_RC.format(method=name, h=h)))[0]
        frame = result.to_dataframe()
        errors.append(np.max(np.abs(frame["V(n)"].to_numpy() - _rc_exact(frame.index.to_numpy()))))
    return float(np.polyfit(np.log(steps), np.log(errors), 1)[0])


@pytest.mark.parametrize(("name", "least"), [("fe", 0.9), ("be", 0.9), ("trap", 1.9),
                                            ("gear2", 1.9)])
def test_measured_convergence_order(name, least):
    order = _order(name)
    assert order >= least, f"{name}: measured order {order:.3f} < {least}"
    assert order < METHODS[name].order + 0.3


# -- stiff two-stage RC: exact recursions -------------------------------------------------------

R1, C1, R2, C2 = 1.0, 1e-3, 1e3, 1e-3   # time constants ~1e-3 and ~1; lambda_max = -1001.001
STIFF = f"""stiff two-stage RC driven by a unit current step (Norton form)
I1 0 n1 DC 1
Ra n1 0 {R1}
Ca n1 0 {C1} IC=0
Rb n1 n2 {R2}
Cb n2 0 {C2} IC=0
.options method={{method}} stepcontrol=fixed
.tran {{h}} {{tstop}} uic
"""


def _stiff_state():
    A = np.array([[-1 / (R1 * C1) - 1 / (R2 * C1), 1 / (R2 * C1)],
                  [1 / (R2 * C2), -1 / (R2 * C2)]])
    b = np.array([1 / C1, 0.0])
    return A, b


def test_stiff_eigenvalues():
    A, _ = _stiff_state()
    assert abs(np.max(np.abs(np.linalg.eigvals(A))) - 1001.001) < 1e-3


@pytest.mark.parametrize("name", ["be", "trap"])
def test_stiff_rc_reproduces_the_exact_recursion(name):
    """The trapezoidal rule's first step is a restart: two backward-Euler quarter steps and a
    trapezoidal half step (the start that keeps an inconsistent t = 0 from ringing)."""
    h, tstop = 0.1, 3.0
    A, b = _stiff_state()
    eye = np.eye(2)
    if name == "be":
        left, right, drive = eye - h * A, eye, h * b
    else:
        left, right, drive = eye - h * A / 2, eye + h * A / 2, h * b
    x = np.zeros(2)
    expected = [x]
    for step in range(int(round(tstop / h))):
        if name == "trap" and step == 0:
            for _ in range(2):
                x = np.linalg.solve(eye - h * A / 4, x + h * b / 4)
            x = np.linalg.solve(eye - h * A / 4, (eye + h * A / 4) @ x + h * b / 2)
        else:
            x = np.linalg.solve(left, right @ x + drive)
        expected.append(x)
    expected = np.array(expected)
    frame = mna.run(mna.read_string(STIFF.format(method=name, h=h, tstop=tstop)))[0].to_dataframe()
    got = frame[["V(n1)", "V(n2)"]].to_numpy()
    assert got.shape == expected.shape
    assert np.max(np.abs(got - expected)) < 1e-12 * np.max(np.abs(expected))


def test_forward_euler_above_its_stability_limit_is_warned_about(caplog):
    with caplog.at_level(logging.WARNING, logger="mna"):
        circuit = mna.read_string(STIFF.format(method="fe", h=0.1, tstop=0.5))
        # the growth may overflow: refusing is also acceptable
        with np.errstate(over="ignore", invalid="ignore"), \
                contextlib.suppress(SingularSystemError):
            mna.run(circuit)
    assert "2/|lambda_max| = 0.001998" in caplog.text


def test_forward_euler_below_its_stability_limit_is_stable(caplog):
    h = 0.9 * 2 / 1001.001
    with caplog.at_level(logging.WARNING, logger="mna"):
        frame = mna.run(mna.read_string(STIFF.format(method="fe", h=h, tstop=1.0)))[0]
    assert "lambda_max" not in caplog.text
    frame = frame.to_dataframe()
    A, b = _stiff_state()
    x, expected = np.zeros(2), [np.zeros(2)]
    for _ in range(len(frame) - 1):
        x = x + frame.index[1] * (A @ x + b)
        expected.append(x)
    got = frame[["V(n1)", "V(n2)"]].to_numpy()
    assert np.max(np.abs(got - np.array(expected))) < 1e-9
    # stable: the fast mode's oscillation (factor 1 - h*1001.001 = -0.8 per step) dies out and
    # the slow mode follows the exact solution x(t) = A^-1 (e^{At} - I) b
    exact = np.linalg.solve(A, (scipy.linalg.expm(A * frame.index[-1]) - np.eye(2)) @ b)
    assert np.max(np.abs(got[-1] - exact)) < 2e-3
    assert np.max(np.abs(got[len(got) // 2:, 0] - exact[0])) < 1e-3


def test_forward_euler_refuses_a_singular_capacitance_matrix():
    circuit = mna.read_string("rc\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\n"
                              ".options method=fe\n.tran 1u 1m uic\n")
    with pytest.raises(SingularSystemError, match=r"forward Euler needs an invertible C.*I\(V1\)"):
        mna.run(circuit)
