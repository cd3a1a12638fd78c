"""``.meas`` and ``.four``: numbers measured on the tables of the analyses, as ngspice
measures them, gathered in one result (``meas.csv``).

A quantity is read along the analysis's independent variable (time, the swept value,
frequency: magnitudes of AC phasors), linearly between its points; a crossing is where it
passes a value, counted by its rises, falls or both from ``TD=`` on; an average, an RMS and
an integral are trapezoidal, over the part of their window within the analysis's range. A
measurement that finds nothing (a value never crossed, a point or a window outside the
range) is NaN with a warning, as ngspice's "failed" ones.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from mna.analysis import part_of
from mna.assembly import NumericBackend
from mna.errors import NetlistError
from mna.expr import Expression, Value
from mna.netlist.requests import Crossing, Fourier, Measure
from mna.results import Result

log = logging.getLogger(__name__)

HARMONICS = 9          # ngspice's .four: the fundamental and eight more
FOURIER_POINTS = 200   # samples of the last period (ngspice's fourgridsize)


@dataclass(frozen=True)
class MeasureResult(Result):
    """Named measured values with their units."""

    names: tuple[str, ...]
    values: tuple[float, ...]
    units: tuple[str, ...]

    kind = "meas"

    def __getitem__(self, name: str) -> float:
        lowered = name.lower()
        return next(v for n, v in zip(self.names, self.values) if n.lower() == lowered)

    def table(self) -> dict[str, np.ndarray]:
        return {"name": np.array(self.names, dtype=object),
                "value": np.array(self.values, dtype=float),
                "unit": np.array(self.units, dtype=object)}

    def column_units(self) -> dict[str, str]:
        return dict(zip(self.names, self.units))

    def summary(self) -> str:
        width = max((len(n) for n in self.names), default=0)
        return "Measurements:\n" + "\n".join(
            f"  {n:<{width}}  {v: .6g} {u}" for n, v, u in zip(self.names, self.values,
                                                              self.units))


def measurements(circuit, results: list[Result]) -> MeasureResult:
    """Every ``.meas`` and ``.four`` of `circuit`, on the first of `results` of its kind."""
    names, values, units = [], [], []
    parameters = NumericBackend(circuit).values
    for measure in circuit.measures:   # each may read the parameters and those before it
        known = {**parameters, **{name.lower(): value for name, value in zip(names, values)}}
        if measure.expression is not None:    # PARAM=: of those values, no table
            unfound = [name for name in measure.expression.names
                       if math.isnan(known.get(name, 0.0))]
            if unfound:   # a measurement it reads found nothing: nor does it
                log.warning("%s: .meas %s reads %s, which found nothing (NaN)",
                            measure.location, measure.name, ", ".join(unfound))
            names.append(measure.name)
            values.append(math.nan if unfound else _number(measure.expression, known))
            units.append("")
            continue
        measure = measure.resolved(functools.partial(_number, known=known))
        table = _table(results, measure.analysis, f".meas {measure.name}", measure.location)
        value = _measure(circuit, measure, table)
        if math.isnan(value):
            log.warning("%s: .meas %s found nothing (NaN)", measure.location, measure.name)
        names.append(measure.name)
        values.append(value)
        units.append(_unit(circuit, measure, table))
    for fourier in circuit.fouriers:
        table = _table(results, "tran", ".four", fourier.location)
        for output in fourier.outputs:
            label = circuit.label(output)
            for name, value in _harmonics(table, label, fourier):
                names.append(f"{label}:{name}")
                values.append(value)
                units.append("deg" if "phase" in name else "%" if name == "thd" else
                             "" if "normalized" in name else circuit.unit(output))
    return MeasureResult(tuple(names), tuple(values), tuple(units))


def _number(value: Value, known: Mapping[str, float]) -> float:
    """A measurement's number, or its expression's value with `known` parameters and
    earlier measurements."""
    return value.evaluate(known) if isinstance(value, Expression) else value


def _table(results: list[Result], kind: str, what: str,
           location=None) -> dict[str, np.ndarray]:
    """The columns of the first result of `kind` (an operating point as a one-row table)."""
    for result in results:
        if result.kind != kind:
            continue
        if kind == "op":
            return {"point": np.zeros(1), **{name: np.array([value]) for name, value in
                                             zip(result.names, result.values)}}
        return result.table()
    raise NetlistError(f"{what}: the netlist has no .{kind} analysis to measure", location)


def _values(circuit, table: dict[str, np.ndarray], output) -> np.ndarray:
    """The quantity along the table (a probe's column, or an expression of them); of a
    phasor its real part, as ngspice measures one (``VM(out)``, ``VDB(out)`` ask for more)."""
    if output.part:
        return np.asarray(part_of(table[circuit.label(output.probes()[0])], output.part), float)
    if output.kind != "E":
        values = table[circuit.label(output)]
    else:
        probes = {probe: table[circuit.label(probe_output)]
                  for probe, probe_output in zip(output.expression.probes, output.probes())}
        values = np.array([output.expression.evaluate(
            {}, probes={p: v[k] for p, v in probes.items()})
            for k in range(len(next(iter(table.values()))))])
    return np.real(values) if np.iscomplexobj(values) else np.asarray(values, float)


def _axis(table: dict[str, np.ndarray]) -> np.ndarray:
    """The independent variable: the table's first real column."""
    return np.asarray(next(iter(table.values())), float)


def _measure(circuit, measure: Measure, table) -> float:
    x = _axis(table)
    if measure.analysis == "op":
        return float(_values(circuit, table, measure.output)[0])
    if measure.kind == "when":
        return _crossing(circuit, table, x, measure.when)
    if measure.kind == "trig":
        return _instant(circuit, table, x, measure.target) - _instant(circuit, table, x,
                                                                     measure.when)
    y = _values(circuit, table, measure.output)
    if len(x) > 1 and x[0] > x[-1]:   # a sweep that runs down (.dc V1 5 0 -1): read it upwards
        x, y = x[::-1], y[::-1]
    if measure.kind == "find" and measure.when is not None:
        at = _crossing(circuit, table, x, measure.when)
        return float(np.interp(at, x, y)) if not math.isnan(at) else math.nan
    if measure.kind in ("find", "deriv") and not _within(x, measure.at, measure.at):
        return math.nan
    if measure.kind == "find":
        return float(np.interp(measure.at, x, y))
    if measure.kind == "deriv":   # undefined on a single point, as a crossing never made
        return float(np.interp(measure.at, x, np.gradient(y, x))) if len(x) > 1 else math.nan
    # a window reaching past the analysis is cut to it, as ngspice's; one wholly outside
    # it (or reversed) finds nothing
    start = x[0] if measure.start is None else max(measure.start, x[0])
    stop = x[-1] if measure.stop is None else min(measure.stop, x[-1])
    if not _within(x, start, stop):
        return math.nan
    inside = (x > start) & (x < stop)
    xs = np.r_[start, x[inside], stop]
    ys = np.r_[np.interp(start, x, y), y[inside], np.interp(stop, x, y)]
    if measure.kind in ("min", "max"):
        return float(ys.min() if measure.kind == "min" else ys.max())
    if measure.kind in ("min_at", "max_at"):    # where the first extreme is
        return float(xs[np.argmin(ys) if measure.kind == "min_at" else np.argmax(ys)])
    if measure.kind == "pp":
        with np.errstate(invalid="ignore"):   # -inf dB throughout: no defined swing
            return float(ys.max() - ys.min())
    integral = float(np.trapezoid(ys, xs))
    if measure.kind == "integ":
        return integral
    span = stop - start
    if span == 0:   # a single point: the limits of the mean and the rms over a shrinking span
        return float(ys[0]) if measure.kind == "avg" else abs(float(ys[0]))
    if measure.kind == "avg":
        return integral / span
    return math.sqrt(float(np.trapezoid(ys**2, xs)) / span)   # rms


def _within(x: np.ndarray, start: float, stop: float) -> bool:
    """Whether ``[start, stop]`` is an interval within the axis `x` (to its round-off)."""
    slack = 1e-9 * (x[-1] - x[0])
    return x[0] - slack <= start <= stop <= x[-1] + slack


def _instant(circuit, table, x: np.ndarray, instant: Crossing | float) -> float:
    """TRIG's or TARG's instant: a crossing's, or one given (``AT=x``)."""
    return instant if isinstance(instant, float) else _crossing(circuit, table, x, instant)


def _crossing(circuit, table, x: np.ndarray, crossing: Crossing) -> float:
    """Where the quantity passes `crossing.value` for the counted time (NaN: never)."""
    y = _values(circuit, table, crossing.output) - (
        crossing.value if crossing.against is None else _values(circuit, table,
                                                                crossing.against))
    below = y < 0
    changes = np.flatnonzero(below[1:] != below[:-1])
    rising = below[changes]
    wanted = {"rise": rising, "fall": ~rising, "cross": np.ones_like(rising)}[crossing.edge]
    at = [x[k] - y[k] * (x[k + 1] - x[k]) / (y[k + 1] - y[k]) for k in changes[wanted]]
    at = [a for a in at if a >= crossing.delay]
    count = crossing.count
    if not at or count > len(at):
        return math.nan
    return float(at[-1] if count == -1 else at[count - 1])


def _unit(circuit, measure: Measure, table) -> str:
    if measure.kind in ("when", "trig", "min_at", "max_at"):
        return "s" if measure.analysis == "tran" else "Hz" if measure.analysis == "ac" else ""
    output = measure.output
    unit = "" if output.kind == "E" else circuit.unit(output)
    if measure.kind == "integ" and measure.analysis == "tran":
        return f"{unit}*s" if unit else ""
    if measure.kind == "deriv":
        return f"{unit}/s" if unit and measure.analysis == "tran" else ""
    return unit


def _harmonics(table, label: str, fourier: Fourier) -> list[tuple[str, float]]:
    """ngspice's Fourier analysis: the last period sampled evenly, its DC component, the
    magnitude and phase of the harmonics 1 to 9 (normalised to the fundamental's) and the
    total harmonic distortion in percent."""
    t = _axis(table)
    period = 1 / fourier.frequency
    if t[-1] - t[0] < period * (1 - 1e-9):
        raise NetlistError(f".four: the transient is shorter than a period of "
                           f"{fourier.frequency:g} Hz", fourier.location)
    grid = t[-1] - period + period * np.arange(FOURIER_POINTS) / FOURIER_POINTS
    samples = np.interp(grid, t, np.asarray(table[label], float))
    spectrum = np.fft.rfft(samples) / FOURIER_POINTS
    found = [("dc", float(spectrum[0].real))]
    fundamental = 2 * abs(spectrum[1])
    phase0 = math.degrees(np.angle(spectrum[1])) + 90.0   # sine phase, as ngspice
    total = 0.0
    for k in range(1, HARMONICS + 1):
        magnitude = 2 * abs(spectrum[k])
        phase = math.degrees(np.angle(spectrum[k])) + 90.0
        found += [(f"h{k}", magnitude), (f"h{k} phase", phase),
                  (f"h{k} normalized", magnitude / fundamental if fundamental else math.nan),
                  (f"h{k} normalized phase", phase - phase0)]
        if k > 1:
            total += magnitude**2
    found.append(("thd", 100 * math.sqrt(total) / fundamental if fundamental else math.nan))
    return found
