"""The step controller: one for every transient, in the spirit of scipy.integrate's
`OdeSolver`: it owns the step size, the breakpoints, the restarts after them, accepting
and rejecting steps, and the truncation-error estimate; how a step's equations are solved
is a strategy it is given (`StepSolver`: one linear solve, Newton, or a semi-implicit solve).

A step of the linear multistep method from ``t`` to ``t + h`` solves
``gamma Q(x) + G x + f(x, t + h) = B u(t + h) + history`` (see `integrators`), so the
controller keeps the charges ``Q`` and their rates ``Q'`` of the last points, and nothing
of circuits. Adaptive steps (SPICE's way) are chosen by the truncation error, never exceed
`hmax`, land on every breakpoint and restart there with backward Euler from a short step;
fixed steps (``stepcontrol=fixed``) keep one size on the grid ``n h``, restart after
each breakpoint they pass, and reach the next grid time by shorter steps where Newton fails.
"""

from __future__ import annotations

import bisect
import logging
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from mna.analysis.integrators import LinearMultistep, method, truncation_limit, truncation_step
from mna.analysis.newton import NewtonFailure
from mna.errors import ConvergenceError, SingularSystemError
from mna.progress import progress

log = logging.getLogger(__name__)

RETRY_SHRINK = 8.0     # a step whose solve fails is retried this many times shorter
REJECT_BELOW = 0.9     # a step is rejected when the error allows less than this of it
GROWTH = 2.0           # a step may be at most this many times the previous one
RESTART_FRACTION = 0.1  # after a breakpoint, of the step before it and of the gap to the next
FIRST_FRACTION = 0.1    # of the step a restart would take, for the run's first step
# adaptive steps after a (re)start by the starter (backward Euler): the first takes up what
# is inconsistent there (an impulse through an inductor whose current a source's derivative
# forces), the second gives rates of the new path, from which the trapezoidal rule goes on
STARTER_STEPS = 2
# a consistent start (its rates those of the path) is opened by the trapezoidal rule instead,
# as two half steps (its rates at both ends fit its points exactly, so its error is estimated
# from the start's rates and the two new points): backward Euler errs there by half the
# change of each rate over its step, which against a rate that grows from zero (an inductor
# at rest while a voltage builds across it) is of the rate's own size at any step, so that
# no step is short enough for a tight reltol
OPENER = "trap"
# ngspice's trtol (7) allows for its estimate's overstating the error; the opener's, from
# the start's rates, understates it (two thirds of the true error on random RLC networks),
# so its step is held to the tolerance itself
OPENER_TRTOL = 1.0
# a fixed-step run's restart: where each of its steps ends, as a fraction of the way to the
# next grid time, and its method: two backward-Euler quarter steps, then a trapezoidal half
# step, all three on one matrix (backward Euler damps what the corner excites, which the
# trapezoidal rule would carry on ringing). The trapezoidal step waits for FIXED_SETTLING
# steps that passed no corner (it would start from a rate averaged over one): until then it
# is a backward-Euler half step (on the matrix of a full trapezoidal step), and a restart
# that ends before them restarts again
FIXED_RESTART = ((0.25, "be"), (0.5, "be"), (1.0, "trap"))
FIXED_SETTLING = 2
# the run's first step is taken unchecked, as an inconsistent start's (a source's slope forced
# through a capacitor), after this many shorter tries in a row whose rates' jump from the
# start held: a consistent start's shrinks with the step once the step is below about three
# of its time constants, which tries 8 times shorter each reach from 1,000 of them
START_HOLDS = 4
# the opener's rates halfway stray from the mean of its end rates by their curvature, which
# shrinks as the step squared, and by an alternation from rates that are off, which holds:
# two tries whose ringing fell by within this factor of the square of their steps' ratio
# tell the two apart (the curvature alone can exceed a tight tolerance down to the steps
# where the rates' rounding sets in)
SQUARE_SPREAD = 1.25
EVENT_FRACTION = 1e-9   # of hmax: where a switching function's change of sign is located
# after an event, two backward-Euler steps of this fraction of the restart step, too short
# for their error to count: the first reaches the new law's path (the event's point lies off
# it by the location's tolerance) and is forgotten, the second gives the new law's rates; so
# the restart step has an error estimate of the new law's points alone
EVENT_START = 1e-3
SETTLING_STEPS = 2
LOCATE_ITERATIONS = 100
CHATTER_CHANGES = 3     # a function that changes so many times in a row, each quick
# a run whose Newton fails on STALL_FAILURES of its last STALL_WINDOW steps tried, or whose
# error estimate rejects them below the resolution, at a pace that would need more than
# STALL_STEPS further steps to reach tstop, ends there: its steps shrink on each setback and
# grow back on the successes between (or an estimate of round-off holds them far below any
# step that resolves the circuit), and it would crawl for ever
STALL_WINDOW = 1000
STALL_FAILURES = 200
STALL_STEPS = 1e6
# a step spans at least this many units in the last place of t: a shorter one would hardly
# move the time (the sources would be read off by a fraction of it, and t + h == t below one)
TIME_ULPS = 16


