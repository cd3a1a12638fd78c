"""The device-load interface: how a nonlinear element kind gives its contributions.

The system is ``G x + f(x, t) + d/dt (C x + q(x)) = B u``. A nonlinear element stamps its
linear part as any element does and hands assembly an `Instance` of its `Device` kind: the
unknowns it touches (its *terminals*, -1 for the reference) and its parameters as numbers.
Assembly builds one `Device` per kind from all its instances (`Device.build`), and the
analyses evaluate each kind for all its instances in one vectorised call:

    load(v, t, limits) -> Load(f, df, q, dq)

with `v` the terminal values, shape ``(count, width)``; `f` and `q` the contributions to the
terminals' equations, shape ``(count, width)``; `df`, `dq` their derivatives by the terminal
values, shape ``(count, width, width)`` (``q`` and ``dq`` None for a kind that stores
nothing). The analyses scatter them into the residual and the Jacobian through index arrays
made once; no analysis loops over elements. A kind that stores says across which branches
(`charge_branches`), so that ``uic`` can start them at rest.

A kind whose equations need Newton's steps held back (a junction's exponential) overrides
`limit`, given the terminal values of this and of the previous iteration, and `start`, the
values its first evaluation takes in a DC solution that starts from nothing (SPICE's
``MODEINITJCT``: junctions at their critical voltage, those of an instance marked ``OFF``
at 0 V, where `held` keeps them until the solution first converges); one whose currents
must settle before Newton stops (SPICE's device convergence test) overrides `converged`.

A piecewise kind (a comparison in a behavioural source, friction that sticks, a valve that
cracks open) has switching functions (`switching(v, t)`) and `modes`, one per function: the
sign (+1 or -1) the function keeps while the law in force holds; `load` uses that law, so
that a step's equations stay smooth. The analyses `settle` the modes at a DC solution (to
the functions' signs, by default), and a transient watches the functions: where one takes
the other sign, it locates the instant, steps onto it and calls `switch` there (by default:
the crossed modes flip), restarting the integration as after a corner. A kind with more than
two laws (friction: stuck, sliding either way) keeps its own state and overrides `switch`
and `settle`; one whose instances have functions in different numbers (B sources: one per
comparison) says whose each is (`mode_owners`). A kind that is affine in its terminal values
while its modes hold (a switch, Coulomb friction, a contact) sets `linear_in_modes`: when
every kind of a circuit does, a transient solves each step by one linear solve, reusing the
factors while the Jacobian stays the same, as for a linear circuit between events. A kind
gives its noise currents at an operating point (`noise`: shot, flicker and thermal noise
between its terminals), or says it has none (`noiseless`); a noise analysis refuses a kind
that does neither. To add a kind: subclass `Device`, set `width`, write `build` (stack the
instances' parameters into arrays; `TabulatedDevice` does it for the names it lists) and
`load` (`branch` lays out a law between two terminals), and stamp `s.device(YourDevice,
name, terminals, parameters)` from the element.
"""

from __future__ import annotations

import keyword
import operator
from typing import ClassVar, NamedTuple

import numpy as np


class Instance(NamedTuple):
    """One element's share of a device kind: its name, terminal unknowns, parameters."""

    name: str
    terminals: tuple[int, ...]   # unknown numbers, -1 for the reference
    parameters: dict[str, object]   # numbers (an expression, for behavioural sources)


class Load(NamedTuple):
    """A kind's contributions at the terminal values: see the module docstring."""

    f: np.ndarray
    df: np.ndarray
    q: np.ndarray | None = None
    dq: np.ndarray | None = None


class NoiseCurrent(NamedTuple):
    """A noise current of every instance of a kind between two of its terminals (`a`,
    `b`: columns of the terminal values), of spectral density ``white + flicker /
    f^exponent`` (A²/Hz, arrays of one value per instance)."""

    name: str     # the source within the instance, as ngspice names it (``id``, ``ic``...)
    a: int
    b: int
    white: np.ndarray
    flicker: np.ndarray
    exponent: np.ndarray | float = 1.0


