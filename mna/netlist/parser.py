"""Tokens to cards: each logical line becomes a head and its fields (words, calls, assignments)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

from mna.errors import NetlistError
from mna.netlist import collector_paused
from mna.netlist.lexer import Line, Token, lex_lines, read_lines
from mna.netlist.model import Assign, Braced, Call, Card, Field, Netlist, Word


def parse_file(path: str | Path) -> Netlist:
    """Parse the netlist file at `path` (includes spliced in, nothing evaluated)."""
    return _parse(*read_lines(path))


def parse_text(text: str, filename: str = "<string>") -> Netlist:
    """Parse netlist `text`; its first line is the title."""
    return _parse(*lex_lines(text, filename))


def _parse(title: str, lines: Iterable[Line], path: str) -> Netlist:
    with collector_paused():
        return Netlist(title, tuple(_card(line) for line in lines), path)


# as the lexer's `_word`: a Card from a tuple of its fields, without NamedTuple's __new__
_card_of = functools.partial(tuple.__new__, Card)


def _card(line: Line) -> Card:
    head, rest = line.tokens[0], line.tokens[1:]
    if head.kind != "word":
        raise NetlistError("a line must start with an element name or a dot card", head.location)
    location = head.location
    if Token not in map(type, rest):
        # most element lines are words only (``R1 a b 1k``): their tokens are the fields
        fields = rest
    else:
        fields = tuple(_fields(_Cursor(rest), joins_expressions=head.text.lower() == ".param"))
    return _card_of((head, fields, location))


class _Cursor:
    def __init__(self, tokens: tuple[Word | Token, ...]):
        self.tokens = tokens
        self.index = 0

    def peek(self, ahead: int = 0) -> Word | Token | None:
        index = self.index + ahead
        return self.tokens[index] if index < len(self.tokens) else None

    def take(self) -> Word | Token:
        token = self.tokens[self.index]
        self.index += 1
        return token


def _fields(cursor: _Cursor, opening: Token | None = None,
            joins_expressions: bool = False) -> list[Field]:
    """Fields up to the end of the line, or up to the ')' that closes `opening`."""
    inside_call = opening is not None
    fields: list[Field] = []
    while (token := cursor.peek()) is not None:
        if token.kind == ")":
            if inside_call:
                return fields
            raise NetlistError("')' has no matching '('", token.location)
        if token.kind == ",":
            cursor.take()
            if fields and isinstance(fields[-1], Assign) and cursor.peek() is not None:
                last = fields[-1]
                fields[-1] = Assign(last.key, last.values + (_atom(cursor),), last.location)
            continue
        if token.kind == "=":
            raise NetlistError("'=' has no name before it", token.location)
        atom = _atom(cursor)
        equals = cursor.peek()
        if equals is not None and equals.kind == "=":
            cursor.take()
            fields.append(_assign(atom, cursor, equals, joins_expressions))
        else:
            fields.append(atom)
    if opening is not None:
        raise NetlistError("'(' has no matching ')'", opening.location)
    return fields


def _assign(key: Field, cursor: _Cursor, equals: Token, joins_expressions: bool) -> Assign:
    if not isinstance(key, (Word, Call)):
        raise NetlistError("expected a name before '='", equals.location)
    if cursor.peek() is None or cursor.peek().kind in (")", ",", "="):
        raise NetlistError(f"'{_text(key)}=' has no value", equals.location)
    if joins_expressions:
        return Assign(key, (_joined_expression(cursor),), key.location)
    return Assign(key, (_atom(cursor),), key.location)


def _joined_expression(cursor: _Cursor) -> Braced:
    """``.param a = 2 * b`` may spread an expression over tokens: join up to the next ``name=``."""
    start = cursor.peek()
    parts: list[str] = []
    while (token := cursor.peek()) is not None:
        following = cursor.peek(1)
        if parts and token.kind == "word" and following is not None and following.kind == "=":
            break
        cursor.take()
        parts.append(f"({token.text})" if token.kind == "braced" else token.text)
    if len(parts) == 1 and start.kind == "braced":  # keep columns: no added parentheses
        return Braced(start.text, start.location)
    return Braced(" ".join(parts), start.location)


def _atom(cursor: _Cursor) -> Field:
    token = cursor.take()
    if token.kind == "braced":
        return Braced(token.text, token.location)
    if token.kind != "word":
        raise NetlistError(f"unexpected '{token.text}'", token.location)
    following = cursor.peek()
    if following is not None and following.kind == "(":
        args = _fields(cursor, opening=cursor.take())
        cursor.take()
        return Call(token, tuple(args), token.location)
    return token


def _text(field: Field) -> str:
    if isinstance(field, Word):
        return field.text
    if isinstance(field, Braced):
        return "{" + field.text + "}"
    if isinstance(field, Call):
        return f"{field.name.text}({' '.join(_text(a) for a in field.args)})"
    return f"{_text(field.key)}={','.join(_text(v) for v in field.values)}"


field_text = _text
