"""``.ss``: the card, and extraction of state-space models ``x' = A x + B u + E u'``,
``y = C x + D u + F u'`` with physical states, numeric or symbolic (the model and its forms
are in `state_model`; the reduction in `reduction`).

>>> import mna
>>> from mna.analysis.statespace import state_space
>>> c = mna.read_string("rc\\nV1 in 0 1\\nR1 in out 1k\\nC1 out 0 1u\\n")
>>> model = state_space(c, inputs=("V1",), outputs=None)
>>> model.states, round(float(model.A[0, 0]), 6)
(('V(out)',), -1000.0)
"""

from __future__ import annotations

import logging
import random

import numpy as np

from mna.analysis.op import small_signal
from mna.analysis.reduction import (
    DENSE_LIMIT,
    Candidate,
    reduce_dense,
    reduce_sparse,
)
from mna.analysis.state_model import StateSpaceResult
from mna.assembly import NumericBackend, Stamper, SymbolicBackend, assemble
from mna.elements.base import Role
from mna.errors import DescriptorIndexError
from mna.netlist.fields import GROUND, OutputName
from mna.netlist.model import SourceLocation

log = logging.getLogger(__name__)


def state_space_of_request(request, circuit) -> StateSpaceResult:
    """``.ss``: the model of the card."""
    return state_space(circuit, request.inputs, request.outputs, request.symbolic, request.tf,
                       request.dense, request.location)


# --------------------------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------------------------

def candidates_of(circuit, stamper: Stamper) -> list[Candidate]:
    """The across variable of every A-type and the through variable of every T-type branch."""
    found = []
    for element in circuit.elements:
        for edge in element.edges():
            if edge.role is Role.ACROSS_STORE:
                row = stamper.output_row()
                row.x.difference(edge.a, edge.b, 1)
                output = OutputName("V", (edge.a,) if edge.b == GROUND else (edge.a, edge.b))
                kind = "A"
            elif edge.role is Role.THROUGH_STORE:
                row = stamper.output_row()
                element.through(stamper, row)
                output, kind = OutputName("I", (element.name.lower(),)), "T"
            else:
                continue
            found.append(Candidate(circuit.label(output), circuit.unit(output), element.name,
                                   kind, _row_dict(row)))
    return found


def _row_dict(row) -> dict:
    values: dict = {}
    for col, value in zip(row.x.cols, row.x.values, strict=False):
        values[col] = values.get(col, 0) + value
    return values


def state_space(circuit, inputs=None, outputs=None, symbolic: bool = False, tf: bool = False,
                dense: bool = False, location: SourceLocation | None = None
                ) -> StateSpaceResult:
    """The state-space model of `circuit` from the sources `inputs` (names; default all) to
    `outputs` (`OutputName`s; default the circuit's outputs); A sparse where the reduction
    finds it so, unless `dense`."""
    for name in inputs or ():
        circuit.source(name, location)
    for output in outputs or ():
        circuit.check_output(output, location)
    system = assemble(circuit, outputs=outputs, symbolic=symbolic)
    if not symbolic:
        system = small_signal(circuit, system)
    names = [signal.name for signal in system.inputs]
    lowered = [name.lower() for name in names]
    chosen = [lowered.index(n.lower()) for n in inputs] if inputs is not None else list(
        range(len(names)))
    backend = SymbolicBackend(circuit) if symbolic else NumericBackend(circuit)
    candidates = candidates_of(circuit, Stamper(circuit, backend, outputs=outputs or ()))
    G, C, P, Q = system.G, system.C, system.P, system.Q
    if symbolic:
        B = system.B.extract(list(range(system.B.shape[0])), chosen)
        R = system.R.extract(list(range(system.R.shape[0])), chosen)
    else:
        B = system.B.tocsc()[:, chosen] if hasattr(system.B, "tocsc") else system.B[:, chosen]
        R = system.R.tocsc()[:, chosen] if hasattr(system.R, "tocsc") else system.R[:, chosen]
    input_names = tuple(names[i] for i in chosen)
    reduced = None
    if not symbolic:
        reduced = reduce_sparse(G, C, B, P, Q, R, candidates, dense)
    decided_densely = reduced is None
    if decided_densely:
        if not symbolic and system.size > DENSE_LIMIT:
            raise DescriptorIndexError(
                f"{system.size} unknowns with loops of A-type elements and across sources (or "
                "cut-sets of T-type elements and through sources): too large for the dense "
                f"reduction (limit {DENSE_LIMIT})")
        generic = _generic_values(circuit, (G, C, B, P, Q, R)) if symbolic else None
        reduced = reduce_dense(G, C, B, P, Q, R, candidates, system.unknowns, input_names,
                               symbolic=symbolic, generic=generic)
    states = tuple(candidates[i] for i in reduced.states)
    result = StateSpaceResult(
        states=tuple(c.name for c in states),
        state_units=tuple(c.unit for c in states),
        inputs=input_names,
        input_units=tuple(system.inputs[i].unit for i in chosen),
        outputs=tuple(system.outputs),
        output_units=tuple(system.output_units),
        A=reduced.A, B=reduced.B, C=reduced.C, D=reduced.D, E=reduced.E, F=reduced.F,
        symbolic=symbolic,
        title=circuit.title,
        defaults=_parameter_values(circuit) if symbolic else None,
    )
    model: StateSpaceResult | None = result
    if symbolic:
        try:
            model = result.numeric()
        except DescriptorIndexError as error:
            log.warning("%s: %s", circuit.path, error)
            model = None
    if model is not None and decided_densely and system.size <= CHECKED_MAX:
        numeric = (small_signal(circuit, assemble(circuit, outputs=outputs)) if symbolic
                   else system)
        _check_response(model, numeric, chosen)
    if tf:
        result = result.with_transfer_functions()
    return result


