"""The expression grammar of NETLIST.md, parsed by hand into sympy (never ``eval``/``sympify``).

A precedence-climbing parser over a small tokenizer. Names become real sympy symbols (parameters,
``time``), probes ``V(n)``, ``V(a,b)`` and ``I(name)`` become symbols recorded in `Parsed.probes`.
Numbers are SPICE numbers (``2.2k``), so ``{2.2k*r}`` works as it does in ngspice.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mna.errors import NetlistError
from mna.netlist.model import SourceLocation
from mna.units import parse_number

if TYPE_CHECKING:
    import sympy

# sympy is imported on first use, not with this module: it takes about a third of a second to
# import, and a netlist of plain numbers never needs it.

TOKEN = re.compile(
    r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[A-Za-z]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)"
    r"|(?P<op>\*\*|&&|\|\||==|!=|<=|>=|[-+*/^(),<>!]))"
)
UNARY_PRECEDENCE = 7


@functools.cache
def time_symbol() -> sympy.Symbol:
    """The symbol ``time`` in source values and behavioural expressions."""
    import sympy

    return sympy.Symbol("time", real=True)


def _truth(condition) -> sympy.Expr:
    """A sympy condition as the number 1 or 0, as SPICE expressions use them."""
    import sympy

    return sympy.Piecewise((sympy.Integer(1), condition), (sympy.Integer(0), True))


def _nonzero(value) -> sympy.Basic:
    import sympy

    return sympy.Ne(value, 0)


@dataclass(frozen=True)
class _Grammar:
    constants: dict
    functions: dict   # name -> (arity, function)
    binary: dict      # operator -> (precedence, function)


@functools.cache
def _grammar() -> _Grammar:
    import sympy

    constants = {"pi": sympy.pi, "e": sympy.E}
    functions = {
        "sqrt": (1, sympy.sqrt),
        "exp": (1, sympy.exp),
        "ln": (1, sympy.log),
        "log": (1, sympy.log),
        "log10": (1, lambda x: sympy.log(x, 10)),
        "sin": (1, sympy.sin),
        "cos": (1, sympy.cos),
        "tan": (1, sympy.tan),
        "asin": (1, sympy.asin),
        "acos": (1, sympy.acos),
        "atan": (1, sympy.atan),
        "atan2": (2, sympy.atan2),
        "sinh": (1, sympy.sinh),
        "cosh": (1, sympy.cosh),
        "tanh": (1, sympy.tanh),
        "abs": (1, sympy.Abs),
        "sign": (1, sympy.sign),
        "min": (2, sympy.Min),
        "max": (2, sympy.Max),
        "pow": (2, sympy.Pow),
        "floor": (1, sympy.floor),
        "ceil": (1, sympy.ceiling),
        "if": (3, lambda c, a, b: sympy.Piecewise((a, _nonzero(c)), (b, True))),
    }
    binary = {
        "||": (1, lambda a, b: _truth(sympy.Or(_nonzero(a), _nonzero(b)))),
        "&&": (2, lambda a, b: _truth(sympy.And(_nonzero(a), _nonzero(b)))),
        "==": (3, lambda a, b: _truth(sympy.Eq(a, b))),
        "!=": (3, lambda a, b: _truth(sympy.Ne(a, b))),
        "<": (4, lambda a, b: _truth(sympy.Lt(a, b))),
        "<=": (4, lambda a, b: _truth(sympy.Le(a, b))),
        ">": (4, lambda a, b: _truth(sympy.Gt(a, b))),
        ">=": (4, lambda a, b: _truth(sympy.Ge(a, b))),
        "+": (5, lambda a, b: a + b),
        "-": (5, lambda a, b: a - b),
        "*": (6, lambda a, b: a * b),
        "/": (6, lambda a, b: a / b),
    }
    return _Grammar(constants, functions, binary)


def parameter(name: str) -> sympy.Symbol:
    """The symbol standing for parameter `name` (names are case-insensitive)."""
    import sympy

    return sympy.Symbol(name.lower(), real=True)


def probe(kind: str, *names: str) -> sympy.Symbol:
    """The symbol for ``V(a)``, ``V(a,b)`` or ``I(name)`` inside a behavioural expression."""
    import sympy

    return sympy.Symbol(f"{kind.upper()}({','.join(n.lower() for n in names)})", real=True)


@dataclass(frozen=True)
class Parsed:
    """A parsed expression and where each free name first stands in the source."""

    value: sympy.Expr
    names: dict[str, SourceLocation] = field(default_factory=dict)
    probes: dict[sympy.Symbol, tuple[str, tuple[str, ...], SourceLocation]] = field(
        default_factory=dict
    )


def parse_expression(
    text: str, location: SourceLocation, *, time: bool = False, probes: bool = False
) -> Parsed:
    """Parse `text`, found at `location`; `time` and `probes` allow ``time`` and ``V()/I()``.

    >>> from mna.netlist.model import SourceLocation
    >>> parse_expression("2*r0 + 1k", SourceLocation("x.net", 1, 1)).value
    2*r0 + 1000.0
    """
    return _Parser(text, location, time, probes).parse()


class _Parser:
    def __init__(self, text: str, location: SourceLocation, time: bool, probes: bool):
        self.text = text
        self.location = location
        self.allow_time = time
        self.allow_probes = probes
        self.grammar = _grammar()
        self.tokens = self._tokenize()
        self.index = 0
        self.names: dict[str, SourceLocation] = {}
        self.probes: dict[sympy.Symbol, tuple[str, tuple[str, ...], SourceLocation]] = {}

    def _tokenize(self) -> list[tuple[str, str, int]]:
        tokens = []
        position = 0
        while position < len(self.text):
            match = TOKEN.match(self.text, position)
            if match is None or match.lastgroup is None:
                if self.text[position:].strip() == "":
                    break
                offset = position + len(self.text[position:]) - len(self.text[position:].lstrip())
                self.fail(f"unexpected {self.text[offset]!r} in expression", offset)
            kind = match.lastgroup
            tokens.append((kind, match.group(kind), match.start(kind)))
            position = match.end()
        tokens.append(("end", "", len(self.text)))
        return tokens

    def fail(self, message: str, offset: int):
        raise NetlistError(message, self.location.shifted(offset))

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.index]

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expect(self, text: str) -> None:
        kind, value, offset = self.take()
        if value != text:
            self.fail(f"expected '{text}'" + (f", found '{value}'" if value else ""), offset)

    def parse(self) -> Parsed:
        if self.peek()[0] == "end":
            self.fail("empty expression", 0)
        value = self.binary(0)
        kind, text, offset = self.peek()
        if kind != "end":
            self.fail(f"unexpected '{text}' in expression", offset)
        return Parsed(value, self.names, self.probes)

    def binary(self, min_precedence: int) -> sympy.Expr:
        left = self.unary()
        binary = self.grammar.binary
        while True:
            kind, text, _ = self.peek()
            if kind != "op" or text not in binary or binary[text][0] < min_precedence:
                return left
            precedence, combine = binary[text]
            self.take()
            left = combine(left, self.binary(precedence + 1))

    def unary(self) -> sympy.Expr:
        kind, text, _ = self.peek()
        if kind == "op" and text in ("-", "+", "!"):
            import sympy

            self.take()
            operand = self.binary(UNARY_PRECEDENCE)
            return {"-": lambda: -operand, "+": lambda: operand,
                    "!": lambda: _truth(sympy.Eq(operand, 0))}[text]()
        return self.power()

    def power(self) -> sympy.Expr:
        base = self.primary()
        kind, text, _ = self.peek()
        if kind == "op" and text in ("^", "**"):
            import sympy

            self.take()
            return sympy.Pow(base, self.binary(UNARY_PRECEDENCE))
        return base

    def primary(self) -> sympy.Expr:
        kind, text, offset = self.take()
        if kind == "number":
            import sympy

            value = parse_number(text)
            if value is None:
                self.fail(f"bad number '{text}'", offset)
            return sympy.Integer(text) if text.isdigit() else sympy.Float(value)
        if kind == "op" and text == "(":
            value = self.binary(0)
            self.expect(")")
            return value
        if kind == "name":
            if self.peek()[1] == "(":
                return self.call(text, offset)
            return self.name(text, offset)
        self.fail("expected a value" + (f", found '{text}'" if text else ""), offset)

    def name(self, text: str, offset: int) -> sympy.Expr:
        key = text.lower()
        if key == "time":
            if not self.allow_time:
                self.fail("'time' is only allowed in source values and behavioural elements",
                          offset)
            return time_symbol()
        if key in self.grammar.constants:
            return self.grammar.constants[key]
        self.names.setdefault(key, self.location.shifted(offset))
        return parameter(key)

    def call(self, text: str, offset: int) -> sympy.Expr:
        key = text.lower()
        self.take()
        if key in ("v", "i"):
            return self.probe(key, offset)
        if key not in self.grammar.functions:
            self.fail(f"unknown function '{text}'", offset)
        arity, function = self.grammar.functions[key]
        args = [self.binary(0)]
        while self.peek()[1] == ",":
            self.take()
            args.append(self.binary(0))
        self.expect(")")
        if len(args) != arity:
            self.fail(f"{key}() takes {arity} argument{'s' * (arity > 1)}, got {len(args)}", offset)
        return function(*args)

    def probe(self, key: str, offset: int) -> sympy.Expr:
        if not self.allow_probes:
            self.fail(f"{key.upper()}() is only allowed in behavioural elements", offset)
        names = [self.take()]
        while self.peek()[1] == ",":
            self.take()
            names.append(self.take())
        self.expect(")")
        if any(kind not in ("name", "number") for kind, _, _ in names) or len(names) > (
            2 if key == "v" else 1
        ):
            self.fail(f"usage: {'V(node) or V(a,b)' if key == 'v' else 'I(name)'}", offset)
        args = tuple(text for _, text, _ in names)
        symbol = probe(key, *args)
        self.probes.setdefault(symbol, (key.upper(), args, self.location.shifted(offset)))
        return symbol
