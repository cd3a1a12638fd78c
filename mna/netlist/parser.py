"""Tokens to cards: each logical line becomes a head, its positional fields (words, braced
expressions, calls) and its ``key=value`` options.

Where SPICE lets an expression stand without braces, the parser joins its tokens into one
`Braced`: the values of ``.param``, the condition of ``.if``/``.elseif``, and the ``V=``/``I=``
expression of a behavioural source, which takes the rest of the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

from mna.errors import NetlistError
from mna.netlist.lexer import Line, Source, Token, lex_text, read_source, tokens, words
from mna.netlist.model import Assign, Braced, Call, Card, Field, Netlist, SourceLocation

CONDITIONS = (".if", ".elseif")
OUTPUT_LISTS = (".save", ".print")   # items separated by blanks (or commas); an item may be
                                     # an expression
ORDERED = (".meas", ".measure")      # key=value fields stay among the others, in order
# what may follow a B source's V=/I= expression, which else takes the rest of the line
BEHAVIOURAL_OPTIONS = ("tc1", "tc2", "temp", "dtemp", "m")


def parse_file(path: str | Path) -> Netlist:
    """Parse the netlist file at `path` (includes spliced in, nothing evaluated)."""
    return _parse(read_source(path))


def parse_text(text: str, filename: str = "<string>") -> Netlist:
    """Parse netlist `text`; its first line is the title."""
    return _parse(lex_text(text, filename))


def _parse(source: Source) -> Netlist:
    return Netlist(source.title, tuple(map(parse_line, source.lines)), source.path)


def parse_line(line: Line) -> Card:
    """The card of one logical line."""
    plain = words(line)
    if plain is not None:
        head, location = plain[0], line[0][1]
        card = Card(head, head.lower(), plain[1:], (), location)
        if card.key not in CONDITIONS:
            return card
        if not card.fields:     # the condition is the rest of the line, in its own text
            _no_condition(card.key, card.location)
        start = card.place(0)
        return Card(card.head, card.key,
                    (Braced(start.text[start.column - 1:].rstrip(), start),), (),
                    card.location, (start,))
    head, *rest = tokens(line)
    if head.kind != "word":
        raise NetlistError("a line must start with an element name or a dot card", head.location)
    key = head.text.lower()
    cursor = _Cursor(rest)
    if key in CONDITIONS:
        if not rest:
            _no_condition(key, head.location)
        items = [(_joined(rest), _expression_place(rest[0]))]
    elif key in OUTPUT_LISTS:
        items = [_output_item(run) for run in _runs(rest)]
    else:
        joins = "param" if key == ".param" else "rest" if key[0] == "b" else None
        items = _fields(cursor, joins=joins)
    ordered = key in ORDERED
    positional = tuple(item for item in items if ordered or not isinstance(item[0], Assign))
    options = tuple(item[0] for item in items if not ordered and isinstance(item[0], Assign))
    return Card(head.text, key, tuple(f for f, _ in positional), options, head.location,
                tuple(place for _, place in positional))


def _no_condition(key: str, head: SourceLocation) -> NoReturn:
    raise NetlistError(f"{key} needs a condition\n  usage: {key} (condition)",
                       head.shifted(len(key) + 1))


class _Cursor:
    def __init__(self, tokens: list[Token]):
        self.tokens = tokens
        self.index = 0

    def peek(self, ahead: int = 0) -> Token | None:
        index = self.index + ahead
        return self.tokens[index] if index < len(self.tokens) else None

    def take(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def rest(self) -> list[Token]:
        tokens, self.index = self.tokens[self.index:], len(self.tokens)
        return tokens


def _fields(cursor: _Cursor, opening: Token | None = None,
            joins: str | None = None) -> list[tuple[Field, SourceLocation]]:
    """Fields and their places up to the end of the line, or up to the ')' that closes
    `opening`. `joins`: how an unbraced value after '=' reads ('param': up to the next
    ``name=``; 'rest': the rest of the line)."""
    fields: list[tuple[Field, SourceLocation]] = []
    while (token := cursor.peek()) is not None:
        if token.kind == ")":
            if opening is not None:
                return fields
            raise NetlistError("')' has no matching '('", token.location)
        if token.kind == ",":
            cursor.take()
            if fields and isinstance(fields[-1][0], Assign) and cursor.peek() is not None:
                last, place = fields[-1]
                value, where = _atom(cursor)
                fields[-1] = (Assign(last.key, (*last.values, value), last.location,
                                     (*last.places, where)), place)
            continue
        if token.kind == "=":
            raise NetlistError("'=' has no name before it", token.location)
        atom, place = _atom(cursor)
        equals = cursor.peek()
        if equals is not None and equals.kind == "=":
            cursor.take()
            table = (isinstance(atom, Braced) and fields and isinstance(fields[-1][0], str)
                     and fields[-1][0].lower() == "table")
            # PSpice's TABLE {expr} = (x,y) ... assigns nothing
            fields.append((atom if table else _assign(atom, place, cursor, equals, joins),
                           place))
        else:
            fields.append((atom, place))
    if opening is not None:
        raise NetlistError("'(' has no matching ')'", opening.location)
    return fields


def _assign(key: Field, place: SourceLocation, cursor: _Cursor, equals: Token,
            joins: str | None) -> Assign:
    if not isinstance(key, (str, Call)):
        raise NetlistError("expected a name before '='", equals.location)
    following = cursor.peek()
    if following is None or following.kind in (")", ",", "="):
        name = key if isinstance(key, str) else key.name
        raise NetlistError(f"'{name}=' has no value", equals.location)
    if joins == "rest" and isinstance(key, str) and key.lower() in ("v", "i"):
        tokens, depth = [], 0     # up to the line's end, or a B source's own tc1= ...
        while (token := cursor.peek()) is not None:
            following = cursor.peek(1)
            if (depth == 0 and tokens and token.kind == "word"
                    and token.text.lower() in BEHAVIOURAL_OPTIONS
                    and following is not None and following.kind == "="):
                break
            depth += (token.kind == "(") - (token.kind == ")")
            tokens.append(cursor.take())
        return Assign(key, (_joined(tokens),), place, (_expression_place(tokens[0]),))
    if joins == "param":
        tokens = []
        while (token := cursor.peek()) is not None:
            following = cursor.peek(1)
            if tokens and token.kind == "word" and following is not None and following.kind == "=":
                break
            tokens.append(cursor.take())
        return Assign(key, (_joined(tokens),), place, (_expression_place(tokens[0]),))
    value, where = _atom(cursor)
    return Assign(key, (value,), place, (where,))


def _atom(cursor: _Cursor) -> tuple[Field, SourceLocation]:
    token = cursor.take()
    if token.kind == "braced":
        return Braced(token.text, _expression_place(token)), token.location
    if token.kind == "(":   # a group with no name: PSpice's node pair (3,0) of a POLY
        items = _fields(cursor, opening=token)
        cursor.take()
        return Call("", tuple(item for item, _ in items), token.location,
                    tuple(p for _, p in items)), token.location
    if token.kind != "word":
        raise NetlistError(f"unexpected '{token.text}'", token.location)
    following = cursor.peek()
    if following is not None and following.kind == "(":
        items = _fields(cursor, opening=cursor.take())
        cursor.take()
        args = tuple(item for item, _ in items)
        return Call(token.text, args, token.location, tuple(p for _, p in items)), token.location
    return token.text, token.location


def _runs(tokens: list[Token]) -> list[list[Token]]:
    """The tokens in runs that no blank separates, nor a comma outside parentheses (as
    ngspice reads ``.print tran V(a), V(b)``)."""
    runs: list[list[Token]] = []
    depth, apart = 0, True
    for token in tokens:
        if token.kind == "," and depth == 0:
            apart = True
            continue
        if not apart and _end(runs[-1][-1]) == token.location:
            runs[-1].append(token)
        else:
            runs.append([token])
        apart = False
        depth += (token.kind == "(") - (token.kind == ")")
    return runs


def _end(token: Token) -> SourceLocation:
    """The place just after `token`."""
    width = len(token.text) + (2 if token.kind == "braced" else 0)
    return token.location.shifted(width)


def _output_item(run: list[Token]) -> tuple[Field, SourceLocation]:
    """A run of an output list: a word, ``V(n)``/``I(x)``, or an expression of them."""
    cursor = _Cursor(run)
    item, place = _atom(cursor)
    if cursor.peek() is None:
        return item, place
    return _joined(run), _expression_place(run[0])


def _expression_place(token: Token) -> SourceLocation:
    """Where the expression text of `token` starts (after the '{' or quote that opens it)."""
    return token.location.shifted(1) if token.kind == "braced" else token.location


def _joined(tokens: list[Token]) -> Braced:
    """An expression spread over tokens, as one text: the line's own text where it stands on
    one line and holds no braces (so that a column in it is a column of the line), else the
    tokens joined by blanks, braced ones in parentheses."""
    first, last = tokens[0], tokens[-1]
    one_line = all(t.location.line == first.location.line and t.location.file ==
                   first.location.file for t in tokens)
    if len(tokens) == 1 and first.kind == "braced":
        return Braced(first.text, _expression_place(first))
    if one_line and all(t.kind != "braced" for t in tokens):
        text = first.location.text[first.location.column - 1:
                                   last.location.column - 1 + len(last.text)]
        return Braced(text, first.location)
    text = " ".join(f"({t.text})" if t.kind == "braced" else t.text for t in tokens)
    return Braced(text, first.location)
