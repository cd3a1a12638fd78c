"""The equations of a descriptor system on one sparsity pattern, fixed once.

``G x + f(x, t) + gamma (C x + q(x)) = b`` is what every analysis solves: the DC operating
point (``gamma = 0``), a time step (``gamma = alpha_0 / (beta_0 h)``), and, with complex
``gamma = j w`` and the devices linearised, an AC frequency. `Equations` fixes the sparsity
pattern of all of them at once (G, C, every device's Jacobian block, the shunts of gmin
stepping and any bordering constraints), with each contribution's slots in the CSC data
array, so that an iteration only writes values: nothing is rebuilt, and the symbolic
analysis of the factorisation is done once (`mna.linalg.SparseLU`).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from mna.linalg import Factors, SparseLU, Use
from mna.system import Entries

if TYPE_CHECKING:
    from mna.circuit import Options
    from mna.elements.device import Device, Load
    from mna.system import DescriptorSystem

CACHE = 16   # linear parts kept by gamma (a run's step sizes)


class DeviceSlots:
    """Where one device kind's contributions go: its terminals' equations (`rows`, with
    `keep` masking the reference) and its Jacobian block's slots in the pattern's data
    (the reference's go to a last slot, dropped)."""

    def __init__(self, device: Device, slots: np.ndarray):
        terminals = device.terminals.ravel()
        self.device = device
        self.keep = terminals >= 0
        self.rows = terminals[self.keep]
        self.slots = slots


class Equations:
    """``G x + f(x, t) + gamma (C x + q(x)) = b`` on one sparsity pattern.

    `border` ``(K, labels)`` appends constraints ``K x = values`` through as many multipliers
    (initial conditions held at t = 0): the unknowns are then ``(x, multipliers)``.
    """

    def __init__(self, system: DescriptorSystem, options: Options,
                 border: tuple[Entries, tuple[str, ...]] | None = None, use: Use = "once"):
        self.system = system
        self.options = options
        n = system.size
        extra = 0 if border is None else border[0].shape[0]
        self.size = size = n + extra
        self.unknowns = system.unknowns + (border[1] if border else ())
        g = system.g
        if border is not None:
            K = border[0]
            g = Entries(np.concatenate([g.rows, K.rows + n, K.cols]),
                        np.concatenate([g.cols, K.cols, K.rows + n]),
                        np.concatenate([g.values, K.values, K.values]), (size, size))
        diagonal = np.arange(system.across_count)
        blocks = []
        for device in system.devices:
            rows = np.repeat(device.terminals, device.terminals.shape[1], axis=1)
            cols = np.tile(device.terminals, (1, device.terminals.shape[1]))
            blocks.append((rows.ravel(), cols.ravel()))
        rows = np.concatenate([g.rows, system.c.rows, diagonal, *(r for r, _ in blocks)])
        cols = np.concatenate([g.cols, system.c.cols, diagonal, *(c for _, c in blocks)])
        grounded = (rows < 0) | (cols < 0)
        keys = np.where(grounded, -1, cols * size + rows)
        unique, slot = np.unique(keys, return_inverse=True)
        if len(unique) and unique[0] == -1:   # the reference's entries: to the last slot
            unique, slot = unique[1:], np.where(slot == 0, len(unique) - 1, slot - 1)
        self.nnz = nnz = len(unique)
        self.indices = unique % size
        self.indptr = np.searchsorted(unique // size, np.arange(size + 1)) if size else (
            np.zeros(1, dtype=np.int64))
        self.columns = unique // size   # each entry's column
        bounds = np.cumsum([0, len(g.rows), len(system.c.rows), len(diagonal),
                            *(len(r) for r, _ in blocks)])
        self.g_data = _accumulated(slot[:bounds[1]], g.values, nnz)
        self.c_data = _accumulated(slot[bounds[1]:bounds[2]], system.c.values, nnz)
        self.shunt_slots = slot[bounds[2]:bounds[3]]
        self.devices = tuple(DeviceSlots(device, slot[start:stop]) for device, start, stop in
                             zip(system.devices, bounds[3:-1], bounds[4:]))
        self.lu = SparseLU(size, self.indptr, self.indices, self.unknowns, options.solver,
                           options.ordering, use)
        self._linear: OrderedDict[tuple[float, float], tuple] = OrderedDict()
        self.across = np.zeros(size, bool)
        self.across[:system.across_count] = True
        self.stores = np.zeros(size, bool)   # equations that hold a charge
        self.stores[system.c.rows[system.c.values != 0]] = True
        for slots in self.devices:
            if slots.device.stores:
                self.stores[slots.rows] = True

    @functools.cached_property
    def _capacitance(self):
        """``x -> C x`` (made on first use: only a transient asks for charges)."""
        return _product(self.system.c)

    # -- the linear part ------------------------------------------------------------------------
    def linear(self, gamma: float = 0.0, shunt: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """The data of ``G + gamma C`` (plus `shunt` on every across unknown's diagonal) on
        the pattern and its magnitudes (for Newton's balance test), kept for reuse."""
        key = (gamma, shunt)
        found = self._linear.get(key)
        if found is None:
            data = self.g_data + gamma * self.c_data if gamma else self.g_data.copy()
            if shunt:
                np.add.at(data, self.shunt_slots, shunt)
            found = self._linear[key] = (data, np.abs(data))
            if len(self._linear) > CACHE:
                self._linear.popitem(last=False)
        else:
            self._linear.move_to_end(key)
        return found

    def product(self, data: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``M @ x`` for the matrix with entries `data` on the pattern."""
        return np.bincount(self.indices, data * x[self.columns], self.size)

    def factor(self, data: np.ndarray, recycle: Factors | None = None) -> Factors:
        """The factors of the matrix with entries `data`, remade from `recycle` (factors the
        caller is done with) where their pivot order serves (`SparseLU.factor`)."""
        return self.lu.factor(data, recycle)

    def solve(self, data: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """The solution for `rhs` of the matrix with entries `data`, solved once
        (`SparseLU.solve`: the last call's pivot order is kept while it serves)."""
        return self.lu.solve(data, rhs)

    # -- the devices ----------------------------------------------------------------------------
    def terminal_values(self, x: np.ndarray, device: Device) -> np.ndarray:
        """The values of `device`'s terminals (0 for the reference)."""
        if not len(x):   # every terminal on the reference: nothing to index
            return np.zeros(device.terminals.shape)
        return np.where(device.terminals >= 0, x[device.terminals], 0.0)

    def scatter(self, slots: DeviceSlots, load: Load, gamma: float, v: np.ndarray,
                evaluated: np.ndarray, residual: np.ndarray, jacobian: np.ndarray) -> None:
        """Add one kind's ``f + gamma q`` to `residual` and its derivatives to `jacobian`
        (the pattern's data); `v` are the terminal values and `evaluated` those the kind
        was evaluated at (after limiting): its contributions are extended linearly to `v`."""
        f, df = load.f, load.df
        if gamma and load.q is not None:
            f, df = f + gamma * load.q, df + gamma * load.dq
        if evaluated is not v:
            f = f + np.einsum("kij,kj->ki", df, v - evaluated)
        residual += _accumulated(slots.rows, f.ravel()[slots.keep], self.size)
        jacobian += _accumulated(slots.slots, df.ravel(), self.nnz)

    def charges(self, x: np.ndarray, t: float) -> np.ndarray:
        """``C x + q(x)``, of the system's unknowns."""
        n = self.system.size
        total = self._capacitance(x[:n])
        for slots in self.devices:
            if not slots.device.stores:
                continue
            load = slots.device.load(self.terminal_values(x, slots.device), t)
            if load.q is not None:
                total += _accumulated(slots.rows, load.q.ravel()[slots.keep], self.size)[:n]
        return total

    def currents(self, x: np.ndarray, t: float) -> np.ndarray:
        """``G x + f(x, t)``, of the system's unknowns."""
        n = self.system.size
        total = self.system.g.product(x[:n])
        for slots in self.devices:
            load = slots.device.load(self.terminal_values(x, slots.device), t)
            total += _accumulated(slots.rows, load.f.ravel()[slots.keep], self.size)[:n]
        return total

    # -- switching ------------------------------------------------------------------------------
    def switching(self, x: np.ndarray, t: float) -> np.ndarray:
        """Every device's switching functions at `x`, one array."""
        parts = [slots.device.switching(self.terminal_values(x, slots.device), t)
                 for slots in self.devices if len(slots.device.modes)]
        return np.concatenate(parts) if parts else np.empty(0)

    def switching_owners(self) -> tuple[str, ...]:
        """The element each switching function belongs to, in `switching`'s order."""
        return tuple(slots.device.names[k] for slots in self.devices if len(slots.device.modes)
                     for k in slots.device.mode_owners())

    def modes(self) -> np.ndarray:
        parts = [slots.device.modes for slots in self.devices]
        return np.concatenate(parts) if parts else np.empty(0)

    def switch(self, x: np.ndarray, t: float, crossed: np.ndarray) -> None:
        """Let each device change the modes whose functions `crossed` (one mask over all)."""
        start = 0
        for slots in self.devices:
            count = len(slots.device.modes)
            if count and crossed[start:start + count].any():
                slots.device.switch(self.terminal_values(x, slots.device), t,
                                    crossed[start:start + count])
            start += count

    def devices_converged(self, x: np.ndarray, loaded: list[np.ndarray]) -> bool:
        """Whether every kind's currents at `x` are where its last load (at its terminal
        values `loaded`) predicts them (`Device.converged`)."""
        return all(slots.device.converged(self.terminal_values(x, slots.device), at)
                   for slots, at in zip(self.devices, loaded, strict=True))

    def dc_problem(self, x: np.ndarray) -> str | None:
        """Why the DC solution `x` is no operating point of the devices, or None."""
        for slots in self.devices:
            if problem := slots.device.dc_problem(self.terminal_values(x, slots.device)):
                return problem
        return None

    def settle_modes(self, x: np.ndarray, t: float) -> bool:
        """Set every device's modes that hold at `x`; whether any changed."""
        changed = False
        for slots in self.devices:
            if len(slots.device.modes):
                changed |= slots.device.settle(self.terminal_values(x, slots.device), t)
        return changed

    def linearized(self, x: np.ndarray, t: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """The data of ``G + df/dx`` and ``C + dq/dx`` at `x`: the small-signal system."""
        g, c = self.g_data.copy(), self.c_data.copy()
        for slots in self.devices:
            load = slots.device.load(self.terminal_values(x, slots.device), t)
            g += _accumulated(slots.slots, load.df.ravel(), self.nnz)
            if load.dq is not None:
                c += _accumulated(slots.slots, load.dq.ravel(), self.nnz)
        return g, c


def _accumulated(slots: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """``values`` summed into an array of `size` floats at `slots` (a slot of `size`, the
    reference's, is dropped)."""
    return np.bincount(slots, values, size + 1)[:size].astype(float, copy=False)


def _product(matrix: Entries):
    """``x -> matrix @ x``: for a diagonal matrix (capacitors, masses and inertias that all
    go to the reference) one elementwise product, else a sparse one."""
    if np.array_equal(matrix.rows, matrix.cols) and np.all(np.diff(np.sort(matrix.rows))):
        diagonal = np.zeros(matrix.shape[0])
        diagonal[matrix.rows] = matrix.values
        return lambda x: diagonal * x
    import scipy.sparse as sp

    compressed = sp.csr_matrix((matrix.values, (matrix.rows, matrix.cols)), shape=matrix.shape)
    return compressed.dot
