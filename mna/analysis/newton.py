"""Newton's method on ``M x + f(x, t) + a q(x) = b``, and continuation when it fails.

`M` is the linear part, assembled once (``G`` at DC, ``G + alpha0/h C`` in a transient step);
only the nonlinear entries are reloaded at each iteration. Convergence is SPICE's: every
unknown's update within ``reltol*|x| + vntol`` (across) or ``+ abstol`` (through), every
equation's residual within ``reltol`` of its largest term plus ``abstol`` (KCL rows) or
``vntol`` (across equations), and no junction voltage limited in the last iteration.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mna.circuit import Options
from mna.errors import ConvergenceError, SingularSystemError
from mna.linalg import factor
from mna.system import DescriptorSystem

log = logging.getLogger(__name__)

GMIN_START = 1e-2
SOURCE_STEP_MIN = 1e-4


@dataclass
class NewtonFailure(Exception):
    """Newton stopped without converging: where it was and how far off."""

    x: np.ndarray
    residual: np.ndarray
    iterations: int
    reason: str


def newton(
    system: DescriptorSystem,
    linear: sp.spmatrix,
    b: np.ndarray,
    x0: np.ndarray,
    options: Options,
    *,
    charge_scale: float = 0.0,
    time: float = 0.0,
    shunt: float = 0.0,
    charge_offset: np.ndarray | None = None,
) -> np.ndarray:
    """Solve ``linear x + f(x) + charge_scale (q(x) - charge_offset) + shunt x_across = b``."""
    load = system.nonlinear
    across = system.across_count
    tolerance = np.full(system.size, options.abstol)
    tolerance[:across] = options.vntol
    balance = np.full(system.size, options.vntol)
    balance[:across] = options.abstol
    if shunt:
        shunt_matrix = sp.diags(np.r_[np.full(across, shunt), np.zeros(system.size - across)])
        linear = linear + shunt_matrix
    x = x0.copy()
    residual = np.zeros_like(x)
    for iteration in range(1, options.maxiter + 1):
        f, jacobian = load.currents(x, time)
        residual = linear @ x + f - b
        matrix = linear + jacobian
        if charge_scale:
            q, dq = load.charges(x)
            residual += charge_scale * (q - (0 if charge_offset is None else charge_offset))
            matrix = matrix + charge_scale * dq
        limited = load.limited()
        if not np.all(np.isfinite(residual)):
            raise NewtonFailure(x, residual, iteration, "the residual overflowed")
        try:
            step = factor(matrix, system.unknowns).solve(-residual)
        except SingularSystemError as error:
            raise NewtonFailure(x, residual, iteration, str(error)) from None
        x_next = x + step
        small = np.abs(step) <= options.reltol * np.maximum(np.abs(x), np.abs(x_next)) + tolerance
        terms = abs(linear) @ np.abs(x) + np.abs(f) + np.abs(b)
        balanced = np.abs(residual) <= options.reltol * terms + balance
        x = x_next
        if small.all() and balanced.all() and not limited:
            return x
    raise NewtonFailure(x, residual, options.maxiter, f"no convergence in {options.maxiter} iterations")


def solve_dc(system: DescriptorSystem, u: np.ndarray, options: Options,
             x0: np.ndarray | None = None, time: float = 0.0) -> np.ndarray:
    """The DC solution for inputs `u`: one factorisation when linear, else Newton, then gmin
    stepping, then source stepping; a `ConvergenceError` says what was tried."""
    b = system.B @ u
    if system.is_linear:
        return factor(system.G, system.unknowns).solve(b)
    start = np.zeros(system.size) if x0 is None else x0
    system.nonlinear.reset()
    tried = []
    try:
        return newton(system, system.G, b, start, options, time=time)
    except NewtonFailure as failure:
        tried.append(f"Newton from the initial guess ({failure.reason})")
        last = failure
    for aid in (_gmin_stepping, _source_stepping):
        system.nonlinear.reset()
        try:
            x = aid(system, b, start, options, time)
        except NewtonFailure as failure:
            tried.append(f"{aid.__doc__} ({failure.reason})")
            last = failure
            continue
        log.info("operating point%s: Newton failed from the initial guess; %s converged",
                 f" at t={time:g}" if time else "", aid.__doc__)
        return x
    raise ConvergenceError(_failure_message(system, last, time, tried))


def _gmin_stepping(system, b, start, options, time):
    """gmin stepping"""
    x = start
    shunt = GMIN_START
    while shunt > options.gmin:
        try:
            x = newton(system, system.G, b, x, options, time=time, shunt=shunt)
        except NewtonFailure as failure:
            failure.reason = f"failed at gmin={shunt:g}: {failure.reason}"
            raise
        shunt /= 10
    return newton(system, system.G, b, x, options, time=time)


def _source_stepping(system, b, start, options, time):
    """source stepping"""
    x = newton(system, system.G, 0 * b, np.zeros_like(start), options, time=time)
    done, step = 0.0, 0.1
    while done < 1.0:
        target = min(1.0, done + step)
        try:
            x = newton(system, system.G, target * b, x, options, time=time)
            done, step = target, min(step * 2, 0.5)
        except NewtonFailure as failure:
            step /= 4
            if step < SOURCE_STEP_MIN:
                failure.reason = f"stuck at {100 * done:.3g}% of the sources: {failure.reason}"
                raise
    return x


def _failure_message(system, failure: NewtonFailure, time: float, tried: list[str]) -> str:
    worst = np.argsort(-np.abs(failure.residual))[:3]
    residuals = ", ".join(f"{system.unknowns[i]} equation ({failure.residual[i]:.3g})" for i in worst)
    return (f"no convergence at t={time:g}: largest residuals in {residuals}; "
            f"tried: {'; '.join(tried)}")
