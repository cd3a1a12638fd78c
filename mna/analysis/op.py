"""``.op``: the DC operating point, A-type elements open and T-type elements shorted."""

from __future__ import annotations

import numpy as np

from mna.analysis.newton import solve_dc
from mna.assembly import NumericBackend, assemble
from mna.diagnostics import check_dc_topology
from mna.errors import NetlistError
from mna.linalg import factor
from mna.results import OperatingPointResult


def guess(circuit, system) -> np.ndarray | None:
    """The Newton starting point from ``.nodeset`` (zero elsewhere), or None."""
    if not circuit.nodeset:
        return None
    x = np.zeros(system.size)
    evaluate = NumericBackend(circuit).evaluate
    for output, value in circuit.nodeset.items():
        if output.kind == "V" and len(output.keys) == 1:
            x[system.unknowns.index(circuit.label(output))] = evaluate(value)
        else:
            raise NetlistError(".nodeset takes V(node)=value", output.location)
    return x


def dc_solution(system, u: np.ndarray, options, x0: np.ndarray | None = None) -> np.ndarray:
    """Unknowns at DC for inputs `u` (a vector, or a matrix with one column per point).

    A linear system is factored once for all points; a nonlinear one is solved point by point,
    each from the previous solution.
    """
    if system.is_linear:
        return factor(system.G, system.unknowns, options.solver).solve(system.B @ u)
    if u.ndim == 1:
        return solve_dc(system, u, options, x0)
    columns, x = [], x0
    for point in u.T:
        x = solve_dc(system, point, options, x0=x)
        columns.append(x)
    return np.array(columns).T


def small_signal(circuit, system):
    """`system` linearised about its operating point (the system itself when linear)."""
    if system.is_linear:
        return system
    x = dc_solution(system, system.dc_inputs(), circuit.options, guess(circuit, system))
    return system.linearized(x)


def operating_point(request, circuit) -> OperatingPointResult:
    """``.op``: every output at the DC solution."""
    check_dc_topology(circuit)
    system = assemble(circuit)
    u = system.dc_inputs()
    x = dc_solution(system, u, circuit.options, guess(circuit, system))
    values = system.outputs_of(x, u)
    return OperatingPointResult(system.outputs, tuple(map(float, values)), system.output_units)
