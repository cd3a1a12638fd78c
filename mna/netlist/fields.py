"""Reading a card's fields in the scope of its (sub)circuit, with errors that show the usage.

Elements and analysis cards declare their syntax by what they ask of a `FieldReader`; it knows
the hierarchical name prefix, the node map of a subcircuit instance, the parameters in scope
and the ``.func`` definitions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal, NoReturn

from mna.errors import NetlistError
from mna.expr import (
    Expression,
    Instruction,
    Probe,
    RandomCalls,
    UserFunction,
    Value,
    parse_expression,
)
from mna.netlist.model import Assign, Braced, Call, Card, Field, SourceLocation, field_text
from mna.units import number, read_number

GROUND = "0"
TEMPERATURE = "temper"   # ngspice's name of the circuit's temperature (°C) in expressions
GROUND_ALIASES = frozenset({"0", "gnd"})

TERMINAL_CURRENT = re.compile(r"@([^\s\[\]@]+)\[(\w+)\]")   # @q1[ic], @x1.d1[id]

NoteNode = Callable[[str, str, Card, int], None]   # (key, name as written, card, field index)


@dataclass(frozen=True)
class Scope:
    """Where a card stands: top level, or inside instance ``X1`` of a subcircuit.

    `substitutions` are the values of the instance's parameters; `known` every parameter
    name an expression may read; `globals` the ``.global`` nodes, the same in every instance;
    `random` collects the random function calls, one parameter per call in each instance;
    `model_kinds` the type of every ``.model`` of the netlist by name (an R line that names
    a resistor model reads as SPICE's, one that names a friction model as mna's); `models`
    the circuit's key of each model defined in the subcircuits around (local to them, as in
    ngspice), by name; `copies` the product of the ``m=`` of the instances around (ngspice's
    multiplier: the instance stands for that many in parallel).
    """

    prefix: str = ""
    nodes: Mapping[str, str] = field(default_factory=dict)
    substitutions: Mapping[str, Value] = field(default_factory=dict)
    known: frozenset[str] = frozenset()
    functions: Mapping[str, UserFunction] = field(default_factory=dict)
    globals: frozenset[str] = frozenset()
    random: RandomCalls | None = None
    model_kinds: Mapping[str, str] = field(default_factory=dict)
    models: Mapping[str, str] = field(default_factory=dict)
    copies: float = 1.0

    def node(self, word: str) -> str:
        """The circuit's key of the node named `word` here."""
        key = word.lower()
        if key in GROUND_ALIASES:
            return GROUND
        if not self.prefix or key in self.globals:
            return key
        return self.nodes.get(key) or self.prefix.lower() + key

    def name(self, word: str) -> str:
        """The hierarchical name of element `word` here (``X1.R2``)."""
        return self.prefix + word

    def expression(self, braced: Braced, *, time: bool = False, probes: bool = False,
                   condition: bool = False) -> Expression:
        """`braced` parsed here: its names must be parameters in scope."""
        parsed = parse_expression(braced.text, braced.location, time=time, probes=probes,
                                  functions=self.functions, condition=condition)
        for name, location in parsed.names.items():
            if name not in self.known and name not in ("pi", "e"):
                raise NetlistError(f"undefined parameter '{name}'", location)
        return parsed

    def value(self, expression: Expression) -> Value:
        """`expression` with this instance's parameters put in (a float when that leaves it
        nothing to read), each random call made a parameter of its own."""
        value = expression.substitute(self.substitutions)
        return value if self.random is None else self.random.hoist(value)


