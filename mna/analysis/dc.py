"""``.dc``: DC transfer curves over one or two sources, or over a parameter.

A source sweep of a linear circuit factors G once and solves every point as one block of
right-hand sides; a parameter sweep re-assembles at each point.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from mna.analysis.base import Analysis
from mna.analysis.op import dc_solution, guess
from mna.assembly import assemble
from mna.diagnostics import check_dc_topology
from mna.elements.sources import Source
from mna.errors import MnaError, NetlistError, in_context
from mna.netlist.model import SourceLocation
from mna.results import TableResult


@dataclass(frozen=True)
class Sweep:
    """One swept variable: a source's DC value or a top-level parameter."""

    name: str
    is_parameter: bool
    values: tuple[float, ...]
    location: SourceLocation


def sweep_values(start: float, stop: float, step: float,
                 location: SourceLocation) -> tuple[float, ...]:
    """``start, start+step, ... stop`` inclusive, as SPICE counts them."""
    if step == 0 or (stop - start) * step < 0:
        raise NetlistError(f"step {step:g} does not lead from {start:g} to {stop:g}", location)
    count = int(np.floor((stop - start) / step * (1 + 1e-12) + 1e-9)) + 1
    return tuple(start + step * np.arange(count))


@dataclass(frozen=True)
class DcSweep(Analysis):
    card = ".dc"
    usage = ".dc SRC start stop step [SRC2 start2 stop2 step2] | .dc param NAME start stop step"

    sweeps: tuple[Sweep, ...]

    @classmethod
    def from_fields(cls, reader):
        sweeps = []
        while reader.peek() is not None or not sweeps:
            is_parameter = reader.keyword("param") is not None
            word = reader.word("parameter name" if is_parameter else "source name")
            start, stop, step = (reader.value(what) for what in ("start", "stop", "step"))
            numbers = [_number(reader, v, word) for v in (start, stop, step)]
            name = word.key if is_parameter else reader.scope.name(word)
            sweeps.append(Sweep(name, is_parameter, sweep_values(*numbers, word.location),
                                word.location))
        if len(sweeps) > 2:
            reader.fail(".dc sweeps at most two variables", usage=True)
        reader.no_more_options()
        return cls(tuple(sweeps))

    def run(self, circuit) -> TableResult:
        for sweep in self.sweeps:
            _check_target(circuit, sweep)
        check_dc_topology(circuit)
        # SPICE's first sweep is the inner loop; the outer one leads the table like a .step.
        order = self.sweeps[::-1]
        points = list(itertools.product(*(s.values for s in order)))
        system = assemble(circuit)
        if system.is_linear and not any(s.is_parameter for s in self.sweeps):
            u = np.tile(system.dc_inputs()[:, None], (1, len(points)))
            for position, sweep in enumerate(order):
                u[system.input_index(sweep.name)] = [p[position] for p in points]
            outputs = system.outputs_of(dc_solution(system, u, circuit.options), u)
        else:
            rows, x = [], guess(circuit, system)
            for point in points:
                values = dict(zip(order, point))
                try:
                    row, x = self._solve_point(circuit, system, values, x)
                except MnaError as error:
                    where = ", ".join(f"{_label(circuit, s)}={v:g}" for s, v in values.items())
                    raise in_context(error, f"at the sweep point {where}") from None
                rows.append(row)
            outputs = np.array(rows).T
        columns = {_label(circuit, s): np.array([p[i] for p in points])
                   for i, s in enumerate(order)}
        units = {_label(circuit, s): _unit(circuit, s) for s in order}
        for name, unit, row in zip(system.outputs, system.output_units, outputs):
            columns[name] = row
            units[name] = unit
        return TableResult("dc", columns, units, independent=_label(circuit, self.sweeps[0]))

    @staticmethod
    def _solve_point(circuit, system, values: dict[Sweep, float], x0):
        """Outputs and unknowns at one point, Newton starting from the previous point."""
        overrides = {s.name: v for s, v in values.items() if s.is_parameter}
        if overrides:
            system = assemble(circuit, overrides)
        u = system.dc_inputs()
        for sweep, value in values.items():
            if not sweep.is_parameter:
                u[system.input_index(sweep.name)] = value
        x = dc_solution(system, u, circuit.options, x0)
        return system.outputs_of(x, u), x


def _number(reader, value, word) -> float:
    if not isinstance(value, float):
        reader.fail("sweep limits must be numbers", word.location)
    return value


def _check_target(circuit, sweep: Sweep) -> None:
    if sweep.is_parameter:
        if sweep.name not in circuit.parameters:
            raise NetlistError(f"undefined parameter '{sweep.name}'", sweep.location)
    elif not isinstance(circuit.elements_by_key.get(sweep.name.lower()), Source):
        raise NetlistError(f"'{sweep.name}' is not an independent source", sweep.location)


def _label(circuit, sweep: Sweep) -> str:
    return sweep.name if sweep.is_parameter else circuit.elements_by_key[sweep.name.lower()].name


def _unit(circuit, sweep: Sweep) -> str:
    if sweep.is_parameter:
        return ""
    return circuit.elements_by_key[sweep.name.lower()].input_unit(circuit.domain_of)
