"""The state a transient starts from at t = 0.

Without ``uic``: the operating point with the inputs at t = 0, where ``.ic`` and ``IC=``
values hold (each a constraint bordering the equations, as a source forcing that value).
With ``uic``: every storage element (and every charge of a semiconductor) at its ``IC=``,
else at the ``.ic`` values, else at rest, the algebraic unknowns solved consistently. A
circuit with no DC solution only because storage floats (a free mass pushed by a force)
starts from rest, with a warning.
"""

from __future__ import annotations

import logging

import numpy as np

from mna.analysis.equations import Equations
from mna.analysis.newton import Newton, NewtonFailure, solve_dc
from mna.analysis.op import guess
from mna.assembly import NumericBackend, Stamper, output_row
from mna.diagnostics import Forest, check_dc_topology
from mna.elements.base import Role
from mna.errors import (
    ConvergenceError,
    NetlistError,
    NoOperatingPoint,
    SingularSystemError,
    TopologyError,
)
from mna.linalg import factor_if_regular
from mna.system import DescriptorSystem, Entries

log = logging.getLogger(__name__)

SETTLING = 1e-6   # of hmax: the step over which storage that a source forces settles at t = 0


def initial_state(circuit, equations: Equations, b0: np.ndarray, uic: bool,
                  hmax: float) -> np.ndarray:
    """Unknowns at t = 0 of `equations` (without constraints), with ``B u(0)`` = `b0`.

    Under `uic`, storage that a source or a loop of storage forces (a capacitor across a
    voltage source) cannot keep its initial value: it takes the value it reaches in a
    backward-Euler step far shorter than the run's longest, `hmax`, as SPICE's first step
    from its initial node voltages does. So does every value where Newton alone finds no
    start that keeps the storage at its initial values: gmin or source stepping could find
    one that holds only by a junction forced far forward (10 V across a base and emitter
    between two capacitors at rest, carrying 1e152 A), where SPICE's first step lets the
    junction discharge them.
    """
    if not uic:
        try:
            check_dc_topology(circuit)
        except TopologyError as error:
            log.warning("%s: the operating point at t = 0 does not exist (%s); the transient "
                        "starts from rest, as with .tran ... uic", circuit.path, error.message)
            uic = True
    system = equations.system
    K, values, labels = constraints(circuit, system, uic)
    n = system.size
    try:
        return _constrained(circuit, equations, b0, K, values, labels, uic)[:n]
    except SingularSystemError as error:   # of a linear system
        conflicting = [label for label in error.unknowns if label in labels]
        if not uic and conflicting:   # as ngspice ignores an inductor's IC= without uic
            log.warning("%s: %s ignored: the circuit's equations fix %s at t = 0 (a through "
                        "source in series with an inductor, say)", circuit.path,
                        ", ".join(conflicting), "it" if len(conflicting) == 1 else "them")
            K, values, labels = _without(K, values, labels, conflicting)
            try:
                return _constrained(circuit, equations, b0, K, values, labels, uic)[:n]
            except SingularSystemError as again:
                error = again
        if not uic:
            raise SingularSystemError(f"operating point at t = 0: {error}",
                                      error.unknowns) from None
        reason: Exception = error
    except NoOperatingPoint as error:
        if not uic:
            log.warning("%s: %s; the transient starts from rest, as with .tran ... uic",
                        circuit.path, error)
            return initial_state(circuit, equations, b0, True, hmax)
        reason = error
    except ConvergenceError as error:
        if not uic:
            raise
        reason = error
    log.debug("uic: the initial values do not all hold (%s); settling", reason)
    return _settled(equations, b0, _least_squares(K, values), hmax)


def _constrained(circuit, equations: Equations, b0: np.ndarray, K: Entries,
                 values: np.ndarray, labels: tuple[str, ...], uic: bool) -> np.ndarray:
    """The solution of `equations` with the rows ``K x = values`` appended (their
    multipliers after the unknowns)."""
    system = equations.system
    bordered = Equations(system, circuit.options, border=(K, labels)) if labels else equations
    rhs = np.concatenate([b0, values])
    if system.is_linear:
        return bordered.factor(bordered.g_data).solve(rhs)
    return solve_dc(bordered, rhs, None if uic else guess(circuit, system), aids=not uic)


