"""The time-stepping engine: fixed and adaptive steps of one linear multistep method.

Both loops work on a linear descriptor system ``G x + C x' = B u`` and hand each step's
linear solve to a `StepSolver` (``solver(gamma, rhs, time) -> x``), so that a Newton solve
can replace it for nonlinear systems. The fixed-step loop does no assembly and allocates
nothing of the system's size per step: the right-hand side is built in a reused buffer by
sparse mat-vecs in place, and the inputs are evaluated on the whole time grid
before the first step. A small linear system steps by dense propagators instead of solves
(`Propagator`): the same arithmetic, with fewer numpy calls per step.
"""

from __future__ import annotations

import logging
import sys
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import daxpy as _axpy

from mna.analysis.integrators import (
    MIN_FRACTION,
    START_FRACTION,
    LinearMultistep,
    LinearStepSolver,
    StepSolver,
    error_ratio,
    grow_factor,
    history_matrices,
    method,
    method_at,
    shrink_factor,
    step_gamma,
)
from mna.errors import ConvergenceError
from mna.linalg import Factorization

log = logging.getLogger(__name__)

DENSE_STEP_LIMIT = 200   # unknowns: up to here a dense step beats a sparse solve (measured)

try:  # y += A x without a temporary; scipy's own kernel behind `A @ x`
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except ImportError:  # pragma: no cover - a scipy without the private kernel
    _csr_matvec = None


class MatVec:
    """``out += matrix @ x`` (a call) or ``out = matrix @ x`` (`assign`) in place, for a
    matrix fixed over many steps: scipy's own kernel behind ``matrix @ x``, with its
    arguments gathered once (a step of a small system costs a few microseconds, and
    attribute look-ups are a good part of that). A diagonal matrix (the capacitances of
    capacitors that all go to ground) is assigned by one elementwise product."""

    def __init__(self, matrix):
        self.matrix = sp.csr_matrix(matrix)
        self._arguments = (*self.matrix.shape, self.matrix.indptr, self.matrix.indices,
                           self.matrix.data)
        rows = np.repeat(np.arange(self.matrix.shape[0]), np.diff(self.matrix.indptr))
        square = self.matrix.shape[0] == self.matrix.shape[1]
        self._diagonal = (self.matrix.diagonal()
                          if square and np.array_equal(rows, self.matrix.indices) else None)

    def __call__(self, x: np.ndarray, out: np.ndarray) -> None:
        if _csr_matvec is not None:
            _csr_matvec(*self._arguments, x, out)
        else:  # pragma: no cover
            out += self.matrix @ x

    def assign(self, x: np.ndarray, out: np.ndarray) -> None:
        if self._diagonal is not None:
            np.multiply(self._diagonal, x, out=out)
        else:
            out.fill(0.0)
            self(x, out)


