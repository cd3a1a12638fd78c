"""R, C and L in every domain: one class per SPICE letter, the domain table gives the meaning."""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass
from typing import ClassVar

from mna.domains import KEYWORDS, Domain, domain_of_keyword, keywords_of
from mna.elements.base import Element, Role, two_terminal_edge
from mna.elements.behavioural import BehaviouralSource
from mna.elements.diode import check_model, model_values
from mna.elements.modelled import ModelledElement, names_a_model, types_of
from mna.expr import Expression, Instruction, Probe, Value, times
from mna.netlist.fields import GROUND, FieldReader, plain_number
from mna.netlist.model import Braced

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Passive(Element):
    """A two-terminal element given by its analog value or by its domain's physical keyword."""

    value: Value
    keyword: str | None
    initial: Value | None
    copies: Value = 1.0   # ngspice's m=: that many in parallel
    tc1: Value | None = None
    tc2: Value | None = None
    temp: Value | None = None
    dtemp: Value = 0.0
    scale: Value = 1.0

    letter: ClassVar[str] = ""
    role: ClassVar[Role]
    keywords: ClassVar[frozenset[str]] = frozenset()   # the physical keywords of the letter
    # ngspice's other names of the electrical keyword (resistance=, capacitance=, cap=, ...)
    spelled: ClassVar[dict[str, str]] = {}
    extras: ClassVar[tuple[str, ...]] = ("tc1", "tc", "tc2", "temp", "dtemp", "scale")
    aliases: ClassVar[dict[str, str]] = {"tc": "tc1"}   # other names of some of the extras
    keys: ClassVar[frozenset[str]] = frozenset()   # every key= of the letter
    allowed: ClassVar[str] = ""                # every key=, as the usage lists them

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.keywords = frozenset(keywords_of(cls.letter))
        extra = ("ic",) if cls.role is not Role.DISSIPATOR else ()
        cls.keys = frozenset({*cls.keywords, *extra, *cls.extras})
        cls.allowed = ", ".join(f"{k}=" for k in sorted(cls.keys))

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Passive | ModelledElement:
        if names_a_model(reader, 2) and types_of(cls.letter):   # ``R1 a b brake``: a model
            return ModelledElement.read(reader, cls.letter)
        cls.respell(reader)
        nodes = reader.nodes("n+", "n-")
        bare = reader.value() if reader.remaining() else None
        reader.done()
        copies = {}
        valued = bare is not None or any(key in reader.assigns for key in cls.keywords - {"m"})
        if valued and "m" in reader.assigns and cls.role is not Role.DISSIPATOR:
            # beside a value, C's and L's m= is ngspice's multiplier (alone, C's is a mass)
            copies["copies"] = reader.copies()
        given = [key for key in reader.assigns if key in cls.keywords]
        if len(given) > 1 or (given and bare is not None):
            values = ", ".join(f"{k}=" for k in sorted(cls.keywords | cls.spelled.keys()))
            reader.fail(f"{reader.name}: give one value (a bare analog value or one of "
                        f"{values})", reader.assigns[given[-1]].location, usage=True)
        options = cls._options(reader, cls.keys)
        keyword = given[0] if given else None
        value = options.pop(keyword) if keyword else bare
        if value is None:
            reader.fail(f"{reader.card.head}: missing value", usage=True)
        reader.no_more_options(cls.allowed)
        initial = options.pop("ic", None)
        return cls(reader.name, reader.location, nodes, value, keyword, initial, **copies,
                   **options)

    @classmethod
    def from_plain(cls, name, location, nodes, word, scope) -> Passive | None:
        value = plain_number(word)   # a plain number that names no model (R's "R1 a b 1k")
        if value is None or word.lower() in scope.model_kinds:
            return None
        return cls(name, location, nodes, value, None, None)

    @classmethod
    def respell(cls, reader: FieldReader) -> None:
        """The line's ngspice spellings of the value (`spelled`) under their keyword."""
        for spelling, keyword in cls.spelled.items():
            if spelling in reader.assigns:
                if keyword in reader.assigns:
                    reader.fail(f"{reader.name}: give one value ({keyword}= or {spelling}=)",
                                reader.assigns[spelling].location)
                reader.assigns[keyword] = reader.assigns.pop(spelling)

    @classmethod
    def _options(cls, reader: FieldReader, keys) -> dict:
        """The line's ``key=value`` fields of `keys`, each under its name in `aliases`."""
        options = reader.options(keys)
        if cls.aliases and options:
            options = {cls.aliases.get(key, key): value for key, value in options.items()}
        return options

    @classmethod
    def stamp_plain(cls, s, elements, values) -> None:
        """A branch of each element, with its value as conductance in G (a resistor's) or
        in C (a capacitor's)."""
        matrix = s.C if cls.role is Role.ACROSS_STORE else s.G
        matrix.conductances([e.nodes[0] for e in elements], [e.nodes[1] for e in elements],
                            values)

    def copied(self, count):
        """`count` times as many copies; a T-type element's ``IC=``, each copy's through
        variable, makes theirs `count` times as much."""
        initial = self.initial
        if initial is not None and self.role is Role.THROUGH_STORE:
            initial = times(initial, count)
        return dataclasses.replace(self, copies=times(self.copies, count), initial=initial)

    def edges(self):
        return two_terminal_edge(self, self.role)

    def domain_groups(self):
        return [self.nodes]

    def domain_hints(self):
        domain = domain_of_keyword(self.letter, self.keyword) if self.keyword else None
        if domain is None:
            return []
        return [(n, domain, f"{self.keyword}=") for n in self.nodes if n != GROUND]

    def validate(self, circuit) -> None:
        if self.keyword is not None:
            domain = self.port_domain(circuit.domain_of)
            expected = KEYWORDS[self.letter].get(domain)
            if expected is None or expected.name != self.keyword:
                hint = f" (use {expected.name}= for the {expected.meaning})" if expected else ""
                self.fail(f"{self.keyword}= is not a parameter of {self.letter} in the "
                          f"{domain.value} domain{hint}")
        if isinstance(self.value, float) and self.letter != "C" and not (
                self.value != 0 and math.isfinite(1 / self.value)):
            self.fail(f"value must be non-zero and its inverse finite, got {self.value:g}")
        if self.temp is not None and self.dtemp != 0.0:
            log.warning("%s: %s: temp= gives its temperature; dtemp= is ignored, as ngspice "
                        "ignores it", self.location, self.name)

    def initial_conditions(self, s, uic):
        """A-type: its across variable; T-type: its through variable (``IC=`` or, with
        `uic`, None: at rest)."""
        if self.role is Role.DISSIPATOR or (self.initial is None and not uic):
            return []
        row = s.output_row()
        if self.role is Role.ACROSS_STORE:
            row.x.difference(*self.nodes, 1)
        else:
            row.x.add(s.branch(self), 1)
        return [(row, self.initial)]

    def analog(self, s) -> Value:
        """The electrical-analog value of one of the element's copies (``b`` → ``1/b``,
        ``k`` → ``1/k``)."""
        value = s.value(self.value)
        if self.keyword is None:
            return value
        return KEYWORDS[self.letter][self.port_domain(s.circuit.domain_of)].to_analog(value)

    def at_temperature(self, s, value: Value, coefficients: tuple | None = None,
                       tnom: float | None = None) -> Value:
        """`value` at the element's temperature, ``(1 + tc1 dT + tc2 dT^2)`` with dT from
        TNOM to its ``temp=``, or the circuit's ``.temp`` plus ``dtemp=``, and times its
        ``scale=``, as ngspice's (the coefficients: the line's, or those given)."""
        tc1, tc2 = (self.tc1, self.tc2) if coefficients is None else coefficients
        if tc1 or tc2:
            rise = self.temperature_rise(s, tnom)
            factor = 1 + s.value(tc1 or 0.0) * rise + s.value(tc2 or 0.0) * rise * rise
            if isinstance(factor, float) and not math.isfinite(factor):
                self.fail(f"its temperature factor 1 + tc1 dT + tc2 dT^2 is {factor:g} at "
                          f"dT = {rise:g}")
            value = value * factor
        return value * s.value(self.scale) if self.scale != 1.0 else value

    def temperature_rise(self, s, tnom: float | None = None) -> Value:
        """dT: from TNOM (`tnom`, else the circuit's) to the element's temperature."""
        options = s.circuit.options
        temperature = s.value(self.temp) if self.temp is not None else (
            options.temp + s.value(self.dtemp))
        return temperature - (options.tnom if tnom is None else tnom)

    def parallel(self, s, value: Value) -> Value:
        """The analog `value` of one copy made that of the element's copies in parallel: a
        resistance or an inductance divided by them, a capacitance multiplied."""
        if self.copies == 1.0:
            return value
        copies = self.positive(s, self.copies, "m")
        return value * copies if self.role is Role.ACROSS_STORE else value / copies