class StepSolver(Protocol):
    """A strategy that solves one step's equations."""

    unknowns: tuple[str, ...]
    stores: np.ndarray    # the equations that hold a charge (their error is estimated)

    def step(self, gamma: float, rhs: np.ndarray, predict: Callable[[], np.ndarray],
             previous: np.ndarray, time: float) -> np.ndarray:
        """`x` with ``gamma Q(x) + G x + f(x, time) = rhs`` (`rhs` may be overwritten);
        `predict()` extrapolates the last points to `time`, `previous` is the last one;
        raises `NewtonFailure`."""

    def explicit_step(self, charge: np.ndarray, time: float) -> np.ndarray:
        """`x` with ``Q(x) = charge`` (an explicit method's step)."""

    def charges(self, x: np.ndarray, time: float) -> np.ndarray:
        """``Q(x) = C x + q(x)``."""

    def currents(self, x: np.ndarray, time: float) -> np.ndarray:
        """``G x + f(x, time)``."""

    def switching(self, x: np.ndarray, time: float) -> np.ndarray:
        """The devices' switching functions (`mna.elements.device`)."""

    def modes(self) -> np.ndarray:
        """The devices' modes in force: the sign each switching function keeps."""

    def switch(self, x: np.ndarray, time: float, crossed: np.ndarray) -> None:
        """Let the devices change the modes of the functions `crossed` at `x`."""

    def switching_owners(self) -> tuple[str, ...]:
        """The element each switching function belongs to (for messages)."""

    def step_size(self, h: float) -> float:
        """The step it would rather take where `h` is allowed (at most `h`): a linear
        solver keeps to a few sizes, each factored once."""


@dataclass(frozen=True)
class Policy:
    """How steps are chosen: adaptively within `hmax`, or all equal to `hmax`
    (`adaptive` False); the tolerances ``(reltol, abstol, chgtol, trtol)``; the
    `resolution`, within which two times are one (breakpoints merge, a step lands on one,
    a switching function's change follows its last at once; a first step that no shorter
    one could replace is taken unchecked); the `smallest` step before the run gives up (or
    `TIME_ULPS` units in the last place of the time, where that is more)."""

    adaptive: bool
    hmax: float
    resolution: float
    smallest: float
    tolerances: tuple[float, float, float, float]
    first: float


class Inputs(Protocol):
    def __call__(self, time: float, before: bool = False) -> np.ndarray:
        """``B u`` at `time` (the limit from the left with `before`)."""


@dataclass
class Statistics:
    accepted: int = 0
    rejected: int = 0
    failed: int = 0
    events: int = 0


class _Step:
    """One step's outcome: the new point, its charges and their rates, and its switching
    functions; the opener's also its point halfway (`middle`)."""

    def __init__(self, x, charge, flow, switching):
        self.x, self.charge, self.flow, self.switching = x, charge, flow, switching
        self.middle: _Step | None = None


