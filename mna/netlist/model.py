"""What the parser hands on: cards of fields with their places in the source, nothing evaluated.

A word is a plain ``str``. Every container of fields (a `Card`, a `Call`, an `Assign`) keeps
the places of its items beside them; a card that is one physical line of words only, as
most element lines are, finds its places again from the line's text when an error asks,
since there a word's place is its whitespace-separated position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

WORDS = re.compile(r"\S+")


class SourceLocation(NamedTuple):
    """A place in a netlist file; prints as ``file:line:col`` (line and column from 1).

    `text` is the physical line, for the excerpt under an error; `quoted` is False for a
    place in an included file that does not look like a netlist, whose text is never shown.
    """

    file: str
    line: int
    column: int
    text: str = ""
    quoted: bool = True

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def shifted(self, offset: int) -> SourceLocation:
        """The place `offset` characters further along the same line."""
        return self._replace(column=self.column + offset)

    def at_column(self, column: int) -> SourceLocation:
        """The place at `column` of the same line."""
        return self._replace(column=column)

    def excerpt(self) -> str:
        """The source line with a caret under the column (nothing for an unquoted file)."""
        if not self.quoted:
            return ""
        line = self.text.rstrip("\n")
        return f"    {line}\n    {' ' * (self.column - 1)}^"


@dataclass(frozen=True)
class Braced:
    """An ``{expression}``, or an expression written without braces where SPICE allows one
    (``.param a = 2*b``, ``B1 n 0 V=2*V(a)``); `location` is where its text starts."""

    text: str
    location: SourceLocation


@dataclass(frozen=True)
class Call:
    """``NAME(arg ...)``: a waveform, a probe ``V(n)``, a model's parameter list."""

    name: str
    args: tuple[Field, ...]
    location: SourceLocation
    places: tuple[SourceLocation, ...]   # of each argument


@dataclass(frozen=True)
class Assign:
    """``key=value`` (``key=v1,v2`` keeps several values); `location` is the key's."""

    key: str | Call
    values: tuple[Field, ...]
    location: SourceLocation
    places: tuple[SourceLocation, ...]   # of each value

    @property
    def name(self) -> str:
        """The key as written: a word, or a call such as ``V(a)``."""
        return self.key if isinstance(self.key, str) else field_text(self.key)


Field = str | Braced | Call | Assign


class Card(NamedTuple):
    """One logical line: an element (``R1 ...``) or a dot card (``.tran ...``).

    `key` is the head in lower case, what every later stage looks the card up by; `fields`
    are the positional fields after the head, `options` the ``key=value`` fields in order;
    `places` holds where each positional field stands (None: a one-line card of words only,
    whose places follow from its text).
    """

    head: str
    key: str
    fields: tuple[Field, ...]
    options: tuple[Assign, ...]
    location: SourceLocation
    places: tuple[SourceLocation, ...] | None = None

    @property
    def is_dot(self) -> bool:
        return self.head.startswith(".")

    def place(self, index: int) -> SourceLocation:
        """Where positional field `index` stands."""
        return word_place(*self.lazy_place(index))

    def lazy_place(self, index: int) -> tuple[SourceLocation, int | None]:
        """Where positional field `index` stands, as `word_place` finds it later: the card's
        place and `index` for a card of words only (whose places are not kept), else the
        field's place and None."""
        return (self.location, index) if self.places is None else (self.places[index], None)

    def end(self) -> SourceLocation:
        """Just after the last field: where a missing field would stand."""
        if not self.fields:
            return self.location.shifted(len(self.head) + 1)
        last = self.fields[-1]
        width = len(last) if isinstance(last, str) else len(field_text(last))
        return self.place(len(self.fields) - 1).shifted(width + 1)


def word_place(line: SourceLocation, index: int | None) -> SourceLocation:
    """Where word `index` after the first of a line of words only stands (`line` is where
    its first word stands); `line` itself for None."""
    if index is None:
        return line
    words = WORDS.finditer(line.text, line.column - 1)
    next(words)   # the head
    for _ in range(index):
        next(words)
    return line.at_column(next(words).start() + 1)


def field_text(field: Field) -> str:
    """A field as it could be written in a netlist (for messages)."""
    if isinstance(field, str):
        return field
    if isinstance(field, Braced):
        return "{" + field.text + "}"
    if isinstance(field, Call):
        return f"{field.name}({' '.join(field_text(a) for a in field.args)})"
    return f"{field.name}={','.join(field_text(v) for v in field.values)}"


@dataclass(frozen=True)
class Netlist:
    """A parsed netlist file with its includes spliced in."""

    title: str
    cards: tuple[Card, ...]
    path: str
