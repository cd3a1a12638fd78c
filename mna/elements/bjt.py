"""The bipolar transistor: SPICE's Gummel-Poon model (as ngspice's BJT level 1), evaluated for
every transistor of a circuit at once.

``Qname c b e [s] model [area]``: the series resistances RC, RB and RE are linear resistors to
nodes inside the element; the device proper sits between the internal collector, base and
emitter (plus the external base, for the part XCJC leaves of the base-collector capacitance
and for RB's modulation, and the substrate). Its currents are ngspice's: transport current
with Early effect and high-injection roll-off through the base charge ``qb``, the base
resistance falling from RB to RBM as ``qb`` grows (or, with IRB, as the base current
crowds), leakage currents ISE/ISC, gmin across
each junction and between substrate and collector (base for a lateral PNP); its charges the
depletion charges of the three junctions and the diffusion charges ``TF`` (with XTF, VTF,
ITF) and ``TR``. Junction voltages are limited in Newton as SPICE's ``pnjlim`` does.
"""

from __future__ import annotations

import dataclasses
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
    CHARGE,
    EXPONENT_LIMIT,
    NONNEGATIVE,
    POSITIVE,
    Junction,
    check_model,
    critical_voltage,
    flicker_power,
    graded,
    junction_at,
    junction_limit,
    limited,
    model_values,
    pn_current,
    series_conductance,
    temperature_factor,
    temperatures,
    unsettled,
)
from mna.expr import Value, times
from mna.netlist.fields import GROUND, FieldReader
from mna.units import number

DEFAULTS = {"is": 1e-16, "bf": 100.0, "nf": 1.0, "vaf": 0.0, "ikf": 0.0, "ise": 0.0,
            "ne": 1.5, "br": 1.0, "nr": 1.0, "var": 0.0, "ikr": 0.0, "isc": 0.0, "nc": 2.0,
            "rb": 0.0, "re": 0.0, "rc": 0.0, "cje": 0.0, "vje": 0.75, "mje": 0.33,
            "tf": 0.0, "xtf": 0.0, "vtf": 0.0, "itf": 0.0, "ptf": 0.0, "cjc": 0.0,
            "vjc": 0.75, "mjc": 0.33, "xcjc": 1.0, "tr": 0.0, "cjs": 0.0, "vjs": 0.75,
            "mjs": 0.0, "iss": 0.0, "ns": 1.0, "xtb": 0.0, "eg": 1.11, "xti": 3.0,
            "fc": 0.5, "tnom": None, "level": 1.0, "kf": 0.0, "af": 1.0, "irb": 0.0,
            "rbm": None, "nk": 0.5, "ibe": 0.0, "ibc": 0.0, "trb1": 0.0, "trb2": 0.0,
            "trm1": 0.0, "trm2": 0.0, "trc1": 0.0, "trc2": 0.0, "tre1": 0.0, "tre2": 0.0,
            "tirb1": 0.0, "tirb2": 0.0}
# the resistances' and IRB's temperature coefficients: 1 + t1 dT + t2 dT^2 (ngspice's)
COEFFICIENTS = {"rb": "trb", "rbm": "trm", "rc": "trc", "re": "tre", "irb": "tirb"}
ALIASES = {"va": "vaf", "ik": "ikf", "c2": "ise", "vb": "var", "c4": "isc", "pe": "vje",
           "me": "mje", "pc": "vjc", "mc": "mjc", "csub": "cjs", "ccs": "cjs", "ps": "vjs",
           "ms": "mjs", "tref": "tnom", "trb": "trb1", "trc": "trc1", "tre": "tre1"}