def run_steps(solver: StepSolver, scheme: LinearMultistep, drive: Inputs, x0: np.ndarray,
              flow0: np.ndarray, tstop: float, breakpoints: np.ndarray, policy: Policy,
              accept: Callable[[float, np.ndarray, bool, float], None]) -> Statistics:
    """Integrate from the state `x0` (charge rates `flow0`) at t = 0 to `tstop`, calling
    `accept(t, x, before, elapsed)` at every accepted point (t = 0 included; `before`: it is
    a breakpoint, where the step saw the sources' values before it; `elapsed`: the steps
    taken since the last one, which t holds only to its rounding); `drive(t, before)` gives
    ``B u``.

    When a device's switching function changes sign within a step, the step is shortened
    by regula falsi until it ends within `EVENT_FRACTION` of `hmax` after the change; there
    the device's mode changes and the integration restarts, as after a breakpoint, but
    forgetting the points of the old law and with `SETTLING_STEPS` short steps first.
    """
    stats = Statistics()
    attempts = 0
    setbacks: deque[tuple[int, float]] = deque()   # (attempt, time) of the recent failures
    keep = scheme.order + 2
    # each point's step from the one before (the first's unused): the estimates take the
    # points' times from these (`_clock`), not from t
    steps: deque[float] = deque([0.0], maxlen=keep)
    charges: deque[np.ndarray] = deque([solver.charges(x0, 0.0)], maxlen=keep)
    flows: deque[np.ndarray] = deque([flow0], maxlen=keep)
    states: deque[np.ndarray] = deque([x0], maxlen=2)
    switching = solver.switching(x0, 0.0)
    last_switched = np.full(len(switching), -np.inf)   # when each function last changed
    changed = np.zeros(len(switching), bool)   # the functions the last event changed
    rapid = np.zeros(len(switching), int)   # its quick changes in a row (see below)
    targets = _targets(breakpoints, tstop, policy)
    corners = sorted(set(breakpoints.tolist()))
    accept(0.0, x0, False, 0.0)
    unrecorded = 0.0   # the steps since the last accepted point (a fixed run's restart steps)
    starter = method(scheme.starter) if scheme.starter else scheme
    opener = method(OPENER) if scheme.starter else starter
    started = max(STARTER_STEPS, scheme.steps - 1)   # restart steps before the scheme's own
    second_order_start = opener is not starter   # until the start shows itself inconsistent
    t, since_restart, next_target = 0.0, 0, 0
    previous = 0.0         # the last step taken (as the method took it)
    restart_from = 0.0     # a fixed run's last grid time
    restart_at = 0.0       # and where its last restart began (an event's time is off the grid)
    settled = 0            # its steps since the last that passed a corner (or an event)
    recorded_grid = 0      # the grid time it last recorded, in steps
    cut = 0.0              # its step to the next grid time after Newton failed (0: none)
    resume = 0.0           # the step to take after an event's short steps
    settling = 0           # short steps still to take after an event
    attempted = 0.0        # the step in which the last event was located
    h = policy.first
    start_checked, start_jump, start_step, start_held = True, math.inf, 1.0, 0   # first step
    start_ringing = math.inf   # of the opener's last try (see `_ringing`)
    if policy.adaptive:   # ngspice's first step, a hundredth of the way to a corner (the
        h = FIRST_FRACTION * min(h, RESTART_FRACTION * targets[0])   # error may shorten it)

    def record(t_point: float, x: np.ndarray, before: bool, h: float) -> None:
        """Accept the point `x` at `t_point`, which a step `h` reached."""
        nonlocal unrecorded
        accept(t_point, x, before, unrecorded + h)
        unrecorded = 0.0

    def smallest() -> float:
        """The shortest step from t (`Policy.smallest`, or `TIME_ULPS` of t's rounding)."""
        return max(policy.smallest, TIME_ULPS * math.ulp(t))

    def predict(h: float):
        """The last two points extrapolated a step `h` on (Newton's starting point)."""
        if len(states) < 2:
            return lambda: states[-1]
        return lambda: states[-1] + (states[-1] - states[-2]) * (h / steps[-1])

    def attempt(use: LinearMultistep, h: float, t_new: float, landing: bool) -> _Step:
        """The step of `use` from t to `t_new` (raises `NewtonFailure`); one that lands on a
        breakpoint sees the sources' values before it."""
        alpha, beta = use.coefficients(h / previous if len(steps) > 1 else 1.0)
        applied = drive(t_new, before=landing and t_new in corners)
        if use.explicit:    # Q_n = -sum_j (alpha_j Q_{n-j} - h beta_j F_{n-j}) / alpha_0
            past = _combination(alpha, beta, h, -1.0 / alpha[0], charges, flows)
            x = solver.explicit_step(past, t_new)
            charge = solver.charges(x, t_new)
            flow = applied - solver.currents(x, t_new)
        else:               # gamma Q_n + G x_n + f = B u_n + history
            gamma = alpha[0] / (h * beta[0])
            history = _combination(alpha, beta, h, -1.0 / (h * beta[0]), charges, flows)
            x = solver.step(gamma, applied + history, predict(h), states[-1], t_new)
            charge = solver.charges(x, t_new)
            flow = np.multiply(charge, gamma)
            flow -= history
        return _Step(x, charge, flow, solver.switching(x, t_new))

    def remember(h: float, step: _Step) -> None:
        steps.append(h)
        charges.append(step.charge)
        flows.append(step.flow)
        states.append(step.x)

    def opening_halves(h: float, t_new: float, landing: bool) -> _Step:
        """The opener's step from the start to `t_new` as two half steps."""
        nonlocal previous
        middle = attempt(opener, h / 2, t + h / 2, False)
        remember(h / 2, middle)
        previous = h / 2
        try:
            step = attempt(opener, h / 2, t_new, landing)
        finally:
            for history in (steps, charges, flows, states):
                history.pop()
            previous = 0.0
        step.middle = middle
        return step

    def echoing(h: float, t_new: float, landing: bool, step: _Step) -> np.ndarray:
        """The equations whose rates halfway in the opener's `step` echo the start's: the
        opener once more from start rates moved by half their straying (its rates halfway
        against the mean of its end rates), and where that takes more than half of the
        straying away. There the trapezoidal rule carries an offset of the start's rates
        on with alternate signs (a charge that the constraints hold, a capacitor across a
        source; a mode far faster than the step), whose straying the move would cancel;
        elsewhere the new charges take the move up, three quarters of the straying stay,
        and it is the rates' curvature."""
        start = flows[0]
        straying = step.middle.flow - (start + step.flow) / 2
        moved = flows[0] = start + straying / 2
        try:
            nudged = opening_halves(h, t_new, landing)
        except NewtonFailure:
            return solver.stores
        finally:
            flows[0] = start
        left = nudged.middle.flow - (moved + nudged.flow) / 2
        return solver.stores & (np.abs(left) < np.abs(straying) / 2)

    def stalled() -> str | None:
        """Note a setback at the attempt in hand; how the run stalls (`STALL_FAILURES`),
        or None."""
        setbacks.append((attempts, t))
        while setbacks[0][0] <= attempts - STALL_WINDOW:
            setbacks.popleft()
        first_attempt, first_time = setbacks[0]
        tried = attempts - first_attempt + 1
        if len(setbacks) < STALL_FAILURES or tstop - t <= STALL_STEPS * (t - first_time) / tried:
            return None
        return (f"{len(setbacks)} of the last {tried} steps tried, which went from t = "
                f"{first_time:.6g} s to {t:.6g} s, failed or were rejected; at that pace "
                f"tstop is more than {STALL_STEPS:.0e} steps away")

    def shorter(failure: NewtonFailure, t_new: float, h: float) -> float:
        """The step to retry with after Newton failed on one of `h` to `t_new`: an adaptive
        run restarts from it, a fixed run takes steps from it to its next grid time (each
        twice the last, unrecorded)."""
        nonlocal since_restart, cut
        stats.failed += 1
        if (stall := stalled()) is not None:
            raise ConvergenceError(
                f"transient: Newton failed at t = {t_new:.6g} s ({failure.reason}): {stall}; "
                f"largest residuals in {failure.worst(solver.unknowns)}") from None
        if h / RETRY_SHRINK < smallest():
            raise ConvergenceError(
                f"transient: Newton failed at t = {t_new:.6g} s ({failure.reason}); largest "
                f"residuals in {failure.worst(solver.unknowns)}; tried {stats.failed} shorter "
                f"steps, down to {h:.3g} s") from None
        if policy.adaptive:
            since_restart = 0
        else:
            cut = h / RETRY_SHRINK
        return h / RETRY_SHRINK

    # a solution that grows to the float limit makes infinities, which the checks catch
    with progress(tstop, "tran", time=True) as bar, np.errstate(over="ignore", invalid="ignore"):
        while t < tstop * (1 - 1e-12):
            # a target is reached where a step landed on it (or within the rounding of t);
            # a step that does not land ends more than the resolution, or itself, short
            while targets[next_target] <= t + TIME_ULPS * math.ulp(t):
                next_target += 1
            target = targets[next_target]
            if policy.adaptive:
                h = min(h, policy.hmax)
                # the step lands on the target where less than the resolution would be left;
                # one shorter than the resolution only where it reaches the target (stretched
                # to it, a step the error refused would be tried again and again)
                landing = t + h >= target - (policy.resolution if h >= policy.resolution
                                             else 0.0)
                if landing:   # onto a breakpoint (or tstop)
                    h = target - t
                elif t + 2 * h > target:      # no sliver of a step before the breakpoint
                    h = solver.step_size((target - t) / 2)
                else:
                    h = solver.step_size(h)
                t_new = target if landing else t + h
                opening = second_order_start and len(steps) == 1 and t == 0.0
                use = opener if opening else scheme if since_restart >= started else starter
            else:   # the grid n hmax; a grid time within round-off of a breakpoint is on it
                use, opening = scheme, False
                t_new = min((round(restart_from / policy.hmax) + 1) * policy.hmax, tstop)
                if scheme.starter and since_restart < len(FIXED_RESTART):
                    end, name = FIXED_RESTART[since_restart]
                    use = method(name if settled >= FIXED_SETTLING else "be")
                    t_new = restart_at + end * (t_new - restart_at)
                if cut:   # Newton failed on the step from here
                    t_new = min(t + cut, t_new)
                landing = abs(target - t_new) <= 1e-9 * policy.hmax
                t_new = target if landing else t_new
                h = _nominal(t_new - t, t_new, policy.hmax)
            attempts += 1
            try:
                step = opening_halves(h, t_new, landing) if opening else attempt(
                    use, h, t_new, landing)
            except NewtonFailure as failure:
                h = shorter(failure, t_new, h)
                continue
            if not np.isfinite(step.x).all():
                raise SingularSystemError(
                    f"the solution is not finite at t = {t_new:.6g} s (it grows without bound, "
                    "or the step met a singular matrix)")
            taken = h / 2 if opening else h   # the last step's length
            allowed = taken * GROWTH
            # the run's first step is estimated with the start's rates
            starting = (len(steps) == 1 and t == 0.0 and not use.explicit and start_checked
                        and (opening or use.order == 1))
            if policy.adaptive and (len(steps) >= use.order + 1 or starting):
                new = (_clock([*steps, taken, taken]),
                       [*charges, step.middle.charge, step.charge],
                       [*flows, step.middle.flow, step.flow]) if opening else (
                           _clock([*steps, h]), [*charges, step.charge], [*flows, step.flow])
                tolerances = ((*policy.tolerances[:3], OPENER_TRTOL) if opening
                              else policy.tolerances)
                estimate = truncation_step(use, *new, tolerances, solver.stores,
                                           starting=starting)
                if starting:   # the new point's rates near a consistent start's as the step
                    # shrinks; where the start's rates are off (a source's slope forced
                    # through a capacitor) or it jumps, their difference holds: after
                    # START_HOLDS such tries the starter's step is taken unchecked, as is
                    # one that no shorter step could replace
                    jump = _rate_jump(flows[0], step.flow, policy.tolerances, solver.stores)
                    shortened = start_step / h   # against the last try
                    shrink = 1 / math.sqrt(shortened)
                    start_held = start_held + 1 if jump > start_jump * shrink else 0
                    start_checked = (start_held < START_HOLDS
                                     and h / RETRY_SHRINK >= policy.resolution)
                    start_jump, start_step = jump, h
                    if opening:   # its rates must not alternate; where they do and that
                        # holds, or no shorter step is left, the start is the starter's
                        ringing = _ringing(flows[0], step.middle.flow, step.flow,
                                           policy.tolerances, solver.stores)
                        ringing_held = ringing > start_ringing * shrink
                        steady = (ringing <= 1.0
                                  or _alternating(start_ringing, ringing, shortened) <= 1.0
                                  or _ringing(flows[0], step.middle.flow, step.flow,
                                              policy.tolerances,
                                              echoing(h, t_new, landing, step)) <= 1.0)
                        start_ringing = ringing
                        if not start_checked or (not steady and ringing_held):
                            second_order_start = False
                            continue
                        if not steady:
                            stats.rejected += 1
                            h /= RETRY_SHRINK
                            continue
                    estimate = estimate if start_checked else math.inf
                allowed = min(allowed, estimate)
                if allowed == 0.0:   # the charges' differences overflow, the points do not yet
                    raise SingularSystemError(
                        f"the solution grows without bound at t = {t_new:.6g} s (its largest "
                        f"value is {np.max(np.abs(step.x)):.3g}: an unstable circuit, or a "
                        "value far off)")
                if allowed < REJECT_BELOW * taken:
                    stats.rejected += 1
                    h = max(allowed * h / taken, h / RETRY_SHRINK)
                    if landing:   # stretched onto the target and refused: a step that the
                        # error allows could leave less than the resolution, and be stretched
                        # again; the next stops halfway
                        h = min(h, (target - t) / 2)
                    # below the resolution, where a step would once have ended the run, only
                    # while it makes headway
                    stall = stalled() if h < policy.resolution else None
                    if h < smallest() or stall is not None:
                        worst, tolerance = truncation_limit(
                            use, *new, tolerances, solver.stores, starting=starting)
                        limit = _limited_by(solver.unknowns[worst], tolerance, policy)
                        raise ConvergenceError(
                            f"transient: time step too small at t = {t:.6g} s (the truncation "
                            f"error allows {allowed:.3g} s{'; ' + stall if stall else ''})"
                            f"{limit}")
                    continue
            # the first short step after an event takes up the location's overshoot as an
            # impulse (a stuck block's force m v / h), which the functions the event changed
            # read instead of their law: they are judged from the next step on
            judged = ~changed if settling == SETTLING_STEPS else np.ones(len(switching), bool)
            event = len(switching) > 0 and bool(
                (_crossed(step.switching, solver.modes()) & judged).any())
            if event:
                attempted = h
                try:
                    h, t_new, step = _locate(attempt, use, t, h, switching, step, solver,
                                             EVENT_FRACTION * policy.hmax, judged)
                # a trial shorter than a step that converged can fail where a law is steep
                # (a Stribeck friction falls by fs - fc within vs of its stop): the step is
                # retried shorter, as when its own Newton fails
                except NewtonFailure as failure:
                    h = shorter(failure, t_new, h)
                    continue
                landing = False
            if step.middle is not None:   # the opener's (not an event's located step)
                previous, h = taken, taken
                remember(taken, step.middle)
                record(t + taken, step.middle.x, False, taken)
                stats.accepted += 1
                since_restart = started - 1
            remember(h, step)
            # a fixed run records its grid times once each: not its restart steps, nor an
            # event located within round-off after a grid time it recorded
            if policy.adaptive or (_on_grid(t_new, policy.hmax)
                                   and round(t_new / policy.hmax) != recorded_grid):
                record(t_new, step.x, landing and t_new in corners, h)
                recorded_grid = round(t_new / policy.hmax)
            else:
                unrecorded += h
            stats.accepted += 1
            since_restart += 1
            previous, t, t_old = h, t_new, t
            h = allowed
            bar.update(t - bar.n)
            switching = step.switching
            if event:
                modes = solver.modes()
                crossed = _crossed(switching, modes)
                # a change within the resolution of the last, or before the short steps after
                # it ended
                quick = crossed & ((t - last_switched <= policy.resolution)
                                   | (changed & (settling > 0)))
                rapid = np.where(quick, rapid + 1, np.where(crossed, 0, rapid))
                # one change at once after another is a law's (a block that stops where its
                # spring pulls harder than fs breaks away backwards), and so are two where
                # several change together (two blocks that stop at once both break away, and
                # the one that the other's slide pushes against its direction sticks again);
                # three are a chatter
                chattering = rapid >= CHATTER_CHANGES
                if chattering.any():
                    first = int(np.flatnonzero(chattering)[0])
                    raise ConvergenceError(
                        f"transient: time step too small at t = {t:.6g} s: "
                        f"{solver.switching_owners()[first]} switches back "
                        f"{t - last_switched[first]:.3g} s after its last change, before its "
                        "new state has settled (it chatters between its states)")
                last_switched[crossed] = t
                changed = crossed
                solver.switch(step.x, t, crossed)
                stats.events += 1
                _forget(steps, charges, flows, states)   # no estimate spans the event
            corner = landing or event or _passed(corners, t_old, t)
            if policy.adaptive:
                if corner and t < tstop * (1 - 1e-12):
                    since_restart = 0    # restart with the starter, from a short step
                    gap = targets[min(next_target + 1, len(targets) - 1)] - t
                    before = attempted if event else previous   # not the located step
                    h = min(h, RESTART_FRACTION * min(before, gap if gap > 0 else before))
                    if event:
                        resume = resume or h   # kept through events within the short steps
                        h, settling = resume * EVENT_START, SETTLING_STEPS
                elif settling:
                    settling -= 1
                    since_restart = 0
                    if settling:
                        _forget(steps, charges, flows, states)
                    else:
                        h, resume = resume, 0.0
            else:
                # steps cut short where Newton failed end on the grid, and the method
                # restarts there as after a corner (Gear-2's next step would be up to 8
                # times the last)
                if _on_grid(t, policy.hmax):
                    corner = corner or cut > 0
                    restart_from, cut = t, 0.0
                elif cut:
                    cut *= GROWTH
                settled = 0 if corner else settled + 1
                if event or (since_restart >= len(FIXED_RESTART) and settled < FIXED_SETTLING):
                    since_restart, restart_at = 0, t
    log.info("transient: %d steps accepted, %d rejected by the truncation error, %d retried "
             "after Newton failed, %d switching events", stats.accepted, stats.rejected,
             stats.failed, stats.events)
    return stats


