"""The junction diode: SPICE's equations, junction-voltage limiting, depletion and diffusion
charge."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mna.elements.base import Element, Role, two_terminal_edge
from mna.expr import Value
from mna.netlist.fields import FieldReader
from mna.nonlinear import NonlinearPart

BOLTZMANN_OVER_CHARGE = 8.617333262e-5  # V/K
NOMINAL_TEMPERATURE = 300.15  # K, SPICE's TNOM of 27 °C

DEFAULTS = {"is": 1e-14, "n": 1.0, "rs": 0.0, "cjo": 0.0, "vj": 1.0, "m": 0.5, "tt": 0.0,
            "bv": math.inf, "ibv": 1e-3, "fc": 0.5}
MODEL_PARAMETERS = ", ".join(k.upper() for k in DEFAULTS)


@dataclass(frozen=True)
class DiodeModel:
    """Numeric model parameters of one diode, area already applied."""

    saturation: float
    emission: float
    cjo: float
    vj: float
    grading: float
    transit: float
    breakdown: float
    fc: float
    gmin: float

    @property
    def vte(self) -> float:
        return self.emission * BOLTZMANN_OVER_CHARGE * NOMINAL_TEMPERATURE

    @property
    def critical(self) -> float:
        """SPICE's ``vcrit``, above which a Newton step in junction voltage is limited."""
        return self.vte * math.log(self.vte / (math.sqrt(2) * self.saturation))

    def current(self, vd: float) -> tuple[float, float]:
        """Junction current and conductance (forward, reverse, breakdown; with gmin)."""
        vte, isat = self.vte, self.saturation
        if vd >= -3 * vte:
            exponential = math.exp(min(vd / vte, 700.0))
            current, conductance = isat * (exponential - 1), isat * exponential / vte
        elif vd >= -self.breakdown:
            cube = (3 * vte / (vd * math.e)) ** 3
            current, conductance = -isat * (1 + cube), isat * 3 * cube / vd
        else:
            exponential = math.exp(min(-(self.breakdown + vd) / vte, 700.0))
            current, conductance = -isat * exponential, isat * exponential / vte
        return current + self.gmin * vd, conductance + self.gmin

    def charge(self, vd: float, current: float, conductance: float) -> tuple[float, float]:
        """Depletion charge (linearised above ``fc*vj``) plus diffusion charge ``tt*id``."""
        q, c = self.transit * current, self.transit * conductance
        if self.cjo:
            vj, m, fc = self.vj, self.grading, self.fc
            if vd < fc * vj:
                ratio = 1 - vd / vj
                q += self.cjo * vj * (1 - ratio ** (1 - m)) / (1 - m)
                c += self.cjo * ratio ** -m
            else:
                f1 = vj * (1 - (1 - fc) ** (1 - m)) / (1 - m)
                f2 = (1 - fc) ** (1 + m)
                f3 = 1 - fc * (1 + m)
                q += self.cjo * (f1 + (f3 * (vd - fc * vj)
                                       + m / (2 * vj) * (vd**2 - (fc * vj) ** 2)) / f2)
                c += self.cjo * (f3 + m * vd / vj) / f2
        return q, c


def limit_junction(new: float, old: float, vte: float, critical: float) -> float:
    """SPICE's ``pnjlim``: a forward step in junction voltage grows only logarithmically."""
    if new > critical and abs(new - old) > 2 * vte:
        if old > 0:
            argument = 1 + (new - old) / vte
            return old + vte * math.log(argument) if argument > 0 else critical
        return vte * math.log(new / vte)
    return new


class Junction(NonlinearPart):
    """The junction between the (internal) anode and the cathode."""

    def __init__(self, name: str, indices, model: DiodeModel):
        super().__init__(name, indices)
        self.model = model
        self.reset()

    def reset(self) -> None:
        self.last = 0.0
        self._limited = False

    def limited(self) -> bool:
        return self._limited

    def currents(self, x, time):
        vd = x[0] - x[1]
        limited = limit_junction(vd, self.last, self.model.vte, self.model.critical)
        self._limited = limited != vd
        self.last = limited
        current, conductance = self.model.current(limited)
        current += conductance * (vd - limited)  # the linearisation at the limited voltage
        return np.array([current, -current]), conductance * np.array([[1.0, -1.0], [-1.0, 1.0]])

    def charges(self, x):
        if not (self.model.cjo or self.model.transit):
            return None
        vd = x[0] - x[1]
        q, c = self.model.charge(vd, *self.model.current(vd))
        return np.array([q, -q]), c * np.array([[1.0, -1.0], [-1.0, 1.0]])


@dataclass(eq=False)
class Diode(Element):
    """``Dname a k model [area]``: current flows from anode a to cathode k."""

    model: str
    area: Value

    prefix = "D"
    usage = "Dname anode cathode model [area]   with .model model D(" + MODEL_PARAMETERS + ")"

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Diode:
        nodes = (reader.node("anode"), reader.node("cathode"))
        model = reader.word("model name").lower()
        area = reader.value("area") if reader.remaining() else 1.0
        reader.done()
        reader.no_more_options()
        return cls(reader.name, reader.location, nodes, model, area)

    def edges(self):
        return two_terminal_edge(self, Role.DISSIPATOR)

    def validate(self, circuit) -> None:
        model = circuit.models.get(self.model)
        if model is None:
            self.fail(f"undefined model '{self.model}' (add .model {self.model} D(...))")
        if model.kind != "d":
            self.fail(f"model '{model.name}' is a {model.kind.upper()} model, not a D model")
        unknown = set(model.parameters) - set(DEFAULTS)
        if unknown:
            self.fail(f"model '{model.name}' has unknown parameters {', '.join(sorted(unknown))} "
                      f"(known: {MODEL_PARAMETERS})")

    def internal_nodes(self, circuit) -> tuple[str, ...]:
        """A series resistance needs the junction's own anode node."""
        return ("junction",) if circuit.models[self.model].parameters.get("rs", 0.0) != 0.0 else ()

    def stamp(self, s) -> None:
        model = self.numeric_model(s)
        anode = self.nodes[0]
        if self.internal_nodes(s.circuit):
            anode = s.internal(self, "junction")
            rs = s.value(s.circuit.models[self.model].parameters["rs"])
            s.G.conductance(self.nodes[0], anode, s.value(self.area) / rs)
        s.nonlinear(Junction(self.name, [s.index_of(anode), s.index_of(self.nodes[1])], model))

    def numeric_model(self, s) -> DiodeModel:
        given = s.circuit.models[self.model].parameters
        p = {key: s.value(given[key]) if key in given else default
             for key, default in DEFAULTS.items()}
        area = s.value(self.area)
        return DiodeModel(p["is"] * area, p["n"], p["cjo"] * area, p["vj"], p["m"], p["tt"],
                          p["bv"], p["fc"], s.circuit.options.gmin)

    def through(self, s, row) -> None:
        self.fail("the diode current is not a linear function of the unknowns; "
                  "probe it with a 0 V source in series")
