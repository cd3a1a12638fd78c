"""Time functions of independent sources, evaluated vectorised on a whole time grid.

Defaults follow ngspice: a missing (or zero) rise or fall time, EXP delay or time constant
is the time step, a missing pulse width or period is the stop time, a missing sine
frequency is ``1/tstop``. Each waveform lists its breakpoints (corners) so that a step
controller can land on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mna.errors import NetlistError
from mna.expr import Expression


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

    def values(self, t: np.ndarray, tstep: float, tstop: float) -> np.ndarray:
        raise NotImplementedError

    def invalid(self) -> str | None:
        """Why these (numeric) arguments make no waveform, or None."""
        return None

    def values_before(self, t: np.ndarray, tstep: float, tstop: float) -> np.ndarray:
        """The limits from the left: where the waveform jumps (a PWL time given twice), the
        value just before the jump, for the step that ends there."""
        return self.values(t, tstep, tstop)

    def breakpoints(self, tstep: float, tstop: float) -> np.ndarray:
        return np.empty(0)

    def at(self, time: float) -> float:
        return float(self.values(np.array([time]), 1.0, 1.0)[0])

    def _padded(self, defaults: list[float]) -> list[float]:
        return list(self.args) + defaults[len(self.args):]


@dataclass(frozen=True)
class Pulse(Waveform):
    keyword = "pulse"
    arity = (2, 7)
    usage = "PULSE(v1 v2 [td [tr [tf [pw [per]]]]])"

    def _timing(self, tstep: float, tstop: float):
        v1, v2, td, tr, tf, pw, per = self._padded([0.0, 0.0, 0.0, tstep, tstep, tstop, tstop])
        tr = tr or tstep
        tf = tf or tstep
        pw = pw or tstop
        return v1, v2, td, tr, tf, pw, per or tstop

    def values(self, t, tstep, tstop):
        """A period shorter than ``tr + pw + tf`` cuts the pulse short, as ngspice does; the
        end of the first period still belongs to it (ngspice wraps only a time beyond it)."""
        return self._shape(t, tstep, tstop, before=False)

    def values_before(self, t, tstep, tstop):
        """At the end of a cut-short period, the value before the cut."""
        return self._shape(t, tstep, tstop, before=True)

    def _shape(self, t, tstep, tstop, before: bool):
        v1, v2, td, tr, tf, pw, per = self._timing(tstep, tstop)
        since = np.asarray(t, float) - td
        periods = since / per
        nearest = np.rint(periods)
        at_end = (np.abs(periods - nearest) <= 1e-9) & (nearest >= 1)   # to round-off
        local = np.where(at_end, np.where(before | (nearest == 1), per, 0.0),
                         since - per * np.floor(periods))
        local = np.where(since < 0, -1.0, local)
        rising = v1 + (v2 - v1) * local / tr
        falling = v2 + (v1 - v2) * (local - tr - pw) / tf
        return np.select(
            [local < 0, local < tr, local < tr + pw, local < tr + pw + tf],
            [v1, rising, v2, falling],
            v1,
        )

    def breakpoints(self, tstep, tstop):
        v1, v2, td, tr, tf, pw, per = self._timing(tstep, tstop)
        starts = td + per * np.arange(0, max(1, int(np.ceil((tstop - td) / per)) + 1))
        corners = np.concatenate([starts + offset for offset in (0, tr, tr + pw, tr + pw + tf)
                                  if offset < per or offset == 0])
        return np.unique(corners[(corners >= 0) & (corners <= tstop)])

    def at(self, time):
        v1, *_ = self._padded([0.0] * 6)
        return float(v1) if time <= (self._padded([0.0] * 6)[2]) else super().at(time)


@dataclass(frozen=True)
class Sine(Waveform):
    keyword = "sin"
    arity = (2, 6)
    usage = "SIN(vo va [freq [td [theta [phase]]]])"

    def values(self, t, tstep, tstop):
        vo, va, freq, td, theta, phase = self._padded([0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        freq = freq or 1.0 / tstop
        local = np.maximum(t - td, 0.0)
        wave = va * np.sin(2 * np.pi * freq * local + np.deg2rad(phase)) * np.exp(-theta * local)
        return vo + np.where(t < td, va * np.sin(np.deg2rad(phase)), wave)

    def breakpoints(self, tstep, tstop):
        td = self._padded([0.0] * 6)[3]
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

    def values(self, t, tstep, tstop):
        v1, v2, td1, tau1, td2, tau2 = self._timing(tstep)
        rise = (v2 - v1) * (1 - np.exp(-np.maximum(t - td1, 0) / tau1))
        fall = (v1 - v2) * (1 - np.exp(-np.maximum(t - td2, 0) / tau2))
        return v1 + np.where(t > td1, rise, 0.0) + np.where(t > td2, fall, 0.0)

    def breakpoints(self, tstep, tstop):
        _, _, td1, _, td2, _ = self._timing(tstep)
        return np.array([x for x in (td1, td2) if 0 < x <= tstop])


@dataclass(frozen=True)
class PiecewiseLinear(Waveform):
    keyword = "pwl"
    arity = (2, 10**9)
    usage = "PWL(t1 v1 [t2 v2 ...])"

    def values(self, t, tstep, tstop):
        """At a time given twice, the second value (the jump has happened)."""
        times, levels = np.asarray(self.args[0::2], float), np.asarray(self.args[1::2], float)
        return np.interp(t, times, levels)

    def invalid(self):
        times = self.args[0::2]
        for k in range(1, len(times)):
            if times[k] < times[k - 1]:
                return (f"PWL times must not decrease: t{k + 1} = {times[k]:g} comes after "
                        f"t{k} = {times[k - 1]:g}")
        return None

    def values_before(self, t, tstep, tstop):
        times, levels = np.asarray(self.args[0::2], float), np.asarray(self.args[1::2], float)
        return np.interp(-np.asarray(t, float), -times[::-1], levels[::-1])

    def breakpoints(self, tstep, tstop):
        times = np.asarray(self.args[0::2], float)
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

    def values(self, t, tstep, tstop):
        (expression,) = self.args
        if not isinstance(expression, Expression):
            return np.full(np.shape(t), float(expression))
        times = np.asarray(t, float)
        return np.array([expression.evaluate({}, time) for time in times.ravel()]).reshape(
            times.shape)

    def values_before(self, t, tstep, tstop):
        """The limits from the left: the expression just before `t` (a relative 1e-9
        earlier, far below any step, far above the round-off of a breakpoint)."""
        times = np.asarray(t, float)
        return self.values(times - BEFORE * np.abs(times), tstep, tstop)

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