def _limited_by(unknown: str, tolerance: float, policy: Policy) -> str:
    """What limits a step that the truncation error makes too small: the equation of
    `unknown`, and its tolerance per unit of time `tolerance`, whose floor is abstol (a
    number in each domain's SI units: 1e-12 A, and also 1e-12 N, which a tight reltol
    exposes where a charge and its rate pass near zero)."""
    reltol, abstol = policy.tolerances[:2]
    return (f"; the error of {unknown}'s equation is the largest against its tolerance, "
            f"{tolerance:.3g} a second (abstol = {abstol:g} plus reltol = {reltol:g} times its "
            "rate, or reltol times its charge over the step): a looser reltol lets the step "
            "grow, and so does a larger .options abstol where the charge and its rate pass "
            "near zero (abstol is in the equation's SI units)")


def _rate_jump(start: np.ndarray, rates: np.ndarray, tolerances, stores: np.ndarray) -> float:
    """The largest difference of the charges' `rates` from those at the `start`, each in
    its tolerance there (``abstol + reltol |Q'|``): it shrinks with the first step where the
    start's rates are the solution's (its estimate's tolerances change as the rates do)."""
    reltol, abstol = tolerances[:2]
    weighted = np.abs(rates - start) / (abstol + reltol * np.abs(start))
    return float(np.max(weighted, initial=0.0, where=stores))


