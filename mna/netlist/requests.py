"""What a netlist asks for: the analysis cards (``.op .dc .ac .tran .ss``) and the sweeps of
``.dc`` and ``.step``, read into plain requests.

Reading a request evaluates nothing that a parameter could change and runs nothing: each
request class names the function that performs it (`runner`, a ``module:function`` path that
`mna.analysis.perform` imports on first use, so a netlist loads only its own analyses).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

from mna.elements.diode import CELSIUS
from mna.elements.passive import Resistor
from mna.elements.sources import AcrossSource
from mna.errors import NetlistError
from mna.expr import Value, parse_expression
from mna.netlist.fields import FieldReader, OutputName, names_output, output_name, read_output
from mna.netlist.model import Assign, Braced, Call, SourceLocation, field_text
from mna.units import parse_number

if TYPE_CHECKING:
    from mna.circuit import Circuit


class Request:
    """An analysis card, read; `runner` performs it (``module:function``)."""

    card: ClassVar[str] = ""
    usage: ClassVar[str] = ""
    runner: ClassVar[str] = ""
    registry: ClassVar[dict[str, type[Request]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("card"):
            Request.registry[cls.card] = cls

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Request:
        raise NotImplementedError

    def check(self, circuit: Circuit) -> None:
        """Refuse, located, what the elaborated circuit cannot serve."""


def check_count(count: float, what: str, circuit: Circuit, location: SourceLocation | None,
                per_point: bool = True):
    """Refuse a table of more rows than ``.options maxpoints`` before anything is made:
    `count` rows of an analysis at each ``.step`` point (`per_point`), or of the whole run."""
    limit = circuit.options.maxpoints
    repeats = circuit.repeats if per_point else 1
    if not count * repeats <= limit:
        each = (f" at each of {repeats:.4g} .step points ({count * repeats:.4g} in all)"
                if repeats > 1 else "")
        raise NetlistError(f"{what} asks for {count:.4g} points{each}, more than "
                           f"maxpoints={limit} (raise it with .options maxpoints=N)", location)


def _count(intervals: float) -> float:
    """The points of a sweep over `intervals` steps (whole ones), inf when they overflow."""
    return math.floor(intervals) + 1 if math.isfinite(intervals) else math.inf


def frequency_count(kind: str, points: int, start: float, stop: float,
                    reltol: float) -> float:
    """How many frequencies ``.ac kind points start stop`` has (inf when they overflow). As
    ngspice's, an octave sweep takes a last frequency up to ``stop * reltol * 2**(1/points)``
    past `stop`."""
    if kind == "lin":
        return points
    if kind == "oct":
        stop *= 1 + 2 ** (1 / points) * reltol
    base = 10.0 if kind == "dec" else 2.0
    return _count(points * (math.log(stop) - math.log(start)) / math.log(base) + 1e-9)


SweptKind = Literal["source", "parameter", "temperature", "resistor"]


@dataclass(frozen=True)
class Sweep:
    """A swept variable of ``.dc`` or ``.step``: an independent source's DC value, a
    top-level parameter, or (``.dc``, as ngspice's) the circuit's temperature ``TEMP`` or a
    resistor's value, over ``start, start+step, ... stop`` or a list of values."""

    name: str                   # the element's name in scope, the parameter's key, or "temp"
    label: str                  # as written: the column name
    kind: SweptKind
    location: SourceLocation
    limits: tuple[float, float, float] = (0.0, 0.0, 1.0)
    listed: tuple[float, ...] | None = None

    @classmethod
    def read(cls, reader: FieldReader, is_parameter: bool) -> Sweep:
        """``NAME start stop step`` or ``NAME list v1 v2 ...`` from `reader`: a parameter's
        name, or else a source's, a resistor's (by its letter) or ``TEMP``."""
        name = reader.word("parameter name" if is_parameter else "source name")
        location = reader.place()
        if is_parameter:
            key, kind = name.lower(), "parameter"
        elif name.lower() == "temp":
            key, kind = "temp", "temperature"
        else:
            key = reader.scope.name(name)   # X1.R2: a resistor of subcircuit X1
            kind = "resistor" if name.rpartition(".")[2][:1] in ("r", "R") else "source"
        if reader.keyword("list"):
            values = [reader.value("value")]
            while reader.remaining():
                values.append(reader.value("value"))
            return cls(key, name, kind, location,
                       listed=tuple(_number(reader, v, location) for v in values))
        start, stop, step = (_number(reader, reader.value(what), location)
                             for what in ("start", "stop", "step"))
        if step == 0 or (stop != start and (stop > start) != (step > 0)):   # signs: no underflow
            reader.fail(f"step {step:g} does not lead from {start:g} to {stop:g}", location)
        return cls(key, name, kind, location, limits=(start, stop, step))

    @property
    def is_parameter(self) -> bool:
        return self.kind == "parameter"

    @property
    def is_source(self) -> bool:
        return self.kind == "source"

    @property
    def count(self) -> float:
        if self.listed is not None:
            return len(self.listed)
        start, stop, step = self.limits
        return _count((stop - start) / step * (1 + 1e-12) + 1e-9)

    def values(self) -> tuple[float, ...]:
        """The values, as SPICE counts them: ``stop`` included."""
        if self.listed is not None:
            return self.listed
        start, _, step = self.limits
        return tuple(start + step * k for k in range(int(self.count)))

    def check(self, circuit: Circuit) -> None:
        if self.is_parameter:
            if self.name not in circuit.parameter_names:   # temper is the devices' too
                raise NetlistError(f"undefined parameter '{self.label}'" + (
                    " (temper is the circuit's temperature: .temp sets it, .dc TEMP sweeps "
                    "it)" if self.name == "temper" else ""), self.location)
        elif self.kind == "temperature":
            if min(self.values()) <= -CELSIUS:
                raise NetlistError(f"the temperature must stay above {-CELSIUS:g} °C",
                                   self.location)
        elif self.kind == "resistor":
            if not isinstance(circuit.elements_by_key.get(self.name.lower()), Resistor):
                raise NetlistError(f"'{self.label}' is not a resistor of the circuit (one "
                                   "whose value is a number or a parameter's)", self.location)
            if 0.0 in self.values():
                raise NetlistError(f"the sweep of {self.label} reaches 0 (a resistance must "
                                   "not be 0: a 0 V source is a short)", self.location)
        else:
            circuit.source(self.name, self.location)

    def applied(self, circuit: Circuit, value: float) -> Circuit:
        """`circuit` with this variable (not a source) at `value`."""
        if self.is_parameter:
            return dataclasses.replace(circuit, parameters={**circuit.parameters,
                                                            self.name: value})
        if self.kind == "temperature":
            return circuit.at_temperature(value)
        element = circuit.elements_by_key[self.name.lower()]
        return circuit.replacing(dataclasses.replace(element, value=value))

    def column(self, circuit: Circuit) -> str:
        return self.label if self.kind in ("parameter", "temperature") else (
            circuit.elements_by_key[self.name.lower()].name)

    def unit(self, circuit: Circuit) -> str:
        if self.is_source:
            return circuit.source(self.name, self.location).input_unit(circuit.domain_of)
        return {"parameter": "", "temperature": "°C", "resistor": ""}[self.kind]


def _number(reader: FieldReader, value: Value, location: SourceLocation) -> float:
    if not isinstance(value, float):
        reader.fail("sweep values must be numbers", location)
    return value


def check_distinct(sweeps: Sequence[Sweep]) -> None:
    """Refuse a variable swept twice (by two .step cards, a .step and a .dc, or in one .dc):
    one sweep's values would replace the other's."""
    seen = set()
    for sweep in sweeps:
        if (sweep.kind, sweep.name) in seen:
            raise NetlistError(f"'{sweep.label}' is swept twice", sweep.location)
        seen.add((sweep.kind, sweep.name))


def read_step(reader: FieldReader) -> Sweep:
    """``.step param NAME start stop step | .step param NAME list v1 v2 ...``."""
    if reader.keyword("param") is None:
        reader.fail(".step takes 'param' first", usage=True)
    sweep = Sweep.read(reader, is_parameter=True)
    reader.done()
    reader.no_more_options()
    return sweep


STEP_USAGE = ".step param NAME start stop step | .step param NAME list v1 v2 ..."


@dataclass(frozen=True)
class MonteCarlo:
    """``.mc N [seed=S]``: every analysis repeated for samples 0 .. N-1, each with its own
    draws of the random functions; sample k of seed S draws the same numbers wherever it
    runs. Without a seed, one is chosen at random (and reported)."""

    count: int
    seed: int | None = None
    location: SourceLocation | None = field(default=None, compare=False)

    usage: ClassVar[str] = ".mc N [seed=S]"

    @classmethod
    def from_fields(cls, reader: FieldReader) -> MonteCarlo:
        count = _whole(reader, reader.value("number of samples"), "the number of samples", 1)
        seed = reader.option("seed")
        reader.done()
        reader.no_more_options("seed=")
        return cls(count, None if seed is None else _whole(reader, seed, "seed", 0),
                   reader.location)


def _whole(reader: FieldReader, value: Value, what: str, least: int) -> int:
    if not isinstance(value, float) or value != int(value) or value < least:
        reader.fail(f"{what} must be a whole number of at least {least}", usage=True)
    return int(value)


@dataclass(frozen=True)
class OperatingPoint(Request):
    card = ".op"
    usage = ".op"
    runner = "mna.analysis.op:operating_point"

    @classmethod
    def from_fields(cls, reader):
        reader.done()
        reader.no_more_options()
        return cls()


@dataclass(frozen=True)
class DcSweep(Request):
    card = ".dc"
    usage = (".dc SRC start stop step [SRC2 start2 stop2 step2] | .dc param NAME start stop "
             "step | .dc TEMP start stop step | .dc Rname start stop step")
    runner = "mna.analysis.dc:dc_sweep"

    sweeps: tuple[Sweep, ...]

    @classmethod
    def from_fields(cls, reader):
        sweeps = []
        while reader.peek() is not None or not sweeps:
            is_parameter = reader.keyword("param") is not None
            sweeps.append(Sweep.read(reader, is_parameter))
        if len(sweeps) > 2:
            reader.fail(".dc sweeps at most two variables", usage=True)
        reader.no_more_options()
        return cls(tuple(sweeps))

    def check(self, circuit):
        for sweep in self.sweeps:
            sweep.check(circuit)
        check_distinct((*circuit.steps, *self.sweeps))
        check_count(math.prod(s.count for s in self.sweeps), ".dc", circuit,
                    self.sweeps[0].location)


AC_SWEEPS = ("dec", "oct", "lin")


@dataclass(frozen=True)
class AcSweep(Request):
    card = ".ac"
    usage = ".ac dec|oct|lin points fstart fstop"
    runner = "mna.analysis.ac:ac_sweep"

    sweep: str
    points: int
    start: float
    stop: float
    location: SourceLocation | None = field(default=None, compare=False)

    @classmethod
    def from_fields(cls, reader):
        sweep = frequency_sweep(reader)
        reader.done()
        reader.no_more_options()
        return cls(*sweep, reader.location)

    def check(self, circuit):
        check_count(frequency_count(self.sweep, self.points, self.start, self.stop,
                                    circuit.options.reltol), ".ac", circuit, self.location)


def frequency_sweep(reader: FieldReader) -> tuple[str, int, float, float]:
    """``dec|oct|lin points fstart fstop`` of ``.ac`` and ``.noise``."""
    sweep = reader.keyword(*AC_SWEEPS)
    if sweep is None:
        reader.fail("expected dec, oct or lin",
                    reader.place(reader.index) if reader.remaining() else None, usage=True)
    values = [reader.value(what) for what in ("number of points", "fstart", "fstop")]
    if not all(isinstance(v, float) for v in values):
        reader.fail(f"{reader.card.head} limits must be numbers", usage=True)
    points, start, stop = values
    if points < 1 or points != int(points):
        reader.fail(f"the number of points must be a positive integer, got {points:g}")
    if sweep != "lin" and not 0 < start <= stop:
        reader.fail(f"a {sweep} sweep needs 0 < fstart <= fstop, got {start:g} and {stop:g}")
    if sweep == "lin" and not 0 <= start <= stop:
        reader.fail(f"a lin sweep needs 0 <= fstart <= fstop, got {start:g} and {stop:g}")
    return sweep, int(points), start, stop


@dataclass(frozen=True)
class Transient(Request):
    card = ".tran"
    usage = ".tran tstep tstop [tstart [tmax]] [uic]"
    runner = "mna.analysis.transient:transient"

    tstep: Value
    tstop: Value
    tstart: Value = 0.0
    tmax: Value | None = None
    uic: bool = False
    location: SourceLocation | None = None

    @classmethod
    def from_fields(cls, reader):
        values = [reader.value("tstep"), reader.value("tstop")]
        uic = False
        while reader.peek() is not None:
            if reader.keyword("uic"):
                uic = True
                break
            if len(values) == 4:
                reader.done()
            values.append(reader.value(("tstart", "tmax")[len(values) - 2]))
        reader.done()
        reader.no_more_options()
        tstart = values[2] if len(values) > 2 else 0.0
        tmax = values[3] if len(values) > 3 else None
        return cls(values[0], values[1], tstart, tmax, uic, reader.location)


@dataclass(frozen=True)
class StateSpace(Request):
    card = ".ss"
    usage = ".ss in=SRC[,SRC...] out=OUT[,OUT...] [symbolic] [tf] [dense]"
    runner = "mna.analysis.statespace:state_space_of_request"

    inputs: tuple[str, ...] | None = None
    outputs: tuple[OutputName, ...] | None = None
    symbolic: bool = False
    tf: bool = False
    dense: bool = False
    location: SourceLocation | None = field(default=None, compare=False)

    @classmethod
    def from_fields(cls, reader):
        flags = set()
        while reader.peek() is not None:
            word = reader.keyword("symbolic", "tf", "dense")
            if word is None:
                reader.done()
            flags.add(word)
        inputs = outputs = None
        assign = reader.assigns.pop("in", None)
        if assign is not None:
            if not all(isinstance(v, str) for v in assign.values):
                reader.fail("in= takes source names, e.g. in=V1,I2", assign.location, usage=True)
            inputs = tuple(reader.scope.name(v) for v in assign.values)
        assign = reader.assigns.pop("out", None)
        if assign is not None:
            if not all(names_output(v) for v in assign.values):
                reader.fail("out= takes V(node), V(a,b), I(element) or @device[current]",
                            assign.location, usage=True)
            outputs = tuple(read_output(v, reader.scope, place) for v, place in
                            zip(assign.values, assign.places))
        reader.no_more_options("in=, out=")
        return cls(inputs, outputs, "symbolic" in flags, "tf" in flags, "dense" in flags,
                   reader.location)

    def check(self, circuit):
        for name in self.inputs or ():
            circuit.source(name, self.location)
        for output in self.outputs or ():
            circuit.check_output(output, self.location)


@dataclass(frozen=True)
class PoleZero(Request):
    """``.pz in+ in- out+ out- vol|cur pol|zer|pz``: the poles and zeros of the transfer
    function from a source put across the input nodes (a voltage source, or a current
    source) to the voltage across the output nodes, about the operating point."""

    card = ".pz"
    usage = ".pz in+ in- out+ out- vol|cur pol|zer|pz"
    runner = "mna.analysis.pz:pole_zero"

    nodes: tuple[str, str, str, str]
    source: str          # "vol" or "cur"
    wanted: str          # "pol", "zer" or "pz"
    location: SourceLocation | None = field(default=None, compare=False)

    @classmethod
    def from_fields(cls, reader):
        nodes = reader.nodes("in+", "in-", "out+", "out-")
        source = reader.keyword("vol", "cur")
        wanted = reader.keyword("pol", "zer", "pz")
        if source is None or wanted is None:
            reader.fail("expected vol or cur, then pol, zer or pz", usage=True)
        reader.done()
        reader.no_more_options()
        return cls(nodes, source, wanted, reader.location)


@dataclass(frozen=True)
class TransferFunction(Request):
    """``.tf OUT SRC``: the small-signal DC transfer function from the independent source
    `SRC` to `OUT` (``V(a[,b])``, or ``I(VX)`` of an across source), and the impedances the
    source and the output see."""

    card = ".tf"
    usage = ".tf V(node[,node])|I(Vsource) SRC"
    runner = "mna.analysis.transfer:transfer_function"

    output: OutputName
    source: str
    location: SourceLocation | None = field(default=None, compare=False)

    @classmethod
    def from_fields(cls, reader):
        item = reader.take("output")
        if not isinstance(item, Call):
            reader.fail(f"expected V(node), V(a,b) or I(Vsource), found '{field_text(item)}'",
                        reader.place(), usage=True)
        output = output_name(item, reader.scope)
        source = reader.scope.name(reader.word("input source"))
        reader.done()
        reader.no_more_options()
        return cls(output, source, reader.location)

    def check(self, circuit):
        circuit.source(self.source, self.location)
        circuit.check_output(self.output, self.location)
        if self.output.kind == "I" and not (
                len(self.output.keys) == 1
                and isinstance(circuit.elements_by_key[self.output.keys[0]], AcrossSource)):
            raise NetlistError(
                ".tf: an output current must be that of an independent voltage (across) "
                "source, I(Vname): put a 0 V source in series with the element to measure it",
                self.output.location or self.location)


@dataclass(frozen=True)
class Noise(Request):
    """``.noise V(out[,ref]) SRC dec|oct|lin points fstart fstop [pts_per_summary]``: the
    noise at the output, and referred to the independent source `SRC`; with
    `pts_per_summary`, each noise source's share as well."""

    card = ".noise"
    usage = ".noise V(out[,ref]) SRC dec|oct|lin points fstart fstop [pts_per_summary]"
    runner = "mna.analysis.noise:noise_analysis"

    output: OutputName
    source: str
    sweep: str
    points: int
    start: float
    stop: float
    shares: bool = False
    location: SourceLocation | None = field(default=None, compare=False)

    @classmethod
    def from_fields(cls, reader):
        item = reader.take("output")
        if not (isinstance(item, Call) and item.name.upper() == "V"):
            reader.fail(f"expected the output V(out) or V(out,ref), found '{field_text(item)}'",
                        reader.place(), usage=True)
        output = output_name(item, reader.scope)
        source = reader.scope.name(reader.word("input source"))
        sweep = frequency_sweep(reader)
        shares = False
        if reader.remaining():
            summary = reader.value("pts_per_summary")
            if not isinstance(summary, float) or summary < 0 or summary != int(summary):
                reader.fail("pts_per_summary must be a whole number", reader.place())
            shares = summary > 0
        reader.done()
        reader.no_more_options()
        return cls(output, source, *sweep, shares, reader.location)

    def check(self, circuit):
        circuit.source(self.source, self.location)
        circuit.check_output(self.output, self.location)
        check_count(frequency_count(self.sweep, self.points, self.start, self.stop,
                                    circuit.options.reltol) + 1, ".noise", circuit,
                    self.location)


MEASURE_KINDS = ("find", "when", "trig", "avg", "rms", "min", "max", "min_at", "max_at", "pp",
                 "integ", "deriv")
EDGES = ("rise", "fall", "cross")


@dataclass(frozen=True)
class Crossing:
    """Where a measured quantity crosses a value, or another quantity (`against`,
    ``WHEN V(a)=V(b)``): the n-th rise, fall or crossing (ngspice's ``RISE=n``, ``FALL=n``,
    ``CROSS=n``, ``LAST`` as n = -1), from ``TD=`` on."""

    output: OutputName
    value: Value
    edge: str = "cross"
    count: int = 1
    delay: Value = 0.0
    against: OutputName | None = None

    def resolved(self, evaluate: Callable[[Value], float]) -> Crossing:
        """With its values as numbers (they may read parameters)."""
        return dataclasses.replace(self, value=evaluate(self.value),
                                   delay=evaluate(self.delay))


@dataclass(frozen=True)
class Measure:
    """``.meas[ure] tran|dc|ac|op name ...`` in ngspice's common forms: ``FIND out AT=x``,
    ``FIND out WHEN out2=v``, ``WHEN out=v``, ``TRIG ... TARG ...`` (each a crossing or
    ``AT=x``), ``PARAM='expr'`` (of parameters and earlier measurements),
    ``AVG|RMS|MIN|MAX|MIN_AT|MAX_AT|PP|INTEG
    out [FROM=x] [TO=x]``, ``DERIV out AT=x``, each crossing with ``RISE|FALL|CROSS=n`` and
    ``TD=``."""

    analysis: str
    name: str
    kind: str
    output: OutputName | None = None
    at: Value | None = None
    when: Crossing | Value | None = None      # TRIG AT=x and TARG AT=x: a fixed instant
    target: Crossing | Value | None = None
    start: Value | None = None
    stop: Value | None = None
    location: SourceLocation | None = None
    expression: Value | None = None      # PARAM='expr': of parameters and measures

    usage = (".meas tran|dc|ac|op name FIND out AT=x | FIND out WHEN out=v [RISE=n] [TD=x] | "
             "WHEN out=v | TRIG out VAL=v [RISE=n]|AT=x TARG out VAL=v|AT=x | "
             "AVG|RMS|MIN|MAX|MIN_AT|MAX_AT|PP|INTEG out [FROM=x] [TO=x] | DERIV out AT=x | "
             "PARAM='expression of parameters and earlier measurements'")

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Measure:
        analysis = reader.keyword("tran", "dc", "ac", "op")
        if analysis is None:
            reader.fail("expected the analysis measured: tran, dc, ac or op", usage=True)
        name = reader.word("measurement name")
        measure = _MeasureReader(reader)
        item = reader.peek()
        if isinstance(item, Assign) and item.name.lower() == "param":
            reader.take("PARAM=")
            reader.done()
            return cls(analysis, name, "param", location=reader.location,
                       expression=measure.value(item))
        kind = reader.keyword(*MEASURE_KINDS)
        if kind is None:
            reader.fail(f"expected one of {', '.join(k.upper() for k in MEASURE_KINDS)}",
                        reader.place(reader.index) if reader.remaining() else None, usage=True)
        if kind == "when":
            spec = {"when": measure.crossing()}
        elif kind == "trig":
            trigger = measure.instant()
            if reader.keyword("targ") is None:
                reader.fail("TRIG needs its TARG", usage=True)
            spec = {"when": trigger, "target": measure.instant()}
        else:
            spec = {"output": measure.output()}
            if kind == "find" and reader.keyword("when"):
                spec["when"] = measure.crossing()
            else:
                spec.update(measure.options(("at",) if kind in ("find", "deriv") else
                                            ("from", "to")))
                if kind in ("find", "deriv") and spec.get("at") is None:
                    reader.fail(f"{kind.upper()} needs AT=", usage=True)
        reader.done()
        spec["start"], spec["stop"] = spec.pop("from", None), spec.pop("to", None)
        if isinstance(spec["start"], float) and isinstance(spec["stop"], float) and (
                spec["start"] > spec["stop"]):
            reader.fail(f"FROM={spec['start']:g} lies after TO={spec['stop']:g}", usage=True)
        return cls(analysis, name, kind, location=reader.location, **spec)

    @property
    def outputs(self) -> tuple[OutputName, ...]:
        found = [self.output] if self.output is not None else []
        for crossing in (self.when, self.target):
            if isinstance(crossing, Crossing):
                found += [o for o in (crossing.output, crossing.against) if o is not None]
        return tuple(found)

    def values(self) -> tuple[Value, ...]:
        """Every value it is given: numbers, or expressions of parameters and earlier
        measurements."""
        found = [self.expression, self.at, self.start, self.stop]
        for instant in (self.when, self.target):
            found += [instant.value, instant.delay] if isinstance(instant, Crossing) else [
                instant]
        return tuple(v for v in found if v is not None)

    def resolved(self, evaluate: Callable[[Value], float]) -> Measure:
        """With its values as numbers (values and limits may read parameters)."""

        def number(value):
            return value if value is None else evaluate(value)

        def instant(item):
            return item.resolved(evaluate) if isinstance(item, Crossing) else number(item)

        return dataclasses.replace(self, at=number(self.at), start=number(self.start),
                                   stop=number(self.stop), when=instant(self.when),
                                   target=instant(self.target))


class _MeasureReader:
    """The items of a ``.meas`` card in order: outputs, crossings, ``key=value`` options."""

    def __init__(self, reader: FieldReader):
        self.reader = reader

    def output(self, item=None) -> OutputName:
        reader = self.reader
        item = reader.take("measured output") if item is None else item
        if isinstance(item, Call) and item.name.lower() == "par" and len(item.args) == 1 and (
                isinstance(item.args[0], Braced)):   # ngspice's par('expr'): an expression
            item = item.args[0]
        if names_output(item):
            return read_output(item, reader.scope, reader.place(), parts=True)
        if isinstance(item, Braced):
            return OutputName("E", (), reader.place(), reader.behavioural(item))
        reader.fail("expected V(node), I(element), @device[current] or {expression}",
                    reader.place(), usage=True)

    def options(self, keys: tuple[str, ...]) -> dict[str, Value]:
        """``key=value`` items of `keys` while they come."""
        found: dict[str, Value] = {}
        while isinstance(item := self.reader.peek(), Assign) and item.name.lower() in keys:
            self.reader.take("option")
            found[item.name.lower()] = self.value(item)
        return found

    def instant(self) -> Crossing | Value:
        """``AT=x`` (a fixed instant) or a crossing ``out VAL=v ...`` (TRIG's and TARG's)."""
        item = self.reader.peek()
        if isinstance(item, Assign) and item.name.lower() == "at":
            self.reader.take("AT=")
            return self.value(item)
        return self.crossing(value_key="val")

    def crossing(self, value_key: str | None = None) -> Crossing:
        """``out=v`` (or ``out VAL=v``) then ``RISE|FALL|CROSS=n`` and ``TD=``."""
        reader = self.reader
        item = reader.take("crossing")
        if value_key is None:
            if not isinstance(item, Assign) or not names_output(item.key):
                reader.fail("expected out=value", reader.place(), usage=True)
            output = self.output(item.key)
            if names_output(item.values[0]):    # WHEN V(a)=V(b): where they cross
                against, value = self.output(item.values[0]), 0.0
            else:
                against, value = None, self.value(item)
        else:
            output, against = self.output(item), None
            value = self.options((value_key,)).get(value_key)
            if value is None:
                reader.fail(f"expected {value_key.upper()}= after the output", usage=True)
        edge, count, delay = "cross", 1, 0.0
        while isinstance(option := reader.peek(), Assign) and option.name.lower() in (
                *EDGES, "td"):
            reader.take("option")
            key = option.name.lower()
            if key == "td":
                delay = self.value(option)
            elif isinstance(option.values[0], str) and option.values[0].lower() == "last":
                edge, count = key, -1
            else:
                edge, count = key, _whole(reader, self._number(option), f"{key}=", 1)
        return Crossing(output, value, edge, count, delay, against)

    def value(self, item: Assign) -> Value:
        """A number, or an expression of parameters and earlier measurements
        (``VAL='vdd/2'``, ``WHEN V(out)=skew``); the elaboration checks its names."""
        value, place = item.values[0], item.places[0]
        if isinstance(value, str) and parse_number(value) is not None:
            return self.reader.evaluate(value, item.name, place)
        if not isinstance(value, str | Braced):
            self.reader.fail(f"{item.name}= takes a number or an expression", place)
        text = value.text if isinstance(value, Braced) else value
        return parse_expression(text, value.location if isinstance(value, Braced) else place,
                                functions=self.reader.scope.functions)

    def _number(self, item: Assign) -> float:
        value = self.value(item)
        if not isinstance(value, float):
            self.reader.fail(f"{item.name}= must be a number", item.location)
        return value


@dataclass(frozen=True)
class Fourier:
    """``.four freq out ...``: the harmonics of transient outputs over their last period."""

    frequency: float
    outputs: tuple[OutputName, ...]
    location: SourceLocation | None = None

    usage = ".four freq V(node) ..."

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Fourier:
        frequency = reader.value("fundamental frequency")
        if not isinstance(frequency, float) or frequency <= 0:
            reader.fail("the fundamental frequency must be a positive number", usage=True)
        outputs = []
        while reader.remaining():
            item = reader.take("output")
            if not names_output(item):
                reader.fail("expected V(node), I(element) or @device[current]", reader.place(),
                            usage=True)
            outputs.append(read_output(item, reader.scope, reader.place()))
        if not outputs:
            reader.fail(".four needs an output", usage=True)
        reader.no_more_options()
        return cls(frequency, tuple(outputs), reader.location)
