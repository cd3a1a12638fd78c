"""The descriptor system ``G x + C x' = B u`` with outputs ``y = P x + Q x' + R u``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mna.elements.waveforms import Waveform


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

    @property
    def size(self) -> int:
        return len(self.unknowns)

    def dc_inputs(self) -> np.ndarray:
        return np.array([signal.dc for signal in self.inputs], dtype=float)

    def ac_inputs(self) -> np.ndarray:
        return np.array([signal.ac for signal in self.inputs], dtype=complex)

    def input_index(self, name: str) -> int:
        lowered = name.lower()
        return next(i for i, s in enumerate(self.inputs) if s.name.lower() == lowered)

    def outputs_of(self, x: np.ndarray, u: np.ndarray, dx: np.ndarray | None = None) -> np.ndarray:
        """Outputs for unknowns `x` and inputs `u` (columns are points); `dx` defaults to 0."""
        y = self.P @ x + self.R @ u
        return y if dx is None else y + self.Q @ dx
