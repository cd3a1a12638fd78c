"""``.tran tstep tstop [tstart [tmax]] [uic]``: transient analysis.

A linear system ``G x + C x' = B u`` is integrated by one linear multistep method
(`integrators`) on the engine in `stepping`: at a fixed step the matrix ``gamma C + G`` is
factored once (and ``4 C/h + G`` once for the restarts of the trapezoidal rule and Gear-2
at t = 0 and after corners) and each step is one forward/back substitution, or up to 200
unknowns one dense propagator; with ``.options
stepcontrol=adaptive`` steps are chosen by the local truncation error and factorisations are
cached per step size. A nonlinear system takes Newton at every step, or MTT's semi-implicit
steps with ``method=semi`` (`newton_stepping`).

>>> import mna
>>> c = mna.read_string("rc\\nV1 in 0 1\\nR1 in out 1k\\nC1 out 0 1u IC=0\\n.tran 10u 1m uic\\n")
>>> frame = mna.run(c)[0].to_dataframe()
>>> round(float(frame["V(out)"].iloc[-1]), 3)       # 1 - exp(-1)
0.632
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from mna.analysis.integrators import LinearMultistep, LinearStepSolver, method
from mna.analysis.newton import solve_dc
from mna.analysis.newton_stepping import newton_steps, semi_implicit_steps
from mna.analysis.stepping import Problem, adaptive_steps, fixed_steps
from mna.assembly import NumericBackend, Stamper, assemble, output_row
from mna.diagnostics import check_dc_topology
from mna.errors import ConvergenceError, NetlistError, SingularSystemError, TopologyError
from mna.linalg import factor
from mna.results import TableResult
from mna.subnormals import flushed

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

DENSE_EIGEN_LIMIT = 2000


def time_limits(request, circuit) -> tuple[float, float, float, float | None]:
    """``tstep, tstop, tstart, tmax`` as numbers, checked."""
    backend = NumericBackend(circuit)
    tstep, tstop, tstart = (backend.evaluate(v)
                            for v in (request.tstep, request.tstop, request.tstart))
    tmax = None if request.tmax is None else backend.evaluate(request.tmax)
    if not tstep > 0 or not tstop > 0:
        raise NetlistError(f".tran needs tstep > 0 and tstop > 0 (got {tstep:g}, {tstop:g})",
                           request.location)
    if not 0 <= tstart < tstop:
        raise NetlistError(f".tran tstart {tstart:g} must lie in [0, tstop)", request.location)
    if tmax is not None and tmax < 0:
        raise NetlistError(f".tran tmax must not be negative (got {tmax:g})", request.location)
    return tstep, tstop, tstart, tmax or None   # tmax = 0: not given, as in ngspice


def transient(request, circuit) -> TransientResult:
    """``.tran``: the outputs over time."""
    tstep, tstop, tstart, tmax = time_limits(request, circuit)
    options = circuit.options
    system = assemble(circuit)
    semi = options.method == "semi"
    scheme = method("be" if semi else options.method)
    n = system.size
    G, C = sp.csr_matrix(system.G), sp.csr_matrix(system.C)
    # nonlinear systems always choose their steps (MTT's semi-implicit methods do not)
    adaptive = (options.stepcontrol == "adaptive" or not system.is_linear) and not semi
    if adaptive:   # ngspice: tmax when given, else the smaller of tstep and tstop/50
        hmax = tmax if tmax is not None else min(tstep, tstop / 50)
    else:          # the fixed step h = min(tstep, tmax)
        hmax = min(tstep, tmax) if tmax is not None else tstep
    steps = max(1, int(np.ceil(tstop / hmax * (1 - 1e-12))))
    h = tstop / steps
    if scheme.explicit:
        _check_forward_euler(system, h, options.solver)
    inputs = _input_function(system, tstep, tstop)
    x0 = initial_state(circuit, system, inputs(np.array([0.0]))[0], request.uic)
    problem = Problem(
        C=C, G=G, B=sp.csr_matrix(system.B),
        record=sp.csr_matrix(sp.vstack([system.P, system.Q])) if n else sp.csr_matrix(
            (2 * len(system.outputs), 0)),
        inputs=inputs,
        breakpoints=_breakpoints(system, tstep, tstop),
        differential=np.asarray(abs(C).sum(axis=0) > 0).ravel() if n else np.zeros(0, bool),
        absolute=_absolute_tolerances(system, options),
    )
    step_solver = LinearStepSolver(system.C, system.G, system.unknowns,
                                   explicit=scheme.explicit, solver=options.solver)
    try:
        with flushed():   # subnormal numbers as zero: they slow arithmetic, mean nothing
            if semi:
                times, rows = semi_implicit_steps(system, problem, x0, h, steps, options)
            elif not system.is_linear:
                times, rows = newton_steps(system, problem, scheme, x0, tstop, hmax,
                                           options)
            elif adaptive:
                times, rows = adaptive_steps(problem, scheme, x0, tstop, hmax,
                                             options.reltol, step_solver)
            else:
                times, rows = fixed_steps(problem, scheme, x0, h, steps, step_solver)
    except SingularSystemError as error:
        raise SingularSystemError(f"transient ({scheme.name}): {error}",
                                  error.unknowns) from None
    log.info("transient: %d points, %d factorisations", len(times),
             step_solver.factorizations)
    _check_finite(times, rows)
    outputs = len(system.outputs)
    # the inputs that the steps ending there saw: the value before a jump (MTT's
    # semi-implicit steps take the value after it); the first point: the initial state's
    u = inputs(times, before=not semi)
    u[0] = inputs(times[:1])[0]
    values = rows[:, :outputs] + u @ system.R.T.toarray() if outputs else rows
    if system.Q.nnz:
        values = values + _derivative(times, rows[:, outputs:], scheme)
    keep = times >= tstart * (1 - 1e-12)
    columns = {"time": times[keep]}
    units = {"time": "s"}
    for k, (name, unit) in enumerate(zip(system.outputs, system.output_units, strict=True)):
        columns[name] = np.ascontiguousarray(values[keep, k])
        units[name] = unit
    return TransientResult(columns, units, factorizations=step_solver.factorizations,
                           method=scheme.name)


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


# -- inputs ---------------------------------------------------------------------------------

def _input_function(system, tstep: float, tstop: float):
    """``times -> u`` with shape ``(len(times), m)``: waveforms vectorised, DC held."""
    signals = system.inputs

    def inputs(times: np.ndarray, before: bool = False) -> np.ndarray:
        u = np.empty((len(times), len(signals)))
        for k, signal in enumerate(signals):
            if signal.waveform is None:
                u[:, k] = signal.dc
            elif before:
                u[:, k] = signal.waveform.values_before(times, tstep, tstop)
            else:
                u[:, k] = signal.waveform.values(times, tstep, tstop)
        return u

    return inputs


def _breakpoints(system, tstep: float, tstop: float) -> np.ndarray:
    found = [s.waveform.breakpoints(tstep, tstop) for s in system.inputs if s.waveform is not None]
    return np.unique(np.concatenate(found)) if found else np.empty(0)


def _absolute_tolerances(system, options) -> np.ndarray:
    """``vntol`` for across unknowns, ``abstol`` for through unknowns (as SPICE)."""
    tolerance = np.full(system.size, options.abstol)
    tolerance[: system.across_count] = options.vntol
    return tolerance


# -- initial state ----------------------------------------------------------------------------

def initial_state(circuit, system, u0: np.ndarray, uic: bool) -> np.ndarray:
    """Unknowns at t = 0.

    Without `uic`: the operating point with the inputs at t = 0, where ``.ic`` and ``IC=``
    values hold (each one a constraint bordering G, as a source forcing that value). With
    `uic`: every storage element at its ``IC=``, else at the ``.ic`` values, else at rest
    (`_constraints`), the algebraic unknowns solved consistently. A circuit with no DC
    solution only because storage floats (a free mass pushed by a force) starts from rest,
    with a warning.
    """
    if not uic:
        try:
            check_dc_topology(circuit)
        except TopologyError as error:
            log.warning("%s: the operating point at t = 0 does not exist (%s); the transient "
                        "starts from rest, as with .tran ... uic", circuit.path, error.message)
            uic = True
    rows, values, labels = _constraints(circuit, uic)
    n = system.size
    K = sp.csr_matrix((values.size, n))
    if rows:
        K = sp.vstack(rows).tocsr()
    if not system.is_linear:
        return _nonlinear_initial_state(circuit, system, u0, uic, K, values)
    rhs = np.concatenate([system.B @ u0, values])
    bordered = sp.bmat([[system.G, K.T], [K, None]], format="csc") if values.size else system.G
    try:
        return factor(bordered, system.unknowns + labels, circuit.options.solver).solve(rhs)[:n]
    except SingularSystemError as error:
        if not uic:
            raise SingularSystemError(f"operating point at t = 0: {error}",
                                      error.unknowns) from None
        log.debug("uic: constraints are dependent (%s); consistent start by a short step", error)
    # Storage constraints that are not independent (a capacitor across a source, a loop of
    # capacitors): hold the storage at its initial values and let the algebraic unknowns
    # settle through a very short backward-Euler step h0, extrapolated to h0 -> 0 (Richardson:
    # the step moves the storage by O(h0)).
    x_ic = spla.lsqr(K, values, atol=1e-15, btol=1e-15)[0] if values.size else np.zeros(n)
    residual = system.B @ u0 - system.G @ x_ic

    def settled(h0: float) -> np.ndarray:
        return x_ic + factor(system.C + h0 * system.G, system.unknowns,
                             circuit.options.solver).solve(h0 * residual)

    return 2.0 * settled(0.5e-9) - settled(1e-9)


def _nonlinear_initial_state(circuit, system, u0, uic: bool, K, values) -> np.ndarray:
    """Newton (with continuation) for the state at t = 0 under the constraints: with `uic`
    every storage element held at its initial value and the algebraic unknowns consistent with
    it. Constraints that contradict each other under `uic` (a capacitor across a source) leave
    the algebraic unknowns at zero for the first step to settle, as SPICE starts."""
    border = (K, values) if values.size else None
    try:
        return solve_dc(system, u0, circuit.options, border=border)
    except ConvergenceError as error:
        if not uic:
            raise
        log.info("uic: no consistent start (%s); storage at its initial values, the rest at 0",
                 error)
        return spla.lsqr(K, values, atol=1e-15, btol=1e-15)[0]


def _constraints(circuit, uic: bool):
    """Rows ``k·x = value`` from ``IC=`` and ``.ic`` and, with `uic`, from rest states.

    An element's ``IC=`` outranks ``.ic`` on the same variable. A rest state (storage without
    ``IC=`` under `uic`: value 0) is dropped when it involves an unknown that ``.ic`` gives,
    as SPICE's `uic` starts such storage from the ``.ic`` node voltages and 0 for the others.
    """
    s = Stamper(circuit, NumericBackend(circuit))
    n = len(s.unknowns)
    rows, values, labels = [], [], []
    seen: dict[tuple, int] = {}

    def add(row, value: float, label: str, location) -> None:
        if row.dx.cols or row.u.cols:
            raise NetlistError(f"{label}: only an across variable or the through variable of a "
                               "T-type element or branch can be given an initial value", location)
        key = tuple(sorted(zip(row.x.cols, row.x.values)))
        if key in seen:  # the same variable twice (IC= and .ic): the element line wins
            if values[seen[key]] != value:
                log.warning("%s: %s = %g is ignored, %s sets %g", location, label, value,
                            labels[seen[key]], values[seen[key]])
            return
        seen[key] = len(rows)
        rows.append(sp.csr_matrix((np.asarray(row.x.values, float),
                                   (np.zeros(len(row.x.cols), int), row.x.cols)), shape=(1, n)))
        values.append(float(value))
        labels.append(label)

    at_rest = []
    for element in circuit.elements:
        for row, value in element.initial_conditions(s, uic):
            if value is None:
                at_rest.append((row, element))
            else:
                add(row, s.value(value), f"IC({element.name})", element.location)
    given = set()
    for output, value in circuit.initial.items():
        row = output_row(s, circuit, output)
        add(row, s.value(value), f".ic {circuit.label(output)}", output.location)
        given.update(row.x.cols)
    for row, element in at_rest:
        if not given.intersection(row.x.cols):
            add(row, 0.0, f"IC({element.name})", element.location)
    return rows, np.array(values, float), tuple(labels)


# -- forward Euler --------------------------------------------------------------------------

def _check_forward_euler(system, h: float, solver: str) -> None:
    """Refuse a singular C (x' has no explicit formula); warn above the stability limit."""
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

def _derivative(times: np.ndarray, values: np.ndarray, scheme: LinearMultistep) -> np.ndarray:
    """Time derivative of recorded rows (for outputs ``Q x'`` such as a capacitor's through
    variable): backward differences, second order for second-order methods."""
    d = np.zeros_like(values)
    if len(times) < 2:
        return d
    h = np.diff(times)
    d[1:] = (values[1:] - values[:-1]) / h[:, None]
    d[0] = d[1]
    if scheme.order >= 2 and len(times) > 2:
        h1, h2 = h[1:, None], h[:-1, None]          # t_n - t_{n-1}, t_{n-1} - t_{n-2}
        x0, x1, x2 = values[2:], values[1:-1], values[:-2]
        d[2:] = ((2 * h1 + h2) / (h1 * (h1 + h2)) * x0 - (h1 + h2) / (h1 * h2) * x1
                 + h1 / (h2 * (h1 + h2)) * x2)
    return d


def _check_finite(times, rows) -> None:
    bad = ~np.all(np.isfinite(rows), axis=1)
    if bad.any():
        first = int(np.argmax(bad))
        raise SingularSystemError(f"transient: the solution is not finite from t = "
                                  f"{times[first]:.6g} s on (unstable step or singular matrix)")
