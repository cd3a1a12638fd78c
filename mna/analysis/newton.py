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

    def worst(self, system: DescriptorSystem, count: int = 3) -> str:
        """The equations with the largest residuals (constraint rows left out), named."""
        residual = self.residual[: system.size]
        return ", ".join(f"{system.unknowns[i]} equation ({residual[i]:.3g})"
                         for i in np.argsort(-np.abs(residual))[:count])


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
    border: tuple[sp.spmatrix, np.ndarray] | None = None,
    iterations: int | None = None,
) -> np.ndarray:
    """Solve ``linear x + f(x, t) + charge_scale q(x) + shunt x_across = b``.

    `border` ``(K, values)`` adds the constraints ``K x = values`` (initial conditions) through
    multipliers. With `iterations` given, that many Newton steps are taken without a
    convergence test (a semi-implicit step is one).
    """
    load = system.nonlinear
    n, across = system.size, system.across_count
    extra = 0 if border is None else border[0].shape[0]
    names = system.unknowns + tuple(f"constraint {k + 1}" for k in range(extra))
    if shunt:
        linear = linear + sp.diags(np.r_[np.full(across, shunt), np.zeros(n - across)])
    if extra:
        linear = sp.bmat([[linear, border[0].T], [border[0], None]], format="csc")
        b = np.r_[b, border[1]]
    tolerance = np.full(n + extra, options.abstol)
    tolerance[:across] = options.vntol
    balance = np.full(n + extra, options.vntol)
    balance[:across] = options.abstol
    x = np.r_[x0, np.zeros(extra)]
    residual = np.zeros_like(x)
    for iteration in range(1, (iterations or options.maxiter) + 1):
        f, jacobian = load.currents(x[:n], time)
        if charge_scale:
            q, dq = load.charges(x[:n])
            f, jacobian = f + charge_scale * q, jacobian + charge_scale * dq
        if extra:
            f, jacobian = (np.r_[f, np.zeros(extra)],
                           sp.block_diag((jacobian, sp.csc_matrix((extra, extra)))))
        residual = linear @ x + f - b
        limited = load.limited()
        if not np.all(np.isfinite(residual)):
            raise NewtonFailure(x[:n], residual, iteration, "the residual overflowed")
        try:
            step = factor(linear + jacobian, names, options.solver).solve(-residual)
        except SingularSystemError as error:
            raise NewtonFailure(x[:n], residual, iteration, str(error)) from None
        x_next = x + step
        if iterations is not None:
            x = x_next
            continue
        small = np.abs(step) <= options.reltol * np.maximum(np.abs(x), np.abs(x_next)) + tolerance
        terms = abs(linear) @ np.abs(x) + np.abs(f) + np.abs(b)
        balanced = np.abs(residual) <= options.reltol * terms + balance
        x = x_next
        if small.all() and balanced.all() and not limited:
            return x[:n]
    if iterations is not None:
        return x[:n]
    raise NewtonFailure(x[:n], residual, options.maxiter,
                        f"no convergence in {options.maxiter} iterations")


def solve_dc(system: DescriptorSystem, u: np.ndarray, options: Options,
             x0: np.ndarray | None = None, time: float = 0.0,
             border: tuple[sp.spmatrix, np.ndarray] | None = None) -> np.ndarray:
    """The DC solution for inputs `u` of a nonlinear system: Newton, then gmin stepping, then
    source stepping; a `ConvergenceError` says what was tried. `border` as in `newton`."""
    b = system.B @ u
    start = np.zeros(system.size) if x0 is None else x0
    system.nonlinear.reset()
    tried = []
    try:
        return newton(system, system.G, b, start, options, time=time, border=border)
    except NewtonFailure as failure:
        tried.append(f"Newton from the initial guess ({failure.reason})")
        last = failure
    for aid in (_gmin_stepping, _source_stepping):
        system.nonlinear.reset()
        try:
            x = aid(system, b, start, options, time, border)
        except NewtonFailure as failure:
            tried.append(f"{aid.__doc__} ({failure.reason})")
            last = failure
            continue
        log.info("operating point%s: Newton failed from the initial guess; %s converged",
                 f" at t={time:g}" if time else "", aid.__doc__)
        return x
    raise ConvergenceError(_failure_message(system, last, time, tried))


def _gmin_stepping(system, b, start, options, time, border):
    """gmin stepping"""
    x = start
    shunt = GMIN_START
    while shunt > options.gmin:
        try:
            x = newton(system, system.G, b, x, options, time=time, shunt=shunt, border=border)
        except NewtonFailure as failure:
            failure.reason = f"failed at gmin={shunt:g}: {failure.reason}"
            raise
        shunt /= 10
    return newton(system, system.G, b, x, options, time=time, border=border)


def _source_stepping(system, b, start, options, time, border):
    """source stepping"""
    scaled = None if border is None else (border[0], 0 * border[1])
    x = newton(system, system.G, 0 * b, np.zeros_like(start), options, time=time, border=scaled)
    done, step = 0.0, 0.1
    while done < 1.0:
        target = min(1.0, done + step)
        scaled = None if border is None else (border[0], target * border[1])
        try:
            x = newton(system, system.G, target * b, x, options, time=time, border=scaled)
            done, step = target, min(step * 2, 0.5)
        except NewtonFailure as failure:
            step /= 4
            if step < SOURCE_STEP_MIN:
                failure.reason = f"stuck at {100 * done:.3g}% of the sources: {failure.reason}"
                raise
    return x


def _failure_message(system, failure: NewtonFailure, time: float, tried: list[str]) -> str:
    return (f"no convergence at t={time:g}: largest residuals in {failure.worst(system)}; "
            f"tried: {'; '.join(tried)}")