def _ringing(start: np.ndarray, middle: np.ndarray, end: np.ndarray, tolerances,
             stores: np.ndarray) -> float:
    """How far the opener's rates halfway stray from the mean of those at its ends, each in
    its tolerance (``abstol + reltol |Q'|``): on a smooth path by the rates' curvature, an
    eighth of their second derivative times the step squared; from a start whose rates are
    off (a source's slope forced through a capacitor), which the trapezoidal rule carries
    on with alternate signs, by that offset, whatever the step."""
    reltol, abstol = tolerances[:2]
    largest = np.maximum(np.maximum(np.abs(start), np.abs(end)), np.abs(middle))
    weighted = np.abs(middle - (start + end) / 2) / (abstol + reltol * largest)
    return float(np.max(weighted, initial=0.0, where=stores))


def _alternating(longer: float, ringing: float, shortened: float) -> float:
    """The part of the opener's `ringing` that does not shrink with its step, from the
    `longer` try's, whose step was `shortened` times this one's: a smooth path's ringing
    shrinks as the step squared, an alternation's holds. Where the two tries do not show
    the square (their steps too long for it, or the rates' rounding), infinite."""
    square = shortened**2
    if not (shortened > 1.0 and square / SQUARE_SPREAD <= longer / ringing
            <= square * SQUARE_SPREAD):
        return math.inf
    return (square * ringing - longer) / (square - 1)


