"""Friction between two mechanical nodes (``Rname n+ n- model`` with a ``friction`` model):
Coulomb, Stribeck and viscous, and a true stuck state.

With v = e(n+) - e(n-), a sliding element carries ``F = sign(v) (fc + (fs - fc)
exp(-(v/vs)^2)) + b v`` from n+ to n-. Its force is an unknown (the element's branch,
``I(name)``), and its branch row is the law in force:

- sliding forward or backward: ``F - f(v) = 0``, the direction held for the whole slide
  (the law stays smooth through a step); the switching function ``d v`` watches for the stop;
- stuck: ``v = 0`` exactly, its force whatever the rest of the system needs; the switching
  function is the breakaway margin ``fs - |F|``: the element slides off in the direction of
  its force when the margin crosses zero;
- ``stick=0``: never stuck, the smooth law ``tanh(v/vreg) (fc + ...) + b v`` always.

At DC (an operating point, a transient's start) a resting element is a stiff damper
``F = B v`` with ``B`` such that the breakaway force moves it 1e-9: the force it holds is then
defined even where a spring in parallel shares it (a stuck constraint would leave the split
undetermined), and its velocity is zero to that tolerance. A transient that starts from
there holds it stuck at that velocity from its first step, until it breaks away.
"""

from __future__ import annotations

import numpy as np

from mna.elements.device import Device, Instance, Load, parameters, terminal_array
from mna.elements.modelled import MECHANICAL, ModelType, Parameter

STUCK, FORWARD, BACKWARD, RESTING, SMOOTH = 0, 1, -1, 2, 3
RESTING_VELOCITY = 1e-9   # of a resting element at DC, at its breakaway force
LARGEST_DAMPING = 1e250   # of that damper: more would overflow the Jacobian's products


