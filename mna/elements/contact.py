"""Springs with an internal displacement (``Lname n+ n- model``): the elastic stop
(``elastogap``), play in a drive train (``backlash``) and the cubic spring (``spring``).

Each carries two unknowns: its force ``F`` (the element's branch, ``I(name)``, flowing n+ →
n-) and its displacement ``x`` (branch ``x``, ``I(name:x)``), whose row is ``x' = v`` with
v = e(n+) - e(n-); ``x`` starts at the model's ``x0`` (held at t = 0 as an ``IC=`` is).
The force row is ``F = f(x, v)``.

A contact side (an elastogap has one, a backlash two) is open, engaged or released:
engaged, it pushes with ``k p + d v`` (p its penetration); it never pulls, so it releases
where that force reaches zero with the bodies still overlapping, and opens where ``p``
returns to zero. Each side has one switching function, positive while its law holds, and
the transient steps onto each change of law. At DC (and in ``.op``) a contact without
contact holds its displacement at ``x0`` through a spring of gmin, SPICE's smallest
conductance, so that it stays defined.
"""

from __future__ import annotations

import math

import numpy as np

from mna.elements.device import Device, Instance, Load, parameters, terminal_array
from mna.elements.modelled import DISPLACEMENT, MECHANICAL, ModelType, Parameter

OPEN, ENGAGED, RELEASED = 0, 1, 2
LEAK_FORCE = 1e-9   # through an open contact's gmin spring: more is a force it cannot carry
SIDES = np.array([1.0, -1.0])   # the upper side pushes back positive x, the lower negative


def _force_row(v, force, dforce_dx, dforce_dv, leak, x0):
    """The load of ``F - force(x, v) - leak (x - x0) = 0`` on terminals (n+, n-, F, x)."""
    f = np.zeros(v.shape)
    df = np.zeros((len(v), 4, 4))
    f[:, 2] = v[:, 2] - force - leak * (v[:, 3] - x0)
    df[:, 2, 0] = -dforce_dv
    df[:, 2, 1] = dforce_dv
    df[:, 2, 2] = 1.0
    df[:, 2, 3] = -dforce_dx - leak
    return Load(f, df)


class Contacts(Device):
    """Every elastogap and backlash: terminals (n+, n-, F, x); two sides each (an elastogap's
    lower one never touches)."""

    width = 4
    noiseless = True

    def __init__(self, names, terminals, k, d, upper, lower, x0, gmin):
        super().__init__(names, terminals)
        self.k, self.d, self.x0, self.gmin = k[:, None], d[:, None], x0, gmin
        self.active = np.isfinite(np.stack([upper, lower], axis=1))
        self.threshold = np.where(self.active, np.stack([upper, lower], axis=1), 0.0)
        self.state = np.full((self.count, 2), OPEN)
        self.modes = np.ones(2 * self.count)
        self.linear_in_modes = True

    @classmethod
    def build(cls, instances: list[Instance]) -> Contacts:
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, cls.width),
                   *parameters(instances, "k", "d", "upper", "lower", "x0", "gmin"))

    def sides(self, v) -> tuple[np.ndarray, np.ndarray]:
        """Each side's penetration ``p`` and the force ``k p + d (s v)`` it would push with."""
        velocity, x = v[:, 0] - v[:, 1], v[:, 3]
        penetration = np.where(self.active, SIDES * x[:, None] - self.threshold, -1.0)
        return penetration, self.k * penetration + self.d * SIDES * velocity[:, None]

    def load(self, v, t):
        _, push = self.sides(v)
        engaged = self.state == ENGAGED
        force = np.sum(np.where(engaged, SIDES * push, 0.0), axis=1)
        dx = np.sum(np.where(engaged, self.k, 0.0), axis=1)
        dv = np.sum(np.where(engaged, self.d, 0.0), axis=1)
        return _force_row(v, force, dx, dv, self.gmin, self.x0)

    def switching(self, v, t):
        penetration, push = self.sides(v)
        state = self.state
        values = np.where(state == OPEN, -penetration,
                          np.where(state == ENGAGED, push, np.minimum(penetration, -push)))
        return np.where(self.active, values, 1.0).ravel()

    def _laws(self, v) -> np.ndarray:
        """The law each side's values call for."""
        penetration, push = self.sides(v)
        return np.where(penetration <= 0, OPEN, np.where(push > 0, ENGAGED, RELEASED))

    def switch(self, v, t, crossed):
        crossed = crossed.reshape(self.state.shape)
        penetration, push = self.sides(v)
        entering = np.where(push >= 0, ENGAGED, RELEASED)
        leaving = np.where(penetration > 0, RELEASED, OPEN)
        returning = np.where(penetration <= 0, OPEN, ENGAGED)
        new = np.select([self.state == OPEN, self.state == ENGAGED], [entering, leaving],
                        returning)
        self.state = np.where(crossed & self.active, new, self.state)

    def dc_problem(self, v):
        """An open contact carries force only through its gmin spring: where that force is
        more than a leak, nothing else holds the bodies and there is no operating point."""
        leak = self.gmin * (v[:, 3] - self.x0)
        held = np.abs(leak) > LEAK_FORCE
        if not held.any():
            return None
        name = self.names[int(np.argmax(held))]
        return (f"{name} carries a force at DC that its contact cannot (it is open); nothing "
                "else holds the bodies it joins")

    def settle(self, v, t):
        settled = np.where(self.active, self._laws(v), OPEN)
        changed = not np.array_equal(settled, self.state)
        self.state = settled
        return changed