RANGES = {"is": POSITIVE, "bf": POSITIVE, "br": POSITIVE, "nf": POSITIVE, "nr": POSITIVE,
          "ne": POSITIVE, "nc": POSITIVE, "ns": POSITIVE, "vaf": NONNEGATIVE,
          "var": NONNEGATIVE, "ikf": NONNEGATIVE, "ikr": NONNEGATIVE, "ise": NONNEGATIVE,
          "isc": NONNEGATIVE, "iss": NONNEGATIVE, "rb": NONNEGATIVE, "re": NONNEGATIVE,
          "rc": NONNEGATIVE, "cje": NONNEGATIVE, "cjc": NONNEGATIVE, "cjs": NONNEGATIVE,
          "vje": POSITIVE, "vjc": POSITIVE, "vjs": POSITIVE, "mje": NONNEGATIVE,
          "mjc": NONNEGATIVE, "mjs": NONNEGATIVE, "tf": NONNEGATIVE, "tr": NONNEGATIVE,
          "xtf": NONNEGATIVE, "itf": NONNEGATIVE, "xcjc": NONNEGATIVE, "fc": NONNEGATIVE,
          "irb": NONNEGATIVE,
          "rbm": NONNEGATIVE, "nk": POSITIVE, "ibe": NONNEGATIVE, "ibc": NONNEGATIVE,
          "eg": POSITIVE, "tnom": ABOVE_ABSOLUTE_ZERO}
MODEL_PARAMETERS = ", ".join(k.upper() for k in DEFAULTS)
STATIC_ANALYSES = (".op", ".dc", ".tf")   # where no charge or delay counts
C, B, E, X, S = range(5)   # terminals: internal collector, base, emitter; base; substrate
UNIT = np.eye(5)   # UNIT[k]: terminal k's unit vector


