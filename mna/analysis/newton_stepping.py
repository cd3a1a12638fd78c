"""Time stepping of nonlinear systems: Newton at every step, or MTT's semi-implicit methods.

The system ``G x + f(x, t) + d/dt (C x + q(x)) = B u`` is discretised by the same linear
multistep coefficients as the linear engine, written for the charges ``Q = C x + q(x)`` and
the flows ``F = B u - G x - f(x, t)``. Dividing by ``h beta_0``, step n solves

    gamma Q(x_n) + G x_n + f(x_n, t_n) = B u_n + sum_{j>=1} (-alpha_j Q_{n-j} / (h beta_0)
                                                              + beta_j F_{n-j} / beta_0)

with ``gamma = alpha_0 / (h beta_0)``: `newton` with linear part ``gamma C + G``. Steps are
chosen by the local truncation error; a step whose Newton iteration fails is retried at an
eighth of its length before the run gives up with a `ConvergenceError`.

The semi-implicit methods take one Newton step per time step from the previous point
(linearly implicit backward Euler), with the Jacobian of every step or of t = 0 only.
"""

from __future__ import annotations

import logging

import numpy as np

from mna.analysis.integrators import (
    MIN_FRACTION,
    START_FRACTION,
    LinearMultistep,
    error_ratio,
    grow_factor,
    method_at,
    shrink_factor,
)
from mna.analysis.newton import NewtonFailure, newton
from mna.analysis.stepping import Problem
from mna.circuit import Options
from mna.errors import ConvergenceError
from mna.linalg import factor
from mna.system import DescriptorSystem

log = logging.getLogger(__name__)

RETRY_SHRINK = 8.0


class _History:
    """Accepted points with their charges and flows, newest last."""

    def __init__(self, system: DescriptorSystem, problem: Problem, keep: int):
        self.system = system
        self.problem = problem
        self.keep = keep
        self.times: list[float] = []
        self.xs: list[np.ndarray] = []
        self.charges: list[np.ndarray] = []
        self.flows: list[np.ndarray] = []

    def accept(self, t: float, x: np.ndarray, u: np.ndarray) -> None:
        system = self.system
        f, _ = system.nonlinear.currents(x, t)
        q, _ = system.nonlinear.charges(x)
        self.times.append(t)
        self.xs.append(x)
        self.charges.append(self.problem.C @ x + q)
        self.flows.append(self.problem.B @ u - self.problem.G @ x - f)
        for items in (self.times, self.xs, self.charges, self.flows):
            del items[: -self.keep]

    def right_hand_side(self, alpha, beta, h: float) -> np.ndarray:
        """The history sum of the step equation (without ``B u_n``)."""
        total = np.zeros(self.system.size)
        for j in range(1, len(alpha)):
            total -= alpha[j] / (h * beta[0]) * self.charges[-j]
            total += beta[j] / beta[0] * self.flows[-j]
        return total

    def predict(self, t: float) -> np.ndarray:
        """A starting guess for Newton: linear extrapolation of the last two points."""
        if len(self.xs) < 2:
            return self.xs[-1].copy()
        t1, t0 = self.times[-1], self.times[-2]
        return self.xs[-1] + (self.xs[-1] - self.xs[-2]) * (t - t1) / (t1 - t0)