class Springs(Device):
    """Every cubic spring ``F = k x + k3 x^3``: terminals (n+, n-, F, x)."""

    width = 4
    noiseless = True

    def __init__(self, names, terminals, k, k3, x0, gmin):
        super().__init__(names, terminals)
        self.k, self.k3, self.x0, self.gmin = k, k3, x0, gmin

    @classmethod
    def build(cls, instances: list[Instance]) -> Springs:
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, cls.width),
                   *parameters(instances, "k", "k3", "x0", "gmin"))

    def load(self, v, t):
        x = v[:, 3]
        with np.errstate(over="ignore", invalid="ignore"):
            force = self.k * x + self.k3 * x**3
            stiffness = self.k + 3 * self.k3 * x * x
        return _force_row(v, force, stiffness, np.zeros(len(v)), self.gmin, self.x0)


class Displacement(ModelType):
    """What the three share: the branches F and x, their rows, ``x(0) = x0``."""

    letter = "L"
    domains = MECHANICAL
    reports = True
    device: type[Device]

    @classmethod
    def branches(cls, element):
        return ("", "x")

    @classmethod
    def branch_unit(cls, port, domain):
        return DISPLACEMENT[domain] if port == "x" else None

    @classmethod
    def instance(cls, p: dict[str, float]) -> dict[str, float]:
        """The device's parameters of an element with model values `p`."""
        return p

    @classmethod
    def stamp(cls, element, s, p):
        force, displacement = s.branch(element), s.branch(element, "x")
        s.G.incidence(*element.nodes, force)
        s.C.add(displacement, displacement, 1.0)
        s.G.across(displacement, *element.nodes, -1)
        s.device(cls.device, element.name, (*element.nodes, force, displacement),
                 {**cls.instance(p), "gmin": s.circuit.options.gmin})

    @classmethod
    def initial_conditions(cls, element, s, values):
        row = s.output_row()
        row.x.add(s.branch(element, "x"), 1)
        return [(row, values.get("x0", 0.0))]


STIFFNESS = Parameter("k", "{through}/{displacement}", None, 0.0, above=True,
                      meaning="contact stiffness")
DAMPING = Parameter("d", "{through}/({across})", 0.0, 0.0, meaning="contact damping")
START = Parameter("x0", "{displacement}", 0.0, meaning="initial relative displacement")


class Elastogap(Displacement):
    """``.model NAME elastogap(k= d= gap= x0=)``: pushes back once x exceeds gap."""

    kind = "elastogap"
    device = Contacts
    parameters = (STIFFNESS, DAMPING,
                  Parameter("gap", "{displacement}", 0.0, meaning="x where contact begins"),
                  START)

    @classmethod
    def instance(cls, p):
        return {"k": p["k"], "d": p["d"], "upper": p["gap"], "lower": math.inf, "x0": p["x0"]}


class Backlash(Displacement):
    """``.model NAME backlash(k= d= b= x0=)``: free play of b in all, contact beyond ±b/2."""

    kind = "backlash"
    device = Contacts
    parameters = (STIFFNESS, DAMPING,
                  Parameter("b", "{displacement}", 0.0, 0.0, meaning="total backlash"), START)

    @classmethod
    def instance(cls, p):
        return {"k": p["k"], "d": p["d"], "upper": p["b"] / 2, "lower": p["b"] / 2,
                "x0": p["x0"]}


class Spring(Displacement):
    """``.model NAME spring(k= k3= x0=)``: ``F = k x + k3 x^3``."""

    kind = "spring"
    device = Springs
    parameters = (Parameter("k", "{through}/{displacement}", 0.0, 0.0, meaning="stiffness"),
                  Parameter("k3", "{through}/{displacement}^3", 0.0, meaning="cubic stiffness"),
                  START)

    @classmethod
    def relations(cls, p):
        if p["k"] == 0 and p["k3"] == 0:
            return "a spring needs k > 0 or k3 != 0"
        return None

    @classmethod
    def instance(cls, p):
        return {"k": p["k"], "k3": p["k3"], "x0": p["x0"]}
