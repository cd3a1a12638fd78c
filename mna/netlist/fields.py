"""Reading a card's fields in the scope of its (sub)circuit, with errors that show the usage.

Elements and analyses declare their syntax by what they ask of a `FieldReader`; it knows the
hierarchical name prefix, the node map of a subcircuit instance and the parameters in scope.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from mna.errors import NetlistError
from mna.expr import parse_expression, probe
from mna.netlist.model import Assign, Braced, Card, Field, SourceLocation, Word
from mna.netlist.parser import field_text
from mna.units import parse_number

if TYPE_CHECKING:
    import sympy

Value: TypeAlias = "float | sympy.Expr"
GROUND = "0"
GROUND_ALIASES = {"0", "gnd"}


@dataclass(frozen=True)
class Scope:
    """Where a card stands: top level, or inside instance ``X1`` of a subcircuit."""

    prefix: str = ""
    nodes: dict[str, str] = field(default_factory=dict)
    substitutions: dict[sympy.Symbol, Value] = field(default_factory=dict)
    known: frozenset[str] = frozenset()

    def node(self, word: Word) -> str:
        key = word.key
        if key in GROUND_ALIASES:
            return GROUND
        return self.nodes.get(key, self.prefix.lower() + key)

    def name(self, word: Word) -> str:
        return self.prefix + word.text


class FieldReader:
    """Hands out a card's fields one by one; any misuse is an error with the card's usage."""

    def __init__(
        self,
        card: Card,
        scope: Scope,
        usage: str,
        note_node: Callable[[str, Word, str], None],
    ):
        self.card = card
        self.scope = scope
        self.usage = usage
        self._note_node = note_node
        if Assign in map(type, card.fields):
            self.positional = [f for f in card.fields if not isinstance(f, Assign)]
            self.assigns = {self._assign_key(a): a for a in card.fields if isinstance(a, Assign)}
        else:   # most cards (``R1 a b 1k``): no key=value, so the fields are as they are
            self.positional, self.assigns = card.fields, {}
        self.index = 0

    @property
    def name(self) -> str:
        return self.scope.name(self.card.head)

    @property
    def location(self) -> SourceLocation:
        return self.card.location

    def fail(self, message: str, location: SourceLocation | None = None, usage: bool = False):
        suffix = f"\n  usage: {self.usage}" if usage else ""
        raise NetlistError(message + suffix, location or self.card.location)

    # -- positional fields ------------------------------------------------------------------
    def remaining(self) -> int:
        return len(self.positional) - self.index

    def peek(self) -> Field | None:
        return self.positional[self.index] if self.index < len(self.positional) else None

    def take(self, what: str) -> Field:
        if self.index >= len(self.positional):
            self.fail(f"{self.card.head.text}: missing {what}", self._end_location(), usage=True)
        field_ = self.positional[self.index]
        self.index += 1
        return field_

    def word(self, what: str) -> Word:
        field_ = self.take(what)
        if not isinstance(field_, Word):
            self.fail(f"expected {what}, found '{field_text(field_)}'", field_.location, usage=True)
        return field_

    def node(self, what: str = "node") -> str:
        word = self.word(what)
        key = self.scope.node(word)
        self._note_node(key, word, self.scope.prefix)
        return key

    def element(self, what: str) -> str:
        """A reference to another element (``Vctrl`` of F/H, inductors of K), in scope."""
        return self.scope.name(self.word(what)).lower()

    def value(self, what: str = "value") -> Value:
        return self.evaluate(self.take(what), what)

    def done(self) -> None:
        if self.index < len(self.positional):
            extra = self.positional[self.index]
            self.fail(f"unexpected field '{field_text(extra)}'", extra.location, usage=True)

    def keyword(self, *choices: str) -> str | None:
        """Take the next field if it is one of `choices` (case-insensitive)."""
        field_ = self.peek()
        if isinstance(field_, Word) and field_.key in choices:
            self.index += 1
            return field_.key
        return None

    def _end_location(self) -> SourceLocation:
        last = self.card.fields[-1] if self.card.fields else self.card.head
        loc = last.location
        return loc.shifted(len(field_text(last) if not isinstance(last, Word) else last.text) + 1)

    # -- key=value fields --------------------------------------------------------------------
    @staticmethod
    def _assign_key(assign: Assign) -> str:
        return assign.key.key if isinstance(assign.key, Word) else field_text(assign.key).lower()

    def option(self, key: str) -> Value | None:
        """The value of ``key=value``, or None when absent."""
        assign = self.assigns.pop(key, None)
        if assign is None:
            return None
        if len(assign.values) != 1:
            self.fail(f"{key}= takes one value", assign.location)
        return self.evaluate(assign.values[0], key)

    def no_more_options(self, allowed: str = "") -> None:
        for key, assign in self.assigns.items():
            hint = f" (allowed: {allowed})" if allowed else ""
            self.fail(f"unknown parameter '{key}='{hint}", assign.location, usage=True)

    # -- values -------------------------------------------------------------------------------
    def evaluate(self, field_: Field, what: str, *, time: bool = False) -> Value:
        """A number or an ``{expression}`` in the parameters in scope."""
        if isinstance(field_, Word):
            number = parse_number(field_.text)
            if number is None:
                hint = (" (write {" + field_.text + "} for an expression)"
                        if field_.text[:1].isalpha() else "")
                self.fail(f"bad number '{field_.text}' for {what}{hint}", field_.location)
            return number
        if isinstance(field_, Braced):
            return self.expression(field_, time=time)
        self.fail(f"expected {what}, found '{field_text(field_)}'", field_.location, usage=True)

    def expression(self, braced: Braced, *, time: bool = False) -> Value:
        parsed = self._parsed(braced, time=time, probes=False)
        try:
            return as_value(self._in_scope(parsed.value))
        except ValueError as error:
            raise NetlistError(str(error), braced.location) from None

    def behavioural(self, braced: Braced):
        """An expression with ``time`` and probes; probes renamed to the nodes and elements in
        scope. Returns the expression and ``{symbol: (kind, keys, location)}``."""
        parsed = self._parsed(braced, time=True, probes=True)
        probes, renames = {}, {}
        for symbol, (kind, names, location) in parsed.probes.items():
            words = [Word.at(n, location) for n in names]
            if kind == "V":
                keys = tuple(self.scope.node(w) for w in words)
            else:
                keys = (self.scope.name(words[0]).lower(),)
            scoped = probe(kind, *keys)
            renames[symbol] = scoped
            probes[scoped] = (kind, keys, location)
        return self._in_scope(parsed.value).xreplace(renames), probes

    def _parsed(self, braced: Braced, *, time: bool, probes: bool):
        start = expression_start(braced)
        parsed = parse_expression(braced.text, start, time=time, probes=probes)
        for name, location in parsed.names.items():
            if name not in self.scope.known:
                raise NetlistError(f"undefined parameter '{name}'", location)
        return parsed

    def _in_scope(self, value):
        return value.xreplace(self.scope.substitutions) if self.scope.substitutions else value


def expression_start(braced: Braced) -> SourceLocation:
    """Where the expression text starts: after the '{' when it was written with braces."""
    column = braced.location.column
    has_brace = braced.location.text[column - 1 : column] == "{"
    return braced.location.shifted(1) if has_brace else braced.location


def as_value(expression) -> Value:
    """A float when the expression holds no symbol; the sympy expression otherwise.

    Raises ValueError when a constant expression is not a finite real number.
    """
    if isinstance(expression, float):
        return expression
    if expression.free_symbols:
        return expression
    return finite_real(expression)


def finite_real(expression) -> float:
    """The value of a constant sympy expression, refusing complex, infinite and undefined ones."""
    value = complex(expression)
    if not (math.isfinite(value.real) and math.isfinite(value.imag)):
        raise ValueError(f"the value {expression} is not a finite number")
    if value.imag:
        raise ValueError(f"the value {expression} is complex ({value:g}), not real")
    return value.real