def newton_steps(system: DescriptorSystem, problem: Problem, scheme: LinearMultistep,
                 x0: np.ndarray, tstop: float, hmax: float, options: Options):
    """Integrate with Newton at every step and steps chosen by the local truncation error.

    Returns the times and the recorded rows, as the linear engine does.
    """
    if scheme.explicit:
        raise ConvergenceError(f"{scheme.name} is explicit and cannot solve the nonlinear "
                               "charges of this circuit; use method=be, trap, gear2 or semi")
    p = scheme.order
    history = _History(system, problem, keep=max(p + 2, scheme.steps + 1))
    history.accept(0.0, x0, problem.inputs(np.array([0.0]))[0])
    differential = problem.differential | _charged(system, x0)
    corners = problem.breakpoints[(problem.breakpoints > 0) & (problem.breakpoints < tstop)]
    targets = np.unique(np.append(corners, tstop))
    h_start, h_min = hmax * START_FRACTION, hmax * MIN_FRACTION
    t, h, since_restart, rejected, retried = 0.0, h_start, 0, 0, 0
    times, record = [0.0], [problem.record @ x0]
    while t < tstop * (1 - 1e-12):
        target = targets[np.searchsorted(targets, t * (1 + 1e-12) + h_min)]
        h = min(h, hmax)
        landing = t + h >= target - 1e-9 * h
        t_new = target if landing else t + h
        h = t_new - t
        use = method_at(scheme, since_restart)
        ratio_h = h / (history.times[-1] - history.times[-2]) if len(history.times) > 1 else 1.0
        alpha, beta = use.coefficients(ratio_h)
        u_new = problem.inputs(np.array([t_new]))[0]
        gamma = alpha[0] / (h * beta[0])   # the step ends before a jump at t_new: its left value
        b = (problem.B @ problem.inputs(np.array([t_new]), before=True)[0]
             + history.right_hand_side(alpha, beta, h))
        try:
            x = newton(system, problem.G + gamma * problem.C, b, history.predict(t_new), options,
                       charge_scale=gamma, time=t_new)
        except NewtonFailure as failure:
            retried += 1
            h /= RETRY_SHRINK
            if h < h_min:
                raise ConvergenceError(_failure(system, failure, t_new, retried)) from None
            since_restart = 0
            continue
        ratio = 0.0
        if since_restart >= p + 1 and len(history.xs) >= p + 1:
            ratio = error_ratio(scheme, h, history.times, history.xs, x, t_new, options.reltol,
                                problem.absolute, differential)
        if ratio > 1.0:
            rejected += 1
            h *= shrink_factor(ratio, p)
            if h < h_min:
                raise ConvergenceError(f"transient: time step too small at t = {t:.6g} s "
                                       f"(truncation error ratio {ratio:.3g})")
            continue
        history.accept(t_new, x, u_new)
        times.append(t_new)
        record.append(problem.record @ x)
        t = t_new
        since_restart += 1
        h = min(hmax, h * grow_factor(ratio, p))
        if landing and t < tstop * (1 - 1e-12):
            since_restart, h = 0, min(h, h_start)  # a corner of a source: restart short
    log.info("transient (Newton): %d accepted steps, %d rejected by the error estimate, "
             "%d retried after Newton failed", len(times) - 1, rejected, retried)
    return np.array(times), np.array(record)


def semi_implicit_steps(system: DescriptorSystem, problem: Problem, x0: np.ndarray, h: float,
                        steps: int, options: Options):
    """MTT's linearly implicit Euler: one Newton step per time step from the previous point,
    with the Jacobian at every step (``linearise=step``) or factored once at t = 0."""
    times = h * np.arange(steps + 1)
    u = problem.inputs(times)
    linear = problem.G + problem.C / h
    record = np.zeros((steps + 1, problem.record.shape[0]))
    record[0] = problem.record @ x0
    x = x0
    frozen = None
    if options.linearise == "once":
        _, df = system.nonlinear.currents(x0, 0.0)
        _, dq = system.nonlinear.charges(x0)
        frozen = factor(linear + df + dq / h, system.unknowns, options.solver)
    for n in range(1, steps + 1):
        f, df = system.nonlinear.currents(x, times[n])
        # the residual of backward Euler at the previous point: its charges cancel
        residual = problem.G @ x + f - problem.B @ u[n]
        if frozen is None:
            _, dq = system.nonlinear.charges(x)
            step = factor(linear + df + dq / h, system.unknowns, options.solver).solve(-residual)
        else:
            step = frozen.solve(-residual)
        x = x + step
        record[n] = problem.record @ x
    return times, record


def _charged(system: DescriptorSystem, x: np.ndarray) -> np.ndarray:
    """Unknowns that nonlinear charges make differential (for the error estimate)."""
    _, dq = system.nonlinear.charges(x)
    return np.asarray(abs(dq).sum(axis=0) > 0).ravel() if dq.nnz else np.zeros(system.size, bool)


def _failure(system: DescriptorSystem, failure: NewtonFailure, time: float, retried: int) -> str:
    return (f"transient: Newton failed at t = {time:.6g} s ({failure.reason}); largest residuals "
            f"in {failure.worst(system)}; tried {retried} shorter steps, down to the minimum step")