def _crossed(values: np.ndarray, modes: np.ndarray) -> np.ndarray:
    """The switching functions whose sign at `values` differs from their mode's (one at zero
    has not crossed: it crosses where it leaves zero for the other side, a control that
    rises from a threshold it sat on)."""
    if not len(modes):
        return np.zeros(0, bool)
    return np.sign(values) * modes < 0


def _locate(attempt, use: LinearMultistep, t: float, h: float, before: np.ndarray,
            step: _Step, solver: StepSolver, tolerance: float, judged: np.ndarray
            ) -> tuple[float, float, _Step]:
    """The step from `t` that ends within `tolerance` after the first change of sign of a
    `judged` switching function in a step of `h` (regula falsi with the Illinois rule, on
    the step size; each trial is a full step from `t`); one whose sign at the bracket's low
    end is already the other (the first short step after an event could not judge it) is
    taken to change there. One at zero there is tried first just past it (a control that
    leaves its threshold at the step's start), and then, while the trials find it still at
    zero, by bisection. As in SUNDIALS' root finding, a trial stays half the tolerance
    inside the bracket, so that once the estimate is that close, the next trial or the one
    after closes the bracket."""
    modes = solver.modes()
    low, high = 0.0, h
    low_values, high_values = before, step.switching
    kept, last_side = step, 0
    bisecting = False   # a low end at zero, and a trial just past it found zero too
    for _ in range(LOCATE_ITERATIONS):
        if high - low <= tolerance:
            break
        crossing = _crossed(high_values, modes) & judged
        low_at, high_at = low_values[crossing], high_values[crossing]
        started = (np.sign(low_at) * modes[crossing] < 0).any()   # past at the low end
        at_zero = not started and not low_at.any()
        bisecting = bisecting and at_zero
        if bisecting:   # it leaves zero later than just past the low end
            trial = (low + high) / 2
        else:
            trial = low + (0.0 if started else float(np.min(low_at / (low_at - high_at)))) * (
                high - low)
        trial = min(max(trial, low + tolerance / 2), high - tolerance / 2)
        outcome = attempt(use, trial, t + trial, False)
        side = 1 if (_crossed(outcome.switching, modes) & judged).any() else -1
        bisecting = bisecting or (at_zero and side < 0)
        if side > 0:
            high, high_values, kept = trial, outcome.switching, outcome
        else:
            low, low_values = trial, outcome.switching
        if side == last_side:    # Illinois: an end kept twice has its values halved
            if side > 0:
                low_values = low_values / 2
            else:
                high_values = high_values / 2
        last_side = side
    return high, t + high, kept


