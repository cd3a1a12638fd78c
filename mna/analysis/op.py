"""``.op``: the DC operating point, A-type elements open and T-type elements shorted."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mna.analysis.base import Analysis
from mna.assembly import assemble
from mna.diagnostics import check_dc_topology
from mna.linalg import factor
from mna.results import OperatingPointResult


def dc_solution(system, u: np.ndarray) -> np.ndarray:
    """Unknowns at DC for inputs `u` (a vector, or a matrix with one column per point)."""
    return factor(system.G, system.unknowns).solve(system.B @ u)


@dataclass(frozen=True)
class OperatingPoint(Analysis):
    card = ".op"
    usage = ".op"

    @classmethod
    def from_fields(cls, reader):
        reader.done()
        reader.no_more_options()
        return cls()

    def run(self, circuit) -> OperatingPointResult:
        check_dc_topology(circuit)
        system = assemble(circuit)
        u = system.dc_inputs()
        x = dc_solution(system, u)
        values = system.outputs_of(x, u)
        return OperatingPointResult(system.outputs, tuple(values), system.output_units)