def _without(K: Entries, values: np.ndarray, labels: tuple[str, ...],
             dropped: list[str]) -> tuple[Entries, np.ndarray, tuple[str, ...]]:
    """The rows of ``K x = values`` but those `dropped` (by label)."""
    keep = np.array([label not in dropped for label in labels], bool)
    number = np.cumsum(keep) - 1
    kept = keep[K.rows]
    return (Entries.of(number[K.rows[kept]], K.cols[kept], K.values[kept],
                       (int(keep.sum()), K.shape[1])),
            values[keep], tuple(label for label, k in zip(labels, keep) if k))


def _settled(equations: Equations, b0: np.ndarray, start: np.ndarray,
             hmax: float) -> np.ndarray:
    """Where two backward-Euler steps of ``SETTLING * hmax`` from `start` go. The first takes
    the algebraic unknowns to their values and storage forced by a source or a loop to its
    value (charge shared as it must), and moves the rest of the storage by a negligible
    amount; its currents carry the jump's impulse, which the second step, from a consistent
    state, leaves out. A linear system's step is one solve, without Newton's test, which the
    round-off of so short a step could fail. Where Newton fails, `start` itself, with a
    warning (the first time step settles it, as SPICE's does)."""
    gamma = 1.0 / (SETTLING * hmax)
    newton = Newton(equations)
    once = 1 if equations.system.is_linear else None
    equations.settle_modes(start, 0.0)
    try:
        x = start
        for _ in range(2):
            x = newton.solve(b0 + gamma * equations.charges(x, 0.0), x, gamma=gamma,
                             iterations=once)
        return x
    except NewtonFailure as failure:
        log.warning("uic: no consistent start (%s); the run starts with the storage at its "
                    "initial values and the other unknowns at 0, as SPICE's does",
                    failure.reason)
        return start


def _least_squares(K: Entries, values: np.ndarray) -> np.ndarray:
    """The smallest `x` with ``K x = values`` (storage at its values, the rest at 0):
    ``K^T (K K^T)^-1 values`` while the rows are independent (sparse), else in the least
    squares sense (dense)."""
    if not len(values):
        return np.zeros(K.shape[1])
    rows = K.scipy()
    gram = factor_if_regular(rows @ rows.T, tuple(f"row {k}" for k in range(len(values))))
    if gram is not None:
        return rows.T @ gram.solve(values)
    return np.linalg.lstsq(K.dense(), values, rcond=None)[0]