def _clock(steps: list[float]) -> list[float]:
    """The times of the points that `steps` lead to (the first step unused), the newest at
    0: each step is then the difference of its ends to the last bit, where the run's times
    hold a step far shorter than themselves only to their rounding, which the estimate
    would read as error and shorten the step for ever."""
    times = [0.0]
    for step in reversed(steps[1:]):
        times.append(times[-1] - step)
    return times[::-1]


def _forget(*histories: deque) -> None:
    """Keep only the newest point of each history (a new law starts there)."""
    for history in histories:
        while len(history) > 1:
            history.popleft()


def _targets(breakpoints: np.ndarray, tstop: float, policy: Policy) -> np.ndarray:
    """Where adaptive steps must land: the breakpoints inside the run, merged where closer
    than the resolution, and `tstop` (then a sentinel)."""
    inside = np.sort(breakpoints[(breakpoints > policy.resolution) & (breakpoints < tstop)])
    if len(inside):
        inside = inside[np.r_[True, np.diff(inside) > policy.resolution]]
    return np.r_[inside, tstop, np.inf]


def _nominal(step: float, end: float, hmax: float) -> float:
    """A fixed run's step to `end` as its method takes it: within the round-off of `end` of
    a quarter of the grid step (the grid's times differ in their last digits), that fraction
    exactly, so that every step of one size is one and the same (its factors were made for
    it)."""
    quarters = round(4 * step / hmax)
    if quarters and abs(step - quarters * hmax / 4) <= 8 * np.spacing(max(abs(end), hmax)):
        return quarters * hmax / 4
    return step


def _on_grid(t: float, h: float) -> bool:
    return abs(t / h - round(t / h)) <= 1e-9


def _passed(corners: list[float], start: float, end: float) -> bool:
    """Whether a step from `start` to `end` passed a breakpoint of the sorted `corners` (a
    fixed step restarts after one)."""
    return bisect.bisect_right(corners, start) < bisect.bisect_right(corners, end)


def _combination(alpha, beta, h: float, scale: float, charges, flows) -> np.ndarray:
    """``scale sum_j (alpha_j Q_{n-j} - h beta_j F_{n-j})`` over the past points j >= 1."""
    total = np.multiply(charges[-1], scale * alpha[1])
    for j in range(1, len(alpha)):
        if alpha[j] and j > 1:
            total += (scale * alpha[j]) * charges[-j]
        if beta[j]:
            total -= (scale * h * beta[j]) * flows[-j]
    return total