# the dense reduction decides ranks in floating point, where time scales far apart can hide a
# state: up to this many unknowns its model's response is checked against the circuit's
CHECKED_MAX = 300
CHECKED_AT = np.logspace(-6, 15, 22)   # rad/s
CHECK_TOLERANCE = 1e-6


def _check_response(model: StateSpaceResult, system, chosen: list[int]) -> None:
    """That numeric `model`'s H(jw) is the descriptor system's ``(P + jw Q)(G + jw C)^-1 B + R``
    at `CHECKED_AT`, each output and input to `CHECK_TOLERANCE` of its largest value there;
    else a `DescriptorIndexError` (a state lost to the rank decisions)."""
    G, C = system.G.toarray(), system.C.toarray()
    B, R = system.B.toarray()[:, chosen], system.R.toarray()[:, chosen]
    P, Q = system.P.toarray(), system.Q.toarray()
    expected, got, at = [], [], []
    for w in CHECKED_AT:
        try:
            x = np.linalg.solve(G + 1j * w * C, B)
        except np.linalg.LinAlgError:   # a resonance there: no response to compare
            continue
        expected.append((P + 1j * w * Q) @ x + R)
        got.append(model.frequency_response(1j * w)[0])
        at.append(w)
    if not expected:
        return
    expected, got = np.array(expected), np.array(got)
    scale = np.abs(expected).max(axis=0)
    error = np.abs(got - expected) / np.where(scale > 0, scale, 1.0)
    if not np.isfinite(error).all() or error.max() > CHECK_TOLERANCE:
        worst = at[int(np.argmax(np.nanmax(np.where(np.isfinite(error), error, np.inf),
                                           axis=(1, 2))))]
        raise DescriptorIndexError(
            f"the model found has {len(model.states)} states, and its response differs from "
            f"the circuit's at {worst:.3g} rad/s: its time scales lie too far apart for the "
            "reduction's floating-point rank decisions (a state was lost)")


def _parameter_values(circuit) -> dict:
    """Each parameter's symbol in a symbolic model → the netlist's value for it."""
    import sympy

    values = NumericBackend(circuit).values
    return {sympy.Symbol(name, real=True): values[key]
            for key, name in circuit.parameter_names.items()}


def _generic_values(circuit, matrices) -> dict:
    """Each parameter symbol → its value, perturbed a little (rank decisions at a generic point)."""
    import sympy

    values = NumericBackend(circuit).values
    rng = random.Random(20240601)
    symbols = set()
    for matrix in matrices:
        symbols |= sympy.Matrix(matrix).free_symbols
    generic = {}
    for symbol in sorted(symbols, key=str):
        base = values.get(symbol.name.lower(), 1.0)
        base = base if base != 0 else 1.0
        generic[symbol] = base * (1 + 0.1 * rng.uniform(0.3, 1.0))
    return generic
