"""``.tran tstep tstop [tstart [tmax]] [uic]``: transient analysis, as SPICE means it.

`tstep` is the printing increment and a hint for the first step: steps are chosen by the
truncation error (`controller.run_steps`), never above `tmax` (by default the smaller of
`tstep` and a fiftieth of the span, as in ngspice), landing on every breakpoint of the
sources; the table holds the accepted points, or with ``.options interp`` the `tstep` grid.
``.options stepcontrol=fixed`` steps at ``min(tstep, tmax)``, a linear system's matrix
factored once. How each step is solved is the strategy of `step_solvers`.

>>> import mna
>>> c = mna.read_string("rc\\nV1 in 0 1\\nR1 in out 1k\\nC1 out 0 1u IC=0\\n.tran 10u 1m uic\\n")
>>> frame = mna.run(c)[0].to_dataframe()
>>> round(float(frame["V(out)"].iloc[-1]), 3)       # 1 - exp(-1)
0.632
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from mna.analysis.controller import Policy, StepSolver, run_steps
from mna.analysis.equations import Equations
from mna.analysis.initial import initial_state
from mna.analysis.integrators import LinearMultistep, method
from mna.analysis.newton import ROUND_OFF
from mna.analysis.step_solvers import LinearSteps, ModalSteps, NewtonSteps, SemiImplicitSteps
from mna.assembly import NumericBackend, assemble
from mna.errors import NetlistError, SingularSystemError
from mna.linalg import Use, factor
from mna.netlist.requests import check_count
from mna.results import TableResult

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

DENSE_EIGEN_LIMIT = 2000
RESOLUTION = 1e-9      # of hmax: times closer are one (breakpoints, landings, quick changes)
SMALLEST_STEP = 1e-11  # of hmax: a step that must be shorter fails the run (ngspice's delmin)
SHORTEST_TIME = 1e-30   # s: .tran times below it would make steps of no physical meaning


def time_limits(request, circuit) -> tuple[float, float, float, float | None]:
    """``tstep, tstop, tstart, tmax`` as numbers, checked."""
    backend = NumericBackend(circuit)
    tstep, tstop, tstart = (backend.evaluate(v)
                            for v in (request.tstep, request.tstop, request.tstart))
    tmax = None if request.tmax is None else backend.evaluate(request.tmax)
    if not tstep > 0 or not tstop > 0:
        raise NetlistError(f".tran needs tstep > 0 and tstop > 0 (got {tstep:g}, {tstop:g})",
                           request.location)
    if min(tstep, tstop, tmax or tstep) < SHORTEST_TIME:
        raise NetlistError(f".tran times below {SHORTEST_TIME:g} s are not resolved (got "
                           f"tstep {tstep:g}, tstop {tstop:g}"
                           + (f", tmax {tmax:g})" if tmax else ")"), request.location)
    if not 0 <= tstart < tstop:
        raise NetlistError(f".tran tstart {tstart:g} must lie in [0, tstop)", request.location)
    if tmax is not None and tmax < 0:
        raise NetlistError(f".tran tmax must not be negative (got {tmax:g})", request.location)
    return tstep, tstop, tstart, tmax or None   # tmax = 0: not given, as in ngspice


def transient(request, circuit) -> TransientResult:
    """``.tran``: the outputs over time."""
    tstep, tstop, tstart, tmax = time_limits(request, circuit)
    options = circuit.options
    adaptive = options.stepcontrol == "adaptive"
    if adaptive:   # ngspice: tmax when given, else the smaller of tstep and the span / 50
        hmax = min(tmax, tstop - tstart) if tmax is not None else min(tstep,
                                                                      (tstop - tstart) / 50)
    else:          # the fixed step: min(tstep, tmax), so many that they end at tstop
        hmax = tstop / math.ceil(tstop / min(tstep, tmax or tstep) * (1 - 1e-12))
    check_count(tstop / hmax, ".tran", circuit, request.location)
    system = assemble(circuit)
    scheme = method(options.method)
    if scheme.explicit and not system.is_linear:
        raise NetlistError(f"{scheme.name} is explicit and cannot solve the nonlinear elements "
                           "of this circuit; use method=be, trap or gear2", request.location)
    if scheme.explicit:
        _check_forward_euler(system, hmax, options.solver)
    build, use = _step_solver(system, options, hmax)
    equations = Equations(system, options, use=use)
    drive = _Drive(system, tstep, tstop)
    x0 = initial_state(circuit, equations, drive(0.0), request.uic, hmax)
    solver = build(equations)
    policy = Policy(adaptive, hmax, RESOLUTION * hmax, SMALLEST_STEP * hmax,
                    (options.reltol, options.abstol, options.chgtol, options.trtol),
                    first=min(hmax, min(tstop / 100, tstep) / 10) if adaptive else hmax)
    times, steps, corners, rows, derivative_rows, inputs = [], [], [], [], [], []
    records_derivatives = len(system.q.rows) > 0

    def accept(t: float, x: np.ndarray, before: bool, elapsed: float) -> None:
        check_count(len(times) + 1, ".tran", circuit, request.location)
        times.append(t)
        steps.append(elapsed)
        corners.append(before)
        rows.append(system.p.product(x))
        if records_derivatives:
            derivative_rows.append(system.q.product(x))
        inputs.append(drive.inputs(t, before))

    # the charges' rates at the start: none where an equation holds no charge (x0 may be
    # held off that equation's balance there, by .ic on a node without storage), but for an
    # imbalance at the round-off of its terms (zeroed, it moves the first step's point by
    # units in the last place, which a tight reltol's error estimate reads as a jump)
    applied, currents = drive(0.0), solver.currents(x0, 0.0)
    imbalance = applied - currents
    flow0 = np.where(solver.stores | (np.abs(imbalance) <= ROUND_OFF * (np.abs(applied)
                                                                       + np.abs(currents))),
                     imbalance, 0.0)
    try:
        run_steps(solver, scheme, drive, x0, flow0, tstop,
                  _breakpoints(system, tstep, tstop, circuit, request.location), policy, accept)
    except SingularSystemError as error:
        raise SingularSystemError(f"transient ({scheme.name}): {error}",
                                  error.unknowns) from None
    return _result(system, scheme, np.array(times), np.array(steps), np.array(corners),
                   np.array(rows), np.array(derivative_rows), np.array(inputs), tstep, tstop,
                   tstart, options.interp, getattr(solver, "factorizations", 0))


def _step_solver(system, options, hmax: float) -> tuple[Callable[[Equations], StepSolver], Use]:
    """The strategy that solves the steps of `system` (made from its equations), and how its
    factorisations are used: kept for many solves (a linear system, one linear in its
    devices' modes, the semi-implicit step on the first Jacobian), or made for one solve
    each (Newton's iterations refactor every time, where the fill of an order made for fast
    solves would only slow them)."""
    if system.is_linear:
        return functools.partial(LinearSteps, hmax=hmax), "many"
    if options.linearise == "newton":
        if all(device.linear_in_modes for device in system.devices):
            return functools.partial(ModalSteps, hmax=hmax), "many"
        return functools.partial(NewtonSteps, iterations=options.tranmaxiter), "once"
    once = options.linearise == "once"
    return functools.partial(SemiImplicitSteps, once=once), "many" if once else "once"


class TransientResult(TableResult):
    """The outputs over time; `to_dataframe()` is indexed by ``time`` (s)."""

    def __init__(self, columns, units, factorizations: int = 0, method: str = ""):
        super().__init__("tran", columns, units, independent="time")
        self.factorizations = factorizations
        self.method = method

    def to_dataframe(self) -> pd.DataFrame:
        import pandas as pd

        frame = pd.DataFrame({k: v for k, v in self.columns.items() if k != "time"},
                             index=pd.Index(self.columns["time"], name="time"))
        frame.attrs["units"] = dict(self.units)
        return frame


def _result(system, scheme: LinearMultistep, times: np.ndarray, steps: np.ndarray,
            corners: np.ndarray, rows: np.ndarray, derivative_rows: np.ndarray, u: np.ndarray,
            tstep: float, tstop: float, tstart: float, interp: bool,
            factorizations: int) -> TransientResult:
    """The table: outputs at the accepted points (or on the `tstep` grid with `interp`) from
    `tstart` on, with each point's inputs `u` as the step that ended there saw them (the
    value before a jump at its end); `steps`: the time from each point's predecessor, as
    the integration took it; `corners`: the points on a source's corner."""
    if not np.all(np.isfinite(rows)):
        first = times[int(np.argmax(~np.all(np.isfinite(rows), axis=1)))]
        raise SingularSystemError(f"transient: the solution is not finite from t = "
                                  f"{first:.6g} s on (unstable step or singular matrix)")
    values = rows + (system.r.product(u.T).T if len(system.inputs) else 0.0)
    if len(derivative_rows):
        values = values + _derivative(steps, corners, derivative_rows, scheme)
    if interp:
        grid = tstep * np.arange(math.floor(tstop / tstep * (1 + 1e-12)) + 1)
        values = np.array([np.interp(grid, times, column) for column in values.T]).reshape(
            -1, len(grid)).T
        times = grid
    keep = times >= tstart * (1 - 1e-12)
    columns = {"time": times[keep]}
    units = {"time": "s"}
    for k, (name, unit) in enumerate(zip(system.outputs, system.output_units, strict=True)):
        columns[name] = np.ascontiguousarray(values[keep, k])
        units[name] = unit
    return TransientResult(columns, units, factorizations=factorizations, method=scheme.name)


