"""Orifices and check valves between fluid nodes (``Rname n+ n- model``).

An orifice passes ``Q = cd area sqrt(2/rho) dp / (dp^2 + dpl^2)^(1/4)``: the turbulent
``sqrt(2 |dp| / rho) sign(dp)`` above the laminar transition ``dpl``, linear in ``dp`` below
it, so that its conductance stays finite at ``dp = 0``. A check valve is closed (its leak
``gleak dp`` only) below its cracking pressure ``pcrack``, opens in proportion to ``dp`` up to
``popen`` and is an orifice (plus the leak) above: its switching functions are
``dp - pcrack`` and ``dp - popen``, and the transient steps onto each crossing. A closed valve
leaks ``gleak``, by default a billionth of its open laminar conductance, so that it never
cuts a node off (fluid conductances are far below SPICE's gmin, which would drain a tank).
"""

from __future__ import annotations

import math

import numpy as np

from mna.domains import Domain
from mna.elements.device import Device, Instance, Load, branch, parameters, terminal_array
from mna.elements.modelled import ModelType, Parameter

TYPICAL_PRESSURE = 1e5   # Pa: dpl defaults to 1% of it
LEAK = 1e-9   # of the open laminar conductance: a closed valve's default leak


class Valves(Device):
    """Every orifice and check valve: terminals (n+, n-). An orifice is a valve held open."""

    width = 2
    noiseless = True

    def __init__(self, names, terminals, gain, dpl, pcrack, popen, gleak, valve):
        super().__init__(names, terminals)
        self.gain, self.dpl, self.pcrack, self.popen = gain, dpl, pcrack, popen
        self.gleak = gleak
        self.valve = valve.astype(bool)
        self.span = np.where(self.valve, popen - pcrack, 1.0)
        # modes: (dp - pcrack, dp - popen) per element; an orifice's are +1 and never change
        self.modes = np.where(np.repeat(self.valve, 2), -1.0, 1.0)

    @classmethod
    def build(cls, instances: list[Instance]) -> Valves:
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, cls.width), *parameters(
            instances, "gain", "dpl", "pcrack", "popen", "gleak", "valve"))

    def load(self, v, t):
        dp = v[:, 0] - v[:, 1]
        with np.errstate(over="ignore", invalid="ignore"):
            square = dp * dp + self.dpl * self.dpl
            root = np.sqrt(np.sqrt(square))
            orifice = self.gain * dp / root
            slope = self.gain * (0.5 * dp * dp + self.dpl * self.dpl) / (square * root)
        cracked, opened = (self.modes.reshape(-1, 2) > 0).T
        opening = cracked & ~opened
        fraction = np.where(opened, 1.0, np.where(opening, (dp - self.pcrack) / self.span, 0.0))
        dfraction = np.where(opening, 1 / self.span, 0.0)
        flow = self.gleak * dp + fraction * orifice
        conductance = self.gleak + fraction * slope + dfraction * orifice
        return Load(*branch(flow, conductance, -conductance))

    def switching(self, v, t):
        dp = v[:, 0] - v[:, 1]
        values = np.stack([dp - self.pcrack, dp - self.popen], axis=1)
        return np.where(self.valve[:, None], values, 1.0).ravel()


ORIFICE = (
    Parameter("cd", "", 0.7, 0.0, above=True, meaning="discharge coefficient"),
    Parameter("area", "m^2", None, 0.0, above=True, meaning="flow area"),
    Parameter("rho", "kg/m^3", 1000.0, 0.0, above=True, meaning="fluid density"),
    Parameter("dpl", "Pa", 0.01 * TYPICAL_PRESSURE, 0.0, above=True,
              meaning="laminar transition pressure"),
)


class Orifice(ModelType):
    """``.model NAME orifice(cd= area= rho= dpl=)``."""

    kind = "orifice"
    letter = "R"
    domains = frozenset({Domain.FLUID})
    parameters = ORIFICE

    @classmethod
    def device_parameters(cls, p):
        """The valve's parameters beyond the orifice's."""
        return {"pcrack": 0.0, "popen": 0.0, "gleak": 0.0, "valve": 0.0}

    @classmethod
    def stamp(cls, element, s, p):
        gain = p["cd"] * p["area"] * math.sqrt(2 / p["rho"])
        s.device(Valves, element.name, element.nodes,
                 {"gain": gain, "dpl": p["dpl"], **cls.device_parameters(p)})


class CheckValve(Orifice):
    """``.model NAME checkvalve(cd= area= rho= dpl= pcrack= popen= gleak=)``."""

    kind = "checkvalve"
    parameters = (*ORIFICE,
                  Parameter("pcrack", "Pa", 0.0, meaning="cracking pressure"),
                  Parameter("popen", "Pa", None, meaning="pressure where fully open"),
                  Parameter("gleak", "m^3/(s*Pa)", math.nan, 0.0,
                            meaning="closed leakage (default: 1e-9 of the open laminar "
                            "conductance)"))

    @classmethod
    def relations(cls, p):
        if not p["popen"] > p["pcrack"]:
            return f"popen must be above pcrack, got popen={p['popen']:g}, " \
                   f"pcrack={p['pcrack']:g}"
        return None

    @classmethod
    def device_parameters(cls, p):
        gleak = p["gleak"]
        if math.isnan(gleak):
            gleak = LEAK * p["cd"] * p["area"] * math.sqrt(2 / p["rho"] / p["dpl"])
        return {"pcrack": p["pcrack"], "popen": p["popen"], "gleak": gleak, "valve": 1.0}
