"""``.op``: the DC operating point, A-type elements open and T-type elements shorted."""

from __future__ import annotations

import dataclasses

import numpy as np

from mna.analysis.equations import Equations
from mna.analysis.newton import Nodeset, solve_dc
from mna.assembly import NumericBackend, assemble
from mna.diagnostics import check_dc_topology
from mna.errors import NetlistError
from mna.netlist.fields import GROUND
from mna.results import OperatingPointResult
from mna.system import Entries


def guess(circuit, system) -> Nodeset | None:
    """The circuit's ``.nodeset`` on the unknowns of `system`, or None."""
    if not circuit.nodeset:
        return None
    unknowns, values = [], []
    evaluate = NumericBackend(circuit).evaluate
    for output, value in circuit.nodeset.items():
        if output.kind != "V" or len(output.keys) != 1:
            raise NetlistError(".nodeset takes V(node)=value", output.location)
        if output.keys[0] != GROUND:   # the reference is at 0 whatever it says (ngspice's)
            unknowns.append(system.unknowns.index(circuit.label(output)))
            values.append(evaluate(value))
    if not unknowns:
        return None
    return Nodeset(np.array(unknowns, dtype=int), np.array(values, dtype=float))


def dc_solution(equations: Equations, u: np.ndarray, x0: np.ndarray | Nodeset | None = None,
                continued: bool = False) -> np.ndarray:
    """Unknowns at DC for inputs `u` (a vector, or a matrix with one column per point).

    A linear system is factored once for all points; a nonlinear one is solved point by point,
    each from the previous solution (`x0` for the first: a `Nodeset`, or with `continued`
    the solution of a neighbouring point, `solve_dc`).
    """
    system = equations.system
    b = system.b.product(u)
    if system.is_linear:
        return equations.factor(equations.g_data).solve(b)
    if u.ndim == 1:
        return solve_dc(equations, b, x0, continued=continued)
    columns, x = [], x0
    for k, point in enumerate(b.T):
        x = solve_dc(equations, point, x0=x, continued=continued or k > 0)
        columns.append(x)
    return np.array(columns).T


def linearized(equations: Equations, x: np.ndarray):
    """The system linearised about the point `x` (for AC and state space)."""
    system = equations.system
    if system.is_linear:
        return system
    g, c = equations.linearized(x)
    rows = equations.indices
    cols = np.repeat(np.arange(equations.size), np.diff(equations.indptr))
    shape = (system.size, system.size)
    return dataclasses.replace(system, g=Entries(rows, cols, g, shape),
                               c=Entries(rows, cols, c, shape), devices=())


def small_signal(circuit, system):
    """`system` linearised about its operating point (the system itself when linear)."""
    if system.is_linear:
        return system
    equations = Equations(system, circuit.options)
    x = dc_solution(equations, system.dc_inputs(), guess(circuit, system))
    return linearized(equations, x)


def operating_point(request, circuit) -> OperatingPointResult:
    """``.op``: every output at the DC solution."""
    check_dc_topology(circuit)
    system = assemble(circuit)
    u = system.dc_inputs()
    x = dc_solution(Equations(system, circuit.options), u, guess(circuit, system))
    values = system.outputs_of(x, u)
    return OperatingPointResult(system.outputs, tuple(map(float, values)), system.output_units)