# -- inputs ---------------------------------------------------------------------------------

class _Drive:
    """``(time, before) -> B u``, the sources' values at `time` (their limits from the left
    with `before`), DC where a source has no waveform; `inputs` gives ``u`` itself, the last
    one again without recomputing it (a step's accepted point is where it was driven)."""

    def __init__(self, system, tstep: float, tstop: float):
        self.b = system.b
        self.tstep, self.tstop = tstep, tstop
        self.held = np.array([signal.dc for signal in system.inputs], dtype=float)
        self.waves = [(k, signal.waveform) for k, signal in enumerate(system.inputs)
                      if signal.waveform is not None]
        self._last: tuple[float, bool, np.ndarray] | None = None

    def inputs(self, time: float, before: bool = False) -> np.ndarray:
        if self._last is not None and self._last[:2] == (time, before):
            return self._last[2]
        u = self.held.copy()
        for k, wave in self.waves:
            u[k] = wave.value(time, self.tstep, self.tstop, before)
        self._last = (time, before, u)
        return u

    def __call__(self, time: float, before: bool = False) -> np.ndarray:
        return self.b.product(self.inputs(time, before))


def _breakpoints(system, tstep: float, tstop: float, circuit, location) -> np.ndarray:
    """The sources' corners, each a point of the run: refused beyond ``maxpoints``."""
    waves = [s.waveform for s in system.inputs if s.waveform is not None]
    check_count(sum(wave.corner_count(tstep, tstop) for wave in waves),
                ".tran (the corners of the sources' waveforms)", circuit, location,
                per_point=False)
    found = [wave.breakpoints(tstep, tstop) for wave in waves]
    return np.unique(np.concatenate(found)) if found else np.empty(0)


