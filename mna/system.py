"""The descriptor system ``G x + C x' = B u`` with outputs ``y = P x + Q x' + R u``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mna.nonlinear import NonlinearLoad
from mna.waveforms import Waveform


@dataclass(frozen=True)
class InputSignal:
    """One independent source as seen by analyses: its values in every analysis."""

    name: str
    unit: str
    dc: float
    ac: complex
    waveform: Waveform | None


@dataclass(frozen=True)
class DescriptorSystem:
    """The frozen hand-off from assembly to analyses.

    `G`, `C` (n×n) and `B` (n×m) are scipy CSC matrices (sympy matrices when symbolic);
    `P`, `Q`, `R` map unknowns, their derivatives and inputs to the requested outputs.
    The first `across_count` unknowns are across variables (nodes), the rest through
    variables. `nonlinear` holds the currents ``f(x, t)`` and charges ``q(x)`` of nonlinear
    elements (empty for a linear system): ``G x + f + d/dt (C x + q) = B u``.
    """

    G: Any
    C: Any
    B: Any
    unknowns: tuple[str, ...]
    units: tuple[str, ...]
    inputs: tuple[InputSignal, ...]
    outputs: tuple[str, ...]
    output_units: tuple[str, ...]
    P: Any
    Q: Any
    R: Any
    across_count: int
    nonlinear: NonlinearLoad

    @property
    def size(self) -> int:
        return len(self.unknowns)

    @property
    def is_linear(self) -> bool:
        return not self.nonlinear

    def linearized(self, x: np.ndarray, time: float = 0.0) -> DescriptorSystem:
        """The linear system about the point `x` (for AC and state space of nonlinear netlists)."""
        if self.is_linear:
            return self
        _, conductance = self.nonlinear.currents(x, time)
        _, capacitance = self.nonlinear.charges(x)
        empty = NonlinearLoad((), self.size)
        return replace(self, G=self.G + conductance, C=self.C + capacitance, nonlinear=empty)

    def dc_inputs(self) -> np.ndarray:
        return np.array([signal.dc for signal in self.inputs], dtype=float)

    def ac_inputs(self) -> np.ndarray:
        return np.array([signal.ac for signal in self.inputs], dtype=complex)

    def input_index(self, name: str) -> int:
        """The column of source `name` in B (KeyError when it is not an independent source)."""
        lowered = name.lower()
        for index, signal in enumerate(self.inputs):
            if signal.name.lower() == lowered:
                return index
        raise KeyError(f"{name} is not an independent source of the system")

    def outputs_of(self, x: np.ndarray, u: np.ndarray, dx: np.ndarray | None = None) -> np.ndarray:
        """Outputs for unknowns `x` and inputs `u` (columns are points); `dx` defaults to 0."""
        y = self.P @ x + self.R @ u
        return y if dx is None else y + self.Q @ dx