# SPICE's resistor model (``.model name R(...)``): its parameters, their other names
RESISTOR_MODELS = ("r", "res")
RESISTOR_MODEL = {"r": None, "rsh": 0.0, "narrow": 0.0, "short": 0.0, "defw": 10e-6,
                  "l": 10e-6, "tc1": 0.0, "tc2": 0.0, "tce": None, "tnom": None,
                  "kf": 0.0, "af": 1.0, "lf": 1.0, "wf": 1.0, "ef": 1.0, "bv_max": None}
RESISTOR_MODEL_ALIASES = {"res": "r", "resistance": "r", "dw": "narrow", "dlr": "short",
                          "tc1r": "tc1", "tc2r": "tc2", "w": "defw"}


# tc1, tc2, tce, ac, copies, scale and noisy unset
PLAIN_RESISTOR = (None, None, None, None, 1.0, 1.0, 1.0)


@dataclass(eq=False)
class Resistor(Passive):
    """A D-type element: resistor, damper, fluid or thermal resistance; as SPICE's, with
    temperature coefficients (``R (1 + tc1 dT + tc2 dT^2)``, or ``R 1.01^(tce dT)`` where
    ``tce=`` is given, dT from TNOM to the element's ``temp=``, or the circuit's ``.temp``
    plus ``dtemp=``), a resistance of its own in the AC analysis (``ac=``), and ngspice's
    ``scale=`` (times R), ``m=`` (that many in parallel) and ``noisy=0`` (no thermal
    noise).

    ``Rname n+ n- [value] model [l= w=]`` names SPICE's resistor model (``.model name
    R(rsh= narrow= short= r= tc1= tc2= tce= tnom= ...)``): without a value the resistance is
    ``rsh (l - 2 short) / (w - 2 narrow)``, or the model's ``r=``; the model's coefficients
    serve where the line gives none. The noise parameters (kf, af, lf, wf, ef) and bv_max
    are read and not used."""

    tce: Value | None = None
    ac: Value | None = None
    noisy: Value = 1.0   # ngspice's noisy=0: a resistor without thermal noise
    model: str | None = None
    l: Value | None = None   # noqa: E741 (SPICE's name of the length)
    w: Value | None = None

    prefix = "R"
    usage = ("Rname n+ n- value [tc1=|tc= tc2= tce= temp= dtemp= ac= m= scale= noisy=] | "
             "Rname n+ n- R=|resistance=|b=value | Rname n+ n- model")
    letter = "R"
    role = Role.DISSIPATOR
    spelled = {"resistance": "r"}
    extras = (*Passive.extras, "tce", "ac", "m", "noisy")
    aliases = {**Passive.aliases, "m": "copies"}

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Passive | ModelledElement | BehaviouralSource:
        cls.respell(reader)
        if (behavioural := _reading_unknowns(reader)) is not None:
            return _behavioural_resistor(reader, behavioural)
        fields, kinds = reader.card.fields, reader.scope.model_kinds
        at = next((i for i in (2, 3) if i < len(fields) and isinstance(fields[i], str)
                   and kinds.get(fields[i].lower()) in RESISTOR_MODELS
                   and not reader.names_parameter(fields[i])), None) if kinds else None
        if at is None:
            return super().from_fields(reader)
        nodes = reader.nodes("n+", "n-")
        value = reader.value() if at == 3 else None
        model = reader.model()
        reader.done()
        keys = {*cls.extras, "l", "w"}
        options = cls._options(reader, keys)
        reader.no_more_options(", ".join(f"{key}=" for key in sorted(keys)))
        return cls(reader.name, reader.location, nodes, value, None, None, model=model,
                   **options)

    def validate(self, circuit) -> None:
        super().validate(circuit)
        if self.model is None:
            return
        check_model(self, circuit, RESISTOR_MODELS, RESISTOR_MODEL, RESISTOR_MODEL_ALIASES,
                    "R")
        given = {RESISTOR_MODEL_ALIASES.get(k, k) for k in circuit.models[self.model].parameters}
        if self.value is None and "r" not in given and "rsh" not in given:
            self.fail(f"no resistance: give a value, or r= or rsh= in model '{self.model}'")

    def has_small_signal_values(self) -> bool:
        return self.ac is not None

    def resistance(self, s) -> Value:
        """The analog value (AC: ``ac=`` where given) at the element's temperature, scaled
        and divided among its `m` parallel copies, as ngspice's."""
        coefficients, tnom = (self.tc1, self.tc2, self.tce), None
        if self.model is not None:   # the model's coefficients where the line gives none
            model = model_values(self, s, RESISTOR_MODEL, RESISTOR_MODEL_ALIASES)
            coefficients = tuple(model[key] if own is None else own for own, key in
                                 zip(coefficients, ("tc1", "tc2", "tce")))
            tnom = model["tnom"]
        if s.small_signal and self.ac is not None:
            value = s.value(self.ac)
        elif self.value is not None:
            value = self.analog(s)
        else:
            value = self._model_resistance(s, model)
        tc1, tc2, tce = coefficients
        if tce is not None:   # in place of tc1 and tc2
            exponent = s.value(tce) * self.temperature_rise(s, tnom)
            try:
                value = value * 1.01 ** exponent
            except OverflowError:
                self.fail(f"its temperature factor 1.01^(tce dT) overflows at tce dT = "
                          f"{exponent:g}")
            tc1 = tc2 = None
        return self.parallel(s, self.at_temperature(s, value, (tc1, tc2), tnom))

    def _model_resistance(self, s, model) -> Value:
        """The resistance of the model's sheet (its ``rsh``, the line's ``l=`` and ``w=`` or
        the model's), else its ``r=``."""
        length = model["l"] if self.l is None else s.value(self.l)
        width = model["defw"] if self.w is None else s.value(self.w)
        if model["rsh"] * length * width > 0:
            length, width = length - 2 * model["short"], width - 2 * model["narrow"]
            if length < 0 or width < 0:
                self.fail(f"model '{self.model}': the sheet is {length:g} long and {width:g} "
                          "wide after short and narrow (l - 2 short, w - 2 narrow)")
            return length / width * model["rsh"] if width else math.inf   # ngspice's too
        if model["r"] is None:
            self.fail(f"no resistance: model '{self.model}' has rsh = 0 or l, w = 0, and no r=")
        return model["r"]

    def conductance(self, s) -> Value:
        """``1 / resistance``; a number that has none (a parameter made it 0) is an error
        at the element."""
        resistance = self.resistance(s)
        if isinstance(resistance, float) and not (resistance != 0
                                                  and math.isfinite(1 / resistance)):
            self.fail(f"the resistance is {resistance:g}: it must be non-zero with a finite "
                      "inverse (a 0 V source is a short)")
        return 1 / resistance

    def stamp(self, s) -> None:
        a, b = self.nodes
        if s.value(self.noisy) == 0:
            s.G.conductance(a, b, self.conductance(s))
        else:
            s.noisy_conductance(f"{self.name}_thermal", a, b, self.conductance(s),
                                **self._flicker(s))

    def plain_value(self) -> float | None:
        """The conductance of a resistor given by a number alone (checked non-zero with a
        finite inverse by `validate`)."""
        if type(self.value) is float and self.keyword is None and self.model is None and (
                self.tc1, self.tc2, self.tce, self.ac, self.copies, self.scale,
                self.noisy) == PLAIN_RESISTOR:
            return 1 / self.value
        return None

    def _flicker(self, s) -> dict:
        """The flicker noise of a resistor whose model gives KF, as ngspice's: over the
        effective area ``(l - 2 short)^lf (w - 2 narrow)^wf`` where the line gives l= or w=
        (1 elsewhere), per parallel copy (m)."""
        if self.model is None:
            return {}
        model = model_values(self, s, RESISTOR_MODEL, RESISTOR_MODEL_ALIASES)
        if not model["kf"]:
            return {}
        area = 1.0
        if self.l is not None or self.w is not None:
            length = model["l"] if self.l is None else s.value(self.l)
            width = model["defw"] if self.w is None else s.value(self.w)
            area = ((length - 2 * model["short"]) ** model["lf"]
                    * (width - 2 * model["narrow"]) ** model["wf"])
        return {"flicker_name": f"{self.name}_1overf", "kf": model["kf"], "af": model["af"],
                "ef": model["ef"], "copies": s.value(self.copies), "area": area}

    def through(self, s, row) -> None:
        row.x.difference(*self.nodes, self.conductance(s))