def constraints(circuit, system: DescriptorSystem,
                uic: bool) -> tuple[Entries, np.ndarray, tuple[str, ...]]:
    """Rows ``k·x = value`` from ``IC=`` and ``.ic`` and, with `uic`, from rest states
    (storage elements and the semiconductors' charges at 0), with a label each.

    An element's ``IC=`` outranks ``.ic`` on the same variable. In an operating point, a
    value that across sources or T-type elements (shorts at DC) fix, alone or with the
    values before it (through ideal transformers too), is ignored with a warning, as
    ngspice's sources override its ``.ic``; under `uic` it still sets the charge of the
    storage at its node, and the start settles.
    A rest state is dropped when it involves an unknown that ``.ic`` gives, as SPICE's `uic`
    starts such storage from the ``.ic`` node voltages and 0 for the others, when sources
    fix its variable, and when the rows before it do (a junction across a capacitor, a loop
    of capacitors).
    """
    s = Stamper(circuit, NumericBackend(circuit))
    rows: list[int] = []
    cols: list[int] = []
    coefficients: list[float] = []
    values: list[float] = []
    labels: list[str] = []
    seen: dict[tuple, int] = {}
    fixing = (Role.ACROSS_SOURCE,) if uic else (Role.ACROSS_SOURCE, Role.THROUGH_STORE)
    # the sources' ties; the rows' (in an operating point, with the sources')
    fixed, joined = Forest(), Forest()
    for edge in circuit.graph.edges(fixing):
        pair = (s.index_of(edge.a), s.index_of(edge.b))
        fixed.join(*pair)
        if not uic:
            joined.join(*pair)
    for pair in s.ammeter_ties():   # 0 V sources of their own
        fixed.join(*pair)
        if not uic:
            joined.join(*pair)
    ties = [tuple((s.index_of(a), s.index_of(b)) for a, b in element.tied_ports())
            for element in circuit.elements if element.tied_ports()]
    _join_tied_ports(fixed, ties)
    _join_tied_ports(joined, ties)

    def add(terms: dict[int, float], value: float, label: str, location, rest: bool) -> bool:
        """Add the row ``terms·x = value``; whether it is kept."""
        terms = {col: c for col, c in terms.items() if c != 0}
        if not terms:
            return False
        sign = 1.0 if next(iter(sorted(terms.items())))[1] > 0 else -1.0
        key = tuple(sorted((col, sign * c) for col, c in terms.items()))
        if key in seen:  # the same variable twice (IC= and .ic): the element line wins
            if not rest and values[seen[key]] != sign * value:
                log.warning("%s: %s = %g is ignored, %s sets %g", location, label, value,
                            labels[seen[key]], sign * values[seen[key]])
            return False
        pair = _pair(key)
        if pair and fixed.tied(*pair):
            if rest:   # the sources give its value
                return False
            if not uic:   # under uic the value still charges the storage at the node
                log.warning("%s: %s = %g is ignored: voltage (across) sources, inductors "
                            "(T-type elements: shorts at DC) and transformers fix it in the "
                            "operating point", location, label, value)
                return False
        # a rest state that closes a loop of rows is fixed by them; one that closes a loop
        # through sources is kept, and the start settles (charge is shared, as in SPICE)
        if pair and not joined.join(*pair):
            if rest:
                return False
            if not uic:
                log.warning("%s: %s = %g is ignored: the values before it and the sources "
                            "fix it in the operating point", location, label, value)
                return False
        if pair:
            _join_tied_ports(joined, ties)
        value *= sign
        seen[key] = len(values)
        rows.extend([len(values)] * len(key))
        cols.extend(col for col, _ in key)
        coefficients.extend(c for _, c in key)
        values.append(float(value))
        labels.append(label)
        return True

    def terms_of(row, label: str, location) -> dict[int, float]:
        if row.dx.cols or row.u.cols:
            raise NetlistError(f"{label}: only an across variable or the through variable of a "
                               "T-type element or branch can be given an initial value", location)
        return _summed(zip(row.x.cols, row.x.values))

    at_rest = []
    for element in circuit.elements:
        label = f"IC({element.name})"
        for row, value in element.initial_conditions(s, uic):
            terms = terms_of(row, label, element.location)
            if value is None:
                at_rest.append((terms, label))
            else:
                add(terms, s.value(value), label, element.location, rest=False)
    given = set()
    for output, value in circuit.initial.items():
        label = f".ic {circuit.label(output)}"
        terms = terms_of(output_row(s, circuit, output), label, output.location)
        if add(terms, s.value(value), label, output.location, rest=False):
            given.update(terms)
    if uic:
        at_rest.extend(_charge_branches(system))
    for terms, label in at_rest:
        if not given.intersection(terms):
            add(terms, 0.0, label, None, rest=True)
    K = Entries.of(rows, cols, coefficients, (len(values), len(s.unknowns)))
    return K, np.array(values, float), tuple(labels)


def _join_tied_ports(forest: Forest, ties: list[tuple[tuple[int, int], ...]]) -> None:
    """Tie every port of an element whose ports fix one another (`Element.tied_ports`) once
    `forest` ties one of them, until no more follow."""
    changed = True
    while changed:
        changed = False
        for ports in ties:
            if any(forest.tied(*port) for port in ports):
                for port in ports:
                    changed |= forest.join(*port)


def _charge_branches(system: DescriptorSystem) -> list[tuple[dict[int, float], str]]:
    """The branches holding the devices' charges, as rows on the unknowns, labelled."""
    found = []
    for device in system.devices:
        for holds, direction in device.charge_branches():
            for k in np.flatnonzero(holds):
                found.append((_summed((int(terminal), float(c)) for terminal, c in
                                      zip(device.terminals[k], direction[k]) if terminal >= 0),
                              f"IC({device.names[k]})"))
    return found


def _summed(terms) -> dict[int, float]:
    """``(unknown, coefficient)`` pairs as one row, the coefficients of an unknown added."""
    row: dict[int, float] = {}
    for col, c in terms:
        row[col] = row.get(col, 0.0) + c
    return row


def _pair(key: tuple[tuple[int, float], ...]) -> tuple[int, int] | None:
    """The two unknowns whose difference the row `key` gives (-1, the reference, for a row
    of one), or None for a row of another form."""
    if len(key) == 1:
        return key[0][0], -1
    if len(key) == 2 and key[0][1] == -key[1][1]:
        return key[0][0], key[1][0]
    return None
