"""Lines to tokens: comments, ``+`` continuations, ``.include`` and ``.control`` blocks.

Every token keeps the file, line and column it came from, so any later stage can point at it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mna.errors import NetlistError
from mna.netlist.model import SourceLocation

log = logging.getLogger(__name__)

TokenKind = Literal["word", "braced", "(", ")", "=", ","]

TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<braced>\{)"
    r"|(?P<word>(?:==|!=|<=|>=|[^\s(),={}])+)"
    r"|(?P<punct>[(),=])"
    r"|(?P<stray>\})"
)
INLINE_COMMENT = re.compile(r";|\s\$(\s|$)")


@dataclass(frozen=True)
class Token:
    kind: TokenKind
    text: str
    location: SourceLocation


@dataclass(frozen=True)
class Line:
    """A logical line: a physical line and its ``+`` continuations."""

    tokens: tuple[Token, ...]

    @property
    def location(self) -> SourceLocation:
        return self.tokens[0].location


@dataclass(frozen=True)
class Source:
    """The title line and the logical lines of a netlist, includes spliced in."""

    title: str
    lines: tuple[Line, ...]
    path: str


def read_source(path: str | Path) -> Source:
    """Lex the netlist file at `path`."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise NetlistError(f"cannot read netlist: {exc.strerror}: {path}") from None
    return lex(text, str(path))


def lex(text: str, filename: str = "<string>") -> Source:
    """Lex netlist `text`; its first line is the title."""
    physical = text.splitlines()
    title = physical[0].strip() if physical else ""
    lines = _logical_lines(physical, 1, filename, frozenset({_resolved(filename)}))
    return Source(title, tuple(lines), filename)


def _resolved(filename: str) -> str:
    return str(Path(filename).resolve()) if not filename.startswith("<") else filename


def _logical_lines(physical: list[str], skip: int, filename: str, open_files: frozenset[str]):
    """Yield logical lines of `physical` after its first `skip` lines."""
    pending: list[Token] = []
    control_start: SourceLocation | None = None
    for number, raw in enumerate(physical[skip:], start=skip + 1):
        stripped = raw.strip()
        location = SourceLocation(filename, number, len(raw) - len(raw.lstrip()) + 1, raw)
        lowered = stripped.lower()
        if control_start is not None:
            if lowered.startswith(".endc"):
                log.warning("%s: skipped the .control ... .endc block", control_start)
                control_start = None
            continue
        if not stripped or stripped.startswith("*"):
            continue
        if lowered.startswith(".control"):
            control_start = location
            continue
        if stripped.startswith("+"):
            if not pending:
                raise NetlistError("continuation line '+' with no line to continue", location)
            pending.extend(_tokens(raw, location, start=raw.index("+") + 1))
            continue
        if pending:
            yield Line(tuple(pending))
        pending = _tokens(raw, location, start=location.column - 1)
        if lowered.split()[0] in (".include", ".inc"):
            yield from _included(pending, filename, open_files)
            pending = []
        elif lowered.split()[0] == ".end":
            pending = []
            break
    if control_start is not None:
        raise NetlistError(".control block has no .endc", control_start)
    if pending:
        yield Line(tuple(pending))


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


def _tokens(raw: str, location: SourceLocation, start: int) -> list[Token]:
    comment = INLINE_COMMENT.search(raw, start)
    end = comment.start() if comment else len(raw)
    tokens: list[Token] = []
    position = start
    while position < end:
        match = TOKEN.match(raw, position, end)
        here = SourceLocation(location.file, location.line, position + 1, raw)
        if match is None or match.lastgroup == "stray":
            raise NetlistError(f"unexpected character {raw[position]!r}", here)
        if match.lastgroup == "braced":
            close = _closing_brace(raw, position, end, here)
            tokens.append(Token("braced", raw[position + 1 : close], here))
            position = close + 1
            continue
        if match.lastgroup == "word":
            tokens.append(Token("word", match.group(), here))
        elif match.lastgroup == "punct":
            tokens.append(Token(match.group(), match.group(), here))  # type: ignore[arg-type]
        position = match.end()
    return tokens


def _closing_brace(raw: str, position: int, end: int, here: SourceLocation) -> int:
    depth = 0
    for index in range(position, end):
        depth += {"{": 1, "}": -1}.get(raw[index], 0)
        if depth == 0:
            return index
    raise NetlistError("'{' has no matching '}'", here)
