"""Newton's method on ``G x + f(x, t) + gamma (C x + q(x)) = b``, and continuation when it
fails at DC.

Convergence is SPICE's: every unknown's update within ``reltol*|x| + vntol`` (across) or
``+ abstol`` (through) (or every residual at the round-off of its terms, where no update
can do better), every equation's residual within ``reltol`` of its largest term plus
``abstol`` (KCL rows) or ``vntol`` (across equations), no junction voltage limited in
the last iteration, and every device's currents at the new point within tolerance of what
that iteration's load predicts (SPICE's device test, `Device.converged`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from mna.analysis.equations import Equations
from mna.errors import ConvergenceError, NoOperatingPoint, SingularSystemError

log = logging.getLogger(__name__)

GMIN_START = 1e-2
HOLD_CONDUCTANCE = 1e10   # that holds a .nodeset's unknown at its value (ngspice's)
ROUND_OFF = 16 * np.finfo(float).eps   # of a row's terms: a residual this small is exact
SOURCE_STEP_MIN = 1e-4


@dataclass(frozen=True)
class Nodeset:
    """``.nodeset``: across `unknowns` (indices) and their `values`. As ngspice's, a DC
    solution from nothing starts there (zero elsewhere) with each held there by
    `HOLD_CONDUCTANCE` until Newton converges, then lets them go and goes on from that
    point: the rest of the circuit settles around them first, which picks the state they
    name (one of a latch's) rather than the one Newton would drift to from them."""

    unknowns: np.ndarray
    values: np.ndarray

    def start(self, size: int) -> np.ndarray:
        x = np.zeros(size)
        x[self.unknowns] = self.values
        return x


@dataclass
class NewtonFailure(Exception):
    """Newton stopped without converging: where it was and how far off."""

    x: np.ndarray
    residual: np.ndarray
    iterations: int
    reason: str
    singular: bool = False   # the Jacobian could not be factored

    def worst(self, unknowns: tuple[str, ...], count: int = 3) -> str:
        """The equations with the largest residuals, named."""
        residual = self.residual[: len(unknowns)]
        return ", ".join(f"{unknowns[i]} equation ({residual[i]:.3g})"
                         for i in np.argsort(-np.abs(residual))[:count])


class Newton:
    """Newton iterations on `equations` with the tolerances of `options`."""

    def __init__(self, equations: Equations):
        self.equations = equations
        options = equations.options
        self.options = options
        self.update_tolerance = np.where(equations.across, options.vntol, options.abstol)
        self.balance_tolerance = np.where(equations.across, options.abstol, options.vntol)
        self.iterations = 0   # in all solves, for the statistics

    def evaluate(self, x: np.ndarray, b: np.ndarray, gamma: float, time: float,
                 shunt: float = 0.0, evaluated_at: list | None = None, start: bool = False,
                 hold: bool = False, nodeset: Nodeset | None = None):
        """The residual ``G x + f + gamma (C x + q) + shunt x_across - b`` at `x`, the
        Jacobian's data, the devices' share of the residual, and whether a device limited
        its step. `evaluated_at` keeps each device's terminal values of the last iteration,
        for limiting (updated in place); with `start`, the devices are evaluated at their
        starting values instead (`Device.start`), with `hold` the instances marked ``OFF``
        at theirs (`Device.held`), and the unknowns of a `nodeset` are held at its values."""
        eq = self.equations
        linear_data, _ = eq.linear(gamma, shunt)
        residual = eq.product(linear_data, x) - b
        jacobian = linear_data.copy()
        if nodeset is not None:
            held = nodeset.unknowns
            residual[held] += HOLD_CONDUCTANCE * (x[held] - nodeset.values)
            jacobian[eq.shunt_slots[held]] += HOLD_CONDUCTANCE
        flows = np.zeros_like(x)
        limited = False
        for k, slots in enumerate(eq.devices):
            device = slots.device
            v = eq.terminal_values(x, device)
            at = device.start(v) if start else device.limit(
                v, None if evaluated_at is None else evaluated_at[k])
            if hold and device.off.any():   # the OFF instances are held, not limited (a
                # kind that limits some instances remakes all their values, to round-off)
                free = ~device.off
                limited = limited or (at is not v and not np.allclose(
                    at[free], v[free], rtol=1e-12, atol=1e-12))
                at = device.held(v, at)
            else:
                limited = limited or at is not v
            if evaluated_at is not None:
                evaluated_at[k] = at
            eq.scatter(slots, device.load(at, time), gamma, v, at, flows, jacobian)
        return residual + flows, jacobian, flows, limited

    def residual(self, x, b, gamma: float = 0.0, time: float = 0.0) -> np.ndarray:
        return self.evaluate(x, b, gamma, time)[0]

    def jacobian(self, x, gamma: float = 0.0, time: float = 0.0) -> np.ndarray:
        return self.evaluate(x, np.zeros_like(x), gamma, time)[1]

    def solve(self, b: np.ndarray, x0: np.ndarray, *, gamma: float = 0.0, time: float = 0.0,
              shunt: float = 0.0, iterations: int | None = None, limit: int | None = None,
              settled: np.ndarray | None = None, fresh: bool = False,
              nodeset: Nodeset | None = None) -> np.ndarray:
        """`x` with ``G x + f + gamma (C x + q) + shunt x_across = b``, from `x0`, in at most
        `limit` iterations (default ``maxiter``). `settled` is the last solution (a time
        step's previous point): the first iteration's junction voltages are limited against
        it, as SPICE's against the last time point's. A `fresh` DC solution (from nothing)
        evaluates its first iteration's devices at their starting values (`Device.start`),
        as SPICE's ``MODEINITJCT``; where instances are marked ``OFF``, it holds them there
        until it converges, then releases them and goes on from that point (SPICE's
        ``MODEINITFIX``), as it does the unknowns of a `nodeset` at their values.

        With `iterations`, exactly that many steps are taken and no convergence is tested
        (a semi-implicit time step is one). Raises `NewtonFailure`.
        """
        eq, options = self.equations, self.options
        magnitudes = eq.linear(gamma, shunt)[1]
        x = np.array(x0, dtype=float)
        evaluated_at: list = [None if settled is None else eq.terminal_values(settled, d.device)
                              for d in eq.devices]
        residual = np.zeros_like(x)
        limit = iterations or limit or options.maxiter
        off = fresh and any(d.device.off.any() for d in eq.devices)
        hold = off or nodeset is not None
        for iteration in range(1, limit + 1):
            self.iterations += 1
            residual, jacobian, flows, limited = self.evaluate(
                x, b, gamma, time, shunt, evaluated_at, start=fresh and iteration == 1,
                hold=hold and off, nodeset=nodeset if hold else None)
            if not np.isfinite(residual).all() and fresh and iteration == 1:
                # a device that cannot be evaluated at the guess (ln V(x) at V(x) = 0) is
                # left out of the first step, which sets what the sources fix (ngspice
                # puts -1e99 for ln 0 there)
                linear_data = eq.linear(gamma, shunt)[0]
                residual, jacobian = eq.product(linear_data, x) - b, linear_data.copy()
                flows, limited = np.zeros_like(x), True
            if not np.isfinite(residual).all():
                raise NewtonFailure(x, residual, iteration, "the residual is not finite")
            try:
                step = eq.solve(jacobian, -residual)
            except SingularSystemError as error:
                raise NewtonFailure(x, residual, iteration, str(error), singular=True) from None
            x_next = x + step
            if iterations is not None:
                x = x_next
                continue
            with np.errstate(over="ignore"):   # values near the float limit: inf terms
                small = np.abs(step) <= (options.reltol * np.maximum(np.abs(x), np.abs(x_next))
                                         + self.update_tolerance)
                terms = eq.product(magnitudes, np.abs(x)) + np.abs(flows) + np.abs(b)
                if hold and nodeset is not None:   # the holding currents' terms
                    terms[nodeset.unknowns] += HOLD_CONDUCTANCE * (
                        np.abs(x[nodeset.unknowns]) + np.abs(nodeset.values))
                balanced = np.abs(residual) <= options.reltol * terms + self.balance_tolerance
                # a residual at the round-off of its terms cannot improve: the steps it makes
                # are noise, which an abstol below that round-off would refuse for ever (a
                # row whose terms all vanish is at the round-off of its tolerance); a
                # device's terms are its derivatives' (a stuck friction's v = 0 is the
                # difference of two velocities, whose round-off its residual is)
                still = small.all() or bool(np.all(np.abs(residual) <= ROUND_OFF * (
                    terms + eq.product(np.abs(jacobian), np.abs(x)) + self.balance_tolerance)))
            x = x_next
            steady = still and balanced.all() and not limited
            if steady and hold:
                hold = False   # the OFF instances and the nodeset go free from here
            elif steady and eq.devices_converged(x, evaluated_at):
                return x
        if iterations is not None:
            return x
        raise NewtonFailure(x, residual, limit, f"no convergence in {limit} iterations")


MODE_ROUNDS = 20   # DC solutions, each with the modes the previous one's switching gave


def solve_dc(equations: Equations, b: np.ndarray, x0: np.ndarray | Nodeset | None = None,
             time: float = 0.0, continued: bool = False, aids: bool = True) -> np.ndarray:
    """The DC solution of nonlinear `equations` for right-hand side `b`, with every device
    mode consistent with it: the modes are settled at the starting point `x0` when there is
    one (else the devices start in their own initial modes: a switch off unless ``ON``), and
    again at each solution until none changes. `continued`: `x0` is the solution of a
    neighbouring problem (the last point of a sweep), and the first iteration limits the
    junctions against it, as SPICE's against its last state (else against 0 V: `x0` is a
    guess, or a `Nodeset`, which the first Newton holds). Without `aids`, Newton alone:
    no gmin or source stepping."""
    nodeset = x0 if isinstance(x0, Nodeset) else None
    if x0 is None:
        x = np.zeros(equations.size)
    else:
        x = nodeset.start(equations.size) if nodeset else x0
        equations.settle_modes(x, time)
    for round_ in range(MODE_ROUNDS):
        x = _solve_dc(equations, b, x, time,   # a nodeset's solution is from nothing too
                      fresh=(x0 is None or nodeset is not None) and round_ == 0,
                      continued=continued or round_ > 0,
                      nodeset=nodeset if round_ == 0 else None, aids=aids)
        if not equations.settle_modes(x, time):
            if problem := equations.dc_problem(x):
                raise NoOperatingPoint(f"no operating point at t={time:g}: {problem}")
            return x
    raise ConvergenceError(f"no DC solution at t={time:g}: the switching conditions of "
                           f"the devices still change after {MODE_ROUNDS} solutions")


def _solve_dc(equations: Equations, b: np.ndarray, x0: np.ndarray, time: float = 0.0,
              fresh: bool = False, continued: bool = False,
              nodeset: Nodeset | None = None, aids: bool = True) -> np.ndarray:
    """Newton (holding a `nodeset` first), then gmin stepping, then source stepping, each
    from `x0` (`fresh`: from nothing, `Newton.solve`; `continued`: from a solution,
    `solve_dc`); a `ConvergenceError` says what was tried."""
    newton = Newton(equations)
    tried = []
    singular = True
    try:
        return newton.solve(b, x0, time=time, fresh=fresh, settled=x0 if continued else None,
                            nodeset=nodeset)
    except NewtonFailure as failure:
        tried.append(f"Newton from the initial guess ({failure.reason})")
        last, singular = failure, singular and failure.singular
    for aid in (_gmin_stepping, _source_stepping) if aids else ():
        try:
            x = aid(newton, b, x0, time, fresh, continued)
        except NewtonFailure as failure:
            tried.append(f"{aid.__doc__} ({failure.reason})")
            last, singular = failure, singular and failure.singular
            continue
        log.info("operating point%s: Newton failed from the initial guess; %s converged",
                 f" at t={time:g}" if time else "", aid.__doc__)
        return x
    if singular:   # every aid met a singular Jacobian: the equations have no DC solution
        raise NoOperatingPoint(f"no operating point at t={time:g}: {last.reason}")
    raise ConvergenceError(f"no convergence at t={time:g}: largest residuals in "
                           f"{last.worst(equations.unknowns)}; tried: {'; '.join(tried)}")


def _gmin_stepping(newton: Newton, b, start, time, fresh, continued):
    """gmin stepping"""
    x = start
    shunt = GMIN_START
    while shunt > newton.options.gmin:
        first = x is start
        try:
            x = newton.solve(b, x, time=time, shunt=shunt, fresh=fresh and first,
                             settled=None if first and not continued else x)
        except NewtonFailure as failure:
            failure.reason = f"failed at gmin={shunt:g}: {failure.reason}"
            raise
        shunt /= 10
    return newton.solve(b, x, time=time, settled=x)


def _source_stepping(newton: Newton, b, start, time, fresh, continued):
    """source stepping"""
    # from nothing, whatever the other aids start from: the sources are off at first
    x = newton.solve(0 * b, np.zeros_like(start), time=time, fresh=True)
    done, step = 0.0, 0.1
    while done < 1.0:
        target = min(1.0, done + step)
        try:
            x = newton.solve(target * b, x, time=time, settled=x)
            done, step = target, min(step * 2, 0.5)
        except NewtonFailure as failure:
            step /= 4
            if step < SOURCE_STEP_MIN:
                failure.reason = f"stuck at {100 * done:.3g}% of the sources: {failure.reason}"
                raise
    return x
