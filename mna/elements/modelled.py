"""Nonlinear elements named by a ``.model``: the line, the model types and their parameters.

An R or L line whose value is a model name (``Rb wheel 0 brake``), and the switches ``S`` and
``W``, are elements of the model's type: ``.model brake friction(fc=20 fs=25)``. A model type
(`ModelType`, one small module each: `friction`, `fluid_valves`, `heat_transfer`,
`contact`, `switch`) declares the letter of the lines that name it, the domains it belongs
to and its parameters (`Parameter`: unit, default, range), and stamps an element: its linear
part as any element does, its nonlinear law as an instance of its `Device` kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NoReturn

from mna.domains import Domain, across_unit, through_unit
from mna.elements.base import Element, Role, two_terminal_edge
from mna.errors import NetlistError
from mna.expr import Value
from mna.netlist.fields import GROUND
from mna.units import number

if TYPE_CHECKING:
    from mna.netlist.fields import FieldReader
    from mna.netlist.model import SourceLocation

MECHANICAL = frozenset({Domain.TRANSLATIONAL, Domain.ROTATIONAL})
DISPLACEMENT = {Domain.TRANSLATIONAL: "m", Domain.ROTATIONAL: "rad"}
ROLES = {"R": Role.DISSIPATOR, "L": Role.THROUGH_STORE}


@dataclass(frozen=True)
class Parameter:
    """A model parameter: its unit (``{across}``, ``{through}`` and ``{displacement}`` stand
    for the element's domain's), its default (a number, the name of the parameter whose value
    it takes, NaN: derived from the others, or None: required) and the smallest value it may
    take (`above`: strictly)."""

    name: str
    unit: str
    default: float | str | None = None
    low: float = -math.inf
    above: bool = False
    meaning: str = ""

    def unit_in(self, domain: Domain) -> str:
        return self.unit.format(across=across_unit(domain), through=through_unit(domain),
                                displacement=DISPLACEMENT.get(domain, "?"))

    def problem(self, value: float) -> str | None:
        """What is wrong with `value`, or None (a default of NaN: derived when stamped)."""
        if math.isnan(value) and isinstance(self.default, float) and math.isnan(self.default):
            return None
        if not math.isfinite(value):
            return f"{self.name} must be finite, got {value:g}"
        if value < self.low or (self.above and value == self.low):
            relation = ">" if self.above else ">="
            return f"{self.name} must be {relation} {self.low:g}, got {value:g}"
        return None


class ModelType:
    """A ``.model`` type of nonlinear element; subclasses register by `kind`."""

    kind: ClassVar[str] = ""
    letter: ClassVar[str] = ""             # of the lines that name it: R, L, S or W
    domains: ClassVar[frozenset[Domain] | None] = None   # None: any domain
    parameters: ClassVar[tuple[Parameter, ...]] = ()
    reports: ClassVar[bool] = False        # whether I(name) is a default output
    registry: ClassVar[dict[str, type[ModelType]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("kind"):
            if cls.kind in ModelType.registry:
                raise TypeError(f"two model types '{cls.kind}'")
            ModelType.registry[cls.kind] = cls

    @classmethod
    def relations(cls, p: dict[str, float]) -> str | None:
        """What is wrong between the parameters' values (all numbers), or None."""
        return None

    @classmethod
    def branches(cls, element: ModelledElement) -> tuple[str, ...]:
        return ()

    @classmethod
    def stamp(cls, element: ModelledElement, s, p: dict[str, float]) -> None:
        raise NotImplementedError

    @classmethod
    def branch_unit(cls, port: str, domain: Domain) -> str | None:
        """The unit of the extra unknown `port` where it is no through variable."""
        return None

    @classmethod
    def initial_conditions(cls, element: ModelledElement, s, values: dict[str, Value]):
        return []

    @classmethod
    def values(cls, given: dict[str, Value], evaluate) -> dict[str, Value]:
        """Every parameter's value: given (through `evaluate`) or its default."""
        p: dict[str, Value] = {}
        for parameter in cls.parameters:
            if parameter.name in given:
                p[parameter.name] = evaluate(given[parameter.name])
            elif isinstance(parameter.default, str):
                p[parameter.name] = p[parameter.default]
            else:
                p[parameter.name] = parameter.default
        return p

    @classmethod
    def problem(cls, p: dict[str, Value]) -> str | None:
        """What is wrong with the values `p` (those not yet numbers are not checked)."""
        for parameter in cls.parameters:
            value = p[parameter.name]
            if value is None:
                return f"{parameter.name}= is required"
            if isinstance(value, float) and (problem := parameter.problem(value)):
                return problem
        if all(isinstance(value, float) for value in p.values()):
            return cls.relations(p)
        return None

    @classmethod
    def usage(cls) -> str:
        return f"{cls.kind}({' '.join(f'{p.name}=' for p in cls.parameters)})"


