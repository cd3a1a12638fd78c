"""Lines to tokens: comments, ``+`` continuations, ``.include`` and ``.control`` blocks.

Every token keeps the file, line and column it came from, so any later stage can point at it.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from mna.errors import NetlistError
from mna.netlist.model import SourceLocation, Word

log = logging.getLogger(__name__)

TokenKind = Literal["braced", "(", ")", "=", ","]

# One match per token, leading blanks included: a word, punctuation, the '{' that opens an
# expression (its end is found by counting braces) or a stray '}'.
TOKEN = re.compile(
    r"\s*(?:(?P<word>(?:==|!=|<=|>=|[^\s(),={}])+)"
    r"|(?P<punct>[(),=])"
    r"|(?P<braced>\{)"
    r"|(?P<stray>\}))"
)
INLINE_COMMENT = re.compile(r";|\s\$(\s|$)")
PLAIN = re.compile(r"[^(){}=,;$]*")  # a line that holds nothing but words

# A netlist's every word and line gets one of these tuples: made by tuple's own constructor
# from a tuple of the fields, they skip NamedTuple's __new__, a Python function (0.42 ->
# 0.14 us each)
_word = functools.partial(tuple.__new__, Word)
_place = functools.partial(tuple.__new__, SourceLocation)


class Token(NamedTuple):
    """A token other than a word (words are `Word` tuples) and its place: like a `Word`, a
    tuple that builds its `SourceLocation` only when asked."""

    kind: TokenKind
    text: str
    column: int
    line: SourceLocation  # the physical line it stands on

    @property
    def location(self) -> SourceLocation:
        return self.line.at_column(self.column)


class Line(NamedTuple):
    """A logical line: a physical line and its ``+`` continuations."""

    tokens: tuple[Word | Token, ...]

    @property
    def location(self) -> SourceLocation:
        return self.tokens[0].location


_line = functools.partial(tuple.__new__, Line)   # as `_word`: Line((tokens,))


@dataclass(frozen=True)
class Source:
    """The title line and the logical lines of a netlist, includes spliced in."""

    title: str
    lines: tuple[Line, ...]
    path: str


def lex(text: str, filename: str = "<string>") -> Source:
    """Lex netlist `text`; its first line is the title."""
    return _eager(*lex_lines(text, filename))


def read_lines(path: str | Path) -> tuple[str, Iterator[Line], str]:
    """`lex_lines` of the netlist file at `path`."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise NetlistError(f"cannot read netlist: {exc.strerror}: {path}") from None
    return lex_lines(text, str(path))


def lex_lines(text: str, filename: str = "<string>") -> tuple[str, Iterator[Line], str]:
    """The title, the logical lines one at a time, and the file name.

    The parser reads lines as they come, so that a large netlist's tokens never all exist
    at once (errors are raised as the lines are reached).
    """
    physical = text.splitlines()
    title = physical[0].strip() if physical else ""
    return title, _logical_lines(physical, 1, filename, frozenset({_resolved(filename)})), filename


def _eager(title: str, lines: Iterator[Line], filename: str) -> Source:
    return Source(title, tuple(lines), filename)


def _resolved(filename: str) -> str:
    return str(Path(filename).resolve()) if not filename.startswith("<") else filename


def _logical_lines(physical: list[str], skip: int, filename: str, open_files: frozenset[str]):
    """Yield logical lines of `physical` after its first `skip` lines."""
    pending: list[Word | Token] = []
    control_start: SourceLocation | None = None
    for number, raw in enumerate(physical[skip:], start=skip + 1):
        stripped = raw.strip()
        if control_start is not None:
            if stripped[:5].lower() == ".endc":
                log.warning("%s: skipped the .control ... .endc block", control_start)
                control_start = None
            continue
        if not stripped or stripped[0] == "*":
            continue
        location = _place((filename, number, raw.index(stripped[0]) + 1, raw))
        # only dot cards need a look at their first word
        first = stripped.split(None, 1)[0].lower() if stripped[0] == "." else ""
        if first.startswith(".control"):
            control_start = location
            continue
        if stripped[0] == "+":
            if not pending:
                raise NetlistError("continuation line '+' with no line to continue", location)
            pending.extend(_tokens(raw, location, start=raw.index("+") + 1))
            continue
        if pending:
            yield _line((tuple(pending),))
        pending = _tokens(raw, location, start=location.column - 1)
        if first in (".include", ".inc"):
            yield from _included(pending, filename, open_files)
            pending = []
        elif first == ".end":
            pending = []
            break
    if control_start is not None:
        raise NetlistError(".control block has no .endc", control_start)
    if pending:
        yield _line((tuple(pending),))


def _included(tokens: list[Token], filename: str, open_files: frozenset[str]):
    if len(tokens) != 2:
        raise NetlistError("usage: .include path", tokens[0].location)
    target = tokens[1]
    name = target.text.strip("'\"")
    base = Path(filename).parent if not filename.startswith("<") else Path.cwd()
    path = base / name
    if _resolved(str(path)) in open_files:
        raise NetlistError(f"{name} includes itself", target.location)
    try:
        text = path.read_text()
    except OSError as exc:
        raise NetlistError(f"cannot include {name}: {exc.strerror}", target.location) from None
    yield from _logical_lines(text.splitlines(), 0, str(path), open_files | {_resolved(str(path))})


def _tokens(raw: str, line: SourceLocation, start: int) -> list[Word | Token]:
    if PLAIN.fullmatch(raw, start):
        # most lines (``R1 a b 1k``) are words only: split them (twice as fast as a match
        # object per word) and find each word's column
        words: list[Word | Token] = []
        position = start
        for text in raw[start:].split():
            position = raw.index(text, position)
            words.append(_word((text, position + 1, line)))
            position += len(text)
        return words
    comment = INLINE_COMMENT.search(raw, start)
    end = comment.start() if comment else len(raw)
    tokens: list[Word | Token] = []
    position = start
    while position < end:
        match = TOKEN.match(raw, position, end)
        if match is None:  # only blanks are left
            break
        kind = match.lastgroup
        begin = match.start(kind)
        if kind == "word":
            tokens.append(Word(match[kind], begin + 1, line))
        elif kind == "punct":
            tokens.append(Token(match[kind], match[kind], begin + 1, line))  # type: ignore[arg-type]
        elif kind == "braced":
            here = line.at_column(begin + 1)
            close = _closing_brace(raw, begin, end, here)
            tokens.append(Token("braced", raw[begin + 1 : close], begin + 1, line))
            position = close + 1
            continue
        else:
            raise NetlistError(f"unexpected character {raw[begin]!r}", line.at_column(begin + 1))
        position = match.end()
    return tokens


def _closing_brace(raw: str, position: int, end: int, here: SourceLocation) -> int:
    depth = 0
    for index in range(position, end):
        depth += {"{": 1, "}": -1}.get(raw[index], 0)
        if depth == 0:
            return index
    raise NetlistError("'{' has no matching '}'", here)
