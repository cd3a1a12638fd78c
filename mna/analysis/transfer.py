"""``.tf OUT SRC``: SPICE's small-signal DC transfer function, input and output impedance.

About the operating point (the circuit linearised there, capacitors open and inductors
shorted), with every independent source set to zero but the one perturbed:

* the transfer function is the change of the output per unit change of the source `SRC`;
* the input impedance is what `SRC` sees: for an across (voltage) source ``-1/I(SRC)`` per
  unit of its value, for a through (current) source the across variable from its ``n-`` to
  its ``n+`` per unit of its value (SPICE's currents flow ``n+`` -> source -> ``n-``);
* the output impedance is what the output sees: for ``V(a[,b])`` the across variable
  between `a` and `b` per unit of through variable driven into `a` and out of `b`; for the
  current of an across source ``I(VX)``, ``-1/I(VX)`` per unit of `VX`'s value (the
  impedance in series with its branch).

All three come from one factorisation of the DC Jacobian, as in SPICE. Every domain has
them: a mechanical "impedance" is velocity per force, in the units of its domain.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mna.analysis.equations import Equations
from mna.analysis.op import dc_solution, guess
from mna.assembly import assemble
from mna.diagnostics import check_dc_topology
from mna.elements.sources import AcrossSource, ThroughSource
from mna.netlist.fields import GROUND, OutputName
from mna.results import OperatingPointResult

PROBE = "tf#output"   # the through source that drives the output's nodes


def transfer_function(request, circuit) -> TransferFunctionResult:
    """``.tf``: the transfer function from the source to the output, and the impedances
    at both."""
    check_dc_topology(circuit)
    source = circuit.source(request.source, request.location)
    output = request.output
    across_input = isinstance(source, AcrossSource)
    at_input = (OutputName("I", (source.name.lower(),)) if across_input
                else OutputName("V", source.nodes))
    probed = circuit
    if output.kind == "V":   # a through source that drives the output's nodes, worth nothing
        a, b = (*output.keys, GROUND)[:2]
        probed = circuit.with_element(ThroughSource(PROBE, request.location, (b, a), 0.0, 0.0,
                                                    0.0, None))
    system = assemble(probed, outputs=(output, at_input))
    equations = Equations(system, circuit.options)
    g = equations.g_data
    if not system.is_linear:
        x = dc_solution(equations, system.dc_inputs(), guess(circuit, system))
        g, _ = equations.linearized(x)
    factors = equations.factor(g)
    unit_of = {signal.name: signal.unit for signal in system.inputs}
    names = list(unit_of)

    def response(name: str) -> np.ndarray:
        """The outputs (`output`, then the input's port) for a unit of input `name`."""
        unit = np.zeros(len(names))
        unit[names.index(name)] = 1.0
        x = factors.solve(system.b.product(unit))
        return system.p.product(x) + system.r.product(unit)

    driven = response(source.name)
    out_unit, port_unit = system.output_units
    in_unit = unit_of[source.name]
    if across_input:
        inward, inward_unit = _series_impedance(driven[1]), _ratio(in_unit, port_unit)
    else:
        inward, inward_unit = -driven[1], _ratio(port_unit, in_unit)
    if output.kind == "V":
        outward = response(PROBE)[0]
        outward_name = f"output_impedance_at_{system.outputs[0]}"
        outward_unit = _ratio(out_unit, unit_of[PROBE])
    else:
        vx = circuit.elements_by_key[output.keys[0]]
        outward = inward if vx is source else _series_impedance(response(vx.name)[0])
        outward_name = f"{vx.name}#output_impedance"
        outward_unit = _ratio(unit_of[vx.name], out_unit)
    return TransferFunctionResult(
        ("transfer_function", f"{source.name}#input_impedance", outward_name),
        (float(driven[0]), float(inward), float(outward)),
        (_ratio(out_unit, in_unit), inward_unit, outward_unit))


def _series_impedance(current: float) -> float:
    """The impedance in series with an across source whose unit value drives `current`
    (SPICE's sign: into its + terminal); infinite for none."""
    return -1.0 / current if current else np.inf


def _ratio(numerator: str, denominator: str) -> str:
    bracketed = f"({denominator})" if "/" in denominator or "*" in denominator else denominator
    return f"{numerator}/{bracketed}"


@dataclasses.dataclass(frozen=True)
class TransferFunctionResult(OperatingPointResult):
    """The three values of ``.tf``, one row each, named as ngspice names them."""

    kind = "tf"
    selects_outputs = False
    heading = "Transfer function information"
