"""The analyses: `perform` runs a request of the netlist (`mna.netlist.requests`).

Each request names its runner as ``module:function``; the module is imported when a netlist
first asks for it, so that reading and a plain ``.op`` load none of the others (the
transient, the state-space reduction, sympy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import numpy as np

from mna.netlist.fields import OutputName
from mna.results import Selected

if TYPE_CHECKING:
    from mna.circuit import Circuit
    from mna.netlist.requests import Request
    from mna.results import Result


def perform(request: Request, circuit: Circuit) -> Result:
    """The result of `request` on `circuit`, with the outputs the netlist asks for."""
    return _asked(_computed(request, circuit), circuit)


def run_all(circuit: Circuit) -> list[Result]:
    """Every analysis of `circuit` in order, then its measurements (``.meas``, ``.four``)
    as one result."""
    computed = [_computed(request, circuit) for request in circuit.analyses]
    results = [_asked(result, circuit) for result in computed]
    if circuit.measures or circuit.fouriers:
        from mna.analysis.measure import measurements  # only for a netlist that measures

        results.append(measurements(circuit, computed))
    return results


def _computed(request: Request, circuit: Circuit) -> Result:
    """What the analysis computes: every probe that an output, an expression of probes
    (``.save {V(a)-V(b)}``) or a measurement reads."""
    module, function = request.runner.split(":")
    return getattr(importlib.import_module(module), function)(request, circuit)


def _asked(result: Result, circuit: Circuit) -> Result:
    """`result` with the outputs asked for, expressions computed from their probes."""
    if not result.selects_outputs or not (circuit.measures or circuit.fouriers or any(
            o.kind == "E" or o.part for o in circuit.saves)):
        return result
    return result.select([_selected(circuit, output) for output in circuit.outputs()])


def part_of(values, part: str):
    """SPICE's `part` (``M``, ``DB``, ``P``, ``R``, ``I``; ``""``: all) of a probe's values,
    phasors or real numbers."""
    if not part:
        return values
    if part == "DB":
        with np.errstate(divide="ignore"):
            return 20 * np.log10(np.abs(values))
    return {"M": np.abs, "P": np.angle, "R": np.real, "I": np.imag}[part](values)


def _selected(circuit: Circuit, output) -> Selected:
    name = circuit.label(output)
    if output.part:
        probe = circuit.label(output.probes()[0])
        return Selected(name, circuit.unit(output),
                        lambda point: part_of(point[probe], output.part))
    if output.kind != "E":
        return Selected(name, circuit.unit(output), lambda point: point[name])
    labels = {probe: circuit.label(OutputName(probe.kind, probe.names))
              for probe in output.expression.probes}
    return Selected(name, "", lambda point: output.expression.evaluate(
        {}, probes={probe: point[label] for probe, label in labels.items()}))
