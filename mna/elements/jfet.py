"""The junction field-effect transistor: ngspice's JFET (level 1, Shichman-Hodges with the
Sydney University doping-tail parameter B), evaluated for every JFET of a circuit at once.

``Jname d g s model [area] [OFF] [M=m]``: RD and RS are linear resistors to nodes inside the
element; the device proper sits between the internal drain, the gate and the internal
source. Its currents are ngspice's: the two gate junctions (``IS (exp(v/vt) - 1)``, no
emission coefficient, gmin across each), and the drain current ``beta (1 + lambda vds)
vgst^2 (B + (1 - B) vgst / (PB - VTO))`` in saturation (``vgst = vgs - VTO``; its
linear-region form below ``vds = vgst``; source and drain trade places where ``vds < 0``);
its charges the two junctions' depletion charges (grading 1/2, linearised above ``FC PB``).
Gate voltages are limited in Newton as SPICE's ``pnjlim`` and ``fetlim`` do.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass

import numpy as np

from mna.elements.base import Edge, Element, Role
from mna.elements.device import (
    Load,
    NoiseCurrent,
    TabulatedDevice,
    outer,
)
from mna.elements.diode import (
    ABOVE_ABSOLUTE_ZERO,
    BOLTZMANN,
    BOLTZMANN_OVER_CHARGE,
    NONNEGATIVE,
    POSITIVE,
    Junction,
    Range,
    check_model,
    critical_voltage,
    flicker_power,
    junction_at,
    junction_limit,
    model_values,
    pn_current,
    temperature_factor,
    temperatures,
    unsettled,
)
from mna.elements.mosfet import fet_limit
from mna.expr import Value, times
from mna.netlist.fields import FieldReader
from mna.units import number

log = logging.getLogger(__name__)

DEFAULTS = {"vto": -2.0, "beta": 1e-4, "lambda": 0.0, "rd": 0.0, "rs": 0.0, "cgs": 0.0,
            "cgd": 0.0, "pb": 1.0, "is": 1e-14, "fc": 0.5, "b": 1.0, "tnom": None, "tcv": 0.0,
            "vtotc": None, "bex": 0.0, "betatce": None, "xti": None, "eg": 1.11, "kf": 0.0,
            "af": 1.0, "nlev": 2.0, "gdsnoi": 1.0}
ALIASES = {"vt0": "vto"}
RANGES = {"beta": NONNEGATIVE, "lambda": NONNEGATIVE, "rd": NONNEGATIVE, "rs": NONNEGATIVE,
          "cgs": NONNEGATIVE, "cgd": NONNEGATIVE, "pb": POSITIVE, "is": NONNEGATIVE,
          "fc": Range(0.0, 1.0), "tnom": ABOVE_ABSOLUTE_ZERO, "gdsnoi": NONNEGATIVE}
MODEL_PARAMETERS = ", ".join(k.upper() for k in DEFAULTS)
FC_LIMIT = 0.95   # ngspice limits FC to this, with a warning
D, G, S = range(3)
UNIT = np.eye(3)


class Jfets(TabulatedDevice):
    """Every JFET: terminals (d', g, s'), parameters at the circuit's temperature with the
    area and M applied; voltages are an N-channel's (a P-channel's times its polarity -1)."""

    width = 3
    NAMES = ("polarity", "vto", "beta", "lambda", "b", "tail", "saturation", "vt", "critical",
             "cgs", "cgd", "pb", "fc", "gmin", "reltol", "abstol", "off", "m", "kf", "af",
             "nlev", "gdsnoi")

    def __init__(self, names, terminals, values: dict[str, np.ndarray]):
        super().__init__(names, terminals, values)
        p = self.polarity[:, None]
        self.d_gs = p * (UNIT[G] - UNIT[S])
        self.d_gd = p * (UNIT[G] - UNIT[D])
        self.d_ds = p * (UNIT[D] - UNIT[S])
        self.stores = bool(np.any(self.cgs) or np.any(self.cgd))
        self.source_junction = Junction(self.cgs, self.pb, 0.5, self.fc)
        self.drain_junction = Junction(self.cgd, self.pb, 0.5, self.fc)

    def charge_branches(self):
        return [(self.cgs != 0, self.d_gs), (self.cgd != 0, self.d_gd)]

    def gates(self, v):
        """vgs and vgd (an N-channel's) at terminal values `v`."""
        return (self.d_gs * v).sum(1), (self.d_gd * v).sum(1)

    # -- Newton ------------------------------------------------------------------------------
    def limit(self, v, previous):
        if previous is None:
            return v
        vgs, vgd = self.gates(v)
        old_gs, old_gd = self.gates(previous)
        new_gs = fet_limit(junction_limit(vgs, old_gs, self.vt, self.critical), old_gs,
                           self.vto)
        new_gd = fet_limit(junction_limit(vgd, old_gd, self.vt, self.critical), old_gd,
                           self.vto)
        if np.array_equal(new_gs, vgs) and np.array_equal(new_gd, vgd):
            return v
        return self._terminals(v, new_gs, new_gd)

    def start(self, v):   # ngspice's: both gate junctions at -1 V, at 0 V if OFF
        bias = np.where(self.off, 0.0, -1.0)
        return self._terminals(v, bias, bias)

    def _terminals(self, v, vgs, vgd):
        """Terminal values with the gate's from `v` and the (N-channel) voltages given."""
        at = v.copy()
        p = self.polarity
        at[:, S] = v[:, G] - p * vgs
        at[:, D] = v[:, G] - p * vgd
        return at

    def converged(self, v, loaded):
        """SPICE's test of the gate and drain currents (`diode.unsettled`)."""
        step_gs, step_gd = self.gates(v - loaded)
        (igs, ggs), (igd, ggd), (cdrain, gm, gds) = self.currents(*self.gates(loaded))
        gate = ggs * step_gs + ggd * step_gd
        drain = gm * step_gs + gds * (step_gs - step_gd) - ggd * step_gd
        return not (unsettled(gate, igs + igd, self.reltol, self.abstol)
                    or unsettled(drain, cdrain - igd, self.reltol, self.abstol))

    # -- the model ---------------------------------------------------------------------------
    def currents(self, vgs, vgd):
        """The gate junctions' currents and conductances, and the drain current with its
        transconductance and output conductance (ngspice's: by vgs and vds, in either mode)."""
        junctions = []
        for voltage in (vgs, vgd):
            current, conductance = pn_current(voltage, self.saturation, self.vt)
            junctions.append((current + self.gmin * voltage, conductance + self.gmin))
        vds = vgs - vgd
        normal = vds >= 0
        sign = np.where(normal, 1.0, -1.0)
        vgst = np.where(normal, vgs, vgd) - self.vto   # of the side that acts as the source
        size = sign * vds                                # |vds|
        betap = self.beta * (1 + self.lambda_ * size)
        b, tail = self.b, self.tail
        linear = vgst >= size
        # in the frame where the drain is the higher side: current, and slopes by vgst, |vds|
        apart = 2 * b + 3 * tail * (vgst - size)
        cpart_lin = size * (size * (tail * size - b) + vgst * apart)
        cpart_sat = vgst * vgst * (b + tail * vgst)
        cpart = np.where(linear, cpart_lin, cpart_sat)
        by_gst = np.where(linear, betap * size * (apart + 3 * tail * vgst),
                          betap * vgst * (2 * b + 3 * tail * vgst))
        by_ds = np.where(linear, betap * (vgst - size) * apart, 0.0) + (
            self.lambda_ * self.beta * cpart)
        on = vgst > 0
        current = np.where(on, betap * cpart, 0.0)
        by_gst, by_ds = np.where(on, by_gst, 0.0), np.where(on, by_ds, 0.0)
        # back to vgs, vds: reversed, the current is -F(vgd - VTO, -vds) with vgd = vgs - vds
        cdrain = sign * current
        gm = sign * by_gst
        gds = np.where(normal, by_ds, by_ds + by_gst)
        return junctions[0], junctions[1], (cdrain, gm, gds)

    def load(self, v, t):
        vgs, vgd = self.gates(v)
        (igs, ggs), (igd, ggd), (cdrain, gm, gds) = self.currents(vgs, vgd)
        d_gs, d_gd, d_ds = self.d_gs, self.d_gd, self.d_ds
        f = igs[:, None] * d_gs + igd[:, None] * d_gd + cdrain[:, None] * d_ds
        df = (outer(d_gs, ggs[:, None] * d_gs) + outer(d_gd, ggd[:, None] * d_gd)
              + outer(d_ds, gm[:, None] * d_gs + gds[:, None] * d_ds))
        if not self.stores:
            return Load(f, df)
        q_gs, c_gs = self.source_junction.charge(vgs)
        q_gd, c_gd = self.drain_junction.charge(vgd)
        q = q_gs[:, None] * d_gs + q_gd[:, None] * d_gd
        dq = outer(d_gs, c_gs[:, None] * d_gs) + outer(d_gd, c_gd[:, None] * d_gd)
        return Load(f, df, q, dq)

    def noise(self, v, temperature):
        """ngspice 39's: the channel's thermal noise ``(8/3) k T |gm|`` (NLEV 3: ``(2/3)
        beta vgst (1 + a + a^2) / (1 + a) GDSNOI`` times 4 k T, ``a = 1 - vds / vgst`` below
        saturation, 0 in it and in cut-off) and flicker noise ``KF |Id|^AF / f`` per
        parallel copy."""
        vgs, vgd = self.gates(v)
        _, (igd, _), (cdrain, gm, _) = self.currents(vgs, vgd)
        vds, vgst = vgs - vgd, np.maximum(vgs - self.vto, 0.0)
        linear = (vgst > 0) & (vgst >= vds)
        alpha = np.where(linear, 1 - vds / np.where(linear, vgst, 1.0), 0.0)
        detailed = 2 / 3 * self.beta * vgst * (1 + alpha + alpha**2) / (1 + alpha) * self.gdsnoi
        thermal = np.where(self.nlev >= 3, detailed, 2 / 3 * np.abs(gm))
        flicker = self.m * self.kf * flicker_power((cdrain - igd) / self.m, self.af)
        return [NoiseCurrent("id", D, S, 4 * BOLTZMANN * temperature * thermal,
                             np.zeros(self.count)),
                NoiseCurrent("1overf", D, S, np.zeros(self.count), flicker)]


@dataclass(eq=False)
class Jfet(Element):
    """``Jname d g s model [area] [OFF] [M=m]``: an N- or P-channel JFET; ``OFF`` starts a
    DC solution with its gate junctions at 0 V (SPICE's)."""

    model: str
    area: Value
    multiplier: Value
    off: bool = False

    prefix = "J"
    usage = ("Jname drain gate source model [area | area=value] [OFF] [M=m]   with .model "
             "model NJF(...) or PJF(" + MODEL_PARAMETERS + ")")

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Jfet:
        nodes = reader.nodes("drain", "gate", "source")
        model = reader.model()
        off = reader.flag("off")
        following = reader.peek()
        area = None
        if following is not None and not off and (not isinstance(following, str)
                                                  or number(following) is not None):
            area = reader.value("area")
        off = off or reader.flag("off")
        given = reader.option("area")
        if area is not None and given is not None:
            reader.fail(f"{reader.name}: give the area once", usage=True)
        multiplier = reader.copies()
        reader.done()
        reader.no_more_options("area=, m=")
        return cls(reader.name, reader.location, nodes, model,
                   next((a for a in (area, given) if a is not None), 1.0),
                   1.0 if multiplier is None else multiplier, off)

    def copied(self, count):
        return dataclasses.replace(self, multiplier=times(self.multiplier, count))

    def edges(self):
        d, g, s = self.nodes
        return [Edge(self, d, s, Role.DISSIPATOR), Edge(self, g, s, Role.DISSIPATOR),
                Edge(self, g, d, Role.DISSIPATOR)]

    def validate(self, circuit) -> None:
        self.check_electrical(circuit, "JFET")
        check_model(self, circuit, ("njf", "pjf"), DEFAULTS, ALIASES, "NJF")

    def internal_nodes(self, circuit) -> tuple[str, ...]:
        """Drain and source behind RD and RS, where those are given."""
        given = circuit.models[self.model].parameters
        return tuple(name for name, key in (("drain", "rd"), ("source", "rs"))
                     if given.get(key, 0.0) != 0.0)

    def stamp(self, s) -> None:
        p = model_values(self, s, DEFAULTS, ALIASES, RANGES)
        area = self.positive(s, self.area, "area")
        m = self.positive(s, self.multiplier, "m")
        scale = area * m
        temperature, nominal = temperatures(s.circuit, p["tnom"])
        vt = BOLTZMANN_OVER_CHARGE * temperature
        rise = temperature - nominal
        saturation = p["is"] * temperature_factor(self, (temperature / nominal - 1) * p["eg"]
                                                  / vt)
        if p["xti"] is not None:   # ngspice scales by XTI only where it is given
            saturation *= (temperature / nominal) ** p["xti"]
        fc = p["fc"]
        if fc > FC_LIMIT:
            log.warning("%s: model '%s': FC = %g limited to %g, as ngspice does", self.name,
                        self.model, fc, FC_LIMIT)
            fc = FC_LIMIT
        pb, cgs = junction_at(p["pb"], p["cgs"], 0.5, temperature, nominal)
        _, cgd = junction_at(p["pb"], p["cgd"], 0.5, temperature, nominal)
        vto = (p["vto"] + p["vtotc"] * rise if p["vtotc"] is not None
               else p["vto"] - p["tcv"] * rise)
        beta = (p["beta"] * 1.01 ** (p["betatce"] * rise) if p["betatce"] is not None
                else p["beta"] * (temperature / nominal) ** p["bex"])
        kind = s.circuit.models[self.model].kind
        options = s.circuit.options
        values = {
            "polarity": 1.0 if kind == "njf" else -1.0, "vto": vto, "beta": beta * scale,
            "lambda": p["lambda"], "b": p["b"],
            # the doping tail's share, from the model's own PB and VTO (as ngspice's)
            "tail": (1 - p["b"]) / (p["pb"] - p["vto"]) if p["pb"] != p["vto"] else 0.0,
            "saturation": saturation * scale, "vt": vt,
            # of one unit area, as ngspice's
            "critical": critical_voltage(vt, saturation) if saturation > 0 else math.inf,
            "cgs": cgs * scale, "cgd": cgd * scale, "pb": pb, "fc": fc,
            "gmin": options.gmin * m, "reltol": options.reltol, "abstol": options.abstol,
            "m": m, "kf": p["kf"], "af": p["af"], "nlev": p["nlev"], "gdsnoi": p["gdsnoi"],
        }
        d, g, source = self.nodes
        inner = {"drain": d, "source": source}
        for name, key, outer_node in (("drain", "rd", d), ("source", "rs", source)):
            if p[key] != 0.0:
                inner[name] = s.internal(self, name)
                s.noisy_conductance(f"{self.name}_{key}", outer_node, inner[name],
                                    scale / p[key])
        s.device(Jfets, self.name, (inner["drain"], g, inner["source"]),
                 values | {"off": self.off})

    def terminal_currents(self):
        return {"id": 0, "ig": 1, "is": 2}


