"""The state a transient starts from at t = 0.

Without ``uic``: the operating point with the inputs at t = 0, where ``.ic`` and ``IC=``
values hold (each a constraint bordering the equations, as a source forcing that value).
With ``uic``: every storage element at its ``IC=``, else at the ``.ic`` values, else at
rest, the algebraic unknowns solved consistently. A circuit with no DC solution only because
storage floats (a free mass pushed by a force) starts from rest, with a warning.
"""

from __future__ import annotations

import logging

import numpy as np

from mna.analysis.equations import Equations
from mna.analysis.newton import solve_dc
from mna.assembly import NumericBackend, Stamper, output_row
from mna.diagnostics import check_dc_topology
from mna.errors import (
    ConvergenceError,
    NetlistError,
    NoOperatingPoint,
    SingularSystemError,
    TopologyError,
)
from mna.system import Entries

log = logging.getLogger(__name__)

SETTLING_STEP = 1e-9   # a short step, relative to the system's time scale of 1


def initial_state(circuit, equations: Equations, b0: np.ndarray, uic: bool) -> np.ndarray:
    """Unknowns at t = 0 of `equations` (without constraints), with ``B u(0)`` = `b0`."""
    if not uic:
        try:
            check_dc_topology(circuit)
        except TopologyError as error:
            log.warning("%s: the operating point at t = 0 does not exist (%s); the transient "
                        "starts from rest, as with .tran ... uic", circuit.path, error.message)
            uic = True
    system = equations.system
    K, values, labels = constraints(circuit, uic)
    bordered = Equations(system, circuit.options, border=(K, labels)) if labels else equations
    rhs = np.concatenate([b0, values])
    n = system.size
    if not system.is_linear:
        try:
            return solve_dc(bordered, rhs)[:n]
        except NoOperatingPoint as error:
            if uic:
                raise
            log.warning("%s: %s; the transient starts from rest, as with .tran ... uic",
                        circuit.path, error)
            return initial_state(circuit, equations, b0, uic=True)
        except ConvergenceError as error:
            if not uic:
                raise
            log.info("uic: no consistent start (%s); storage at its initial values, the rest "
                     "at 0", error)
            return _least_squares(K, values)
    try:
        return bordered.factor(bordered.g_data).solve(rhs)[:n]
    except SingularSystemError as error:
        if not uic:
            raise SingularSystemError(f"operating point at t = 0: {error}",
                                      error.unknowns) from None
        log.debug("uic: constraints are dependent (%s); consistent start by a short step", error)
    # Storage constraints that are not independent (a capacitor across a source, a loop of
    # capacitors): hold the storage at its initial values and let the algebraic unknowns
    # settle through a very short backward-Euler step h, extrapolated to h -> 0 (Richardson:
    # the step moves the storage by O(h)).
    x_ic = _least_squares(K, values)
    residual = b0 - system.g.product(x_ic)

    def settled(h: float) -> np.ndarray:
        return x_ic + equations.factor(equations.c_data + h * equations.g_data).solve(
            h * residual)

    return 2.0 * settled(SETTLING_STEP / 2) - settled(SETTLING_STEP)


def _least_squares(K: Entries, values: np.ndarray) -> np.ndarray:
    """The smallest `x` with ``K x = values`` (storage at its values, the rest at 0)."""
    if not len(values):
        return np.zeros(K.shape[1])
    return np.linalg.lstsq(K.dense(), values, rcond=None)[0]


def constraints(circuit, uic: bool) -> tuple[Entries, np.ndarray, tuple[str, ...]]:
    """Rows ``k·x = value`` from ``IC=`` and ``.ic`` and, with `uic`, from rest states, with
    a label each.

    An element's ``IC=`` outranks ``.ic`` on the same variable. A rest state (storage without
    ``IC=`` under `uic`: value 0) is dropped when it involves an unknown that ``.ic`` gives,
    as SPICE's `uic` starts such storage from the ``.ic`` node voltages and 0 for the others.
    """
    s = Stamper(circuit, NumericBackend(circuit))
    rows: list[int] = []
    cols: list[int] = []
    coefficients: list[float] = []
    values: list[float] = []
    labels: list[str] = []
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
        seen[key] = len(values)
        rows.extend([len(values)] * len(row.x.cols))
        cols.extend(row.x.cols)
        coefficients.extend(row.x.values)
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
    K = Entries.of(rows, cols, coefficients, (len(values), len(s.unknowns)))
    return K, np.array(values, float), tuple(labels)