# -- forward Euler --------------------------------------------------------------------------

def _check_forward_euler(system, h: float, solver: str) -> None:
    """Refuse a singular C (x' has no explicit formula); warn above the stability limit."""
    import scipy.sparse as sp

    C, G = sp.csc_matrix(system.C), sp.csc_matrix(system.G)
    empty = np.flatnonzero(np.diff(C.tocsr().indptr) == 0)
    if system.size and len(empty):
        names = tuple(system.unknowns[i] for i in empty)
        raise SingularSystemError(
            "forward Euler needs an invertible C, but the equations of "
            + ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
            + " hold no derivative (algebraic unknowns: source branches, nodes without "
            "storage), so x' cannot be computed explicitly; use .options method=be, trap or "
            "gear2", names)
    try:
        C_factor = factor(C, system.unknowns, solver)
    except SingularSystemError as error:
        raise SingularSystemError(f"forward Euler needs an invertible C: {error}",
                                  error.unknowns) from None
    eigenvalues = _eigenvalues(C, G, C_factor)
    if eigenvalues.size == 0:
        return
    fastest = float(np.max(np.abs(eigenvalues)))
    if np.max(np.abs(1.0 + h * eigenvalues)) > 1.0 + 1e-12:
        log.warning("forward Euler is unstable at h = %.4g s: the fastest mode has "
                    "|lambda_max| = %.6g 1/s, so the step must stay below 2/|lambda_max| = "
                    "%.4g s (or use method=be, trap or gear2)", h, fastest, 2.0 / fastest)


def _eigenvalues(C, G, C_factor) -> np.ndarray:
    """Eigenvalues of ``-C^-1 G`` (all of them when small; the largest few otherwise)."""
    import scipy.linalg
    import scipy.sparse.linalg as spla

    n = C.shape[0]
    if n <= DENSE_EIGEN_LIMIT:
        return scipy.linalg.eigvals(-G.toarray(), C.toarray())
    operator = spla.LinearOperator((n, n), matvec=lambda v: -C_factor.solve(G @ v), dtype=float)
    try:
        return spla.eigs(operator, k=min(6, n - 2), which="LM", return_eigenvectors=False)
    except (spla.ArpackNoConvergence, spla.ArpackError) as error:
        log.debug("forward Euler stability check skipped: %s", error)
        return np.empty(0)


# -- outputs ----------------------------------------------------------------------------------

def _derivative(steps: np.ndarray, corners: np.ndarray, values: np.ndarray,
                scheme: LinearMultistep) -> np.ndarray:
    """Time derivative of recorded rows (for outputs ``Q x'`` such as a capacitor's through
    variable): backward differences, second order for second-order methods but across a
    source's corner (`corners`, where the rows' slope breaks), over the `steps` between the
    rows (not the difference of their times, which a step of a few units in the last place
    of t would only hold to its rounding)."""
    d = np.zeros_like(values)
    if len(steps) < 2:
        return d
    h = steps[1:]
    d[1:] = (values[1:] - values[:-1]) / h[:, None]
    d[0] = d[1]
    if scheme.order >= 2 and len(steps) > 2:
        h1, h2 = h[1:, None], h[:-1, None]          # t_n - t_{n-1}, t_{n-1} - t_{n-2}
        x0, x1, x2 = values[2:], values[1:-1], values[:-2]
        second = ((2 * h1 + h2) / (h1 * (h1 + h2)) * x0 - (h1 + h2) / (h1 * h2) * x1
                  + h1 / (h2 * (h1 + h2)) * x2)
        d[2:] = np.where(corners[1:-1, None], d[2:], second)
    return d
