"""The descriptor system ``G x + f(x, t) + d/dt (C x + q(x)) = B u`` with outputs
``y = P x + Q x' + R u``: the frozen hand-off from assembly to the analyses."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mna.elements.device import Device
from mna.waveforms import Waveform

if TYPE_CHECKING:
    import scipy.sparse as sp


@dataclass(frozen=True)
class Entries:
    """A sparse matrix as its entries (repeated positions add up): numeric arrays, or sympy
    values in a list for a symbolic system."""

    rows: np.ndarray
    cols: np.ndarray
    values: Any
    shape: tuple[int, int]

    @classmethod
    def of(cls, rows, cols, values, shape, symbolic: bool = False) -> Entries:
        values = list(values) if symbolic else np.asarray(values, dtype=float)
        return cls(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), values,
                   shape)

    def scipy(self) -> sp.csc_matrix:
        import scipy.sparse as sp

        return sp.csc_matrix((self.values, (self.rows, self.cols)), shape=self.shape)

    def sympy(self):
        import sympy

        matrix = sympy.zeros(*self.shape)
        for row, col, value in zip(self.rows, self.cols, self.values):
            matrix[row, col] += value
        return matrix

    def dense(self) -> np.ndarray:
        matrix = np.zeros(self.shape)
        np.add.at(matrix, (self.rows, self.cols), self.values)
        return matrix

    def product(self, x: np.ndarray) -> np.ndarray:
        """``M @ x`` for a vector or a matrix of columns (real or complex), without scipy."""
        x = np.asarray(x)
        if x.ndim == 1 and not np.iscomplexobj(x):
            return np.bincount(self.rows, weights=self.values * x[self.cols],
                               minlength=self.shape[0]).astype(float, copy=False)
        result = np.zeros((self.shape[0], *x.shape[1:]), dtype=np.result_type(x, float))
        weights = self.values.reshape(-1, *([1] * (x.ndim - 1)))
        np.add.at(result, self.rows, weights * x[self.cols])
        return result



@dataclass(frozen=True)
class ResistorNoise:
    """The noise of a linear conductance between unknowns `a` and `b` (-1: the reference):
    thermal, a current of density ``4 k T conductance`` (source `name`), and, where a
    resistor model gives ``kf``, ngspice's flicker noise ``copies kf |I / copies|^af /
    (area f^ef)`` of its DC current I (source `flicker_name`)."""

    name: str
    a: int
    b: int
    conductance: float
    flicker_name: str = ""
    kf: float = 0.0
    af: float = 1.0
    ef: float = 1.0
    copies: float = 1.0
    area: float = 1.0


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

    `g`, `c` (n×n) and `b` (n×m) hold the entries of ``G``, ``C`` and ``B``; `p`, `q`, `r`
    those of ``P``, ``Q``, ``R``, which map unknowns, their derivatives and inputs to the
    requested outputs (the capital names give them as scipy CSC matrices, or sympy
    matrices when `symbolic`). The first `across_count` unknowns are across variables
    (nodes), the rest through variables. `devices` are the nonlinear elements, each kind
    evaluated for all its instances at once (none for a linear system); `noise` the
    linear conductances that make noise (numeric systems assembled for ``.noise``).
    """

    g: Entries
    c: Entries
    b: Entries
    unknowns: tuple[str, ...]
    units: tuple[str, ...]
    inputs: tuple[InputSignal, ...]
    outputs: tuple[str, ...]
    output_units: tuple[str, ...]
    p: Entries
    q: Entries
    r: Entries
    across_count: int
    devices: tuple[Device, ...] = ()
    symbolic: bool = False
    noise: tuple[ResistorNoise, ...] = ()

    def _matrix(self, entries: Entries):
        return entries.sympy() if self.symbolic else entries.scipy()

    @functools.cached_property
    def G(self):
        return self._matrix(self.g)

    @functools.cached_property
    def C(self):
        return self._matrix(self.c)

    @functools.cached_property
    def B(self):
        return self._matrix(self.b)

    @functools.cached_property
    def P(self):
        return self._matrix(self.p)

    @functools.cached_property
    def Q(self):
        return self._matrix(self.q)

    @functools.cached_property
    def R(self):
        return self._matrix(self.r)

    @property
    def size(self) -> int:
        return len(self.unknowns)

    @property
    def is_linear(self) -> bool:
        return not self.devices

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
        """Outputs for unknowns `x` and inputs `u` (vectors, or matrices whose columns are
        points); `dx` defaults to 0."""
        y = self.p.product(x) + self.r.product(u)
        return y if dx is None else y + self.q.product(dx)