class Transistors(TabulatedDevice):
    """Every bipolar transistor: terminals (c', b', e', b, s), parameters at the circuit's
    temperature with the area of all its `copies` applied; junction voltages are those of an
    NPN (a PNP's terminal voltages times its polarity -1)."""

    width = 5
    NAMES = ("polarity", "substrate_sign", "lateral", "is", "bf", "br", "vtf", "vtr", "ise", "vte",
             "isc", "vtc", "inv_vaf", "inv_var", "inv_ikf", "inv_ikr", "iss", "vts", "vt", "gmin",
             "reltol", "abstol", "tf", "xtf", "ovtf", "itf", "tr", "cje", "vje", "mje", "cjc",
             "cbx", "vjc", "mjc", "cjs", "vjs", "mjs", "fc", "off", "rb", "rbm", "irb", "kf",
             "af", "nk", "ibe", "ibc", "copies")

    def __init__(self, names, terminals, values: dict[str, np.ndarray]):
        super().__init__(names, terminals, values)
        p, ts = self.polarity[:, None], self.substrate_sign[:, None]
        lateral = self.lateral[:, None] > 0
        # how each junction voltage follows from the terminal values
        self.d_be = p * (UNIT[B] - UNIT[E])
        self.d_bc = p * (UNIT[B] - UNIT[C])
        self.d_bx = p * (UNIT[X] - UNIT[C])
        self.d_sub = ts * (UNIT[S] - np.where(lateral, UNIT[B], UNIT[C]))
        self.critical = critical_voltage(self.vt, self.is_)
        self.sub_critical = np.where(self.iss > 0, critical_voltage(
            self.vt, np.where(self.iss > 0, self.iss, 1.0)), 50.0)
        self.stores = bool(np.any(self.cje) or np.any(self.cjc) or np.any(self.cbx)
                           or np.any(self.cjs) or np.any(self.tf) or np.any(self.tr))
        self.emitter_junction = Junction(self.cje, self.vje, self.mje, self.fc)
        self.collector_junction = Junction(self.cjc, self.vjc, self.mjc, self.fc)
        self.outer_junction = Junction(self.cbx, self.vjc, self.mjc, self.fc)
        self.modulated_base = (self.rb > 0) & ((self.rbm != self.rb) | (self.irb > 0))
        self.modulated = bool(np.any(self.modulated_base))

    def charge_branches(self):
        return [((self.cje != 0) | (self.tf != 0), self.d_be),
                ((self.cjc != 0) | (self.tr != 0), self.d_bc),
                (self.cbx != 0, self.d_bx), (self.cjs != 0, self.d_sub)]

    # -- Newton ------------------------------------------------------------------------------
    def junctions(self, v: np.ndarray):
        """The junction voltages vbe, vbc, vbx, vsub at terminal values `v`."""
        return ((self.d_be * v).sum(1), (self.d_bc * v).sum(1), (self.d_bx * v).sum(1),
                (self.d_sub * v).sum(1))

    def limit(self, v, previous):
        vbe, vbc, _, vsub = self.junctions(v)
        if previous is None:
            old_be = old_bc = old_sub = np.zeros_like(vbe)
        else:
            old_be, old_bc, _, old_sub = self.junctions(previous)
        be = junction_limit(vbe, old_be, self.vt, self.critical)
        bc = junction_limit(vbc, old_bc, self.vt, self.critical)
        sub = vsub
        if np.any(self.iss > 0):
            sub = np.where(self.iss > 0, junction_limit(vsub, old_sub, self.vt,
                                                        self.sub_critical), vsub)
        if (np.array_equal(be, vbe) and np.array_equal(bc, vbc)
                and np.array_equal(sub, vsub)):
            return v
        return self._terminals(v, be, bc, sub)

    def start(self, v):   # ngspice's: the emitter junction at vcrit (0 V if OFF), others 0 V
        zero = np.zeros(self.count)
        return self._terminals(v, np.where(self.off, 0.0, self.critical), zero, zero)

    def _terminals(self, v, vbe, vbc, vsub):
        """Terminal values with the base's from `v` and the junction voltages given."""
        at = v.copy()
        p = self.polarity
        at[:, E] = v[:, B] - p * vbe
        at[:, C] = v[:, B] - p * vbc
        common = np.where(self.lateral > 0, at[:, B], at[:, C])
        at[:, S] = common + self.substrate_sign * vsub
        return at

    def converged(self, v, loaded):
        vbe, vbc, _, _ = self.junctions(v)
        old_be, old_bc, _, _ = self.junctions(loaded)
        (cc, cb, dcc_be, dcc_bc, dcb_be, gmu), _ = self.transport(old_be, old_bc)
        step_be, step_bc = vbe - old_be, vbc - old_bc
        return not (unsettled(dcc_be * step_be + dcc_bc * step_bc, cc, self.reltol, self.abstol)
                    or unsettled(dcb_be * step_be + gmu * step_bc, cb, self.reltol, self.abstol))

    # -- the model ---------------------------------------------------------------------------
    def transport(self, vbe, vbc):
        """The collector and base currents (into c' and b') and their derivatives by vbe
        and vbc, with the junction currents and base charge the charges need."""
        gmin = self.gmin
        cbe, gbe = pn_current(vbe, self.ibe, self.vtf)
        cben, gben = pn_current(vbe, self.ise, self.vte)
        cben, gben = cben + gmin * vbe, gben + gmin
        cbc, gbc = pn_current(vbc, self.ibc, self.vtr)
        cbcn, gbcn = pn_current(vbc, self.isc, self.vtc)
        cbcn, gbcn = cbcn + gmin * vbc, gbcn + gmin

        # base charge: Early effect (q1) and high injection (q2), rolled off with the
        # exponent NK (SPICE's square root by default)
        q1 = 1 / (1 - self.inv_vaf * vbc - self.inv_var * vbe)
        q2 = self.inv_ikf * cbe + self.inv_ikr * cbc
        arg = np.maximum(0, 1 + 4 * q2)
        with np.errstate(divide="ignore", invalid="ignore"):
            root = np.where(arg != 0, arg ** self.nk, 1.0)
            slope = np.where(arg != 0, 2 * self.nk * root / arg, 1.0)   # d root / d q2 / 2
        qb = q1 * (1 + root) / 2
        dqb_be = q1 * (qb * self.inv_var + self.inv_ikf * gbe * slope)
        dqb_bc = q1 * (qb * self.inv_vaf + self.inv_ikr * gbc * slope)

        difference = cbe - cbc
        cc = difference / qb - cbc / self.br - cbcn
        cb = cbe / self.bf + cben + cbc / self.br + cbcn
        gmu = gbc / self.br + gbcn
        dcc_be = (gbe - difference * dqb_be / qb) / qb
        dcc_bc = -(gbc + difference * dqb_bc / qb) / qb - gmu
        dcb_be = gbe / self.bf + gben
        return (cc, cb, dcc_be, dcc_bc, dcb_be, gmu), (cbe, gbe, cbc, gbc, qb, dqb_be, dqb_bc)

    def load(self, v, t):
        vbe, vbc, vbx, vsub = self.junctions(v)
        (cc, cb, dcc_be, dcc_bc, dcb_be, gmu), (cbe, gbe, cbc, gbc, qb, dqb_be, dqb_bc) = (
            self.transport(vbe, vbc))
        cdsub, gdsub = pn_current(vsub, self.iss, self.vts)
        cdsub, gdsub = cdsub + self.gmin * vsub, gdsub + self.gmin

        # cc enters c' and leaves e', cb enters b' and leaves e', the substrate current
        # enters s and leaves the collector (base)
        d_be, d_bc, d_sub = self.d_be, self.d_bc, self.d_sub
        into_c = d_be - d_bc
        f = cc[:, None] * into_c + cb[:, None] * d_be + cdsub[:, None] * d_sub
        df = (outer(into_c, dcc_be[:, None] * d_be + dcc_bc[:, None] * d_bc)
              + outer(d_be, dcb_be[:, None] * d_be + gmu[:, None] * d_bc)
              + outer(d_sub, gdsub[:, None] * d_sub))
        if self.modulated:   # RB's conductance beyond the 1/RB stamped in G, as ngspice loads it
            extra = self.base_conductance(cb, qb) - np.where(self.rb > 0, 1 / self.rb, 0.0)
            across = np.broadcast_to(UNIT[X] - UNIT[B], f.shape)
            f = f + (extra * (v[:, X] - v[:, B]))[:, None] * across
            df = df + outer(across, extra[:, None] * across)
        if not self.stores:
            return Load(f, df)

        # forward diffusion charge: TF modulated by XTF, VTF, ITF and qb where vbe > 0
        tf, xtf, ovtf, itf = self.tf, self.xtf, self.ovtf, self.itf
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            argtf = np.where(xtf != 0, xtf * np.exp(np.minimum(vbc * ovtf, EXPONENT_LIMIT)),
                             0.0)
            share = np.where(itf != 0, cbe / (cbe + itf), 1.0)
            arg2 = np.where(itf != 0, argtf * share * share * (3 - 2 * share), argtf)
            argtf = np.where(itf != 0, argtf * share * share, argtf)
            arg3 = cbe * argtf * ovtf
            modulated = (tf != 0) & (vbe > 0)
            cbe_t = np.where(modulated, cbe * (1 + argtf) / qb, cbe)
            gbe_t = np.where(modulated, (gbe * (1 + arg2) - cbe_t * dqb_be) / qb, gbe)
            cross = np.where(modulated, tf * (arg3 - cbe_t * dqb_bc) / qb, 0.0)
        q_be, c_be = self.emitter_junction.charge(vbe)
        q_be, c_be = q_be + tf * cbe_t, c_be + tf * gbe_t
        q_bc, c_bc = self.collector_junction.charge(vbc)
        q_bc, c_bc = q_bc + self.tr * cbc, c_bc + self.tr * gbc
        q_bx, c_bx = self.outer_junction.charge(vbx)
        q_sub, c_sub = self.substrate_charge(vsub)
        d_bx = self.d_bx
        q = (q_be[:, None] * d_be + q_bc[:, None] * d_bc + q_bx[:, None] * d_bx
             + q_sub[:, None] * d_sub)
        dq = (outer(d_be, c_be[:, None] * d_be + cross[:, None] * d_bc)
              + outer(d_bc, c_bc[:, None] * d_bc) + outer(d_bx, c_bx[:, None] * d_bx)
              + outer(d_sub, c_sub[:, None] * d_sub))
        return Load(f, df, q, dq)

    def noise(self, v, temperature):
        """ngspice's: shot noise of the collector and base currents, flicker noise
        ``KF Ib^AF / f`` of each copy's base current, and the thermal noise of a modulated base
        resistance at its value here (a fixed RB's is the linear conductance's)."""
        vbe, vbc, _, _ = self.junctions(v)
        (cc, cb, *_), (*_, qb, _, _) = self.transport(vbe, vbc)
        none = np.zeros(self.count)
        rbb = np.where(self.modulated_base, self.base_conductance(cb, qb), 0.0)
        return [NoiseCurrent("rb", X, B, 4 * BOLTZMANN * temperature * rbb, none),
                NoiseCurrent("ic", C, E, 2 * CHARGE * np.abs(cc), none),
                NoiseCurrent("ib", B, E, 2 * CHARGE * np.abs(cb), none),
                NoiseCurrent("1overf", B, E, none,
                             self.copies * self.kf * flicker_power(cb / self.copies, self.af))]

    def base_conductance(self, cb, qb):
        """``1 / rbb``: RBM plus the rest of RB, which the base charge qb divides or, with IRB,
        the base current crowds (SPICE's); held fixed in the Jacobian, as ngspice holds it
        (so its small-signal model is ngspice's too)."""
        spread = self.rb - self.rbm
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.maximum(cb / np.where(self.irb > 0, self.irb, 1.0), 1e-9)
            z = (-1 + np.sqrt(1 + 14.59025 * ratio)) / 2.4317 / np.sqrt(ratio)
            tangent = np.tan(z)
            crowded = self.rbm + 3 * spread * (tangent - z) / z / tangent**2
            rbb = np.where(self.irb > 0, crowded, self.rbm + spread / qb)
            return np.where(self.rb > 0, 1 / rbb, 0.0)

    def substrate_charge(self, vsub):
        """The substrate junction's depletion charge and capacitance (ngspice's form: no FC,
        linear in the capacitance above zero bias)."""
        cjs, vjs, mjs = self.cjs, self.vjs, self.mjs
        with np.errstate(divide="ignore", invalid="ignore"):
            fraction, sarg = graded(vsub, vjs, mjs)
            reverse = vsub < 0
            q = np.where(reverse, vjs * cjs * fraction / (1 - mjs),
                         vsub * cjs * (1 + mjs * vsub / (2 * vjs)))
            c = np.where(reverse, cjs * sarg, cjs * (1 + mjs * vsub / vjs))
        zero = cjs == 0
        return np.where(zero, 0.0, q), np.where(zero, 0.0, c)


