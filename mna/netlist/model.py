"""Frozen cards with source locations: what the parser hands on, no number evaluated yet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class SourceLocation(NamedTuple):
    """A place in a netlist file; prints as ``file:line:col`` (line and column from 1). A
    tuple, not a dataclass: every word of a netlist gets one, and a tuple is built 3x faster."""

    file: str
    line: int
    column: int
    text: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def shifted(self, offset: int) -> SourceLocation:
        """The place `offset` characters further along the same line."""
        return SourceLocation(self.file, self.line, self.column + offset, self.text)

    def at_column(self, column: int) -> SourceLocation:
        """The place at `column` of the same line."""
        return SourceLocation(self.file, self.line, column, self.text)

    def excerpt(self) -> str:
        """The source line with a caret under the column."""
        line = self.text.rstrip("\n")
        return f"    {line}\n    {' ' * (self.column - 1)}^"


class Word(NamedTuple):
    """A bare token: a name, a number, a keyword. A tuple, as `SourceLocation` is, that
    builds its location only when asked: most fields of a netlist are words, and the lexer
    hands them to the parser as they are."""

    text: str
    column: int
    line: SourceLocation  # the physical line it stands on

    kind = "word"   # its kind as a lexer token

    @classmethod
    def at(cls, text: str, location: SourceLocation) -> Word:
        return cls(text, location.column, location)

    @property
    def location(self) -> SourceLocation:
        return self.line.at_column(self.column)

    @property
    def key(self) -> str:
        return self.text.lower()


@dataclass(frozen=True)
class Braced:
    """An ``{expression}``; `text` is what stands between the braces."""

    text: str
    location: SourceLocation


@dataclass(frozen=True)
class Call:
    """``NAME(arg ...)``: a waveform, a probe ``V(n)``, a model's parameter list."""

    name: Word
    args: tuple[Field, ...]
    location: SourceLocation


@dataclass(frozen=True)
class Assign:
    """``key=value`` (``key=v1,v2`` keeps several values)."""

    key: Word | Call
    values: tuple[Field, ...]
    location: SourceLocation


Field = Word | Braced | Call | Assign


class Card(NamedTuple):
    """One logical line: an element (``R1 ...``) or a dot card (``.tran ...``); a tuple, as
    `Word` is."""

    head: Word
    fields: tuple[Field, ...]
    location: SourceLocation

    @property
    def is_dot(self) -> bool:
        return self.head.text.startswith(".")


@dataclass(frozen=True)
class Netlist:
    """A parsed netlist file with its includes spliced in."""

    title: str
    cards: tuple[Card, ...]
    path: str