@dataclass(frozen=True)
class StepPlan:
    """Everything one step of size `h` with coefficients ``(alpha, beta)`` needs:
    ``gamma`` of its matrix, the history matrices and the weights of past inputs."""

    h: float
    gamma: float
    history: tuple[MatVec, ...]
    input_weights: tuple[float, ...]   # for u_n, u_{n-1}, ... (already divided by the scale)
    corrections: tuple[float, ...] = ()  # x_n = z - sum_j corrections[j] x_{n-1-j}

    @classmethod
    def make(cls, C, G, scheme: LinearMultistep, h: float, ratio: float = 1.0) -> StepPlan:
        """For an implicit method the history needs C only: with ``A = gamma C + G`` and
        ``G = A - gamma C``, the step ``A x_n = sum_j (-alpha_j C/h - beta_j G) x_{n-j} / beta_0
        + B w`` becomes ``A z = C sum_j c_j x_{n-j} + B w`` with
        ``c_j = (beta_j alpha_0 / beta_0 - alpha_j) / (h beta_0)`` and
        ``x_n = z - sum_j (beta_j / beta_0) x_{n-j}`` (the trapezoidal rule: ``c_1 = 4/h``,
        ``x_n = z - x_{n-1}``): a mat-vec with C instead of with ``C/h - G/2``."""
        alpha, beta = scheme.coefficients(ratio)
        scale = beta[0] if beta[0] else alpha[0] / h
        weights = tuple(b / scale for b in beta)
        gamma = step_gamma(alpha[0], beta[0], h)
        if not beta[0]:
            return cls(h, gamma, tuple(map(MatVec, history_matrices(C, G, alpha, beta, h))),
                       weights)
        factors = [(b * alpha[0] / beta[0] - a) / (h * beta[0]) for a, b in
                   zip(alpha[1:], beta[1:], strict=True)]
        C = sp.csr_matrix(C)
        return cls(h, gamma, tuple(MatVec(C * c) for c in factors), weights,
                   tuple(b / beta[0] for b in beta[1:]))

    def correct(self, x: np.ndarray, history: list[np.ndarray]) -> None:
        """``x -= sum_j corrections[j] * history[j]`` in place."""
        for weight, past in zip(self.corrections, history, strict=False):
            if weight == 1.0:
                np.subtract(x, past, out=x)
            elif weight:
                _axpy(past, x, a=-weight)


@dataclass
class Problem:
    """The linear system to integrate, with the few rows to record at each accepted step."""

    C: sp.csr_matrix
    G: sp.csr_matrix
    B: sp.csr_matrix
    record: sp.csr_matrix          # rows recorded at every point (outputs' P and Q parts)
    # (times, before=False) -> inputs, shape (len(times), m); `before`: limits from the left
    inputs: Callable[..., np.ndarray]
    breakpoints: np.ndarray
    differential: np.ndarray       # bool mask: unknowns that appear in C (for the LTE)
    absolute: np.ndarray           # absolute tolerance per unknown

    def __post_init__(self):
        rows = np.flatnonzero(np.diff(sp.csr_matrix(self.B).indptr))
        self.input_rows = rows
        self.input_block = np.ascontiguousarray(sp.csr_matrix(self.B)[rows].toarray())
        self.recorder = MatVec(self.record)

    def drive(self, w: np.ndarray) -> np.ndarray:
        """The nonzero rows of ``B w`` (`w` one vector of inputs, or one per row)."""
        return w @ self.input_block.T


def _progress(total: float, label: str):
    """A tqdm bar on a terminal (and when warnings are shown), else nothing."""
    if not sys.stderr.isatty() or not logging.getLogger("mna").isEnabledFor(logging.WARNING):
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=label, unit="s", leave=False, file=sys.stderr,
                bar_format="{l_bar}{bar}| t={n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")


def _build_rhs(problem: Problem, plan: StepPlan, history: list[np.ndarray], drive: np.ndarray,
               rhs: np.ndarray) -> None:
    """``rhs = sum_j H_j x_{n-j} + B w_n``, with `drive` the nonzero rows of ``B w_n``."""
    plan.history[0].assign(history[0], rhs)
    for j in range(1, len(plan.history)):   # none for a one-step method: no slices made
        plan.history[j](history[j], rhs)
    if len(problem.input_rows):
        rhs[problem.input_rows] += drive


