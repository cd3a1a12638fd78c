"""Files to logical lines (comments, ``+`` continuations, ``.include``, ``.lib`` sections,
``.control`` blocks and ``.end``), and a logical line to its words or tokens.

Every token keeps the file, line and column it came from, so any later stage can point at
it. What a file may hold is bounded (`MAX_FILE_BYTES`, `MAX_LINE_CHARS`) and only regular
files are read, so no input can make reading run away.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, NamedTuple

from mna.errors import NetlistError
from mna.netlist.model import SourceLocation

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 512 * 2**20    # a netlist of a million elements takes ~50 MB
MAX_INCLUDES = 10_000   # files read in by one netlist (a file included twice counts twice)
MAX_LINE_CHARS = 2**20
NETLIST_SUFFIXES = {".net", ".cir", ".ckt", ".sp", ".spi", ".spice", ".inc", ".lib", ".mod",
                    ".model", ".sub", ".subckt", ".txt", ".deck", ".include"}

TokenKind = Literal["word", "braced", "(", ")", "=", ","]

# One match per token, leading blanks included: a word, punctuation, the '{' or "'" that
# opens an expression (its end is found by scanning) or a stray '}'.
TOKEN = re.compile(
    r"\s*(?:(?P<word>(?:==|!=|<=|>=|[^\s(),={}'])+)"
    r"|(?P<punct>[(),=])"
    r"|(?P<braced>[{'])"
    r"|(?P<stray>\}))"
)
INLINE_COMMENT = re.compile(r";|\s\$(\s|$)|\s//")   # ngspice's ; $ and //
COMMENT_LINE = re.compile(r"[*;]|\$(\s|$)|//")   # what makes a whole line a comment
LINE_BREAK = re.compile(r"\r\n|\r|\n")   # only these end a line (not form feeds, U+2028)
STRUCTURED = re.compile(r"[(){}=,;$'/]")   # a line without these holds words only


class Token(NamedTuple):
    """A token of a line that is more than words: its kind, text and place."""

    kind: TokenKind
    text: str
    location: SourceLocation


Part = tuple[str, SourceLocation, int]   # a physical line, its place, where its content starts
Line = list[Part]   # a logical line: a physical line and its ``+`` continuations


class Source(NamedTuple):
    """The title and the logical lines of a netlist (read one at a time), and its path."""

    title: str
    lines: Iterator[Line]
    path: str


def read_source(path: str | Path) -> Source:
    """The netlist file at `path`, its includes spliced in as the lines are read."""
    path = Path(path)
    text = _read_text(path, None)
    return lex_text(text, str(path))


def lex_text(text: str, filename: str = "<string>") -> Source:
    """Netlist `text`; its first line is the title. Lines are found as they are read, and
    the parser takes each apart in turn, so that a large netlist's tokens never all exist
    at once."""
    if "\0" in text:
        raise _nul(text, filename, quoted=True)
    physical = LINE_BREAK.split(text)
    title = physical[0].strip() if physical else ""
    reader = _FileLines(physical, filename, quoted=True, open_files=frozenset({_key(filename)}),
                        included=[0])
    return Source(title, reader.lines(skip=1), filename)


def _nul(text: str, filename: str, quoted: bool) -> NetlistError:
    """The error of a text that holds a NUL character, placed at the first one."""
    at = text.index("\0")
    before = LINE_BREAK.split(text[:at])
    line = before[-1] + LINE_BREAK.split(text[at:], maxsplit=1)[0]
    return NetlistError("a NUL character: this is not a text netlist", SourceLocation(
        filename, len(before), len(before[-1]) + 1, line.replace("\0", " "), quoted))


def _shown(path: Path) -> bool:
    """Whether an included file's lines may be shown in errors: it has a netlist's suffix
    (a file that is no netlist, say a key, stays unquoted)."""
    return path.suffix.lower() in NETLIST_SUFFIXES


def _key(filename: str) -> str:
    return filename if filename.startswith("<") else str(Path(filename).resolve())


def _read_text(path: Path, location: SourceLocation | None, name: str = "") -> str:
    """The text of the regular file at `path` (included as `name` from `location`, if it
    is), UTF-8 or else Latin-1, checked for size."""
    what = f"include {name}" if location is not None else f"read netlist {path}"
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):   # before open: a FIFO would block it
            raise NetlistError(f"cannot {what}: not a regular file", location)
        with open(path, "rb") as handle:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode):
                raise NetlistError(f"cannot {what}: not a regular file", location)
            if status.st_size > MAX_FILE_BYTES:
                raise NetlistError(f"cannot {what}: {status.st_size} bytes, more than the "
                                   f"limit of {MAX_FILE_BYTES}", location)
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        reason = f"{error.strerror}: {path}" if location is None else error.strerror
        raise NetlistError(f"cannot {what}: {reason}", location) from None
    if len(data) > MAX_FILE_BYTES:
        raise NetlistError(f"cannot {what}: more than {MAX_FILE_BYTES} bytes", location)
    if b"\0" in data:
        raise _nul(data.decode("latin-1"), str(path), location is None or _shown(path))
    try:
        return data.decode("utf-8-sig")   # a byte-order mark is no text
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        log.warning("%s:%d:%d: not UTF-8 (byte 0x%02x); the file is read as Latin-1",
                    path, line, column, data[error.start])
        return data.decode("latin-1")


class _FileLines:
    """The logical lines of one file's physical lines (includes read as they come)."""

    def __init__(self, physical: list[str], filename: str, quoted: bool,
                 open_files: frozenset[str], included: list[int]):
        self.physical = physical
        self.filename = filename
        self.quoted = quoted
        self.open_files = open_files   # the files (.lib: file and section) being read
        self.included = included       # how many files the netlist has read in, shared

    def lines(self, skip: int = 0, section: str | None = None) -> Iterator[Line]:
        """The logical lines after the first `skip` physical ones; with `section`, only those
        of ``.lib section`` ... ``.endl``."""
        pending: Line = []
        skipping: tuple[str, SourceLocation] | None = None    # a .control or unused .lib block
        inside = section is None
        for number, raw in enumerate(self.physical[skip:], start=skip + 1):
            stripped = raw.strip()
            if not stripped or COMMENT_LINE.match(stripped):
                continue
            if len(raw) > MAX_LINE_CHARS:
                raise NetlistError(f"line of {len(raw)} characters (the limit is "
                                   f"{MAX_LINE_CHARS})", self._place(number, raw, 1))
            first = stripped.split(None, 1)[0].lower() if stripped[0] == "." else ""
            if skipping is not None:
                if first == (".endc" if skipping[0] == "control" else ".endl"):
                    if skipping[0] == "control":
                        log.warning("%s: skipped the .control ... .endc block", skipping[1])
                    skipping = None
                continue
            start = len(raw) - len(raw.lstrip())
            location = self._place(number, raw, start + 1)
            if not raw.isascii() and (invisible := _invisible(_uncommented(raw))) is not None:
                column, character = invisible
                raise NetlistError(f"an invisible character, U+{ord(character):04X} "
                                   f"{unicodedata.name(character, '')}: retype the line",
                                   self._place(number, raw, column))
            if stripped[0] == "+":
                if not pending:
                    raise NetlistError("continuation line '+' with no line to continue",
                                       location)
                pending.append((raw, location, raw.index("+") + 1))
                continue
            if pending:
                yield pending
                pending = []
            if first:   # a dot card: those that say what to read are the lexer's own
                if first.startswith(".control"):
                    skipping = ("control", location)
                    continue
                named = _uncommented(stripped).split()
                if first == ".lib" and len(named) == 2:   # a section's start
                    if not inside and named[1].lower() == section:
                        inside = True
                    else:   # another section, or a definition in a file read whole
                        skipping = ("lib", location)
                    continue
                if first == ".endl":
                    if section is not None and inside:
                        return
                    continue
                if inside and first in (".include", ".inc", ".lib"):
                    yield from self._included(raw, location, first == ".lib")
                    continue
                if inside and first == ".end":
                    break
            if inside:
                pending = [(raw, location, start)]
        if skipping is not None and skipping[0] == "control":
            raise NetlistError(".control block has no .endc", skipping[1])
        if skipping is not None:   # a section never closed: what follows it was never read
            raise NetlistError(".lib NAME opens a library section, and no .endl closes it (a "
                               "section of a file: .lib FILE SECTION; a whole file: .include "
                               "FILE)", skipping[1])
        if section is not None and not inside:
            raise NetlistError(f"no section '.lib {section}' in {self.filename}",
                               self._place(1, self.physical[0] if self.physical else "", 1))
        if pending:
            yield pending

    def _place(self, number: int, raw: str, column: int) -> SourceLocation:
        return SourceLocation(self.filename, number, column, raw, self.quoted)

    def _included(self, raw: str, location: SourceLocation, library: bool) -> Iterator[Line]:
        usage = ".lib path section" if library else ".include path"
        arguments = _tokens(raw, location, location.column - 1)[1:]
        if len(arguments) != (2 if library else 1):
            raise NetlistError(f"usage: {usage}", location)
        target = arguments[0]
        name = target.text.strip("'\"")
        base = Path(self.filename).parent if not self.filename.startswith("<") else Path.cwd()
        path = base / name
        section = arguments[1].text.lower() if library else None
        key = _key(str(path)) + ("" if section is None else f" section {section}")
        if key in self.open_files:   # a library's section may use another of the same file
            raise NetlistError(f"{name} includes itself", target.location)
        self.included[0] += 1
        if self.included[0] > MAX_INCLUDES:
            raise NetlistError(f"more than {MAX_INCLUDES} files included (a file that "
                               "includes another twice, over and over?)", target.location)
        text = _read_text(path, target.location, name)
        quoted = _shown(path)
        reader = _FileLines(LINE_BREAK.split(text), str(path), quoted, self.open_files | {key},
                            self.included)
        yield from reader.lines(section=section)


