"""Radiation and convection between thermal nodes (``Rname n+ n- model``).

Radiation exchanges ``Q = sigma eps area (T+^4 - T-^4)`` (Stefan–Boltzmann's sigma built in;
temperatures are absolute, in K, so the reference node is 0 K); convection
``Q = h area dT |dT|^n`` (``n = 0``: Newton's law of cooling; 1/4 or 1/3 for natural
convection). Both carry gmin in parallel, as SPICE's junctions do, so that a node reached
only through them at equal temperatures keeps a defined temperature.
"""

from __future__ import annotations

import numpy as np

from mna.domains import Domain
from mna.elements.device import Device, Instance, Load, branch, parameters, terminal_array
from mna.elements.modelled import ModelType, Parameter

STEFAN_BOLTZMANN = 5.670374419e-8   # W/(m^2 K^4)
THERMAL = frozenset({Domain.THERMAL})


class Radiators(Device):
    """Every radiation element: terminals (n+, n-)."""

    width = 2
    noiseless = True

    def __init__(self, names, terminals, gain, gmin):
        super().__init__(names, terminals)
        self.gain, self.gmin = gain, gmin

    @classmethod
    def build(cls, instances: list[Instance]) -> Radiators:
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, cls.width),
                   *parameters(instances, "gain", "gmin"))

    def load(self, v, t):
        hot, cold = v[:, 0], v[:, 1]
        with np.errstate(over="ignore", invalid="ignore"):
            flow = self.gain * (hot**4 - cold**4) + self.gmin * (hot - cold)
            d_hot = 4 * self.gain * hot**3 + self.gmin
            d_cold = -4 * self.gain * cold**3 - self.gmin
        return Load(*branch(flow, d_hot, d_cold))


class Convectors(Device):
    """Every convection element: terminals (n+, n-)."""

    width = 2
    noiseless = True

    def __init__(self, names, terminals, gain, exponent, gmin):
        super().__init__(names, terminals)
        self.gain, self.exponent, self.gmin = gain, exponent, gmin

    @classmethod
    def build(cls, instances: list[Instance]) -> Convectors:
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, cls.width),
                   *parameters(instances, "gain", "n", "gmin"))

    def load(self, v, t):
        dt = v[:, 0] - v[:, 1]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            power = np.abs(dt) ** self.exponent
            flow = self.gain * dt * power + self.gmin * dt
            conductance = self.gain * (1 + self.exponent) * power + self.gmin
        return Load(*branch(flow, conductance, -conductance))


class Radiation(ModelType):
    """``.model NAME radiation(eps= area=)``."""

    kind = "radiation"
    letter = "R"
    domains = THERMAL
    parameters = (Parameter("eps", "", 1.0, 0.0, meaning="emissivity"),
                  Parameter("area", "m^2", None, 0.0, above=True, meaning="radiating area"))

    @classmethod
    def relations(cls, p):
        return f"eps must be at most 1, got {p['eps']:g}" if p["eps"] > 1 else None

    @classmethod
    def stamp(cls, element, s, p):
        s.device(Radiators, element.name, element.nodes,
                 {"gain": STEFAN_BOLTZMANN * p["eps"] * p["area"],
                  "gmin": s.circuit.options.gmin})


class Convection(ModelType):
    """``.model NAME convection(h= area= n=)``."""

    kind = "convection"
    letter = "R"
    domains = THERMAL
    parameters = (Parameter("h", "W/(m^2*K^(1+n))", None, 0.0, meaning="heat transfer "
                            "coefficient"),
                  Parameter("area", "m^2", None, 0.0, above=True, meaning="wetted area"),
                  Parameter("n", "", 0.0, 0.0, meaning="exponent of |dT|"))

    @classmethod
    def stamp(cls, element, s, p):
        s.device(Convectors, element.name, element.nodes,
                 {"gain": p["h"] * p["area"], "n": p["n"], "gmin": s.circuit.options.gmin})