def _reading_unknowns(reader: FieldReader) -> Braced | None:
    """The value of an R line (bare, or ``r=``) where it is an expression of node voltages,
    currents or time (ngspice's behavioural resistor), else None."""
    fields = reader.card.fields
    given = reader.assigns.get("r")
    value = fields[2] if len(fields) > 2 else given.values[0] if given is not None else None
    if not isinstance(value, Braced):
        return None
    parsed = reader.scope.expression(value, time=True, probes=True)
    return value if parsed.probes or parsed.uses_time else None


def _behavioural_resistor(reader: FieldReader, value: Braced) -> BehaviouralSource:
    """``R n+ n- {f(V(...), time)}``: the current ``V(n+, n-) / f`` (a B source), its
    ``tc1=``/``tc2=`` scaling the resistance."""
    nodes = reader.nodes("n+", "n-")
    if reader.peek() is value:
        reader.take("value")
    else:
        reader.assigns.pop("r")
    reader.done()
    resistance = reader.behavioural(value)
    coefficients = reader.options(("tc1", "tc2"))
    reader.no_more_options("tc1=, tc2= (of a resistance that reads the circuit)")
    program = (Instruction("probe", Probe("V", nodes), 0), *resistance.program,
               Instruction("apply", "/", 0))
    current = Expression(program, resistance.text, resistance.location)
    return BehaviouralSource(reader.name, reader.location, nodes, "i", current, divided=True,
                             **coefficients)


