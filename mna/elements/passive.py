"""R, C and L in every domain: one class per SPICE letter, the domain table gives the meaning."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mna.domains import KEYWORDS, Domain, domain_of_keyword, keywords_of
from mna.elements.base import Element, Role, two_terminal_edge
from mna.elements.modelled import ModelledElement, names_a_model, types_of
from mna.expr import Value
from mna.netlist.fields import GROUND, FieldReader


@dataclass(eq=False)
class Passive(Element):
    """A two-terminal element given by its analog value or by its domain's physical keyword."""

    value: Value
    keyword: str | None
    initial: Value | None

    letter: ClassVar[str] = ""
    role: ClassVar[Role]
    keywords: ClassVar[frozenset[str]] = frozenset()   # the physical keywords of the letter
    extras: ClassVar[tuple[str, ...]] = ()     # other key= a subclass reads (`options`)
    aliases: ClassVar[dict[str, str]] = {}     # other names of some of those keys
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
        nodes = reader.nodes("n+", "n-")
        bare = reader.value() if reader.remaining() else None
        reader.done()
        given = [key for key in reader.assigns if key in cls.keywords]
        if len(given) > 1 or (given and bare is not None):
            reader.fail(f"{reader.name}: give one value (a bare analog value or one of "
                        f"{cls.allowed})", usage=True)
        options = {cls.aliases.get(key, key): value
                   for key, value in reader.options(cls.keys).items()}
        keyword = given[0] if given else None
        value = options.pop(keyword) if keyword else bare
        if value is None:
            reader.fail(f"{reader.card.head}: missing value", usage=True)
        reader.no_more_options(cls.allowed)
        initial = options.pop("ic", None)
        return cls(reader.name, reader.location, nodes, value, keyword, initial, **options)

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
        """The electrical-analog value of the element (``b`` → ``1/b``, ``k`` → ``1/k``)."""
        value = s.value(self.value)
        if self.keyword is None:
            return value
        return KEYWORDS[self.letter][self.port_domain(s.circuit.domain_of)].to_analog(value)


@dataclass(eq=False)
class Resistor(Passive):
    """A D-type element: resistor, damper, fluid or thermal resistance; as SPICE's, with
    temperature coefficients (``R (1 + tc1 dT + tc2 dT^2)``, or ``R 1.01^(tce dT)`` where
    ``tce=`` is given, dT from TNOM to the element's ``temp=``, or the circuit's ``.temp``
    plus ``dtemp=``), a resistance of its own in the AC analysis (``ac=``), and ngspice's
    ``scale=`` (times R) and ``m=`` (that many in parallel)."""

    tc1: Value = 0.0
    tc2: Value = 0.0
    tce: Value | None = None
    temp: Value | None = None
    dtemp: Value = 0.0
    ac: Value | None = None
    m: Value = 1.0
    scale: Value = 1.0

    prefix = "R"
    usage = ("Rname n+ n- value [tc1=|tc= tc2= tce= temp= dtemp= ac= m= scale=] | "
             "Rname n+ n- R=|b=value | Rname n+ n- model")
    letter = "R"
    role = Role.DISSIPATOR
    extras = ("tc1", "tc", "tc2", "tce", "temp", "dtemp", "ac", "m", "scale")
    aliases = {"tc": "tc1"}

    def has_small_signal_values(self) -> bool:
        return self.ac is not None

    def resistance(self, s) -> Value:
        """The analog value (AC: ``ac=`` where given) at the element's temperature, scaled
        and divided among its `m` parallel copies, as ngspice's."""
        value = s.value(self.ac) if s.small_signal and self.ac is not None else (
            self.analog(s))
        if (self.tc1, self.tc2, self.tce) != (0.0, 0.0, None):
            options = s.circuit.options
            temperature = s.value(self.temp) if self.temp is not None else (
                options.temp + s.value(self.dtemp))
            rise = temperature - options.tnom
            value = value * (1.01 ** (s.value(self.tce) * rise) if self.tce is not None
                             else 1 + s.value(self.tc1) * rise + s.value(self.tc2) * rise**2)
        if (self.scale, self.m) != (1.0, 1.0):
            value = value * s.value(self.scale) / s.value(self.m)
        return value

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
        s.G.conductance(a, b, self.conductance(s))

    def through(self, s, row) -> None:
        row.x.difference(*self.nodes, self.conductance(s))


@dataclass(eq=False)
class Capacitor(Passive):
    """An A-type element: capacitor, mass, inertia, fluid or thermal capacitance."""

    prefix = "C"
    usage = "Cname n+ n- value [IC=across] | Cname n+ 0 m=|J=|C=value [IC=across]"
    letter = "C"
    role = Role.ACROSS_STORE

    def validate(self, circuit) -> None:
        super().validate(circuit)
        if GROUND not in self.nodes and (
                domain := self.port_domain(circuit.domain_of)) is not Domain.ELECTRICAL:
            self.fail(f"in the {domain.value} domain an A-type element must have n- = 0 "
                      f"(it stores relative to the inertial frame), not {self.nodes[1]}")

    def stamp(self, s) -> None:
        a, b = self.nodes
        s.C.conductance(a, b, self.analog(s))

    def through(self, s, row) -> None:
        row.dx.difference(*self.nodes, self.analog(s))


@dataclass(eq=False)
class Inductor(Passive):
    """A T-type element: inductor, spring, torsional spring, inertance."""

    prefix = "L"
    usage = ("Lname n+ n- value [IC=through] | Lname n+ n- L=|k=|I=value [IC=through] | "
             "Lname n+ n- model")
    letter = "L"
    role = Role.THROUGH_STORE

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
        s.C.add(k, k, self.analog(s))
