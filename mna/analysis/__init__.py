"""The analyses: `perform` runs a request of the netlist (`mna.netlist.requests`).

Each request names its runner as ``module:function``; the module is imported when a netlist
first asks for it, so that reading and a plain ``.op`` load none of the others (the
transient, the state-space reduction, sympy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from mna.netlist.fields import OutputName
from mna.results import Selected

if TYPE_CHECKING:
    from mna.circuit import Circuit
    from mna.netlist.requests import Request
    from mna.results import Result


def perform(request: Request, circuit: Circuit) -> Result:
    """The result of `request` on `circuit`; where the netlist asks for expressions of
    probes (``.save {V(a)-V(b)}``), the analysis computes the probes and they follow."""
    module, function = request.runner.split(":")
    result = getattr(importlib.import_module(module), function)(request, circuit)
    if any(output.kind == "E" for output in circuit.saves) and result.kind != "ss":
        result = result.select([_selected(circuit, output) for output in circuit.saves])
    return result


def _selected(circuit: Circuit, output) -> Selected:
    name = circuit.label(output)
    if output.kind != "E":
        return Selected(name, circuit.unit(output), lambda point: point[name])
    labels = {probe: circuit.label(OutputName(probe.kind, probe.names))
              for probe in output.expression.probes}
    return Selected(name, "", lambda point: output.expression.evaluate(
        {}, probes={probe: point[label] for probe, label in labels.items()}))