def fixed_steps(problem: Problem, scheme: LinearMultistep, x0: np.ndarray, h: float, steps: int,
                solver: StepSolver) -> tuple[np.ndarray, np.ndarray]:
    """Integrate `steps` equal steps of size `h` from ``x0`` at t = 0.

    Returns the times and the recorded rows (one row per time point). The first steps and
    the first step that starts at or after each breakpoint (`restart_steps`) are restarts:
    two backward-Euler quarter steps and a trapezoidal half step, all on one matrix
    ``4 C/h + G`` (`restart_plans`). A small linear system (up to `DENSE_STEP_LIMIT`
    unknowns) takes its other steps as dense propagators (`Propagator`): there a step's few
    numpy calls, not its solve, are the cost.
    """
    times = _grid(h, steps, problem.breakpoints)
    u = problem.inputs(times)                        # (N+1, m), evaluated once
    ends = problem.inputs(times, before=True)        # a step ends before a jump at its end
    main = StepPlan.make(problem.C, problem.G, scheme, h)
    restarts = restart_steps(scheme, problem.breakpoints, h, steps) if scheme.starter else []
    restart = restart_plans(problem, h) if restarts else []
    restart_drives = _restart_drives(problem, restart, times, restarts)
    # w_n = sum_j beta_j u_{n-j} / scale for the main method, vectorised over n, and B w_n
    w = np.zeros_like(u)
    for j, weight in enumerate(main.input_weights):
        if weight:
            w[j:] += weight * (ends if j == 0 else u)[: len(u) - j]
    drive = problem.drive(w)
    record = np.zeros((steps + 1, problem.record.shape[0]))
    problem.recorder(x0, record[0])
    history = [x0.copy() for _ in range(max(scheme.steps, 1))]
    spare = np.empty_like(x0)
    propagator = None
    if isinstance(solver, LinearStepSolver) and len(x0) <= DENSE_STEP_LIMIT:
        propagator = Propagator(problem, main, solver.factor_for(main.gamma))
    bar = _progress(times[-1], "tran")
    chunk = max(1, steps // 100)
    first = 1
    for count, step in enumerate([*restarts, steps + 1]):
        for start in range(first, step, chunk):      # main steps up to the restart
            stop = min(start + chunk, step)
            if propagator is not None:
                propagator.advance(history, drive[start:stop], record[start:stop])
            else:
                for n in range(start, stop):
                    spare = _solved_step(problem, main, history, drive[n], spare, solver,
                                         times[n])
                    problem.recorder(history[0], record[n])
            if bar is not None:
                bar.update(times[stop - 1] - bar.n)
        if step <= steps:
            _restarted_step(problem, restart, [d[count] for d in restart_drives], history,
                            solver, times[step - 1])
            problem.recorder(history[0], record[step])
        first = step + 1
    if bar is not None:
        bar.close()
    return times, record


def restart_plans(problem: Problem, h: float) -> list[StepPlan]:
    """A restart of a step `h`: two backward-Euler quarter steps, then a trapezoidal half
    step, all with the matrix ``4 C/h + G``. Backward Euler takes the algebraic unknowns to a
    state consistent with the inputs (a trapezoidal step keeps half of the previous ones, so
    an inconsistent start or a corner of a source would ring, undamped); its first-order
    error stays small at a quarter step, and the half step is second order again."""
    quarter = StepPlan.make(problem.C, problem.G, method("be"), h / 4)
    return [quarter, quarter, StepPlan.make(problem.C, problem.G, method("trap"), h / 2)]


def _restart_drives(problem: Problem, plans: list[StepPlan], times: np.ndarray,
                    restarts: list[int]) -> list[np.ndarray]:
    """For each of the restart `plans`, the nonzero rows of ``B w`` at every restart, the
    inputs evaluated once for all of them (the last plan ends at the grid time, seen from
    the left)."""
    steps = np.asarray(restarts, int)
    drives, elapsed = [], 0.0
    for k, plan in enumerate(plans):
        elapsed += plan.h
        ends = times[steps] if k == len(plans) - 1 else times[steps - 1] + elapsed
        w = plan.input_weights[0] * problem.inputs(ends, before=True)
        for j, weight in enumerate(plan.input_weights[1:], start=1):
            if weight:
                w = w + weight * problem.inputs(ends - j * plan.h)
        drives.append(problem.drive(w))
    return drives


def _restarted_step(problem: Problem, plans: list[StepPlan], drives: list[np.ndarray],
                    history: list[np.ndarray], solver: StepSolver, start: float) -> None:
    """One step of the grid from `start` by the one-step `plans` in turn, with their
    `drives`; only the step's end goes to the front of `history` (a multistep method keeps
    its grid points)."""
    point, t = [history[0].copy()], start
    spare = np.empty_like(point[0])
    for plan, drive in zip(plans, drives, strict=True):
        t += plan.h
        spare = _solved_step(problem, plan, point, drive, spare, solver, t)
    history.pop()
    history.insert(0, point[0])


def _grid(h: float, steps: int, breakpoints: np.ndarray) -> np.ndarray:
    """``n h`` for n = 0..steps, with a time within round-off of a breakpoint set to it: a
    jump at a grid time is then seen exactly there (from the left by the step that ends
    there, from the right by the next)."""
    times = h * np.arange(steps + 1)
    if len(breakpoints):
        nearest = np.rint(breakpoints / h).astype(int)
        on_grid = (np.abs(nearest * h - breakpoints) <= 1e-9 * h) & (nearest <= steps)
        times[nearest[on_grid]] = breakpoints[on_grid]
    return times


def restart_steps(scheme: LinearMultistep, breakpoints: np.ndarray, h: float,
                  steps: int) -> list[int]:
    """The steps (numbered from 1) that the starter takes on a fixed grid: the first ones, and
    the first step that starts at or after each breakpoint (a corner inside a step is past
    by the end of that step)."""
    opening = range(1, max(1, scheme.steps - 1) + 1)
    after = np.ceil(np.asarray(breakpoints) / h * (1 - 1e-9)).astype(int) + 1
    return sorted({n for n in (*opening, *after.tolist()) if 1 <= n <= steps})


def _solved_step(problem: Problem, plan: StepPlan, history: list[np.ndarray], drive: np.ndarray,
                 spare: np.ndarray, solver: StepSolver, time: float) -> np.ndarray:
    """One step by a solve: the new point goes to the front of `history` (whose oldest point
    leaves); returns the buffer free for the next right-hand side."""
    _build_rhs(problem, plan, history, drive, spare)
    x = solver(plan.gamma, spare, time)
    plan.correct(x, history)
    oldest = history.pop()
    history.insert(0, x)
    return oldest if x is spare else spare


class Propagator:
    """A step of a linear system as dense matrices, ``x_n = sum_j P_j x_{n-j} + Q d_n`` (``d_n``
    the nonzero rows of ``B w_n``): ``P_j = A^-1 H_j - c_j I`` and ``Q = A^-1 E`` from the
    step's factors, computed once. The same arithmetic as a solve per step, to round-off."""

    def __init__(self, problem: Problem, plan: StepPlan, factors: Factorization):
        size = len(problem.differential)
        identity = np.eye(size)
        self.P = [factors.solve(matvec.matrix.toarray()) for matvec in plan.history]
        for P, correction in zip(self.P, plan.corrections, strict=False):
            P -= correction * identity
        self.Q = factors.solve(identity[:, problem.input_rows])
        self.recorder = problem.recorder

    def advance(self, history: list[np.ndarray], drive: np.ndarray, record: np.ndarray) -> None:
        """Take one step per row of `drive` (``d_n``), recording each into `record`'s row."""
        points = drive @ self.Q.T          # Q d_n for these steps, then the history terms added
        term = np.empty(points.shape[1])
        for x, row in zip(points, record, strict=True):
            for P, past in zip(self.P, history, strict=False):
                np.dot(P, past, out=term)
                np.add(x, term, out=x)
            history.pop()
            history.insert(0, x)
            self.recorder(x, row)


def adaptive_steps(problem: Problem, scheme: LinearMultistep, x0: np.ndarray, tstop: float,
                   hmax: float, reltol: float,
                   solver: StepSolver) -> tuple[np.ndarray, np.ndarray]:
    """Integrate to `tstop` choosing steps by the local truncation error.

    Steps are powers of two below `hmax` (so a linear system meets only a few matrices),
    except a step that lands exactly on a breakpoint; the first steps and the steps after a
    breakpoint are short and taken with the starter method; a step whose error estimate
    exceeds ``trtol * (reltol * |x| + abstol)`` is rejected and retried shorter.
    """
    plans: OrderedDict[tuple, StepPlan] = OrderedDict()

    def plan_for(m: LinearMultistep, h: float, ratio: float) -> StepPlan:
        key = (m.name, float(f"{h:.12g}"), float(f"{ratio:.6g}") if m.steps > 1 else 1.0)
        found = plans.get(key)
        if found is None:
            found = plans[key] = StepPlan.make(problem.C, problem.G, m, h, ratio)
            if len(plans) > 64:
                plans.popitem(last=False)
        return found

    breakpoints = np.unique(np.append(problem.breakpoints[(problem.breakpoints > 0)
                                                          & (problem.breakpoints < tstop)], tstop))
    h_start = hmax * START_FRACTION
    h_min = hmax * MIN_FRACTION
    t = 0.0
    times, xs = [0.0], [x0.copy()]
    inputs = [problem.inputs(np.array([0.0]))[0]]
    record = [problem.record @ x0]
    h, since_restart, rejected, bp = h_start, 0, 0, 0
    rhs = np.empty_like(x0)
    p = scheme.order
    bar = _progress(tstop, "tran")
    while t < tstop * (1 - 1e-12):
        while bp < len(breakpoints) - 1 and breakpoints[bp] <= t * (1 + 1e-12) + h_min:
            bp += 1
        target = breakpoints[bp]
        h = min(h, hmax)
        landing = t + h >= target - 1e-9 * h
        if landing:
            h = target - t
        elif t + 2 * h > target:
            h = (target - t) / 2
        use = method_at(scheme, since_restart)
        previous = times[-1] - times[-2] if len(times) > 1 else h
        plan = plan_for(use, h, h / previous)
        t_new = target if landing else t + h
        u_new = problem.inputs(np.array([t_new]))[0]
        past_u = [problem.inputs(np.array([t_new]), before=True)[0], *inputs[::-1]]
        w = sum(weight * past_u[j] for j, weight in enumerate(plan.input_weights))
        _build_rhs(problem, plan, xs[::-1], problem.drive(w), rhs)
        x = solver(plan.gamma, rhs, t_new).copy()
        plan.correct(x, xs[::-1])
        # error check once enough points lie after the last restart
        ratio = 0.0
        if since_restart >= p + 1 and len(xs) >= p + 1:
            ratio = error_ratio(scheme, h, times, xs, x, t_new, reltol, problem.absolute,
                                problem.differential)
        if ratio > 1.0:
            rejected += 1
            h = _power_of_two(h * shrink_factor(ratio, p), hmax)
            if h < h_min:
                raise ConvergenceError(
                    f"transient: time step too small at t = {t:.6g} s (error ratio {ratio:.3g} "
                    f"at h = {h:.3g} s); tried {rejected} shorter steps")
            continue
        times.append(t_new)
        xs.append(x)
        inputs.append(u_new)
        del xs[: -max(p + 2, scheme.steps + 1)]
        del inputs[: -(scheme.steps + 1)]
        record.append(problem.record @ x)
        t = t_new
        since_restart += 1
        h = _power_of_two(h * grow_factor(ratio, p), hmax)
        if landing and t < tstop * (1 - 1e-12):
            since_restart, h = 0, min(h, h_start)   # a corner: restart short and low order
        if bar is not None:
            bar.update(t - bar.n)
    if bar is not None:
        bar.close()
    log.info("transient: %d accepted and %d rejected steps", len(times) - 1, rejected)
    return np.array(times), np.array(record)


def _power_of_two(h: float, hmax: float) -> float:
    """The largest ``hmax * 2**-k`` not above `h`."""
    if h >= hmax:
        return hmax
    return hmax * 2.0 ** -np.ceil(np.log2(hmax / h) - 1e-12)