def _uncommented(raw: str) -> str:
    """A physical line without its inline comment."""
    comment = INLINE_COMMENT.search(raw)
    return raw[:comment.start()] if comment else raw


def _invisible(raw: str) -> tuple[int, str] | None:
    """The first format character of a line (a zero-width space, a direction mark: it
    would make two names that look alike differ) and its column, or None."""
    for column, character in enumerate(raw, start=1):
        if unicodedata.category(character) == "Cf":
            return column, character
    return None


def words(line: Line) -> tuple[str, ...] | None:
    """The words of a logical line that is one physical line of words only (their places are
    found again from its text when needed); None for any other line."""
    raw, _, start = line[0]
    return tuple(raw.split()) if len(line) == 1 and not STRUCTURED.search(raw, start) else None


def tokens(line: Line) -> list[Token]:
    """The tokens of a logical line, each with its place."""
    found: list[Token] = []
    for raw, place, start in line:
        found.extend(_tokens(raw, place, start))
    if not found:
        raise NetlistError("an empty line", line[0][1])
    return found


def _tokens(raw: str, line: SourceLocation, start: int) -> list[Token]:
    comment = INLINE_COMMENT.search(raw, start)
    end = comment.start() if comment else len(raw)
    tokens: list[Token] = []
    position = start
    while position < end:
        match = TOKEN.match(raw, position, end)
        if match is None:  # only blanks are left
            break
        kind = match.lastgroup
        begin = match.start(kind)
        here = line.at_column(begin + 1)
        if kind == "word":
            tokens.append(Token("word", match[kind], here))
        elif kind == "punct":
            tokens.append(Token(match[kind], match[kind], here))  # type: ignore[arg-type]
        elif kind == "braced":
            close = _closing(raw, begin, end, here)
            tokens.append(Token("braced", raw[begin + 1 : close], here))
            position = close + 1
            continue
        else:
            raise NetlistError(f"unexpected character {raw[begin]!r}", here)
        position = match.end()
    return tokens


def _closing(raw: str, position: int, end: int, here: SourceLocation) -> int:
    """The index of what closes the '{' (counting nested braces) or the "'" at `position`."""
    if raw[position] == "'":
        close = raw.find("'", position + 1, end)
        if close < 0:
            raise NetlistError("quote ' has no closing quote", here)
        return close
    depth = 0
    for index in range(position, end):
        character = raw[index]
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
            if depth == 0:
                return index
    raise NetlistError("'{' has no matching '}'", here)
