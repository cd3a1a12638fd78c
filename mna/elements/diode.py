"""The junction diode: SPICE's equations, junction-voltage limiting, depletion and diffusion
charge, evaluated for every diode of a circuit at once."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mna.elements.base import Element, Role, two_terminal_edge
from mna.elements.device import Device, Instance, Load, parameters, terminal_array
from mna.expr import Value
from mna.netlist.fields import FieldReader

BOLTZMANN_OVER_CHARGE = 8.617333262e-5  # V/K
NOMINAL_TEMPERATURE = 300.15  # K, SPICE's TNOM of 27 °C
EXPONENT_LIMIT = 700.0   # exp() of more overflows: the current is held there

DEFAULTS = {"is": 1e-14, "n": 1.0, "rs": 0.0, "cjo": 0.0, "vj": 1.0, "m": 0.5, "tt": 0.0,
            "bv": math.inf, "ibv": 1e-3, "fc": 0.5}
MODEL_PARAMETERS = ", ".join(k.upper() for k in DEFAULTS)
STAMP = np.array([[1.0, -1.0], [-1.0, 1.0]])   # a branch between the two terminals


def junction_limit(new: np.ndarray, old: np.ndarray, vte: np.ndarray,
                   critical: np.ndarray) -> np.ndarray:
    """SPICE's ``pnjlim``: a forward step in junction voltage above `critical` grows only
    logarithmically."""
    large = (new > critical) & (np.abs(new - old) > 2 * vte)
    if not large.any():
        return new
    with np.errstate(divide="ignore", invalid="ignore"):
        argument = 1 + (new - old) / vte
        from_old = np.where(argument > 0, old + vte * np.log(np.maximum(argument, 1e-300)),
                            critical)
        from_zero = vte * np.log(np.maximum(new / vte, 1e-300))
    return np.where(large, np.where(old > 0, from_old, from_zero), new)


class Diodes(Device):
    """Every junction of a circuit: terminals (anode behind any series resistance, cathode)."""

    width = 2

    def __init__(self, names, terminals, saturation, emission, cjo, vj, grading, transit,
                 breakdown, fc, gmin):
        super().__init__(names, terminals)
        self.saturation, self.cjo, self.vj, self.grading = saturation, cjo, vj, grading
        self.transit, self.breakdown, self.fc, self.gmin = transit, breakdown, fc, gmin
        self.vte = emission * BOLTZMANN_OVER_CHARGE * NOMINAL_TEMPERATURE
        self.critical = self.vte * np.log(self.vte / (math.sqrt(2) * saturation))
        self.stores = bool(np.any(cjo) or np.any(transit))

    @classmethod
    def build(cls, instances: list[Instance]) -> Diodes:
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, cls.width), *parameters(
            instances, "is", "n", "cjo", "vj", "m", "tt", "bv", "fc", "gmin"))

    def limit(self, v, previous):
        vd = v[:, 0] - v[:, 1]
        old = np.zeros_like(vd) if previous is None else previous[:, 0] - previous[:, 1]
        limited = junction_limit(vd, old, self.vte, self.critical)
        if limited is vd:
            return v
        return np.stack([v[:, 1] + limited, v[:, 1]], axis=1)

    def current(self, vd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Junction current and conductance (forward, reverse, breakdown; with gmin)."""
        vte, isat = self.vte, self.saturation
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            exponential = np.exp(np.minimum(vd / vte, EXPONENT_LIMIT))
            cube = (3 * vte / (vd * math.e)) ** 3
            broken = np.exp(np.minimum(-(self.breakdown + vd) / vte, EXPONENT_LIMIT))
            forward = vd >= -3 * vte
            reverse = ~forward & (vd >= -self.breakdown)
            current = np.where(forward, isat * (exponential - 1),
                               np.where(reverse, -isat * (1 + cube), -isat * broken))
            conductance = np.where(forward, isat * exponential / vte,
                                   np.where(reverse, isat * 3 * cube / vd, isat * broken / vte))
        return current + self.gmin * vd, conductance + self.gmin

    def charge(self, vd, current, conductance):
        """Depletion charge (linearised above ``fc*vj``) plus diffusion charge ``tt*id``."""
        q, c = self.transit * current, self.transit * conductance
        vj, m, fc, cjo = self.vj, self.grading, self.fc, self.cjo
        below = vd < fc * vj
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.maximum(1 - vd / vj, 1e-300)
            q_low = cjo * vj * (1 - ratio ** (1 - m)) / (1 - m)
            c_low = cjo * ratio ** -m
            f1 = vj * (1 - (1 - fc) ** (1 - m)) / (1 - m)
            f2 = (1 - fc) ** (1 + m)
            f3 = 1 - fc * (1 + m)
            q_high = cjo * (f1 + (f3 * (vd - fc * vj) + m / (2 * vj) * (vd**2 - (fc * vj) ** 2))
                            / f2)
            c_high = cjo * (f3 + m * vd / vj) / f2
        return q + np.where(below, q_low, q_high), c + np.where(below, c_low, c_high)

    def load(self, v, t):
        vd = v[:, 0] - v[:, 1]
        current, conductance = self.current(vd)
        f = current[:, None] * STAMP[0]
        df = conductance[:, None, None] * STAMP
        if not self.stores:
            return Load(f, df)
        q, c = self.charge(vd, current, conductance)
        return Load(f, df, q[:, None] * STAMP[0], c[:, None, None] * STAMP)


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
        given = s.circuit.models[self.model].parameters
        p = {key: s.value(given[key]) if key in given else default
             for key, default in DEFAULTS.items()}
        area = s.value(self.area)
        anode = self.nodes[0]
        if self.internal_nodes(s.circuit):
            anode = s.internal(self, "junction")
            s.G.conductance(self.nodes[0], anode, area / p["rs"])
        s.device(Diodes, self.name, (anode, self.nodes[1]),
                 {**p, "is": p["is"] * area, "cjo": p["cjo"] * area,
                  "gmin": s.circuit.options.gmin})

    def through(self, s, row) -> None:
        self.fail("the diode current is not a linear function of the unknowns; "
                  "probe it with a 0 V source in series")