def types_of(letter: str) -> list[str]:
    """The model types that lines of `letter` name."""
    return sorted(kind for kind, law in ModelType.registry.items() if law.letter == letter)


def names_a_model(reader: FieldReader, index: int) -> bool:
    """Whether positional field `index` of the card is a word that is no number (a model's
    name: it starts with a letter) and names no parameter (ngspice reads that as its
    value, even where a model has the name)."""
    fields = reader.card.fields
    if index >= len(fields) or not isinstance(word := fields[index], str):
        return False
    return word[:1].isalpha() and number(word) is None and not reader.names_parameter(word)


@dataclass(eq=False)
class ModelledElement(Element):
    """An element whose law is its ``.model``'s type (`law`, found when the circuit is
    validated); `place` is where the model's name stands."""

    model: str
    letter: str
    place: SourceLocation

    _law: ClassVar[type[ModelType] | None] = None   # set by `validate`
    domain: ClassVar[Domain] = Domain.ELECTRICAL     # of its nodes, set by `validate`

    @classmethod
    def read(cls, reader: FieldReader, letter: str) -> ModelledElement:
        """``Xname n+ n- model`` of an R or L line (`letter`)."""
        nodes = reader.nodes("n+", "n-")
        model = reader.model()
        place = reader.place()
        reader.done()
        reader.no_more_options()
        return cls(reader.name, reader.location, nodes, model, letter, place)

    @property
    def law(self) -> type[ModelType]:
        if self._law is None:
            self.fail("used before its model was looked up (validate the circuit first)")
        return self._law

    def edges(self):
        return two_terminal_edge(self, ROLES[self.letter])

    def domain_groups(self):
        return [self.nodes[:2]]

    def validate(self, circuit) -> None:
        model = circuit.models.get(self.model)
        if model is None:
            self._undefined(circuit)
        law = ModelType.registry.get(model.kind)
        if law is None or law.letter != self.letter:
            what = ("not a model type of mna" if law is None
                    else f"a model type of {law.letter} lines")
            self.fail(f"model '{model.name}' is of type {model.kind}, {what}; {self.letter} "
                      f"lines name models of type {', '.join(types_of(self.letter)) or 'none'}")
        domain = self.port_domain(circuit.domain_of)
        if law.domains is not None and domain not in law.domains:
            allowed = sorted(d.value for d in law.domains)
            nodes = " ".join(n for n in self.nodes[:2] if n != GROUND)
            self.fail(f"{model.kind} elements belong to the {' or '.join(allowed)} domain, "
                      f"but its nodes are {domain.value} (place them with .domain {allowed[0]} "
                      f"{nodes}, or join them to an element of that domain)")
        unknown = set(model.parameters) - {p.name for p in law.parameters}
        if unknown:
            self.fail(f"model '{model.name}' has unknown parameters {', '.join(sorted(unknown))} "
                      f"(known: {', '.join(p.name for p in law.parameters)})")
        if problem := law.problem(law.values(model.parameters, lambda value: value)):
            self.fail(f"model '{model.name}': {problem}")
        self._law, self.domain = law, domain

    def _undefined(self, circuit) -> NoReturn:
        """No model of that name: on an R or L line, the word may be a mistyped value."""
        if self.letter not in ROLES:
            self.fail(f"undefined model '{self.model}'")
        hint = (f" (write {{{self.model}}} for an expression)" if self.model[:1].isalpha()
                else "")
        kinds = types_of(self.letter)
        raise NetlistError(f"bad number '{self.model}' for value{hint}, or undefined model "
                           f"(add .model {self.model} {kinds[0]}(...); {self.letter} lines name "
                           f"models of type {', '.join(kinds)})", self.place)

    def parameters(self, s) -> dict[str, float]:
        """The model's parameter values as numbers, checked (a ``.step`` may change them)."""
        model = s.circuit.models[self.model]
        p = self.law.values(model.parameters, lambda value: float(s.value(value)))
        if problem := self.law.problem(p):
            self.fail(f"model '{model.name}': {problem}")
        return p

    def branches(self):
        return self.law.branches(self)

    def branch_unit(self, port: str, domain_of) -> str:
        return self.law.branch_unit(port, self.domain) or super().branch_unit(port, domain_of)

    def reports_through(self) -> bool:
        return self.law.reports

    def stamp(self, s) -> None:
        self.law.stamp(self, s, self.parameters(s))

    def through(self, s, row) -> None:
        if "" not in self.branches():
            self.fail(f"the through variable of a {self.law.kind} element is not a linear "
                      "function of the unknowns; probe it with a 0-valued across source in "
                      "series")
        row.x.add(s.branch(self), 1)

    def initial_conditions(self, s, uic):
        return self.law.initial_conditions(self, s, s.circuit.models[self.model].parameters)