class Device:
    """All instances of one nonlinear element kind."""

    width: ClassVar[int] = 0   # terminals per instance
    # no noise current (B sources, as in ngspice, and the kinds of the other domains)
    noiseless: ClassVar[bool] = False

    def __init__(self, names: tuple[str, ...], terminals: np.ndarray):
        self.names = names
        self.terminals = terminals
        self.stores = False   # whether `load` gives charges
        self.modes = np.empty(0)   # +1 or -1 per switching function
        self.linear_in_modes = False   # affine in the terminal values while the modes hold
        self.off = np.zeros(len(names), bool)   # instances marked OFF (`start`, `held`)

    @classmethod
    def build(cls, instances: list[Instance]) -> Device:
        raise NotImplementedError

    @property
    def count(self) -> int:
        return len(self.names)

    def load(self, v: np.ndarray, t: float) -> Load:
        raise NotImplementedError

    def limit(self, v: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
        """The terminal values to evaluate at, given Newton's new ones and those it was
        evaluated at in the previous iteration (None at a solve's start): `v` itself when
        no step is held back."""
        return v

    def start(self, v: np.ndarray) -> np.ndarray:
        """The terminal values to evaluate at in the first iteration of a DC solution from
        nothing (SPICE's ``MODEINITJCT``), whatever Newton's are (`v`): `v` itself by
        default. A circuit with several DC solutions (a latch, controlled sources in a loop)
        then settles in the one ngspice finds."""
        return v

    def held(self, v: np.ndarray, at: np.ndarray) -> np.ndarray:
        """`at` with the instances marked ``OFF`` on the element line (`off`) at their
        starting values (junctions at 0 V), where a DC solution from nothing holds them
        until it first converges (SPICE's ``MODEINITFIX``)."""
        if not self.off.any():
            return at
        return np.where(self.off[:, None], self.start(v), at)

    def converged(self, v: np.ndarray, loaded: np.ndarray) -> bool:
        """Whether Newton's new terminal values `v` leave the currents where the load at
        `loaded` (the last one) predicts them, within tolerance."""
        return True

    def switching(self, v: np.ndarray, t: float) -> np.ndarray:
        """The switching functions at the terminal values `v` (as many as `modes`)."""
        return np.empty(0)

    def mode_owners(self) -> np.ndarray:
        """The instance (an index into `names`) that each switching function belongs to: by
        default as many functions per instance, in the instances' order."""
        per_instance = len(self.modes) // self.count if self.count else 0
        return np.repeat(np.arange(self.count), per_instance)

    def switch(self, v: np.ndarray, t: float, crossed: np.ndarray) -> None:
        """The functions `crossed` (a mask over `modes`) have changed sign at `v`: change
        to the laws on their other side."""
        self.modes = np.where(crossed, -self.modes, self.modes)

    def charge_branches(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The branches that hold this kind's charges, each as ``(holds, direction)``: which
        instances it holds a charge in (``(count,)`` booleans) and the branch's voltage as
        ``direction`` (``(count, width)``) times the terminal values. ``uic`` starts each
        such branch at 0 V, as SPICE starts every node at 0 V."""
        return []

    def noise(self, v: np.ndarray, temperature: float) -> list[NoiseCurrent] | None:
        """The noise currents at the operating point `v` (terminal values) and
        `temperature` (K): none for a `noiseless` kind; None for a kind whose noise is not
        modelled (a noise analysis refuses it)."""
        return [] if self.noiseless else None

    def dc_problem(self, v: np.ndarray) -> str | None:
        """Why the DC solution at the terminal values `v` is no operating point of these
        devices (a force that only a convergence aid carries), or None."""
        return None

    def settle(self, v: np.ndarray, t: float) -> bool:
        """Set the modes that hold at `v` (a DC solution, a start); whether any changed. By
        default each mode is its function's sign (a zero keeps the mode)."""
        signs = np.sign(self.switching(v, t))
        settled = np.where(signs != 0, signs, self.modes)
        changed = not np.array_equal(settled, self.modes)
        self.modes = settled
        return changed


class TabulatedDevice(Device):
    """A kind whose parameters are the arrays named in `NAMES`, one value per instance, kept
    as attributes of those names (a Python keyword with an underscore: ``is_``,
    ``lambda_``); instances marked ``OFF`` carry ``off`` = 1."""

    NAMES: ClassVar[tuple[str, ...]] = ()

    def __init__(self, names, terminals, values: dict[str, np.ndarray]):
        super().__init__(names, terminals)
        for key, value in values.items():
            setattr(self, key + "_" if keyword.iskeyword(key) else key, value)
        self.off = self.off != 0

    @classmethod
    def build(cls, instances: list[Instance]) -> TabulatedDevice:
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, cls.width),
                   dict(zip(cls.NAMES, parameters(instances, *cls.NAMES))))


def terminal_array(instances: list[Instance], width: int) -> np.ndarray:
    """The instances' terminals as an array ``(count, width)``, padded with -1."""
    terminals = np.full((len(instances), width), -1, dtype=np.int64)
    for row, instance in enumerate(instances):
        terminals[row, :len(instance.terminals)] = instance.terminals
    return terminals


def parameters(instances: list[Instance], *names: str) -> list[np.ndarray]:
    """Each named parameter of every instance, as one array per name (each distinct mapping
    read once, for all the names together: the instances of one model share theirs)."""
    if not names:
        return []
    pick = operator.itemgetter(*names)
    distinct: dict[int, tuple[int, dict]] = {}   # by the mapping's id: its row, itself
    rows = np.fromiter((distinct.setdefault(id(i.parameters), (len(distinct), i.parameters))[0]
                        for i in instances), np.int64, len(instances))
    table = np.array([pick(mapping) for _, mapping in distinct.values()], dtype=float)
    return list(table.reshape(len(distinct), len(names))[rows].T.copy())


def branch(flow: np.ndarray, d_plus: np.ndarray, d_minus: np.ndarray,
           width: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """The contributions of a branch from the first terminal to the second that carries
    `flow` (a current, or a charge), and their derivatives, given those of `flow` by the
    two terminals' values (`d_plus`, `d_minus`): ``(f, df)`` of shapes ``(count, width)``
    and ``(count, width, width)``, the other terminals only read."""
    f = np.zeros((len(flow), width))
    f[:, 0], f[:, 1] = flow, -flow
    df = np.zeros((len(flow), width, width))
    df[:, 0, 0], df[:, 0, 1] = d_plus, d_minus
    df[:, 1, 0], df[:, 1, 1] = -d_plus, -d_minus
    return f, df


def outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per instance k: the outer product ``a[k] b[k]^T`` (a Jacobian block from a current's
    direction and its gradient)."""
    return a[:, :, None] * b[:, None, :]