@dataclass(eq=False)
class BipolarTransistor(Element):
    """``Qname c b e [s] model [area] [OFF] [m=copies]``: an NPN or PNP transistor (SPICE's
    Gummel-Poon); ``OFF`` starts a DC solution with its junctions at 0 V (SPICE's); ``m=``
    that many in parallel (ngspice's: as many times the area and gmin, with the flicker
    noise of each copy)."""

    model: str
    area: Value
    substrate: bool
    off: bool = False
    copies: Value = 1.0

    prefix = "Q"
    usage = ("Qname collector base emitter [substrate] model [area] [OFF] [m=copies]   with "
             ".model model NPN(...) or PNP(" + MODEL_PARAMETERS + ")")

    @classmethod
    def from_fields(cls, reader: FieldReader) -> BipolarTransistor:
        nodes = list(reader.nodes("collector", "base", "emitter"))
        fields = reader.card.fields
        off = bool(fields) and isinstance(fields[-1], str) and fields[-1].lower() == "off"
        remaining = reader.remaining() - off
        last = fields[len(fields) - 1 - off] if remaining else None
        numeric = isinstance(last, str) and number(last) is not None
        last_is_area = remaining >= 2 and (not isinstance(last, str) or numeric)
        substrate = remaining >= 3 or (remaining == 2 and not last_is_area)
        if substrate:
            nodes.append(reader.node("substrate"))
        model = reader.model()
        area = reader.value("area") if reader.remaining() > off else None
        reader.flag("off")
        given = reader.option("area")
        if area is None:
            area = given if given is not None else 1.0
        reader.done()
        copies = reader.copies()
        reader.no_more_options("area=, m=")
        return cls(reader.name, reader.location, tuple(nodes), model, area, substrate, off,
                   1.0 if copies is None else copies)

    def copied(self, count):
        return dataclasses.replace(self, copies=times(self.copies, count))

    def edges(self):
        c, b, e = self.nodes[:3]
        edges = [Edge(self, b, e, Role.DISSIPATOR), Edge(self, b, c, Role.DISSIPATOR)]
        if self.substrate:
            edges.append(Edge(self, self.nodes[3], c, Role.DISSIPATOR))
        return edges

    def validate(self, circuit) -> None:
        self.check_electrical(circuit, "bipolar transistor")
        check_model(self, circuit, ("npn", "pnp"), DEFAULTS, ALIASES, "NPN")
        given = circuit.models[self.model].parameters
        dynamic = sorted({a.card for a in circuit.analyses if a.card not in STATIC_ANALYSES})
        if given.get("ptf", 0.0) != 0.0 and dynamic:
            self.fail(f"model '{self.model}': PTF (excess phase) is not supported in "
                      f"{', '.join(dynamic)} (it does not enter {', '.join(STATIC_ANALYSES)})")
        if given.get("level", 1.0) != 1.0:
            self.fail(f"model '{self.model}': only LEVEL=1 (Gummel-Poon) is supported")

    def internal_nodes(self, circuit) -> tuple[str, ...]:
        """Collector, base and emitter behind RC, RB and RE, where those are given."""
        given = circuit.models[self.model].parameters
        return tuple(name for name, key in (("collector", "rc"), ("base", "rb"),
                                            ("emitter", "re"))
                     if given.get(key, 0.0) != 0.0)

    def stamp(self, s) -> None:
        p = model_values(self, s, DEFAULTS, ALIASES, RANGES)
        copies = self.positive(s, self.copies, "m")
        area = self.positive(s, self.area, "area") * copies
        kind = s.circuit.models[self.model].kind
        polarity = 1.0 if kind == "npn" else -1.0
        lateral = kind == "pnp"   # ngspice: NPN vertical, PNP lateral
        temperature, nominal = temperatures(s.circuit, p["tnom"])
        vt = BOLTZMANN_OVER_CHARGE * temperature
        ratio = temperature / nominal
        factlog = (ratio - 1) * p["eg"] / vt + p["xti"] * math.log(ratio)
        bfactor = temperature_factor(self, math.log(ratio) * p["xtb"])
        ise = p["ise"] * p["is"] if p["ise"] > 1e-4 else p["ise"]   # ngspice's old form
        isc = p["isc"] * p["is"] if p["isc"] > 1e-4 else p["isc"]
        fc, mje, mjc, mjs = (limited(self, s, key.upper(), p[key], limit) for key, limit in (
            ("fc", 0.9999), ("mje", 0.999), ("mjc", 0.999), ("mjs", 0.999)))
        vje, cje = junction_at(p["vje"], p["cje"], mje, temperature, nominal)
        vjc, cjc = junction_at(p["vjc"], p["cjc"], mjc, temperature, nominal)
        vjs, cjs = junction_at(p["vjs"], p["cjs"], mjs, temperature, nominal)

        def inverse(value):
            return 1 / value if value != 0 else 0.0

        saturation = area * p["is"] * temperature_factor(self, factlog)
        rise = temperature - nominal
        scale = {key: 1 + p[f"{t}1"] * rise + p[f"{t}2"] * rise * rise
                 for key, t in COEFFICIENTS.items()}
        # IBE and IBC, given both, are the junctions' saturation currents in place of IS
        # (ngspice's), each scaled with temperature by its own emission coefficient
        own = {"ibe", "ibc"} <= s.circuit.models[self.model].parameters.keys()

        values = {
            "polarity": polarity, "substrate_sign": polarity * (-1.0 if lateral else 1.0),
            "lateral": float(lateral),
            "is": saturation,
            "ibe": area * p["ibe"] * temperature_factor(self, factlog / p["nf"]) if own
            else saturation,
            "ibc": area * p["ibc"] * temperature_factor(self, factlog / p["nr"]) if own
            else saturation,
            "bf": p["bf"] * bfactor, "br": p["br"] * bfactor,
            "vtf": p["nf"] * vt, "vtr": p["nr"] * vt,
            "ise": area * ise * temperature_factor(self, factlog / p["ne"]) / bfactor,
            "vte": p["ne"] * vt,
            "isc": area * isc * temperature_factor(self, factlog / p["nc"]) / bfactor,
            "vtc": p["nc"] * vt,
            "inv_vaf": inverse(p["vaf"]), "inv_var": inverse(p["var"]),
            "inv_ikf": inverse(p["ikf"]) / area, "inv_ikr": inverse(p["ikr"]) / area,
            "iss": area * p["iss"] * temperature_factor(self, factlog), "vts": p["ns"] * vt,
            "vt": vt,
            "gmin": s.circuit.options.gmin * copies, "reltol": s.circuit.options.reltol,
            "abstol": s.circuit.options.abstol,
            "tf": p["tf"], "xtf": p["xtf"], "ovtf": inverse(p["vtf"] * 1.44),
            "itf": p["itf"] * area, "tr": p["tr"],
            "cje": cje * area, "vje": vje, "mje": mje,
            "cjc": cjc * area * p["xcjc"], "cbx": cjc * area * (1 - p["xcjc"]),
            "vjc": vjc, "mjc": mjc, "cjs": cjs * area, "vjs": vjs, "mjs": mjs, "fc": fc,
            "rb": p["rb"] * scale["rb"] / area,
            "rbm": (p["rb"] if p["rbm"] is None else p["rbm"]) * scale["rbm"] / area,
            "irb": p["irb"] * scale["irb"] * area, "kf": p["kf"], "af": p["af"],
            "nk": limited(self, s, "NK", p["nk"], 1.0), "copies": copies,
        }
        c, b, e = self.nodes[:3]
        inner = {"collector": c, "base": b, "emitter": e}
        modulated = p["rb"] != 0.0 and (values["rbm"] != values["rb"] or values["irb"] > 0)
        for name, key in (("collector", "rc"), ("base", "rb"), ("emitter", "re")):
            if p[key] != 0.0:   # (RB's modulation, with RBM or IRB, is the device's)
                inner[name] = s.internal(self, name)
                outer_node = self.nodes[("collector", "base", "emitter").index(name)]
                conductance = series_conductance(self, area, p[key], scale[key], key.upper())
                if key == "rb" and modulated:   # its noise too: that of the whole rbb
                    s.G.conductance(outer_node, inner[name], conductance)
                else:
                    s.noisy_conductance(f"{self.name}_{key}", outer_node, inner[name],
                                        conductance)
        substrate = self.nodes[3] if self.substrate else GROUND
        s.device(Transistors, self.name,
                 (inner["collector"], inner["base"], inner["emitter"], b, substrate),
                 values | {"off": self.off})

    def terminal_currents(self):
        return {"ic": 0, "ib": 1, "ie": 2, **({"is": 3} if self.substrate else {})}

