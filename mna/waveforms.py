"""Time functions of independent sources, evaluated at one time (a step controller asks for
the time each step ends at).

Defaults follow ngspice: a missing (or zero) rise or fall time, EXP delay or time constant
is the time step, a missing pulse width or period is the stop time, a missing sine
frequency is ``1/tstop``. Each waveform lists its breakpoints (corners) so that a step
controller can land on them, and gives its value just before a jump for the step that ends
there (`value` with ``before=True``).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mna.errors import NetlistError
from mna.expr import Expression

EXP_LIMIT = math.log(np.finfo(float).max)


@dataclass(frozen=True)
class Waveform:
    """Parameters as given (numbers or parameter expressions) until `resolve`d to floats."""

    args: tuple

    keyword: ClassVar[str] = ""
    arity: ClassVar[tuple[int, int]] = (0, 0)
    usage: ClassVar[str] = ""
    kinds: ClassVar[dict[str, type[Waveform]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.keyword:
            Waveform.kinds[cls.keyword] = cls

    def resolve(self, backend) -> Waveform:
        """The waveform with its arguments as numbers (`backend.evaluate` gives a value's)."""
        return type(self)(tuple(backend.evaluate(a) for a in self.args))

    def value(self, t: float, tstep: float, tstop: float, before: bool = False) -> float:
        """The value at `t`; with `before`, the limit from the left (where it jumps, the
        value just before the jump, for the step that ends there)."""
        raise NotImplementedError

    def values(self, times, tstep: float, tstop: float, before: bool = False) -> np.ndarray:
        """`value` at each of `times`."""
        return np.array([self.value(float(t), tstep, tstop, before) for t in np.ravel(times)])

    def parameters(self) -> tuple:
        """Every value it is given (numbers, or expressions of parameters)."""
        return self.args

    def invalid(self) -> str | None:
        """Why these (numeric) arguments make no waveform, or None."""
        return None

    def breakpoints(self, tstep: float, tstop: float) -> np.ndarray:
        return np.empty(0)

    def corner_count(self, tstep: float, tstop: float) -> float:
        """How many `breakpoints` there are, known before they are made."""
        return 0.0

    def at(self, time: float) -> float:
        return self.value(time, 1.0, 1.0)

    def _padded(self, defaults: list[float]) -> list[float]:
        return list(self.args) + defaults[len(self.args):]


@dataclass(frozen=True)
class Pulse(Waveform):
    """ngspice's pulse; its eighth argument, where positive, is the number of pulses (of
    periods: after ``np per`` it stays at v1)."""

    keyword = "pulse"
    arity = (2, 8)
    usage = "PULSE(v1 v2 [td [tr [tf [pw [per [np]]]]]])"

    def _timing(self, tstep: float, tstop: float):
        v1, v2, td, tr, tf, pw, per, count = self._padded(
            [0.0, 0.0, 0.0, tstep, tstep, tstop, tstop, 0.0])
        per = per or tstop
        end = count * per if count > 0 else math.inf   # of the pulses, after td
        return v1, v2, td, tr or tstep, tf or tstep, pw or tstop, per, end

    def value(self, t, tstep, tstop, before=False):
        """A period shorter than ``tr + pw + tf`` cuts the pulse short, as ngspice does; the
        end of the first period still belongs to it (ngspice wraps only a time beyond it),
        and at a later period's end the value before the cut is the limit from the left."""
        v1, v2, td, tr, tf, pw, per, end = self._timing(tstep, tstop)
        since = t - td
        if since < 0 or since > end * (1 + 1e-12):
            return v1
        periods = since / per
        nearest = round(periods)
        if abs(periods - nearest) <= 1e-9 and nearest >= 1:   # a period's end, to round-off
            local = per if before or nearest == 1 else 0.0
        else:
            local = since - per * math.floor(periods)
        if local < tr:
            return v1 + (v2 - v1) * local / tr
        if local < tr + pw:
            return v2
        if local < tr + pw + tf:
            return v2 + (v1 - v2) * (local - tr - pw) / tf
        return v1

    def invalid(self):
        spans = dict(zip(("tr", "tf", "pw", "per"), self.args[3:]))
        negative = [f"{name} = {value:g}" for name, value in spans.items() if value < 0]
        return f"PULSE times must not be negative: {', '.join(negative)}" if negative else None

    def corner_count(self, tstep, tstop):
        v1, v2, td, tr, tf, pw, per, end = self._timing(tstep, tstop)
        return 4 * (max(0.0, min(tstop - td, end)) / per + 2)

    def breakpoints(self, tstep, tstop):
        v1, v2, td, tr, tf, pw, per, end = self._timing(tstep, tstop)
        last = min(tstop, td + end)
        starts = td + per * np.arange(0, max(1, int(np.ceil((last - td) / per)) + 1))
        corners = np.concatenate([starts + offset for offset in (0, tr, tr + pw, tr + pw + tf)
                                  if offset < per or offset == 0])
        corners = corners[corners <= td + end * (1 + 1e-12)]
        if math.isfinite(end):   # where the last period is cut short, the pulse drops there
            corners = np.append(corners, td + end)
        return np.unique(corners[(corners >= 0) & (corners <= tstop)])


@dataclass(frozen=True)
class Sine(Waveform):
    keyword = "sin"
    arity = (2, 6)
    usage = "SIN(vo va [freq [td [theta [phase]]]])"

    def value(self, t, tstep, tstop, before=False):
        vo, va, freq, td, theta, phase = self._padded([0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        if t < td:
            return vo + va * math.sin(math.radians(phase))
        local = t - td
        growth = -theta * local   # a negative damping grows it, beyond floats in the end
        return vo + va * math.sin(2 * math.pi * (freq or 1.0 / tstop) * local
                                  + math.radians(phase)) * (
            math.exp(growth) if growth < EXP_LIMIT else math.inf)

    def breakpoints(self, tstep, tstop):
        td = self._padded([0.0] * 6)[3]
        return np.array([td]) if 0 < td <= tstop else np.empty(0)


@dataclass(frozen=True)
class FrequencyModulated(Waveform):
    """SPICE's single-frequency FM: ``vo + va sin(2 pi fc t + mdi sin(2 pi fs t))``."""

    keyword = "sffm"
    arity = (2, 5)
    usage = "SFFM(vo va [fc [mdi [fs]]])"

    def value(self, t, tstep, tstop, before=False):
        vo, va, fc, mdi, fs = self._padded([0.0, 0.0, 0.0, 0.0, 0.0])
        return vo + va * math.sin(2 * math.pi * (fc or 1 / tstop) * t
                                  + mdi * math.sin(2 * math.pi * (fs or 1 / tstop) * t))


@dataclass(frozen=True)
class AmplitudeModulated(Waveform):
    """ngspice's AM: ``va (vo + sin(2 pi fm t')) sin(2 pi fc t')`` with ``t' = t - td``, 0
    before ``td``."""

    keyword = "am"
    arity = (4, 5)
    usage = "AM(va vo fm fc [td])"

    def value(self, t, tstep, tstop, before=False):
        va, vo, fm, fc, td = self._padded([0.0] * 5)
        if t < td or (before and t == td):
            return 0.0
        local = t - td
        return va * (vo + math.sin(2 * math.pi * fm * local)) * math.sin(2 * math.pi * fc * local)

    def breakpoints(self, tstep, tstop):
        td = self._padded([0.0] * 5)[4]
        return np.array([td]) if 0 < td <= tstop else np.empty(0)


@dataclass(frozen=True)
class Exponential(Waveform):
    keyword = "exp"
    arity = (2, 6)
    usage = "EXP(v1 v2 [td1 [tau1 [td2 [tau2]]]])"

    def _timing(self, tstep):
        v1, v2, td1, tau1, td2, tau2 = self._padded([0.0, 0.0, 0.0, tstep, 0.0, tstep])
        td1 = td1 or tstep
        td2 = td2 or td1 + tstep
        return v1, v2, td1, tau1 or tstep, td2, tau2 or tstep

    def value(self, t, tstep, tstop, before=False):
        v1, v2, td1, tau1, td2, tau2 = self._timing(tstep)
        rise = (v2 - v1) * (1 - math.exp(-(t - td1) / tau1)) if t > td1 else 0.0
        fall = (v1 - v2) * (1 - math.exp(-(t - td2) / tau2)) if t > td2 else 0.0
        return v1 + rise + fall

    def breakpoints(self, tstep, tstop):
        _, _, td1, _, td2, _ = self._timing(tstep)
        return np.array([x for x in (td1, td2) if 0 < x <= tstop])


@dataclass(frozen=True)
class PiecewiseLinear(Waveform):
    """ngspice's ``PWL(...) r=t td=d``: shifted later by `delay`; with `repeat` (a time
    point before the last, or -1 for none), what follows that point repeats for ever."""

    repeat: float | Expression | None = None
    delay: float | Expression = 0.0

    keyword = "pwl"
    arity = (2, 10**9)
    usage = "PWL(t1 v1 [t2 v2 ...]) [r=t] [td=delay]"

    def resolve(self, backend) -> PiecewiseLinear:
        repeat = None if self.repeat is None else backend.evaluate(self.repeat)
        return PiecewiseLinear(tuple(backend.evaluate(a) for a in self.args),
                               None if repeat is not None and repeat < -0.5 else repeat,
                               backend.evaluate(self.delay))

    def parameters(self) -> tuple:
        return (*self.args, self.delay, *(() if self.repeat is None else (self.repeat,)))

    def _period(self) -> float | None:
        """The span that repeats (None: none does)."""
        if self.repeat is None or self.repeat < -0.5:
            return None
        return self.args[-2] - self.repeat

    def value(self, t, tstep, tstop, before=False):
        """At a time given twice, the second value (the jump has happened), or with
        `before` the first; where a repetition starts again, likewise the first period's
        end or the next one's start."""
        times, levels = self.args[0::2], self.args[1::2]
        t -= self.delay
        period = self._period()
        if period is not None and t > times[-1]:
            since = (t - self.repeat) % period
            if min(since, period - since) <= 1e-12 * period:   # at a repetition's start
                t = times[-1] if before else self.repeat
            else:
                t = self.repeat + since
        k = (bisect.bisect_left if before else bisect.bisect_right)(times, t)
        if k == 0:
            return levels[0]
        if k == len(times):
            return levels[-1]
        t0, t1 = times[k - 1], times[k]
        return levels[k - 1] + (levels[k] - levels[k - 1]) * (t - t0) / (t1 - t0)

    def invalid(self):
        times = self.args[0::2]
        for k in range(1, len(times)):
            if times[k] < times[k - 1]:
                return (f"PWL times must not decrease: t{k + 1} = {times[k]:g} comes after "
                        f"t{k} = {times[k - 1]:g}")
        if isinstance(self.repeat, float) and self.repeat >= -0.5 and (
                self.repeat not in times or self.repeat >= times[-1]):
            return (f"PWL r={self.repeat:g} must be one of its time points before the last "
                    f"({times[-1]:g}), or -1 for no repetition")
        return None

    def corner_count(self, tstep, tstop):
        period = self._period()
        repeats = 0.0 if period is None else max(0.0, tstop - self.delay) / period
        return len(self.args) / 2 * (repeats + 1)

    def breakpoints(self, tstep, tstop):
        times = np.asarray(self.args[0::2], float)
        period = self._period()
        if period is not None:
            again = times[times > self.repeat]
            count = int(np.ceil(max(0.0, tstop - self.delay - times[-1]) / period)) + 1
            times = np.concatenate([times, *(again + k * period for k in range(1, count + 1))])
        times = times + self.delay
        return times[(times > 0) & (times <= tstop)]


@dataclass(frozen=True)
class TimeExpression(Waveform):
    """``{expr}`` of ``time`` and parameters. Its breakpoints are where a comparison, min,
    max, abs, sign, if, floor or ceil in it switches: the roots of their switching functions,
    found on a grid of `SAMPLES` points and refined by bisection to round-off."""

    def resolve(self, backend):
        """Parameters put in (`backend.values`); `time` stays."""
        (expression,) = self.args
        return TimeExpression((expression.substitute(backend.values),))

    def value(self, t, tstep, tstop, before=False):
        """With `before`, the expression just before `t` (a relative 1e-9 earlier: far
        below any step, far above the round-off of a breakpoint)."""
        (expression,) = self.args
        if not isinstance(expression, Expression):
            return float(expression)
        return expression.evaluate({}, t - BEFORE * abs(t) if before else t)

    def breakpoints(self, tstep, tstop):
        (expression,) = self.args
        if not isinstance(expression, Expression):
            return np.empty(0)
        grid = np.linspace(0.0, tstop, SAMPLES + 1)
        found: list[float] = []
        for kind, switch in expression.switches():
            values = np.array([switch.evaluate({}, time) for time in grid])
            levels = np.floor(values) if kind == "integer" else np.sign(values)
            for k in np.flatnonzero(levels[1:] != levels[:-1]):
                if kind == "zero":
                    found.append(_root(switch, 0.0, grid[k], grid[k + 1]))
                    continue
                rising = values[k + 1] > values[k]
                for level in range(int(levels[k]) + rising, int(levels[k + 1]) + rising,
                                   1 if rising else -1):
                    found.append(_root(switch, float(level), grid[k], grid[k + 1]))
                if len(found) > MAX_BREAKPOINTS:
                    raise NetlistError(f"{{{expression.text}}} switches more than "
                                       f"{MAX_BREAKPOINTS} times before tstop",
                                       expression.location)
        points = np.unique(found)
        return points[(points > 0) & (points <= tstop)]


SAMPLES = 4000          # where a time expression's switching functions are looked at
MAX_BREAKPOINTS = 100_000
BEFORE = 1e-9


def _root(switch: Expression, level: float, low: float, high: float) -> float:
    """The time in [low, high] where `switch` crosses `level`, by bisection."""
    below = switch.evaluate({}, low) < level
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if (switch.evaluate({}, middle) < level) == below:
            low = middle
        else:
            high = middle
    return high
