"""Independent across (V) and through (I) sources: DC, AC and a time waveform, in any domain."""

from __future__ import annotations

import cmath
import dataclasses
import logging
import math
from dataclasses import dataclass
from typing import ClassVar

from mna.domains import across_unit, through_unit
from mna.elements.base import Element, Role, two_terminal_edge
from mna.expr import Expression, Value, times
from mna.netlist.fields import FieldReader
from mna.netlist.model import Braced, Call, field_text
from mna.units import parse_number
from mna.waveforms import PiecewiseLinear, TimeExpression, Waveform

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Source(Element):
    """Value syntax shared by V and I: ``[DC] v [AC mag [phase]] [waveform]`` in any order
    (``DC=v`` and ``AC=mag`` as well, as ngspice reads them); a waveform is ``PULSE(...)``
    or, as SPICE also reads it, ``PULSE v1 v2 ...``."""

    dc: Value | None
    ac_magnitude: Value
    ac_phase: Value
    waveform: Waveform | None

    role: ClassVar[Role]

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Source:
        reader = reader.spelled_out(("dc", "ac"))
        nodes = reader.nodes("n+", "n-")
        dc = waveform = None
        ac_magnitude: Value = 0.0
        ac_phase: Value = 0.0
        while (item := reader.peek()) is not None:
            if reader.keyword("dc"):
                dc = reader.value("DC value")
            elif reader.keyword("ac"):
                ac_magnitude = (reader.value("AC magnitude") if _is_value(reader, reader.peek())
                                else 1.0)
                if _is_value(reader, reader.peek()):
                    ac_phase = reader.value("AC phase")
            elif distortion := reader.keyword("distof1", "distof2"):
                for what in ("magnitude", "phase"):
                    if _is_value(reader, reader.peek()):
                        reader.value(f"{distortion.upper()} {what}")
                log.warning("%s: %s %s is for .disto, which mna does not run; ignored",
                            reader.place(), reader.name, distortion.upper())
            elif waveform is not None and (isinstance(item, Call) or (
                    isinstance(item, str) and item.lower() in Waveform.kinds)):
                reader.fail(f"a second waveform, {field_text(item)}: a source has one",
                            reader.place(reader.index))
            elif isinstance(item, Call):
                reader.take("waveform")
                waveform = _waveform(reader, item.name, reader.call_arguments(
                    item, f"{item.name} argument"), item.location)
            elif isinstance(item, str) and item.lower() in Waveform.kinds:
                reader.take("waveform")
                location = reader.place()
                arguments = []
                while _is_value(reader, reader.peek()):
                    arguments.append(reader.value(f"{item} argument"))
                waveform = _waveform(reader, item, tuple(arguments), location)
            elif isinstance(item, Braced) and dc is None and waveform is None:
                reader.take("value")
                value = reader.evaluate(item, "value", reader.place(), time=True)
                if isinstance(value, Expression) and value.uses_time:
                    waveform = TimeExpression((value,))
                else:
                    dc = value
            elif isinstance(item, str) and dc is None and waveform is None:
                dc = reader.value("DC value")
            else:
                reader.done()
        copies = cls.read_copies(reader)
        reader.no_more_options()
        return cls(reader.name, reader.location, nodes, dc, ac_magnitude, ac_phase, waveform,
                   **copies)

    @classmethod
    def read_copies(cls, reader: FieldReader) -> dict[str, Value]:
        """The source's ``m=`` as its constructor takes it (none for an across source)."""
        return {}

    def edges(self):
        return two_terminal_edge(self, self.role)

    def domain_groups(self):
        return [self.nodes]

    def reports_through(self) -> bool:
        return True

    def input_unit(self, domain_of) -> str:
        raise NotImplementedError

    def dc_value(self, backend) -> float:
        """The DC value (`backend` evaluates values); without one, ngspice's choice: the
        waveform at t = 0."""
        if self.dc is not None:
            return backend.evaluate(self.dc)
        if self.waveform is not None:
            return self.waveform.resolve(backend).at(0.0)
        return 0.0

    def ac_value(self, backend) -> complex:
        """The AC phasor; the phase is in degrees, as in SPICE."""
        return cmath.rect(backend.evaluate(self.ac_magnitude),
                          math.radians(backend.evaluate(self.ac_phase)))


def _is_value(reader: FieldReader, item) -> bool:
    return isinstance(item, Braced) or (isinstance(item, str) and (
        parse_number(item) is not None or reader.names_parameter(item)))


def _waveform(reader: FieldReader, name: str, arguments: tuple[Value, ...],
              location) -> Waveform:
    kind = Waveform.kinds.get(name.lower())
    if kind is None:
        known = ", ".join(k.upper() for k in Waveform.kinds)
        reader.fail(f"unknown waveform '{name}' (known: {known})", location)
    low, high = kind.arity
    if not low <= len(arguments) <= high or (kind.keyword == "pwl" and len(arguments) % 2):
        reader.fail(f"{name} takes {kind.usage}", location)
    wave = kind(arguments)
    if kind is PiecewiseLinear:
        repeat, delay = reader.option("r", "PWL repeat time"), reader.option("td", "PWL delay")
        wave = PiecewiseLinear(wave.args, repeat, 0.0 if delay is None else delay)
    if all(isinstance(a, float) for a in wave.parameters()) and (problem := wave.invalid()):
        reader.fail(problem, location)
    return wave


@dataclass(eq=False)
class AcrossSource(Source):
    """Voltage, velocity, angular velocity, pressure or temperature source."""

    prefix = "V"
    usage = "Vname n+ n- [DC] value [AC mag [phase]] [PULSE(...)|SIN(...)|EXP(...)|PWL(...)|{expr}]"
    role = Role.ACROSS_SOURCE

    def branches(self):
        return ("",)

    def copied(self, count):
        return self

    def input_unit(self, domain_of) -> str:
        return across_unit(self.port_domain(domain_of))

    def stamp(self, s) -> None:
        k = s.branch(self)
        s.G.incidence(*self.nodes, k)
        s.G.across(k, *self.nodes, 1)
        s.B.add(k, s.input(self), 1)


@dataclass(eq=False)
class ThroughSource(Source):
    """Current, force, torque, volume-flow or heat-flow source (flows n+ → source → n-)."""

    copies: Value = 1.0   # ngspice's m=: that many in parallel

    prefix = "I"
    usage = ("Iname n+ n- [DC] value [AC mag [phase]] [PULSE(...)|SIN(...)|EXP(...)|PWL(...)|"
             "{expr}] [m=copies]")
    role = Role.THROUGH_SOURCE

    @classmethod
    def read_copies(cls, reader: FieldReader) -> dict[str, Value]:
        copies = reader.copies()
        return {} if copies is None else {"copies": copies}

    def copied(self, count):
        return dataclasses.replace(self, copies=times(self.copies, count))

    def input_unit(self, domain_of) -> str:
        return through_unit(self.port_domain(domain_of))

    def stamp(self, s) -> None:
        column, copies = s.input(self), s.value(self.copies)
        s.B.add(self.nodes[0], column, -copies)
        s.B.add(self.nodes[1], column, copies)

    def through(self, s, row) -> None:
        row.u.add(s.input(self), s.value(self.copies))