@dataclass(eq=False)
class Capacitor(Passive):
    """An A-type element: capacitor, mass, inertia, fluid or thermal capacitance."""

    prefix = "C"
    usage = ("Cname n+ n- value [m=copies] [IC=across] [tc1= tc2= temp= dtemp= scale=] | "
             "Cname n+ n- C=|capacitance=|cap=value ... | Cname n+ 0 m=|J=|C=value [IC=across]")
    letter = "C"
    role = Role.ACROSS_STORE
    spelled = {"capacitance": "c", "cap": "c"}

    def validate(self, circuit) -> None:
        super().validate(circuit)
        if GROUND not in self.nodes and (
                domain := self.port_domain(circuit.domain_of)) is not Domain.ELECTRICAL:
            self.fail(f"in the {domain.value} domain an A-type element must have n- = 0 "
                      f"(it stores relative to the inertial frame), not {self.nodes[1]}")

    def stamp(self, s) -> None:
        a, b = self.nodes
        s.C.conductance(a, b, self.capacitance(s))

    def capacitance(self, s) -> Value:
        return self.parallel(s, self.at_temperature(s, self.analog(s)))

    def plain_value(self) -> float | None:
        """The capacitance of a capacitor given by a number alone (no keyword)."""
        return self.value if (type(self.value) is float and self.keyword is None
                              and (self.copies, self.tc1, self.tc2, self.scale)
                              == (1.0, None, None, 1.0)) else None

    def through(self, s, row) -> None:
        row.dx.difference(*self.nodes, self.capacitance(s))