class FieldReader:
    """Hands out a card's fields one by one; any misuse is an error with the card's usage.

    `name` is the card's element name in scope (``X1.R2``), `location` the card's place.
    """

    def __init__(self, card: Card, scope: Scope, usage: str, note_node: NoteNode):
        self.card = card
        self.scope = scope
        self.usage = usage
        self._note_node = note_node
        self.name = scope.name(card.head)
        self.location = card.location
        self.assigns = {}
        for assign in card.options:
            key = assign.name.lower()
            if key in self.assigns and card.key[0] != ".":   # an element's key given twice
                raise NetlistError(f"{assign.name}= is given twice", assign.location)
            self.assigns[key] = assign
        self.index = 0

    def spelled_out(self, keys: Collection[str]) -> FieldReader:
        """The reader of this card with its ``key=value`` fields of `keys` read as the words
        ``key value ...`` where they stand (ngspice reads a source's ``dc=1`` and ``ac = 1``
        as ``dc 1`` and ``ac 1``)."""
        card = self.card
        moved = [assign for assign in card.options if assign.name.lower() in keys]
        if not moved:
            return self
        runs = [(card.place(i), (field,), (card.place(i),)) for i, field in
                enumerate(card.fields)]
        runs += [(a.location, (a.name, *a.values), (a.location, *a.places)) for a in moved]
        runs.sort(key=lambda run: (run[0].line, run[0].column))
        spelled = card._replace(
            fields=tuple(field for _, fields, _ in runs for field in fields),
            places=tuple(place for _, _, places in runs for place in places),
            options=tuple(assign for assign in card.options if assign not in moved))
        return FieldReader(spelled, self.scope, self.usage, self._note_node)

    def fail(self, message: str, location: SourceLocation | None = None,
             usage: bool = False) -> NoReturn:
        suffix = f"\n  usage: {self.usage}" if usage else ""
        raise NetlistError(message + suffix, location or self.card.location)

    # -- positional fields ------------------------------------------------------------------
    def remaining(self) -> int:
        return len(self.card.fields) - self.index

    def peek(self) -> Field | None:
        return self.card.fields[self.index] if self.index < len(self.card.fields) else None

    def place(self, index: int | None = None) -> SourceLocation:
        """Where positional field `index` (default: the last one taken) stands."""
        return self.card.place(self.index - 1 if index is None else index)

    def take(self, what: str) -> Field:
        if self.index >= len(self.card.fields):
            self.fail(f"{self.card.head}: missing {what}", self.card.end(), usage=True)
        self.index += 1
        return self.card.fields[self.index - 1]

    def word(self, what: str) -> str:
        taken = self.take(what)
        if not isinstance(taken, str):
            self.fail(f"expected {what}, found '{field_text(taken)}'", self.place(), usage=True)
        return taken

    def nodes(self, *ports: str) -> tuple[str, ...]:
        """The next fields, one per port (what it is, for messages), as the keys of their
        nodes in scope; each node is noted where it is first named."""
        scope = self.scope
        keys = []
        for port in ports:
            word = self.word(port)
            key = scope.node(word)
            if key != GROUND:
                self._note_node(key, scope.prefix + word, self.card, self.index - 1)
            keys.append(key)
        return tuple(keys)

    def node(self, what: str = "node") -> str:
        return self.nodes(what)[0]

    def model(self) -> str:
        """The next field, a model's name, as the circuit's key of that model in scope."""
        word = self.word("model name").lower()
        return self.scope.models.get(word, word)

    def element(self, what: str) -> str:
        """A reference to another element (``Vctrl`` of F/H, inductors of K), in scope."""
        return self.scope.name(self.word(what)).lower()

    def value(self, what: str = "value") -> Value:
        taken = self.take(what)
        if isinstance(taken, str) and (plain := plain_number(taken)) is not None:
            return plain   # its place is looked up only for a message
        return self.evaluate(taken, what, self.place())

    def done(self) -> None:
        if self.index < len(self.card.fields):
            extra = self.card.fields[self.index]
            self.fail(f"unexpected field '{field_text(extra)}'", self.place(self.index),
                      usage=True)

    def flag(self, word: str) -> bool:
        """Whether the next field is `word` (case-insensitive), taking it if so."""
        return self.keyword(word) is not None

    def keyword(self, *choices: str) -> str | None:
        """Take the next field if it is one of `choices` (case-insensitive)."""
        following = self.peek()
        if isinstance(following, str) and following.lower() in choices:
            self.index += 1
            return following.lower()
        return None

    # -- key=value fields --------------------------------------------------------------------
    def option(self, key: str, what: str | None = None) -> Value | None:
        """The value of ``key=value``, or None when absent."""
        assign = self.assigns.pop(key, None)
        if assign is None:
            return None
        if len(assign.values) != 1:
            self.fail(f"{key}= takes one value", assign.location)
        return self.evaluate(assign.values[0], what or key, assign.places[0])

    def copies(self) -> Value | None:
        """The line's ``m=`` (ngspice's multiplier: that many in parallel), or None; a
        number must be positive."""
        assign = self.assigns.get("m")
        value = self.option("m", "multiplier m")
        if isinstance(value, float) and not 0 < value < math.inf:
            self.fail(f"m= must be positive, got {value:g}", assign.places[0])
        return value

    def options(self, keys: Collection[str]) -> dict[str, Value]:
        """The values of the ``key=value`` fields whose key is one of `keys`, in the card's
        order (the others are left to `no_more_options`)."""
        return {key: self.option(key) for key in tuple(self.assigns) if key in keys}

    def no_more_options(self, allowed: str = "") -> None:
        for key, assign in self.assigns.items():
            hint = f" (allowed: {allowed})" if allowed else ""
            self.fail(f"unknown parameter '{key}='{hint}", assign.location, usage=True)

    # -- values -------------------------------------------------------------------------------
    def evaluate(self, item: Field, what: str, place: SourceLocation, *,
                 time: bool = False) -> Value:
        """A number or an ``{expression}`` in the parameters in scope, or a parameter's
        name alone (`names_parameter`)."""
        if isinstance(item, str):
            if self.names_parameter(item):
                return self.scope.value(self.scope.expression(Braced(item, place), time=time))
            return read_number(item, place, what)
        if isinstance(item, Braced):
            return self.scope.value(self.scope.expression(item, time=time))
        self.fail(f"expected {what}, found '{field_text(item)}'", place, usage=True)

    def names_parameter(self, word: str) -> bool:
        """Whether `word` alone names a parameter in scope, which stands for its value there
        as ngspice reads ``R1 a b rval`` (``temper`` only in braces, as there)."""
        key = word.lower()
        return key != TEMPERATURE and (key in self.scope.known or key in self.scope.substitutions)

    def behavioural(self, braced: Braced) -> Expression:
        """An expression of ``time`` and probes, its probes naming the nodes and elements in
        scope (keys as in the circuit)."""
        parsed = self.scope.expression(braced, time=True, probes=True)
        value = self.scope.value(parsed)
        if not isinstance(value, Expression):   # nothing left to read: a constant
            return Expression((Instruction("number", value, 0),), braced.text, braced.location)
        program = []
        for step in value.program:
            if step.code == "probe":
                kind, names = step.argument
                keys = (tuple(self.scope.node(n) for n in names) if kind == "V"
                        else (self.scope.name(names[0]).lower(),))
                step = step._replace(argument=Probe(kind, keys))
            program.append(step)
        return Expression(tuple(program), value.text, value.location)

    def call_arguments(self, call: Call, what: str, *, time: bool = False) -> tuple[Value, ...]:
        """The values of `call`'s arguments (a waveform's, say)."""
        return tuple(self.evaluate(argument, what, place, time=time)
                     for argument, place in zip(call.args, call.places))


