"""The MOSFET at level 1: SPICE's Shichman-Hodges model (as ngspice's MOS1), evaluated for every
transistor of a circuit at once.

``Mname d g s b model [W=] [L=] [AD= AS= PD= PS= NRD= NRS= M=]``: the drain and source
resistances (RD, RS, or RSH times NRD, NRS) are linear resistors to nodes inside the element;
the overlap capacitances CGSO, CGDO, CGBO are linear capacitors. The device proper carries the
channel current (drain and source interchanged where the drain voltage falls below the
source's), the bulk junction diodes with their depletion charges, and Meyer's gate
capacitances where TOX gives an oxide capacitance.

Meyer's capacitances are not derivatives of charges: SPICE integrates ``i = C(v) dv/dt``
branch by branch. A device here gives charges ``q(v)``, so each Meyer branch gets an unknown
of its own inside the element, ``w = tau dv/dt`` (its equation ``(Cox/tau) w - d/dt (Cox v)
= 0``), and the branch carries the static current ``C(v) w / tau``: Meyer's currents in a
transient, Meyer's capacitances in an AC analysis, nothing at DC.
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
    GRADING,
    NOMINAL_TEMPERATURE,
    NONNEGATIVE,
    POSITIVE,
    Junction,
    check_model,
    flicker_power,
    gap_energy,
    junction_at,
    junction_limit,
    model_values,
    potential_shift,
    temperature_factor,
    temperatures,
    unsettled,
)
from mna.expr import times
from mna.netlist.fields import FieldReader

DEFAULTS = {"level": 1.0, "vto": 0.0, "kp": None, "gamma": None, "phi": None, "lambda": 0.0,
            "rd": 0.0, "rs": 0.0, "cbd": None, "cbs": None, "is": 1e-14, "pb": 0.8,
            "cgso": 0.0, "cgdo": 0.0, "cgbo": 0.0, "rsh": 0.0, "cj": None, "mj": 0.5,
            "cjsw": None, "mjsw": 0.5, "js": 0.0, "tox": None, "ld": 0.0, "u0": 600.0,
            "fc": 0.5, "nsub": None, "tpg": 1.0, "nss": 0.0, "tnom": None, "kf": 0.0,
            "af": 1.0, "w": None, "l": None}   # W and L: the instances' where they give none
ALIASES = {"vt0": "vto", "uo": "u0", "tref": "tnom"}
RANGES = {"kp": NONNEGATIVE, "gamma": NONNEGATIVE, "phi": POSITIVE, "lambda": NONNEGATIVE,
          "rd": NONNEGATIVE, "rs": NONNEGATIVE, "rsh": NONNEGATIVE, "cbd": NONNEGATIVE,
          "cbs": NONNEGATIVE, "is": NONNEGATIVE, "js": NONNEGATIVE, "pb": POSITIVE,
          "cgso": NONNEGATIVE, "cgdo": NONNEGATIVE, "cgbo": NONNEGATIVE, "cj": NONNEGATIVE,
          "mj": GRADING, "cjsw": NONNEGATIVE, "mjsw": GRADING, "tox": POSITIVE,
          "ld": NONNEGATIVE, "u0": POSITIVE, "fc": GRADING, "nsub": POSITIVE,
          "tnom": ABOVE_ABSOLUTE_ZERO, "w": POSITIVE, "l": POSITIVE}
INSTANCE = ("w", "l", "ad", "as", "pd", "ps", "nrd", "nrs", "m")
MODEL_PARAMETERS = ", ".join(k.upper() for k in DEFAULTS)
OXIDE_PERMITTIVITY = 3.9 * 8.854214871e-12   # F/m, as ngspice's MOS1
NOISE_OXIDE = OXIDE_PERMITTIVITY / 1e-7   # F/m²: ngspice's Cox for the flicker noise sans TOX
SILICON_PERMITTIVITY = 11.70 * 8.854214871e-12
MEYER_TIME = 1e-9   # s: tau of the Meyer branches' unknowns w = tau dv/dt
MAX_EXP_ARG = 709.0
MAGIC_VDS = 0.025   # V: ngspice's floor on vdsat in Meyer's capacitances
D, G, S, B, WGS, WGD, WGB = range(7)   # terminals; the w's are Meyer's unknowns
UNIT = np.eye(7)   # UNIT[k]: terminal k's unit vector


def fet_limit(new, old, vto):
    """SPICE's ``DEVfetlim``: the gate voltage's step held back around the threshold."""
    high = np.abs(2 * (old - vto)) + 2
    low = np.abs(old - vto) + 1
    vtox = vto + 3.5
    delta = new - old
    on = old >= vto
    strong = old >= vtox
    falling = delta <= 0
    # strongly on
    going_off = np.where(new >= vtox, np.where(-delta > low, old - low, new),
                         np.maximum(new, vto + 2))
    staying_on = np.where(delta >= high, old + high, new)
    strongly = np.where(falling, going_off, staying_on)
    middle = np.where(falling, np.maximum(new, vto - 0.5), np.minimum(new, vto + 4))
    # off
    ceiling = vto + 0.5
    rising = np.where(new <= ceiling, np.where(delta > low, old + low, new), ceiling)
    off = np.where(falling, np.where(-delta > high, old - high, new), rising)
    return np.where(on, np.where(strong, strongly, middle), off)


def vds_limit(new, old):
    """SPICE's ``DEVlimvds``: the drain voltage's step held back."""
    above = np.where(new > old, np.minimum(new, 3 * old + 2),
                     np.where(new < 3.5, np.maximum(new, 2), new))
    below = np.where(new > old, np.minimum(new, 4), np.maximum(new, -0.5))
    return np.where(old >= 3.5, above, below)


def meyer(vgst, vds, phi, cox):
    """Meyer's gate capacitances (whole, not SPICE's halves) in the frame where ``vds >= 0``,
    ``vgst = vgs - von``, and their derivatives by vgst and vds: ``(count, 3)`` (cgs, cgd,
    cgb) and ``(count, 3, 2)``."""
    vdsat = np.maximum(vgst, MAGIC_VDS)
    below = vgst <= 0
    weak = below & (vgst > -phi / 2)
    partly = below & (vgst > -phi)   # depleted or weakly inverted: cgb falls linearly
    ratio = vgst / phi
    count = len(vgst)
    caps = np.empty((count, 3))
    slopes = np.zeros((count, 3, 2))
    caps[:, 2] = np.where(partly, -ratio * cox, np.where(below, cox, 0.0))
    slopes[:, 2, 0] = np.where(partly, -cox / phi, 0.0)
    channel = np.where(weak, cox * (4 / 3 * ratio + 2 / 3), np.where(below, 0.0, 2 / 3 * cox))
    dchannel = np.where(weak, 4 / 3 * cox / phi, 0.0)
    # below saturation the channel's capacitance splits between source and drain
    linear = vds < vdsat
    lin = linear.astype(float)
    r = 1 / np.where(linear, 2 * vdsat - vds, 1.0)
    a, b = vdsat * r, (vdsat - vds) * r
    share_s, share_d = 1 - lin * b * b, lin * (1 - a * a)
    by_sat = 2 * lin * (vgst > MAGIC_VDS) * vds * r * r   # d vdsat / d vgst is 1 above MAGIC
    caps[:, 0], caps[:, 1] = channel * share_s, channel * share_d
    slopes[:, 0, 0] = dchannel * share_s - channel * by_sat * b
    slopes[:, 0, 1] = channel * 2 * lin * a * b * r
    slopes[:, 1, 0] = dchannel * share_d + channel * by_sat * a
    slopes[:, 1, 1] = -channel * 2 * lin * a * a * r
    return caps, slopes


class Mosfets(TabulatedDevice):
    """Every level-1 MOSFET: terminals (d', g, s', b, w_gs, w_gd, w_gb) (-1 for the w's
    without Meyer's capacitances), parameters at the circuit's temperature, M applied;
    voltages are an NMOS's (a PMOS's times its polarity -1).

    The model works in six local variables, vgs, vds, vbs and the three w's, and six branch
    currents: the channel's (d' to s'), the bulk diodes' (b to s', b to d') and Meyer's (g to
    s', d', b); `local` maps terminal values to the variables, `directions` the currents to
    the terminals."""

    width = 7
    NAMES = ("polarity", "vt", "beta", "lambda", "vbi", "gamma", "phi", "drain_is",
             "source_is", "drain_vcrit", "source_vcrit", "cbd", "cbdsw", "cbs", "cbssw", "pb",
             "mj", "mjsw", "fc", "cox", "gmin", "reltol", "abstol", "cgs", "cgd", "cgb", "off",
             "kf", "af", "flicker_area", "m")

    def __init__(self, names, terminals, values: dict[str, np.ndarray]):
        super().__init__(names, terminals, values)
        p = self.polarity[:, None]
        self.d_gs = p * (UNIT[G] - UNIT[S])
        self.d_ds = p * (UNIT[D] - UNIT[S])
        self.d_bs = p * (UNIT[B] - UNIT[S])
        d_bd = self.d_bs - self.d_ds
        count = len(names)
        self.local = np.stack([self.d_gs, self.d_ds, self.d_bs,
                               *(np.broadcast_to(UNIT[w], (count, 7)) for w in (WGS, WGD, WGB))],
                              axis=1)
        self.directions = np.stack([self.d_ds, self.d_bs, d_bd,
                                    *(np.broadcast_to(UNIT[G] - UNIT[x], (count, 7))
                                      for x in (S, D, B))], axis=1)
        self.root = np.sqrt(self.phi)
        self.half_root = 0.5 / self.root
        self.bulk_is = np.concatenate([self.source_is, self.drain_is])
        self.bulk_vt = np.tile(self.vt, 2)
        self.meyer = bool(np.any(self.cox))
        self.used = 6 if self.meyer else 3
        self.junction = Junction(np.concatenate([self.cbs, self.cbssw, self.cbd, self.cbdsw]),
                                 np.tile(self.pb, 4),
                                 np.concatenate([self.mj, self.mjsw, self.mj, self.mjsw]),
                                 np.tile(self.fc, 4))
        self.stores = self.meyer or not self.junction.empty
        self.bulk_outer = (outer(self.d_bs, self.d_bs), outer(d_bd, d_bd))
        # Meyer's unknowns: (cox/tau) w - d/dt (cox v) = 0 for each branch
        self.w_conductance = np.zeros((count, 7, 7))
        self.w_charge = np.zeros((count, 7, 7))
        for w, other in ((WGS, S), (WGD, D), (WGB, B)):
            self.w_conductance[:, w, w] = self.cox / MEYER_TIME
            self.w_charge[:, w, G] = -self.cox
            self.w_charge[:, w, other] = self.cox
        used = self.used
        # d(terminal currents)/d(terminal values) = directions^T slopes local, one product
        self.chain = np.einsum("kai,kbj->kabij", self.directions[:, :used],
                               self.local[:, :used]).reshape(count, used * used, 49)
        self._last: tuple | None = None   # the terminal values of the last load, and it

    def charge_branches(self):
        """Meyer's branches and the overlap capacitors (the element's linear ones, `cgs`,
        `cgd`, `cgb`) from the gate; the bulk junctions."""
        meyer = self.cox != 0
        return [(meyer | (overlap != 0), np.broadcast_to(UNIT[G] - UNIT[x], (self.count, 7)))
                for x, overlap in ((S, self.cgs), (D, self.cgd), (B, self.cgb))] + [
                ((self.cbs != 0) | (self.cbssw != 0), self.d_bs),
                ((self.cbd != 0) | (self.cbdsw != 0), self.d_bs - self.d_ds)]

    def voltages(self, v):
        """vgs, vds, vbs (an NMOS's) at terminal values `v`."""
        u = np.einsum("kaj,kj->ka", self.local[:, :3], v)
        return u[:, 0], u[:, 1], u[:, 2]

    def threshold(self, vbs_mode):
        """``von`` and its derivative by the bulk voltage (of the source side in use), as
        SPICE's level 1 takes it: ``-1 / (2 sarg)`` times ``gamma`` on both sides of zero
        bias, although a forward bias linearises ``sarg`` (its slope there is then
        ``-1 / (2 sqrt(phi))``), so that the body transconductance, and with it an AC
        analysis, is ngspice's."""
        reverse = vbs_mode <= 0
        sarg = np.where(reverse, np.sqrt(np.maximum(self.phi - vbs_mode, 1e-300)),
                        np.maximum(0, self.root - vbs_mode * self.half_root))
        with np.errstate(divide="ignore"):   # sarg is zero only deep in forward bias
            dsarg = np.where(sarg > 0, -0.5 / sarg, 0.0)
        return self.vbi + self.gamma * sarg, self.gamma * dsarg

    # -- Newton ------------------------------------------------------------------------------
    def limit(self, v, previous):
        if previous is None:
            return v
        vgs, vds, vbs = self.voltages(v)
        old_gs, old_ds, old_bs = self.voltages(previous)
        normal = old_ds >= 0
        von, _ = self.threshold(np.where(normal, old_bs, old_bs - old_ds))
        # the gate voltage to the side that was the source, then the drain voltage (each
        # recomputed only where a limit changed it, so that an unlimited step stays exact)
        side = np.where(normal, 1.0, -1.0)
        vgd = vgs - vds
        gate = np.where(normal, vgs, vgd)
        limited_gate = fet_limit(gate, np.where(normal, old_gs, old_gs - old_ds), von)
        moved = limited_gate != gate
        drain = np.where(moved, side * (np.where(normal, limited_gate - vgd, vgs - limited_gate)),
                         side * vds)
        new_ds = side * vds_limit(drain, side * old_ds)
        new_gs = np.where(normal, limited_gate,
                          np.where(moved | (new_ds != vds), limited_gate + new_ds, vgs))
        # the bulk junction on the source side (the drain side where vds < 0)
        forward = new_ds >= 0
        kept = new_ds == vds
        bulk = np.where(forward, vbs, np.where(kept, vbs - vds, vbs - new_ds))
        limited_bulk = junction_limit(bulk, np.where(forward, old_bs, old_bs - old_ds), self.vt,
                                      np.where(forward, self.source_vcrit, self.drain_vcrit))
        new_bs = np.where(forward | (kept & (limited_bulk == bulk)), np.where(
            forward, limited_bulk, vbs), limited_bulk + new_ds)
        if (np.array_equal(new_gs, vgs) and np.array_equal(new_ds, vds)
                and np.array_equal(new_bs, vbs)):
            return v
        return self._terminals(v, new_gs, new_ds, new_bs)

    def start(self, v):
        # ngspice's: the gate at the threshold, the drain on the source, the bulk 1 V
        # reversed; an instance marked OFF with all three at 0 V
        threshold = self.vbi + self.gamma * np.sqrt(self.phi)
        return self._terminals(v, np.where(self.off, 0.0, threshold), np.zeros(self.count),
                               np.where(self.off, 0.0, -1.0))

    def _terminals(self, v, vgs, vds, vbs):
        """Terminal values with the source's from `v` and the (NMOS) voltages given."""
        at = v.copy()
        p = self.polarity
        at[:, G] = v[:, S] + p * vgs
        at[:, D] = v[:, S] + p * vds
        at[:, B] = v[:, S] + p * vbs
        return at

    def converged(self, v, loaded):
        """SPICE's convergence test of the drain current (channel less bulk-drain diode) and
        the bulk current (`diode.unsettled`)."""
        last = self._last
        if last is None or not np.array_equal(last[0], loaded):
            self.load(loaded, 0.0)
            last = self._last
        _, currents, slopes = last
        step = np.einsum("kaj,kj->ka", self.local[:, :3], v - loaded)
        change = np.einsum("kab,kb->ka", slopes[:, :3, :3], step)
        drain, bulk = np.array([1.0, 0.0, -1.0]), np.array([0.0, 1.0, 1.0])
        return not (unsettled(change[:, :3] @ drain, currents[:, :3] @ drain, self.reltol,
                              self.abstol)
                    or unsettled(change[:, :3] @ bulk, currents[:, :3] @ bulk, self.reltol,
                                 self.abstol))

    # -- the model ---------------------------------------------------------------------------
    def load(self, v, t):
        count, used = len(v), self.used
        u = np.einsum("kaj,kj->ka", self.local[:, :used], v)
        vgs, vds, vbs = u[:, 0], u[:, 1], u[:, 2]
        vbd = vbs - vds
        currents = np.empty((count, used))
        slopes = np.zeros((count, used, used))   # of the currents by the local variables
        # bulk diodes (ngspice's form: gmin only, below -3 vt)
        bulk = np.concatenate([vbs, vbd])
        gmin = self.gmin[0]
        exponential = np.exp(np.minimum(MAX_EXP_ARG, bulk / self.bulk_vt))
        reverse = bulk <= -3 * self.bulk_vt
        diode = np.where(reverse, -self.bulk_is, self.bulk_is * (exponential - 1)) + gmin * bulk
        conductance = np.where(reverse, 0.0, self.bulk_is * exponential / self.bulk_vt) + gmin
        currents[:, 1], currents[:, 2] = diode[:count], diode[count:]
        slopes[:, 1, 2] = conductance[:count]
        slopes[:, 2, 1] = -conductance[count:]
        slopes[:, 2, 2] = conductance[count:]
        normal, mode, vds_m, vgst, dvon, cdrain, gm, gds = self.channel(vgs, vds, vbs)
        currents[:, 0] = mode * cdrain
        _framed(slopes[:, 0], mode * gm, mode * gds, -mode * gm * dvon, normal)
        if self.meyer:
            self._meyer(v, vgst, vds_m, dvon, normal, currents, slopes)
        f = np.matmul(currents[:, None, :], self.directions[:, :used])[:, 0]
        df = np.matmul(slopes.reshape(count, 1, used * used), self.chain).reshape(count, 7, 7)
        if self.meyer:
            f += np.einsum("kij,kj->ki", self.w_conductance, v)
            df += self.w_conductance
        if not self.stores:
            load = Load(f, df)
        else:
            q, c = self.junction.charge(np.concatenate([vbs, vbs, vbd, vbd]))
            q, c = q.reshape(4, count), c.reshape(4, count)
            q_bs, q_bd, c_bs, c_bd = q[0] + q[1], q[2] + q[3], c[0] + c[1], c[2] + c[3]
            charge = q_bs[:, None] * self.d_bs + q_bd[:, None] * self.directions[:, 2]
            dq = (c_bs[:, None, None] * self.bulk_outer[0]
                  + c_bd[:, None, None] * self.bulk_outer[1])
            if self.meyer:
                charge += np.einsum("kij,kj->ki", self.w_charge, v)
                dq += self.w_charge
            load = Load(f, df, charge, dq)
        self._last = (v.copy(), currents, slopes)
        return load

    def channel(self, vgs, vds, vbs):
        """The channel in the frame where the drain is the higher side: whether that is the
        drain (`normal`), the sign of the frame (`mode`), vds, vgs less the threshold and the
        threshold's slope by the bulk voltage in it, and its current, transconductance and
        output conductance there."""
        normal = vds >= 0
        mode = np.where(normal, 1.0, -1.0)
        vds_m = mode * vds
        von, dvon = self.threshold(np.where(normal, vbs, vbs - vds))
        vgst = np.where(normal, vgs, vgs - vds) - von
        beta, lam = self.beta, self.lambda_
        betap = beta * (1 + lam * vds_m)
        on = vgst > 0
        saturated = vgst <= vds_m
        clipped = np.where(on, vgst, 0.0)
        effective = np.where(saturated, clipped, vds_m)   # vgst or vds
        cdrain = betap * effective * (clipped - 0.5 * effective)
        gm = betap * effective * on
        gds = np.where(saturated, lam * beta * clipped * clipped * 0.5,
                       (betap * (vgst - vds_m) + lam * beta * vds_m * (vgst - 0.5 * vds_m))
                       * on)
        return normal, mode, vds_m, vgst, dvon, cdrain, gm, gds

    def noise(self, v, temperature):
        """ngspice's level 1: the channel's thermal noise ``(8/3) k T |gm|`` and its flicker
        noise ``KF |Id|^AF / (f W Leff Cox^2)`` per parallel copy (M of them; ngspice 39
        divides the whole by M instead), the drain current less the bulk-drain diode's."""
        vgs, vds, vbs = self.voltages(v)
        _, mode, _, _, _, cdrain, gm, _ = self.channel(vgs, vds, vbs)
        vbd = vbs - vds
        bulk_drain = np.where(vbd <= -3 * self.vt, -self.drain_is,
                              self.drain_is * (np.exp(np.minimum(MAX_EXP_ARG, vbd / self.vt))
                                               - 1)) + self.gmin * vbd
        drain = mode * cdrain - bulk_drain
        flicker = self.kf * self.m * flicker_power(drain / self.m, self.af) / self.flicker_area
        return [NoiseCurrent("id", D, S, 8 / 3 * BOLTZMANN * temperature * np.abs(gm),
                             np.zeros(self.count)),
                NoiseCurrent("1overf", D, S, np.zeros(self.count), flicker)]

    def _meyer(self, v, vgst, vds_m, dvon, normal, currents, slopes):
        """Meyer's branches g-s', g-d', g-b: currents ``C(v) w / tau``."""
        caps, by = meyer(vgst, vds_m, self.phi, self.cox)
        normal2 = normal[:, None]
        caps = np.where(normal2, caps, caps[:, [1, 0, 2]])   # source and drain trade places
        by = np.where(normal2[:, :, None], by, by[:, [1, 0, 2]])
        w = v[:, WGS:] / MEYER_TIME
        currents[:, 3:] = caps * w
        by_gs, by_ds = by[:, :, 0] * w, by[:, :, 1] * w
        by_bs = -dvon[:, None] * by_gs
        slopes[:, 3:, 0] = by_gs
        slopes[:, 3:, 1] = np.where(normal2, by_ds, -(by_gs + by_ds + by_bs))
        slopes[:, 3:, 2] = by_bs
        rows = np.arange(3, 6)
        slopes[:, rows, rows] = caps / MEYER_TIME


def _framed(out, by_gs, by_ds, by_bs, normal):
    """Write into `out` a function's gradient by (vgs, vds, vbs), given its derivatives in the
    frame where the drain is the higher side (there vgs, vds, vbs are vgd, -vds, vbd where
    vds < 0)."""
    out[:, 0] = by_gs
    out[:, 1] = np.where(normal, by_ds, -(by_gs + by_ds + by_bs))
    out[:, 2] = by_bs


@dataclass(eq=False)
class Mosfet(Element):
    """``Mname d g s b model [W= L= AD= AS= PD= PS= NRD= NRS= M=] [OFF]``: a level-1
    MOSFET; ``OFF`` starts a DC solution with its terminal voltages at 0 V (SPICE's)."""

    model: str
    sizes: dict
    off: bool = False

    prefix = "M"
    usage = ("Mname drain gate source bulk model [W= L= AD= AS= PD= PS= NRD= NRS= M=] [OFF]   "
             "with .model model NMOS(...) or PMOS(" + MODEL_PARAMETERS + ")")

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Mosfet:
        nodes = reader.nodes("drain", "gate", "source", "bulk")
        model = reader.model()
        off = reader.flag("off")
        reader.done()
        copies = reader.copies()
        sizes = reader.options(INSTANCE) | ({} if copies is None else {"m": copies})
        reader.no_more_options(", ".join(f"{k.upper()}=" for k in INSTANCE))
        return cls(reader.name, reader.location, nodes, model, sizes, off)

    def copied(self, count):
        return dataclasses.replace(self, sizes={**self.sizes,
                                                "m": times(self.sizes.get("m", 1.0), count)})

    def edges(self):
        d, g, s, b = self.nodes
        return [Edge(self, d, s, Role.DISSIPATOR), Edge(self, b, d, Role.DISSIPATOR),
                Edge(self, b, s, Role.DISSIPATOR), Edge(self, g, s, Role.ACROSS_STORE)]

    def validate(self, circuit) -> None:
        self.check_electrical(circuit, "MOSFET")
        check_model(self, circuit, ("nmos", "pmos"), DEFAULTS, ALIASES, "NMOS")
        given = circuit.models[self.model].parameters
        if given.get("level", 1.0) != 1.0:
            self.fail(f"model '{self.model}': only LEVEL=1 (Shichman-Hodges) is supported")

    def _resistances(self, given, sizes) -> tuple[float, float]:
        """The drain and source resistances (RD, RS, or RSH times NRD, NRS), 0 for none."""
        def one(key, squares):
            if given.get(key) not in (None, 0.0):
                return given[key]
            sheet = given.get("rsh") or 0.0
            count = sizes.get(squares, 1.0)
            return sheet * count if sheet != 0.0 and count != 0.0 else 0.0
        return one("rd", "nrd"), one("rs", "nrs")

    def internal_nodes(self, circuit) -> tuple[str, ...]:
        """Drain and source behind their resistances; Meyer's three unknowns with TOX."""
        given = circuit.models[self.model].parameters
        rd, rs = self._resistances(given, self.sizes)
        names = (("drain",) if rd != 0 else ()) + (("source",) if rs != 0 else ())
        if given.get("tox", 0.0) != 0.0:
            names += ("wgs", "wgd", "wgb")
        return names

    def stamp(self, s) -> None:
        p = model_values(self, s, DEFAULTS, ALIASES, RANGES)
        sizes = {key: s.value(value) for key, value in self.sizes.items()}
        options = s.circuit.options
        w = sizes.get("w", p["w"] if p["w"] is not None else getattr(options, "defw", 1e-4))
        length = sizes.get("l", p["l"] if p["l"] is not None else getattr(options, "defl",
                                                                            1e-4))
        ad = sizes.get("ad", getattr(options, "defad", 0.0))
        as_ = sizes.get("as", getattr(options, "defas", 0.0))
        pd, ps, m = sizes.get("pd", 0.0), sizes.get("ps", 0.0), sizes.get("m", 1.0)
        kind = s.circuit.models[self.model].kind
        polarity = 1.0 if kind == "nmos" else -1.0
        temperature, nominal = temperatures(s.circuit, p["tnom"])
        vt, vtnom = BOLTZMANN_OVER_CHARGE * temperature, BOLTZMANN_OVER_CHARGE * nominal
        gap, gap_nominal = gap_energy(temperature), gap_energy(nominal)
        vto, gamma, phi, kp = p["vto"], p["gamma"], p["phi"], p["kp"]
        tox = p["tox"]
        cox_area = OXIDE_PERMITTIVITY / tox if tox else 0.0
        if cox_area and kp is None:
            kp = p["u0"] * cox_area * 1e-4
        if cox_area and p["nsub"] is not None:   # derived from the doping, as ngspice's
            doping = p["nsub"] * 1e6
            if doping <= 1.45e16:
                self.fail(f"model '{self.model}': NSUB below the intrinsic density")
            if phi is None:
                phi = max(0.1, 2 * vtnom * math.log(doping / 1.45e16))
            fermis = polarity * 0.5 * phi
            workfunction = 3.2
            if p["tpg"] != 0:
                fermig = polarity * p["tpg"] * 0.5 * gap_nominal
                workfunction = 3.25 + 0.5 * gap_nominal - fermig
            difference = workfunction - (3.25 + 0.5 * gap_nominal + fermis)
            if gamma is None:
                gamma = math.sqrt(2 * SILICON_PERMITTIVITY * CHARGE * doping) / cox_area
            if "vto" not in s.circuit.models[self.model].parameters and "vt0" not in (
                    s.circuit.models[self.model].parameters):
                flatband = difference - p["nss"] * 1e4 * CHARGE / cox_area
                vto = flatband + polarity * (gamma * math.sqrt(phi) + phi)
        kp = 2e-5 if kp is None else kp
        gamma = 0.0 if gamma is None else gamma
        phi = 0.6 if phi is None else phi
        # temperature
        ratio = temperature / nominal
        if temperature == nominal:
            tphi = phi
        else:
            phio = (phi - potential_shift(nominal)) / (nominal / NOMINAL_TEMPERATURE)
            tphi = temperature / NOMINAL_TEMPERATURE * phio + potential_shift(temperature)
        vbi = (vto - polarity * gamma * math.sqrt(phi) + 0.5 * (gap_nominal - gap)
               + polarity * 0.5 * (tphi - phi))
        kp_t = kp / (ratio * math.sqrt(ratio))
        scale = temperature_factor(self, -gap / vt + gap_nominal / vtnom)
        saturation, density = p["is"] * scale, p["js"] * scale
        pb, cj = junction_at(p["pb"], p["cj"] or 0.0, p["mj"], temperature, nominal)
        _, cjsw = junction_at(p["pb"], p["cjsw"] or 0.0, p["mjsw"], temperature, nominal)
        _, cbd = junction_at(p["pb"], p["cbd"] or 0.0, p["mj"], temperature, nominal)
        _, cbs = junction_at(p["pb"], p["cbs"] or 0.0, p["mj"], temperature, nominal)
        if density == 0 or ad == 0 or as_ == 0:
            drain_is = source_is = m * saturation
        else:
            drain_is, source_is = density * m * ad, density * m * as_

        def vcrit(current):
            return vt * math.log(vt / (math.sqrt(2) * current)) if current > 0 else math.inf

        effective = length - 2 * p["ld"]
        if effective <= 0:
            self.fail(f"effective channel length L - 2 LD = {effective:g} is not positive")
        values = {
            "polarity": polarity, "vt": vt, "beta": kp_t * m * w / effective,
            "lambda": p["lambda"], "vbi": vbi * polarity, "gamma": gamma, "phi": tphi,
            "drain_is": drain_is, "source_is": source_is,
            "drain_vcrit": vcrit(drain_is), "source_vcrit": vcrit(source_is),
            "cbd": (cbd * m if p["cbd"] is not None else cj * m * ad if p["cj"] is not None
                    else 0.0),
            "cbs": (cbs * m if p["cbs"] is not None else cj * m * as_ if p["cj"] is not None
                    else 0.0),
            "cbdsw": cjsw * pd * m if p["cjsw"] is not None else 0.0,
            "cbssw": cjsw * ps * m if p["cjsw"] is not None else 0.0,
            "pb": pb, "mj": p["mj"], "mjsw": p["mjsw"], "fc": p["fc"],
            "cox": cox_area * effective * m * w, "gmin": options.gmin,
            "reltol": options.reltol, "abstol": options.abstol,
            "kf": p["kf"], "af": p["af"], "m": m,
            "flicker_area": w * effective * (cox_area or NOISE_OXIDE) ** 2,
        }
        d, g, source, b = self.nodes
        rd, rs = self._resistances(p, sizes)
        inside = self.internal_nodes(s.circuit)
        drain = d
        if "drain" in inside:
            drain = s.internal(self, "drain")
            s.noisy_conductance(f"{self.name}_rd", d, drain, m / rd)
        inner_source = source
        if "source" in inside:
            inner_source = s.internal(self, "source")
            s.noisy_conductance(f"{self.name}_rs", source, inner_source, m / rs)
        overlaps = {"cgs": p["cgso"] * m * w, "cgd": p["cgdo"] * m * w,
                    "cgb": p["cgbo"] * m * effective}
        for other, capacitance in zip((inner_source, drain, b), overlaps.values()):
            if capacitance:
                s.C.conductance(g, other, capacitance)
        meyer = ((s.internal(self, "wgs"), s.internal(self, "wgd"), s.internal(self, "wgb"))
                 if cox_area else (-1, -1, -1))
        s.device(Mosfets, self.name, (drain, g, inner_source, b, *meyer),
                 values | overlaps | {"off": self.off})

    def terminal_currents(self):
        return {"id": 0, "ig": 1, "is": 2, "ib": 3}


