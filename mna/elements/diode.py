"""The junction diode: SPICE's equations, junction-voltage limiting, depletion and diffusion
charge, breakdown and temperature, evaluated for every diode of a circuit at once.

The junction physics shared with the transistors (`mna.elements.bjt`, `mna.elements.mosfet`)
lives here too: ngspice's physical constants, the thermal voltage, the temperature scaling of
junction potentials and capacitances, ``pnjlim`` and the depletion charge.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from mna.elements.base import Element, Role, two_terminal_edge
from mna.elements.device import (
    Device,
    Instance,
    Load,
    NoiseCurrent,
    branch,
    parameters,
    terminal_array,
)
from mna.expr import Value, times
from mna.netlist.fields import FieldReader

log = logging.getLogger(__name__)

# ngspice's constants (src/include/ngspice/const.h), so that results agree to the last digits
BOLTZMANN = 1.38064852e-23   # J/K
CHARGE = 1.6021766208e-19    # C
BOLTZMANN_OVER_CHARGE = BOLTZMANN / CHARGE   # V/K
CELSIUS = 273.15             # K at 0 °C
NOMINAL_TEMPERATURE = 27.0 + CELSIUS   # K, SPICE's REFTEMP and default TNOM
EXPONENT_LIMIT = 700.0   # exp() of more overflows: the current is held there
_HUGE = np.finfo(float).max

DEFAULTS = {"is": 1e-14, "n": 1.0, "rs": 0.0, "cjo": 0.0, "vj": 1.0, "m": 0.5, "tt": 0.0,
            "bv": math.inf, "ibv": 1e-3, "nbv": None, "fc": 0.5, "eg": 1.11, "xti": 3.0,
            "tnom": None, "kf": 0.0, "af": 1.0, "isr": 0.0, "nr": 1.0, "ikf": 0.0,
            "ikr": 0.0, "trs1": 0.0, "trs2": 0.0}
ALIASES = {"cj0": "cjo", "cj": "cjo", "pb": "vj", "mj": "m", "ib": "ibv", "js": "is",
           "tref": "tnom", "ik": "ikf", "trs": "trs1"}
KNEE_MIN = 1e-28   # A: a knee current below this (ngspice's epsmin) has no effect, and a
#                   saturation current below it is raised to it
GRADING_MAX = 0.9   # ngspice's limit of a diode junction's grading coefficient
MODEL_PARAMETERS = ", ".join(k.upper() for k in DEFAULTS)


# -- shared junction physics -------------------------------------------------------------------

def temperatures(circuit, tnom: float | None = None) -> tuple[float, float]:
    """The circuit's temperature and the model's TNOM (°C, or the circuit's ``tnom``), in K."""
    options = circuit.options
    temp = getattr(options, "temp", 27.0)
    if tnom is None:
        tnom = getattr(options, "tnom", 27.0)
    return temp + CELSIUS, tnom + CELSIUS


def potential_shift(temperature: float) -> float:
    """ngspice's ``pbfact``: the band-gap part of a junction potential at `temperature`."""
    vt = BOLTZMANN_OVER_CHARGE * temperature
    gap = 1.16 - (7.02e-4 * temperature * temperature) / (temperature + 1108)
    arg = (-gap / (2 * BOLTZMANN * temperature)
           + 1.1150877 / (BOLTZMANN * (NOMINAL_TEMPERATURE + NOMINAL_TEMPERATURE)))
    return -2 * vt * (1.5 * math.log(temperature / NOMINAL_TEMPERATURE) + CHARGE * arg)


def gap_energy(temperature: float) -> float:
    """Silicon's band gap at `temperature` (eV), as SPICE's MOSFETs take it."""
    return 1.16 - (7.02e-4 * temperature * temperature) / (temperature + 1108)


def junction_at(potential: float, capacitance: float, grading: float, temperature: float,
                nominal: float) -> tuple[float, float]:
    """A junction's potential and zero-bias capacitance at `temperature`, given at `nominal`
    (SPICE's TLEVC=0 scaling); unchanged at the nominal temperature."""
    if temperature == nominal:
        return potential, capacitance
    fact1, fact2 = nominal / NOMINAL_TEMPERATURE, temperature / NOMINAL_TEMPERATURE
    pbo = (potential - potential_shift(nominal)) / fact1
    old = (potential - pbo) / pbo
    capacitance = capacitance / (1 + grading * (400e-6 * (nominal - NOMINAL_TEMPERATURE) - old))
    potential = potential_shift(temperature) + fact2 * pbo
    new = (potential - pbo) / pbo
    capacitance *= 1 + grading * (400e-6 * (temperature - NOMINAL_TEMPERATURE) - new)
    return potential, capacitance


def junction_limit(new: np.ndarray, old: np.ndarray, vte, critical) -> np.ndarray:
    """ngspice's ``DEVpnjlim``: a forward step in junction voltage above `critical` grows only
    logarithmically, a reverse one at most to ``2 old - 1`` (``-old - 1`` from forward bias).
    Returns `new` itself when nothing is limited."""
    old = np.asarray(old, dtype=float)
    # Voltages near the float limit (a diverging Newton step) overflow in the differences and
    # ratios below: those are clipped to the largest float, so the result stays finite.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        forward = (new > critical) & (np.abs(new - old) > 2 * vte)
        floor = np.maximum(np.where(old > 0, -old - 1, 2 * old - 1), -_HUGE)
        reverse = ~forward & (new < 0) & (new < floor)
        if not (forward.any() or reverse.any()):
            return new
        arg = np.clip((new - old) / vte, -_HUGE, _HUGE)
        from_old = np.where(arg > 0, old + vte * (2 + np.log(np.maximum(arg - 2, 1e-300))),
                            old - vte * (2 + np.log(np.maximum(2 - arg, 1e-300))))
        from_zero = vte * np.log(np.clip(new / vte, 1e-300, _HUGE))
    limited = np.where(old > 0, from_old, from_zero)
    return np.where(forward, limited, np.where(reverse, floor, new))


def pn_current(v: np.ndarray, saturation, vte) -> tuple[np.ndarray, np.ndarray]:
    """SPICE's junction current and conductance without gmin: ``IS (exp(v/vte) - 1)``
    forward of ``-3 vte``, ``-IS (1 + (3 vte / (e v))^3)`` below."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        forward = v >= -3 * vte
        exponential = np.exp(np.minimum(v / vte, EXPONENT_LIMIT))
        ratio = 3 * vte / (v * math.e)
        cube = ratio * ratio * ratio   # products: a power's overflow near v = 0 is slow
        current = np.where(forward, saturation * (exponential - 1), -saturation * (1 + cube))
        conductance = np.where(forward, saturation * exponential / vte,
                               saturation * 3 * cube / v)
    return current, conductance


class Junction:
    """A junction's depletion charge and capacitance (SPICE's: linearised above ``fc vj``),
    for arrays of zero-bias capacitances `cj`, potentials `vj`, gradings `m` and FC `fc`,
    with the constants of the linear part computed once."""

    def __init__(self, cj, vj, m, fc):
        cj, vj, m, fc = np.broadcast_arrays(*(np.asarray(a, dtype=float)
                                              for a in (cj, vj, m, fc)))
        self.cj, self.vj, self.m = cj, vj, m
        self.empty = not np.any(cj)
        self.zero = cj == 0
        self.partial = bool(self.zero.any())
        with np.errstate(divide="ignore", invalid="ignore"):
            xfc = np.log1p(-fc)
            self.corner = fc * vj
            self.q_corner = -cj * vj * np.expm1((1 - m) * xfc) / (1 - m)
            self.slope = cj / np.exp((1 + m) * xfc)   # cj / f2
            self.f3 = 1 - fc * (1 + m)
            self.half = m / (vj + vj)
            self.scale = vj * cj / (1 - m)

    def charge(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.empty:
            zero = np.zeros_like(v)
            return zero, zero
        fraction, sarg = graded(v, self.vj, self.m)
        corner = self.corner
        below = v < corner
        q = np.where(below, self.scale * fraction,
                     self.q_corner + self.slope * (self.f3 * (v - corner)
                                                   + self.half * (v * v - corner * corner)))
        c = np.where(below, self.cj * sarg, self.slope * (self.f3 + 2 * self.half * v))
        if self.partial:
            q, c = np.where(self.zero, 0.0, q), np.where(self.zero, 0.0, c)
        return q, c


def graded(v: np.ndarray, vj, m) -> tuple[np.ndarray, np.ndarray]:
    """``1 - (1 - v/vj)^(1-m)`` and ``(1 - v/vj)^-m``, a graded junction's charge and
    capacitance over their zero-bias scales, for `v` below `vj` (beyond it, finite values of
    no meaning). The first is formed without cancelling near v = 0, where a short step's
    change of charge is all round-off and Newton, which multiplies it by 1/h, would chase
    it for ever."""
    log_arg = np.log1p(np.maximum(-v / vj, -1 + 1e-16))
    return -np.expm1((1 - m) * log_arg), np.exp(-m * log_arg)


def depletion(v: np.ndarray, cj, vj, m, fc) -> tuple[np.ndarray, np.ndarray]:
    """A junction's depletion charge and capacitance (SPICE's: linearised above ``fc vj``)."""
    return Junction(cj, vj, m, fc).charge(v)


def unsettled(change: np.ndarray, current: np.ndarray, reltol, abstol) -> bool:
    """SPICE's device convergence test: whether a current would change, by its linear
    prediction `change` from `current`, by more than ``reltol`` of itself plus ``abstol``.

    A device whose currents are unsettled has not converged (`Device.converged`), and Newton
    takes another iteration: a step in junction voltage that is small against the voltage can
    still move an exponential current far."""
    predicted = current + change
    tolerance = reltol * np.maximum(np.abs(predicted), np.abs(current)) + abstol
    return bool(np.any(np.abs(change) > tolerance))


def flicker_power(current: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """``|current|^exponent`` as ngspice's flicker noise takes it (a current of under 1e-38
    A counts as 1e-38)."""
    return np.exp(exponent * np.log(np.maximum(np.abs(current), 1e-38)))


def critical_voltage(vte, saturation):
    """SPICE's ``vcrit``: where a junction's current curves most."""
    return vte * np.log(vte / (math.sqrt(2) * saturation))


# -- the diode ---------------------------------------------------------------------------------

def breakdown_knee(breakdown: float, current: float, saturation: float, vt: float,
                   emission: float, reltol: float) -> float:
    """ngspice's ``xbv``: the breakdown voltage moved so that the current at ``-BV`` is
    ``-IBV`` (the current at ``-xbv`` is ``-IS``); BV itself where IBV is too small for
    that."""
    if current < saturation * breakdown / vt:
        return breakdown
    vtb = emission * vt
    tolerance = reltol * current
    knee = breakdown - vtb * math.log(1 + current / saturation)
    for _ in range(25):
        knee = breakdown - vtb * math.log(current / saturation + 1 - knee / vt)
        reached = saturation * (math.exp((breakdown - knee) / vtb) - 1 + knee / vt)
        if abs(reached - current) <= tolerance:
            break
    return knee


class Diodes(Device):
    """Every junction of a circuit: terminals (anode behind any series resistance, cathode).
    The parameters are those at the circuit's temperature, area included.

    Besides SPICE's diffusion current, ngspice's (and PSpice's) recombination current
    ``ISR (exp(v / (NR vt)) - 1) ((1 - v/vj)^2 + 0.005)^(m/2)`` flows forward of ``-3 vte``,
    and the current forward (reverse) of there is rolled off by the knee current IKF (IKR)
    as ``i / (1 + sqrt(|i| / IKF))``."""

    width = 2

    def __init__(self, names, terminals, saturation, vte, vtb, knee, cjo, vj, grading,
                 transit, fc, gmin, reltol, abstol, off, kf, af, recombination, vtr,
                 forward_knee, reverse_knee, copies):
        super().__init__(names, terminals)
        self.kf, self.af, self.copies = kf, af, copies
        self.off = off != 0
        self.reltol, self.abstol = reltol, abstol
        self.saturation, self.vte, self.vtb, self.knee = saturation, vte, vtb, knee
        self.recombination, self.vtr = recombination, vtr
        self.forward_knee, self.reverse_knee = forward_knee, reverse_knee
        self.recombines = bool(np.any(recombination))
        self.rolls_off = bool(np.any(forward_knee) or np.any(reverse_knee))
        self.cjo, self.vj, self.grading, self.transit = cjo, vj, grading, transit
        self.fc, self.gmin = fc, gmin
        self.breaks = np.isfinite(knee)
        self.critical = critical_voltage(vte, saturation)
        self.stores = bool(np.any(cjo) or np.any(transit))
        self.junction = Junction(cjo, vj, grading, fc)
        self._loaded: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @classmethod
    def build(cls, instances: list[Instance]) -> Diodes:
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, cls.width), *parameters(
            instances, "is", "vte", "vtb", "knee", "cjo", "vj", "m", "tt", "fc", "gmin", "reltol",
            "abstol", "off", "kf", "af", "isr", "vtr", "ikf", "ikr", "copies"))

    def limit(self, v, previous):
        vd = v[:, 0] - v[:, 1]
        old = np.zeros_like(vd) if previous is None else previous[:, 0] - previous[:, 1]
        with np.errstate(invalid="ignore"):
            broken = self.breaks & (vd < np.minimum(0, -self.knee + 10 * self.vtb))
        limited = junction_limit(vd, old, self.vte, self.critical)
        if broken.any():
            reverse = junction_limit(-(vd + self.knee), -(old + self.knee), self.vtb,
                                     self.critical)
            limited = np.where(broken, -(reverse + self.knee), limited)
        if limited is vd or np.array_equal(limited, vd):
            return v
        return np.stack([v[:, 1] + limited, v[:, 1]], axis=1)

    def start(self, v):   # ngspice's: at vcrit, an instance marked OFF at 0 V
        return np.stack([v[:, 1] + np.where(self.off, 0.0, self.critical), v[:, 1]], axis=1)

    def converged(self, v, loaded):
        vd, at = v[:, 0] - v[:, 1], loaded[:, 0] - loaded[:, 1]
        current, conductance = self._current_at(at)
        return not unsettled(conductance * (vd - at), current, self.reltol, self.abstol)

    def _current_at(self, vd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`current(vd)`, the last load's when it was at `vd` (Newton checks the currents
        where its iteration loaded)."""
        last = self._loaded
        if last is not None and np.array_equal(last[0], vd):
            return last[1], last[2]
        return self.current(vd)

    def current(self, vd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Junction current and conductance (forward, reverse, breakdown; recombination and
        knees as ngspice 39's; with gmin)."""
        current, conductance = pn_current(vd, self.saturation, self.vte)
        with np.errstate(over="ignore", invalid="ignore"):
            broken = self.breaks & (vd < -self.knee)
            if broken.any():
                exponential = np.exp(np.minimum(-(self.knee + vd) / self.vtb, EXPONENT_LIMIT))
                current = np.where(broken, -self.saturation * exponential, current)
                conductance = np.where(broken, self.saturation * exponential / self.vtb,
                                       conductance)
            forward = vd >= -3 * self.vte if self.recombines or self.rolls_off else None
            if self.recombines:
                exponential = np.exp(np.minimum(vd / self.vtr, EXPONENT_LIMIT))
                depth = 1 - vd / self.vj
                spread = depth * depth + 0.005
                generation = spread ** (self.grading / 2)
                rate = self.recombination * (exponential - 1)
                slope = (self.recombination * exponential / self.vtr * generation
                         - rate * self.grading * depth / self.vj * generation / spread)
                current = np.where(forward, current + rate * generation, current)
                conductance = np.where(forward, conductance + slope, conductance)
            if self.rolls_off:   # a knee of the region's own direction of flow
                current, conductance = _rolled_off(
                    current, conductance, np.where(forward, self.forward_knee,
                                                   self.reverse_knee),
                    np.where(forward, current > 1e-18, current < -1e-18))
        return current + self.gmin * vd, conductance + self.gmin

    def noise(self, v, temperature):
        """ngspice's: shot noise ``2 q |Id|`` and flicker noise ``KF |Id|^AF / f`` of the
        junction current (gmin's share included, as ngspice's), of each of its `copies`."""
        current, _ = self.current(v[:, 0] - v[:, 1])
        flicker = self.copies * self.kf * flicker_power(current / self.copies, self.af)
        return [NoiseCurrent("id", 0, 1, 2 * CHARGE * np.abs(current), np.zeros(self.count)),
                NoiseCurrent("1overf", 0, 1, np.zeros(self.count), flicker)]

    def charge_branches(self):
        return [((self.cjo != 0) | (self.transit != 0),
                 np.broadcast_to([1.0, -1.0], (self.count, 2)))]

    def charge(self, vd, current, conductance):
        """Depletion charge (linearised above ``fc*vj``) plus diffusion charge ``tt*id``."""
        q, c = self.junction.charge(vd)
        return q + self.transit * current, c + self.transit * conductance

    def load(self, v, t):
        vd = v[:, 0] - v[:, 1]
        current, conductance = self.current(vd)
        self._loaded = (vd, current, conductance)
        f, df = branch(current, conductance, -conductance)
        if not self.stores:
            return Load(f, df)
        q, c = self.charge(vd, current, conductance)
        return Load(f, df, *branch(q, c, -c))


def _rolled_off(current, conductance, knee, flowing) -> tuple[np.ndarray, np.ndarray]:
    """``i / (1 + sqrt(|i| / knee))`` and its derivative, where a `knee` (forward: IKF,
    reverse: IKR; 0 for none) is given and the current is `flowing` its way."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.sqrt(np.abs(current) / knee)
        rolled = current / (1 + ratio)
        slope = conductance * (1 + ratio / 2) / ((1 + ratio) * (1 + ratio))
    active = (knee >= KNEE_MIN) & flowing
    return np.where(active, rolled, current), np.where(active, slope, conductance)


@dataclass(frozen=True)
class Range:
    """Where a model parameter may lie: from `low` (excluded when `above`) to below `high`."""

    low: float = -math.inf
    high: float = math.inf
    above: bool = False

    def problem(self, name: str, value: float) -> str | None:
        if not math.isfinite(value):
            return f"{name.upper()} must be finite, got {value:g}"
        if value < self.low or (self.above and value == self.low):
            relation = ">" if self.above else ">="
            return f"{name.upper()} must be {relation} {self.low:g}, got {value:g}"
        if value >= self.high:
            return f"{name.upper()} must be < {self.high:g}, got {value:g}"
        return None


POSITIVE, NONNEGATIVE = Range(0.0, above=True), Range(0.0)
GRADING = Range(0.0, 1.0)                   # a junction's grading and FC: in [0, 1)
ABOVE_ABSOLUTE_ZERO = Range(-CELSIUS, above=True)   # a temperature in °C
RANGES = {"is": POSITIVE, "n": POSITIVE, "rs": NONNEGATIVE, "cjo": NONNEGATIVE,
          "vj": POSITIVE, "m": NONNEGATIVE, "tt": NONNEGATIVE, "bv": POSITIVE,
          "ibv": NONNEGATIVE, "nbv": POSITIVE, "fc": Range(high=1.0), "eg": POSITIVE,
          "tnom": ABOVE_ABSOLUTE_ZERO, "isr": NONNEGATIVE, "nr": POSITIVE,
          "ikf": NONNEGATIVE, "ikr": NONNEGATIVE}


def model_values(element: Element, s, defaults: dict, aliases: dict | None = None,
                 ranges: dict[str, Range] | None = None) -> Mapping[str, float]:
    """The element's model parameters as numbers, defaults filled in (aliases resolved),
    each one given within its range (a located error otherwise: a zero emission coefficient
    would divide by zero); read once per model and kind in an assembly."""
    key = (element.model, id(defaults))
    if (known := s.model_values.get(key)) is not None:
        return known
    given = s.circuit.models[element.model].parameters
    aliases = aliases or {}
    values = dict(defaults)
    for key_given, value in given.items():
        name = aliases.get(key_given, key_given)
        values[name] = s.value(value)
        allowed = (ranges or {}).get(name)
        if allowed is not None and (problem := allowed.problem(key_given, values[name])):
            element.fail(f"model '{element.model}': {problem}")
    s.model_values[key] = values = MappingProxyType(values)
    return values


def limited(element: Element, s, name: str, value: float, limit: float) -> float:
    """Model parameter `name` of `value`, at most `limit`, as ngspice limits it; the
    warning said once per model in an assembly."""
    if value <= limit:
        return value
    key = (element.model, "limited", name)
    if key not in s.model_values:
        s.model_values[key] = MappingProxyType({name: limit})
        log.warning("model '%s': %s=%g limited to %g, as ngspice's", element.model, name,
                    value, limit)
    return limit


def series_conductance(element: Element, area: float, resistance: float, factor: float,
                       name: str) -> float:
    """``area / (resistance factor)``: a series resistance scaled to the circuit's
    temperature by `factor` (``1 + t1 dT + t2 dT^2``, ngspice's); a located error where the
    factor is 0 (ngspice's conductance would be infinite)."""
    if factor == 0:
        element.fail(f"model '{element.model}': {name} is 0 at the circuit's temperature "
                     "(its temperature coefficients make 1 + t1 dT + t2 dT^2 vanish)")
    return area / (resistance * factor)


def temperature_factor(element: Element, exponent: float) -> float:
    """``exp(exponent)`` of a temperature scaling; a located error where it overflows."""
    if exponent > EXPONENT_LIMIT:
        element.fail(f"model '{element.model}': its currents scaled to the circuit's "
                     "temperature overflow (check EG, XTI and .temp)")
    return math.exp(exponent)


def check_model(element: Element, circuit, kinds: tuple[str, ...], known: dict,
                aliases: dict | None = None, example: str = "") -> None:
    """The element's model exists, is of one of `kinds` and has only `known` parameters."""
    model = circuit.models.get(element.model)
    if model is None:
        element.fail(f"undefined model '{element.model}' (add .model {element.model} "
                     f"{example or kinds[0].upper()}(...))")
    if model.kind not in kinds:
        element.fail(f"model '{model.name}' is a {model.kind.upper()} model, not "
                     f"{' or '.join(k.upper() for k in kinds)}")
    aliases = aliases or {}
    unknown = {key for key in model.parameters if key not in known and key not in aliases}
    if unknown:
        element.fail(f"model '{model.name}' has unknown parameters "
                     f"{', '.join(sorted(unknown))} "
                     f"(known: {', '.join(k.upper() for k in known)})")


@dataclass(eq=False)
class Diode(Element):
    """``Dname a k model [area] [OFF] [m=copies]``: current flows from anode a to cathode
    k; ``OFF`` starts a DC solution with the junction at 0 V (SPICE's); ``m=`` that many in
    parallel (ngspice's: as many times the area, with the breakdown current IBV and the
    flicker noise of each copy)."""

    model: str
    area: Value
    off: bool = False
    copies: Value = 1.0

    prefix = "D"
    usage = ("Dname anode cathode model [area | area=value] [OFF] [m=copies]   with .model model D("
             + MODEL_PARAMETERS + ")")

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Diode:
        nodes = reader.nodes("anode", "cathode")
        model = reader.model()
        off = reader.flag("off")
        area = reader.value("area") if reader.remaining() and not off else None
        off = off or reader.flag("off")
        given = reader.option("area")   # ngspice 39 reads only this form
        if area is not None and given is not None:
            reader.fail(f"{reader.name}: give the area once", usage=True)
        reader.done()
        copies = reader.copies()
        reader.no_more_options("area=, m=")
        return cls(reader.name, reader.location, nodes, model,
                   next((a for a in (area, given) if a is not None), 1.0), off,
                   1.0 if copies is None else copies)

    @classmethod
    def from_plain(cls, name, location, nodes, word, scope) -> Diode:
        key = word.lower()   # the model's name
        return cls(name, location, nodes, scope.models.get(key, key), 1.0)

    def copied(self, count):
        return dataclasses.replace(self, copies=times(self.copies, count))

    def edges(self):
        return two_terminal_edge(self, Role.DISSIPATOR)

    def validate(self, circuit) -> None:
        self.check_electrical(circuit, "diode")
        check_model(self, circuit, ("d",), DEFAULTS, ALIASES)

    def internal_nodes(self, circuit) -> tuple[str, ...]:
        """A series resistance needs the junction's own anode node."""
        given = circuit.models[self.model].parameters
        return ("junction",) if given.get("rs", 0.0) != 0.0 else ()

    def stamp(self, s) -> None:
        p = model_values(self, s, DEFAULTS, ALIASES, RANGES)
        copies = self.positive(s, self.copies, "m")
        area = self.positive(s, self.area, "area") * copies
        anode = self.nodes[0]
        if self.internal_nodes(s.circuit):
            anode = s.internal(self, "junction")
            temperature, nominal = temperatures(s.circuit, p["tnom"])
            rise = temperature - nominal   # TRS1 and TRS2 scale RS as ngspice's
            scale = 1 + p["trs1"] * rise + p["trs2"] * rise * rise
            s.noisy_conductance(f"{self.name}_rs", self.nodes[0], anode,
                                series_conductance(self, area, p["rs"], scale, "RS"))
        key = (self.model, "junction", area, copies, self.off)
        if (junction := s.model_values.get(key)) is None:
            junction = s.model_values[key] = MappingProxyType(
                self._junction(s, p, area, copies) | {"off": self.off})
        s.device(Diodes, self.name, (anode, self.nodes[1]), junction)

    def _junction(self, s, p: Mapping[str, float], area: float,
                  copies: float) -> Mapping[str, float]:
        """The junction's parameters at the circuit's temperature, for `Diodes` (`area`
        that of all its `copies`)."""
        temperature, nominal = temperatures(s.circuit, p["tnom"])
        vt = BOLTZMANN_OVER_CHARGE * temperature
        vte = p["n"] * vt
        vtb = (p["nbv"] if p["nbv"] is not None else p["n"]) * vt
        ratio = temperature / nominal
        saturation = max(p["is"], KNEE_MIN) * area * temperature_factor(
            self, (ratio - 1) * p["eg"] / vte + p["xti"] / p["n"] * math.log(ratio))
        vtr = p["nr"] * vt
        recombination = p["isr"] * area * temperature_factor(
            self, (ratio - 1) * p["eg"] / vtr + p["xti"] / p["nr"] * math.log(ratio))
        grading = limited(self, s, "M", p["m"], GRADING_MAX)
        vj, cjo = junction_at(p["vj"], p["cjo"] * area, grading, temperature, nominal)
        if p["fc"] * vj > 1.0:   # ngspice caps the junction potential at 1/FC
            vj = 1.0 / p["fc"]
        knee = math.inf
        if math.isfinite(p["bv"]):
            knee = breakdown_knee(p["bv"], p["ibv"] * copies, saturation, vt, vtb / vt,
                                  s.circuit.options.reltol)
        return MappingProxyType({
            "is": saturation, "vte": vte, "vtb": vtb, "knee": knee, "cjo": cjo, "vj": vj,
            "m": grading, "tt": p["tt"], "fc": p["fc"], "gmin": s.circuit.options.gmin,
            "reltol": s.circuit.options.reltol, "abstol": s.circuit.options.abstol,
            "kf": p["kf"], "af": p["af"], "isr": recombination, "vtr": vtr,
            "ikf": p["ikf"] * area, "ikr": p["ikr"] * area, "copies": copies})

    def terminal_currents(self):
        return {"id": 0}

    def through(self, s, row) -> None:
        """The current from anode to cathode (``@d1[id]``)."""
        row.x.add(s.branch(self, "id"), 1)