@dataclass(eq=False)
class Inductor(Passive):
    """A T-type element: inductor, spring, torsional spring, inertance."""

    prefix = "L"
    usage = ("Lname n+ n- value [m=copies] [IC=through] [tc1= tc2= temp= dtemp= scale=] | "
             "Lname n+ n- L=|inductance=|k=|I=value [IC=through] | Lname n+ n- model")
    letter = "L"
    role = Role.THROUGH_STORE
    spelled = {"inductance": "l"}

    def validate(self, circuit) -> None:
        if self.port_domain(circuit.domain_of) is Domain.THERMAL:
            self.fail("the thermal domain has no T-type element (heat has no inertia)")
        super().validate(circuit)

    def branches(self):
        return ("",)

    def stamp(self, s) -> None:
        k = s.branch(self)
        s.G.incidence(*self.nodes, k)
        s.G.across(k, *self.nodes, -1)
        s.C.add(k, k, self.inductance(s))

    def inductance(self, s) -> Value:
        """Not 0: a T-type element of value 0 is a short that keeps a branch (scale=0, or a
        temperature factor 0, makes one as a bare 0 would)."""
        value = self.parallel(s, self.one_copy(s))
        if isinstance(value, float) and not (value != 0 and math.isfinite(1 / value)):
            self.fail(f"the value is {value:g} at its temperature, scaled: it must be non-zero "
                      "with a finite inverse")
        return value

    def one_copy(self, s) -> Value:
        """The inductance of one of its copies, at its temperature and scaled."""
        return self.at_temperature(s, self.analog(s))
