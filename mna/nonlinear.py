"""Nonlinear element contributions: currents ``f(x, t)`` and charges ``q(x)`` with Jacobians.

The full system is ``G x + f(x, t) + d/dt (C x + q(x)) = B u``. A nonlinear element hands
assembly one `NonlinearPart` that works on the few unknowns it touches (`indices`, ground as
-1), like a SPICE device's load routine; Newton's method adds every part's local vectors and
matrices into the linear part, which is assembled once.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class NonlinearPart:
    """Local residual contributions of one element over unknowns `indices` (ground is -1)."""

    def __init__(self, name: str, indices: list[int | None]):
        self.name = name
        self.indices = np.array([-1 if i is None else i for i in indices], dtype=int)

    def currents(self, x: np.ndarray, time: float) -> tuple[np.ndarray, np.ndarray]:
        """Local ``f`` and ``df/dx`` at local unknowns `x` (ground entries are 0)."""
        raise NotImplementedError

    def charges(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Local ``q`` and ``dq/dx``, or None for an element that stores no charge."""
        return None

    def reset(self) -> None:
        """Forget any iteration state (junction-voltage limiting) before a new solve."""

    def limited(self) -> bool:
        """Whether the last `currents` call limited a junction voltage (not yet converged)."""
        return False


class NonlinearLoad:
    """All nonlinear parts of a system, scattered into global vectors and sparse matrices."""

    def __init__(self, parts: tuple[NonlinearPart, ...], size: int):
        self.parts = parts
        self.size = size
        rows, cols = [], []
        for part in parts:
            local = np.arange(len(part.indices))
            r, c = np.meshgrid(local, local, indexing="ij")
            rows.append(part.indices[r.ravel()])
            cols.append(part.indices[c.ravel()])
        rows = np.concatenate(rows) if rows else np.empty(0, int)
        cols = np.concatenate(cols) if cols else np.empty(0, int)
        self._keep = (rows >= 0) & (cols >= 0)
        self._rows, self._cols = rows[self._keep], cols[self._keep]

    def __bool__(self) -> bool:
        return bool(self.parts)

    def reset(self) -> None:
        for part in self.parts:
            part.reset()

    def limited(self) -> bool:
        return any(part.limited() for part in self.parts)

    def currents(self, x: np.ndarray, time: float) -> tuple[np.ndarray, sp.csc_matrix]:
        return self._gather(x, lambda part, local: part.currents(local, time))

    def charges(self, x: np.ndarray) -> tuple[np.ndarray, sp.csc_matrix]:
        return self._gather(x, lambda part, local: part.charges(local))

    def _gather(self, x, evaluate):
        vector = np.zeros(self.size)
        blocks = []
        padded = np.append(x, 0.0)  # index -1 reads the ground's 0
        for part in self.parts:
            result = evaluate(part, padded[part.indices])
            size = len(part.indices)
            if result is None:
                blocks.append(np.zeros(size * size))
                continue
            values, jacobian = result
            mask = part.indices >= 0
            np.add.at(vector, part.indices[mask], np.asarray(values)[mask])
            blocks.append(np.asarray(jacobian, float).ravel())
        data = np.concatenate(blocks)[self._keep] if blocks else np.empty(0)
        matrix = sp.csc_matrix((data, (self._rows, self._cols)), shape=(self.size, self.size))
        return vector, matrix