def plain_number(word: str) -> float | None:
    """`word` as a finite number with no stray letters after it, else None (a word that
    needs `FieldReader.evaluate`, which warns of the letters or refuses it)."""
    parsed = number(word)
    if parsed is not None and not parsed[1] and math.isfinite(parsed[0]):
        return parsed[0]
    return None


def assignment(item: Field, location: SourceLocation) -> Assign:
    """`item` when it is a ``name=value``; an error otherwise."""
    if not isinstance(item, Assign) or not isinstance(item.key, str) or len(item.values) != 1:
        raise NetlistError(f"expected name=value, found '{field_text(item)}'", location)
    return item


# SPICE's parts of a probe (``VDB(out)``, ``IP(R1)``): of a phasor in .ac, of a real value
# elsewhere (magnitude, decibels, phase in radians, real and imaginary parts)
PARTS = ("M", "DB", "P", "R", "I")


@dataclass(frozen=True)
class OutputName:
    """A requested output: ``V(n)``, ``V(a,b)`` or ``I(name)`` with keys as in the circuit
    (`part`: one of `PARTS` of it, as in ``VDB(out)``), or (kind ``E``) an expression of such
    probes, computed from their values."""

    kind: Literal["V", "I", "E"]
    keys: tuple[str, ...]
    location: SourceLocation | None = None
    expression: Expression | None = None
    part: str = ""

    def probes(self) -> tuple[OutputName, ...]:
        """The probes an output reads: itself, the whole of the probe it takes a part of, or
        those of its expression."""
        if self.expression is None:
            return (OutputName(self.kind, self.keys, self.location),) if self.part else (self,)
        return tuple(OutputName(probe.kind, probe.names, place)
                     for probe, place in self.expression.probes.items())


def names_output(item: Field) -> bool:
    """Whether `item` is written as an output: ``V(...)``, ``I(...)`` or ``@q1[ic]``."""
    return isinstance(item, Call) or (isinstance(item, str)
                                      and TERMINAL_CURRENT.fullmatch(item) is not None)


def read_output(item: Field, scope: Scope, place: SourceLocation,
                parts: bool = False) -> OutputName:
    """The output `item` names (`names_output`): ``V(n)``, ``V(a,b)``, ``I(name)`` (with
    `parts`, also ``VDB(out)`` ...) or a device's terminal current as ngspice names it
    (``@q1[ic]``, ``@x1.d1[id]``)."""
    if isinstance(item, str) and (found := TERMINAL_CURRENT.fullmatch(item)):
        return OutputName("I", (scope.name(found[1]).lower(), found[2].lower()), place)
    if not isinstance(item, Call):
        raise NetlistError(f"expected V(node), V(a,b), I(element) or @device[current], found "
                           f"'{field_text(item)}'", place)
    return output_name(item, scope, parts)


def output_name(call: Call, scope: Scope, parts: bool = False) -> OutputName:
    """``V(n)``, ``V(a,b)`` or ``I(name)`` written in `scope` as an `OutputName`; with
    `parts`, also a part of one (``VDB(out)``: an output to print or measure, which no
    linear model, initial condition or Fourier analysis takes)."""
    kind, part = call.name.upper()[:1], call.name.upper()[1:]
    allowed = ("", *PARTS) if parts else ("",)
    if call.args and all(isinstance(a, str) for a in call.args) and part in allowed:
        if kind == "V" and len(call.args) <= 2:
            return OutputName("V", tuple(scope.node(a) for a in call.args), call.location,
                              part=part)
        if kind == "I" and len(call.args) == 1:   # I(name), or I(name:port) of an extra unknown
            name, _, port = call.args[0].partition(":")
            keys = (scope.name(name).lower(), *((port.lower(),) if port else ()))
            return OutputName("I", keys, call.location, part=part)
    also = " (or a part of one: VM, VDB, VP, VR, VI)" if parts else ""
    raise NetlistError(f"expected V(node), V(a,b) or I(element){also}, found "
                       f"'{field_text(call)}'", call.location)
