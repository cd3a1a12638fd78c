"""``.dc``: DC transfer curves over one or two sources, or over a parameter.

A source sweep of a linear circuit factors G once and solves every point as one block of
right-hand sides; a parameter sweep re-assembles at each point.
"""

from __future__ import annotations

import itertools

import numpy as np

from mna.analysis.equations import Equations
from mna.analysis.op import dc_solution, guess
from mna.assembly import assemble
from mna.diagnostics import check_dc_topology
from mna.errors import MnaError, in_context
from mna.netlist.requests import Sweep
from mna.progress import progress
from mna.results import TableResult


def dc_sweep(request, circuit) -> TableResult:
    """``.dc``: the outputs at every point of one or two swept sources, parameters,
    resistors or the temperature."""
    check_dc_topology(circuit)
    # SPICE's first sweep is the inner loop; the outer one leads the table like a .step.
    order = request.sweeps[::-1]
    points = list(itertools.product(*(s.values() for s in order)))
    system = assemble(circuit)
    if system.is_linear and all(s.is_source for s in request.sweeps):
        u = np.tile(system.dc_inputs()[:, None], (1, len(points)))
        for position, sweep in enumerate(order):
            u[system.input_index(sweep.name)] = [p[position] for p in points]
        outputs = system.outputs_of(dc_solution(Equations(system, circuit.options), u), u)
    else:
        rows, x = [], guess(circuit, system)
        equations = Equations(system, circuit.options)
        with progress(len(points), "dc", "point") as bar:
            for k, point in enumerate(points):
                values = dict(zip(order, point))
                try:
                    row, x = _solve_point(circuit, equations, values, x, continued=k > 0)
                except MnaError as error:
                    where = ", ".join(f"{s.column(circuit)}={v:g}" for s, v in values.items())
                    raise in_context(error, f"at the sweep point {where}") from None
                rows.append(row)
                bar.update()
        outputs = np.array(rows).T
    columns = {s.column(circuit): np.array([p[i] for p in points]) for i, s in enumerate(order)}
    units = {s.column(circuit): s.unit(circuit) for s in order}
    for name, unit, row in zip(system.outputs, system.output_units, outputs):
        columns[name] = row
        units[name] = unit
    return TableResult("dc", columns, units, independent=request.sweeps[0].column(circuit))


def _solve_point(circuit, equations, values: dict[Sweep, float], x0, continued: bool):
    """Outputs and unknowns at one point, Newton starting from the previous point (`x0`,
    its solution where `continued`); a point that varies more than sources is assembled
    anew."""
    varied = circuit
    for sweep, value in values.items():
        if not sweep.is_source:
            varied = sweep.applied(varied, value)
    if varied is not circuit:
        equations = Equations(assemble(varied), varied.options)
    system = equations.system
    u = system.dc_inputs()
    for sweep, value in values.items():
        if sweep.is_source:
            u[system.input_index(sweep.name)] = value
    x = dc_solution(equations, u, x0, continued)
    return system.outputs_of(x, u), x