class Frictions(Device):
    """Every friction element: terminals (n+, n-, F)."""

    width = 3
    noiseless = True

    def __init__(self, names, terminals, fc, fs, vs, b, stick, vreg):
        super().__init__(names, terminals)
        self.fc, self.fs, self.b, self.vreg = fc, fs, b, vreg
        self.stick = stick.astype(bool)
        self.stribeck = np.where(vs > 0, fs - fc, 0.0)
        self.inverse_vs = np.where(vs > 0, 1 / np.where(vs > 0, vs, 1.0), 0.0)
        self.resting = np.maximum(fs, fc) / RESTING_VELOCITY + b
        self.state = np.where(self.stick, RESTING, SMOOTH)
        # the velocity a stuck element holds: where it was resting when the transient
        # began, the operating point's creep (stopped, it would be an impulse m v / h in
        # the first step's force, past fs at a force just short of it); else 0
        self.creep = np.zeros(self.count)
        self.modes = np.ones(self.count)   # one function each, kept positive by its law
        # Coulomb and viscous friction that sticks: affine in each state
        self.linear_in_modes = bool(np.all(self.stick) and not np.any(self.stribeck))

    @classmethod
    def build(cls, instances: list[Instance]) -> Frictions:
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, cls.width),
                   *parameters(instances, "fc", "fs", "vs", "b", "stick", "vreg"))

    def law(self, velocity: np.ndarray, direction: np.ndarray, smooth: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
        """``f(v)`` and ``f'(v)``: sliding in `direction` (+1 or -1), or the smooth law."""
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            ratio = velocity * self.inverse_vs
            decay = np.exp(-ratio * ratio)
            level = self.fc + self.stribeck * decay
            slope = -2 * self.stribeck * decay * ratio * self.inverse_vs
            scaled = velocity / self.vreg
            tanh = np.tanh(scaled)
            sign = np.where(smooth, tanh, direction)
            force = sign * level + self.b * velocity
            derivative = sign * slope + self.b + np.where(
                smooth, level * (1 - tanh * tanh) / self.vreg, 0.0)
        return force, derivative

    def load(self, v, t):
        velocity, force = v[:, 0] - v[:, 1], v[:, 2]
        state = self.state
        smooth = state == SMOOTH
        law, slope = self.law(velocity, np.where(state == BACKWARD, -1.0, 1.0), smooth)
        resting = state == RESTING
        law = np.where(resting, self.resting * velocity, law)
        slope = np.where(resting, self.resting, slope)
        stuck = state == STUCK
        f = np.zeros(v.shape)
        df = np.zeros((len(v), 3, 3))
        f[:, 2] = np.where(stuck, velocity - self.creep, force - law)
        df[:, 2, 0] = np.where(stuck, 1.0, -slope)
        df[:, 2, 1] = -df[:, 2, 0]
        df[:, 2, 2] = np.where(stuck, 0.0, 1.0)
        return Load(f, df)

    def switching(self, v, t):
        velocity, force = v[:, 0] - v[:, 1], v[:, 2]
        if (resting := self.state == RESTING).any():   # a transient begins: they are stuck
            self.state = np.where(resting, STUCK, self.state)
            self.creep = np.where(resting, velocity, self.creep)
        state = self.state
        return np.where(state == STUCK, self.fs - np.abs(force),
                        np.where(np.abs(state) == 1, state * velocity, 1.0))

    def switch(self, v, t, crossed):
        force = v[:, 2]
        breaking = crossed & (self.state == STUCK)
        stopping = crossed & (np.abs(self.state) == 1)
        self.state = np.where(breaking, np.where(force >= 0, FORWARD, BACKWARD),
                              np.where(stopping, STUCK, self.state))
        self.creep = np.where(crossed, 0.0, self.creep)

    def settle(self, v, t):
        velocity, force = v[:, 0] - v[:, 1], v[:, 2]
        state = self.state
        at_rest = (state == RESTING) | (state == STUCK)
        breaking = at_rest & (np.abs(force) > self.fs)
        reversed_ = (np.abs(state) == 1) & (state * velocity < 0)
        settled = np.where(breaking, np.where(force >= 0, FORWARD, BACKWARD),
                           np.where(reversed_ | (state == STUCK), RESTING, state))
        changed = not np.array_equal(settled, state)
        self.state = settled
        return changed


class Friction(ModelType):
    """``.model NAME friction(fc= fs= vs= b= stick= vreg=)``."""

    kind = "friction"
    letter = "R"
    domains = MECHANICAL
    parameters = (
        Parameter("fc", "{through}", 0.0, 0.0, meaning="Coulomb (sliding) force"),
        Parameter("fs", "{through}", "fc", 0.0, meaning="breakaway (static) force"),
        Parameter("vs", "{across}", 0.0, 0.0, meaning="Stribeck velocity (0: none)"),
        Parameter("b", "{through}/({across})", 0.0, 0.0, meaning="viscous coefficient"),
        Parameter("stick", "", 1.0, 0.0, meaning="1: stuck mode with events; 0: smooth"),
        Parameter("vreg", "{across}", 1e-4, 0.0, above=True,
                  meaning="regularising velocity of the smooth law (stick=0)"),
    )

    @classmethod
    def relations(cls, p):
        if p["fs"] < p["fc"]:
            return f"fs must be >= fc (the breakaway force is at least the Coulomb force), " \
                   f"got fs={p['fs']:g} < fc={p['fc']:g}"
        if p["stick"] not in (0.0, 1.0):
            return f"stick must be 0 or 1, got {p['stick']:g}"
        if p["stick"] and p["fs"] == 0:
            return "stick=1 needs a breakaway force fs > 0 (or fc > 0); a viscous damper " \
                   "alone is an R line with b="
        if not (p["fs"] > 0 or p["b"] > 0):
            return "friction needs fc, fs or b > 0"
        if p["stick"] and max(p["fs"], p["fc"]) / RESTING_VELOCITY + p["b"] > LARGEST_DAMPING:
            return (f"fs={max(p['fs'], p['fc']):g} is too large to hold at rest (its damper at "
                    f"DC, fs / {RESTING_VELOCITY:g} m/s, overflows)")
        return None

    @classmethod
    def branches(cls, element):
        return ("",)

    @classmethod
    def stamp(cls, element, s, p):
        k = s.branch(element)
        s.G.incidence(*element.nodes, k)
        s.device(Frictions, element.name, (*element.nodes, k), p)
