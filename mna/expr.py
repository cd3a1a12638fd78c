"""The expression grammar of NETLIST.md, parsed by hand (never ``eval``/``sympify``) into a
short program: values and operations in postfix order.

The program is evaluated in floats (a result that overflows or is not a real number is an
error at the operation's column, so no expression can run away), or turned into a sympy
expression where a derivative (behavioural sources) or a symbolic model is wanted. Names are
parameters, and a parameter of the netlist outranks the constants ``pi`` and ``e``; ``time``
and the probes ``V(n)``, ``V(a,b)``, ``I(name)`` are allowed where the caller says so.
Numbers are SPICE numbers (``2.2k``), as in ngspice.
"""

from __future__ import annotations

import bisect
import cmath
import functools
import logging
import math
import operator
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, NamedTuple, NoReturn, TypeAlias

from mna.errors import NetlistError
from mna.netlist.model import SourceLocation
from mna.units import read_number

log = logging.getLogger(__name__)

TOKEN = re.compile(
    r"\s*(?:(?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[A-Za-z]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.#]*)"
    r"|(?P<op>\*\*|&&|\|\||==|!=|<=|>=|[-+*/^(),<>!?:=]))"
)
MAX_DEPTH = 100   # nesting of parentheses, calls and unary operators
MAX_PROGRAM = 100_000   # operations of one expression, .func calls expanded
CONSTANTS = {"pi": math.pi, "e": math.e}


class Instruction(NamedTuple):
    """One step of a program: push a number, a name's value, ``time`` or a probe, or apply
    an operation to the values on top of the stack. `offset` is its column in the text."""

    code: str        # "number" | "name" | "time" | "probe" | "apply"
    argument: object
    offset: int


class Probe(NamedTuple):
    kind: str                  # "V" or "I"
    names: tuple[str, ...]     # as written


def _check(value: complex) -> complex:
    """`value` as a float (or a complex, in an AC output), refused when not finite."""
    value = value if isinstance(value, complex) else float(value)
    if not cmath.isfinite(value):
        raise OverflowError("the result is not a finite number")
    return value


def _truth(value: bool) -> float:
    return 1.0 if value else 0.0


def _power(base: float, exponent: float) -> float:
    if base == 0 and exponent < 0:
        raise ZeroDivisionError
    if base < 0 and exponent != int(exponent):
        raise ValueError(f"{base:g} to the power {exponent:g} is not a real number")
    return _check(math.pow(base, exponent))


def _sign(value: float) -> float:
    return float((value > 0) - (value < 0))


def _step(value: float) -> float:
    """ngspice's ``u``: the unit step, one half at zero."""
    return 0.5 if value == 0 else float(value > 0)


def _nearest_whole(value: float) -> float:
    """``nint``: the nearest whole number, a half to the even one (C's nearbyint, ngspice's)."""
    return float(round(value))


@functools.cache
def _nearest(sp):
    """sympy's ``nint``: a number's value, and a slope of zero (a staircase); a compiled
    expression calls `_nearest_whole` (`LAMBDIFY_FUNCTIONS`)."""

    def eval(cls, x):
        return sp.Integer(round(float(x))) if x.is_number else None

    def fdiff(self, argindex=1):
        return sp.Integer(0)

    return type("nint", (sp.Function,), {"nargs": 1, "fdiff": fdiff, "eval": classmethod(eval)})


# what sympy.lambdify must be told of the functions above it has no name for
LAMBDIFY_FUNCTIONS = {"nint": _nearest_whole}


def _log10(value: float) -> float:
    return math.log10(value)


@dataclass(frozen=True)
class Function:
    """An operation of the grammar: its arity, its float implementation and how to build it
    in sympy (given the sympy module and the arguments)."""

    arity: int
    numeric: Callable[..., float]
    symbolic: Callable


def _piecewise(sp, condition, value, otherwise):
    return sp.Piecewise((value, condition), (otherwise, True))


def _as_truth(sp, condition):
    return _piecewise(sp, condition, sp.Integer(1), sp.Integer(0))


@functools.cache
def _extremum(sp, lesser: bool):
    """sympy's ``min`` (`lesser`) or ``max`` of two arguments, differentiated as ngspice
    differentiates them: by the first argument where it is strictly the lesser (greater),
    else by the second, a tie included (sympy's own Min and Max sort their arguments and
    split a tie in halves, so a B source's small signal at one, V(in) = 0 in
    ``max(V(in), 0)``, would differ from ngspice's)."""

    def fdiff(self, argindex=1):
        a, b = self.args
        first = sp.Piecewise((1, a < b if lesser else a > b), (0, True))
        return first if argindex == 1 else 1 - first

    def eval(cls, a, b):   # numbers, once substituted: the value
        if a.is_number and b.is_number:
            return sp.Min(a, b) if lesser else sp.Max(a, b)
        return None

    return type("min" if lesser else "max", (sp.Function,),
                {"nargs": 2, "fdiff": fdiff, "eval": classmethod(eval)})


CHOICE = Function(3, lambda c, a, b: a if c != 0 else b,   # if(c, a, b)
                  lambda sp, c, a, b: _piecewise(sp, sp.Ne(c, 0), a, b))

FUNCTIONS: dict[str, Function] = {
    "sqrt": Function(1, math.sqrt, lambda sp, x: sp.sqrt(x)),
    "exp": Function(1, math.exp, lambda sp, x: sp.exp(x)),
    "ln": Function(1, math.log, lambda sp, x: sp.log(x)),
    "log": Function(1, math.log, lambda sp, x: sp.log(x)),
    "log10": Function(1, _log10, lambda sp, x: sp.log(x, 10)),
    "sin": Function(1, math.sin, lambda sp, x: sp.sin(x)),
    "cos": Function(1, math.cos, lambda sp, x: sp.cos(x)),
    "tan": Function(1, math.tan, lambda sp, x: sp.tan(x)),
    "asin": Function(1, math.asin, lambda sp, x: sp.asin(x)),
    "acos": Function(1, math.acos, lambda sp, x: sp.acos(x)),
    "atan": Function(1, math.atan, lambda sp, x: sp.atan(x)),
    "atan2": Function(2, math.atan2, lambda sp, y, x: sp.atan2(y, x)),
    "sinh": Function(1, math.sinh, lambda sp, x: sp.sinh(x)),
    "cosh": Function(1, math.cosh, lambda sp, x: sp.cosh(x)),
    "tanh": Function(1, math.tanh, lambda sp, x: sp.tanh(x)),
    "abs": Function(1, abs, lambda sp, x: sp.Abs(x)),
    "sign": Function(1, _sign, lambda sp, x: sp.sign(x)),
    "min": Function(2, min, lambda sp, a, b: _extremum(sp, True)(a, b)),
    "max": Function(2, max, lambda sp, a, b: _extremum(sp, False)(a, b)),
    "pow": Function(2, _power, lambda sp, a, b: sp.Pow(a, b)),
    "floor": Function(1, lambda x: float(math.floor(x)), lambda sp, x: sp.floor(x)),
    "ceil": Function(1, lambda x: float(math.ceil(x)), lambda sp, x: sp.ceiling(x)),
    "if": CHOICE,
    # ngspice's further functions (of .param expressions, of B sources, or of both)
    "ternary_fcn": CHOICE,
    "asinh": Function(1, math.asinh, lambda sp, x: sp.asinh(x)),
    "acosh": Function(1, math.acosh, lambda sp, x: sp.acosh(x)),
    "atanh": Function(1, math.atanh, lambda sp, x: sp.atanh(x)),
    "arctan": Function(1, math.atan, lambda sp, x: sp.atan(x)),
    "sgn": Function(1, _sign, lambda sp, x: sp.sign(x)),
    "sqr": Function(1, lambda x: x * x, lambda sp, x: x * x),
    "int": Function(1, lambda x: float(math.trunc(x)),
                    lambda sp, x: sp.sign(x) * sp.floor(sp.Abs(x))),
    "nint": Function(1, _nearest_whole, lambda sp, x: _nearest(sp)(x)),
    "u": Function(1, _step, lambda sp, x: sp.Heaviside(x, sp.Rational(1, 2))),
    "uramp": Function(1, lambda x: max(x, 0.0), lambda sp, x: x * sp.Heaviside(x, 0)),
    "u2": Function(1, lambda x: min(max(x, 0.0), 1.0),
                   lambda sp, x: sp.Piecewise((0, x <= 0), (x, x <= 1), (1, True))),
    "eq0": Function(1, lambda x: _truth(x == 0), lambda sp, x: _as_truth(sp, sp.Eq(x, 0))),
    "ne0": Function(1, lambda x: _truth(x != 0), lambda sp, x: _as_truth(sp, sp.Ne(x, 0))),
    "gt0": Function(1, lambda x: _truth(x > 0), lambda sp, x: _as_truth(sp, sp.Gt(x, 0))),
    "lt0": Function(1, lambda x: _truth(x < 0), lambda sp, x: _as_truth(sp, sp.Lt(x, 0))),
    "ge0": Function(1, lambda x: _truth(x >= 0), lambda sp, x: _as_truth(sp, sp.Ge(x, 0))),
    "le0": Function(1, lambda x: _truth(x <= 0), lambda sp, x: _as_truth(sp, sp.Le(x, 0))),
    # x^y of |x|, as a .param expression reads pwr; B sources keep the sign of x (pwrs)
    "pwr": Function(2, lambda x, y: _power(abs(x), y), lambda sp, x, y: sp.Abs(x) ** y),
    "pwrs": Function(2, lambda x, y: -_power(-x, y) if x < 0 else _power(x, y),
                     lambda sp, x, y: sp.Piecewise((-((-x) ** y), x < 0), (x ** y, True))),
}


@dataclass(frozen=True)
class Draw:
    """A random function of SPICE: its arity, the law of its variate (standard normal, or
    uniform on [-1, 1)) and its value from its arguments and that variate."""

    arity: int
    law: Literal["normal", "uniform"]
    value: Callable[..., float]


# ngspice's random functions; outside .mc each takes its nominal value (the first argument)
DRAWS: dict[str, Draw] = {
    "agauss": Draw(3, "normal", lambda nominal, absolute, sigma, z:
                   nominal + absolute / sigma * z),
    "gauss": Draw(3, "normal", lambda nominal, relative, sigma, z:
                  nominal * (1 + relative / sigma * z)),
    "aunif": Draw(2, "uniform", lambda nominal, absolute, u: nominal + absolute * u),
    "unif": Draw(2, "uniform", lambda nominal, relative, u: nominal * (1 + relative * u)),
    "limit": Draw(2, "uniform", lambda nominal, absolute, u:
                  nominal + (absolute if u >= 0 else -absolute)),
}


def _nominal(nominal: float, *variation: float) -> float:
    return nominal


FUNCTIONS.update({name: Function(draw.arity, _nominal, lambda sp, nominal, *variation: nominal)
                  for name, draw in DRAWS.items()})

# operations whose result on rational numbers sympy keeps exact, cheaply
EXACT = frozenset({"+", "-", "*", "/", "neg"})

# operators: (precedence, name of their function); unary ones bind tighter than any binary
BINARY = {"?": (0, "?"), "||": (1, "||"), "&&": (2, "&&"), "==": (3, "=="), "!=": (3, "!="),
          "<": (4, "<"), "<=": (4, "<="), ">": (4, ">"), ">=": (4, ">="),
          "+": (5, "+"), "-": (5, "-"), "*": (6, "*"), "/": (6, "/")}
UNARY_PRECEDENCE = 7
OPERATORS: dict[str, Function] = {
    "?": Function(3, lambda c, a, b: a if c != 0 else b,
                  lambda sp, c, a, b: _piecewise(sp, sp.Ne(c, 0), a, b)),
    "||": Function(2, lambda a, b: _truth(a != 0 or b != 0),
                   lambda sp, a, b: _as_truth(sp, sp.Or(sp.Ne(a, 0), sp.Ne(b, 0)))),
    "&&": Function(2, lambda a, b: _truth(a != 0 and b != 0),
                   lambda sp, a, b: _as_truth(sp, sp.And(sp.Ne(a, 0), sp.Ne(b, 0)))),
    "==": Function(2, lambda a, b: _truth(a == b), lambda sp, a, b: _as_truth(sp, sp.Eq(a, b))),
    "!=": Function(2, lambda a, b: _truth(a != b), lambda sp, a, b: _as_truth(sp, sp.Ne(a, b))),
    "<": Function(2, lambda a, b: _truth(a < b), lambda sp, a, b: _as_truth(sp, sp.Lt(a, b))),
    "<=": Function(2, lambda a, b: _truth(a <= b), lambda sp, a, b: _as_truth(sp, sp.Le(a, b))),
    ">": Function(2, lambda a, b: _truth(a > b), lambda sp, a, b: _as_truth(sp, sp.Gt(a, b))),
    ">=": Function(2, lambda a, b: _truth(a >= b), lambda sp, a, b: _as_truth(sp, sp.Ge(a, b))),
    "+": Function(2, operator.add, lambda sp, a, b: a + b),
    "-": Function(2, operator.sub, lambda sp, a, b: a - b),
    "*": Function(2, operator.mul, lambda sp, a, b: a * b),
    "/": Function(2, operator.truediv, lambda sp, a, b: a / b),
    "^": Function(2, _power, lambda sp, a, b: sp.Pow(a, b)),
    "neg": Function(1, operator.neg, lambda sp, x: -x),
    "!": Function(1, lambda x: _truth(x == 0), lambda sp, x: _as_truth(sp, sp.Eq(x, 0))),
}
RELATIONS = ("==", "!=", "<", "<=", ">", ">=")


def _piecewise_linear(x: float, *points: float) -> float:
    """ngspice's ``pwl(x, x0, y0, x1, y1, ...)``: linear between the points (their abscissae
    rising, or falling), and beyond them along the first or last segment."""
    xs, ys = points[0::2], points[1::2]
    if xs[0] > xs[-1]:
        xs, ys = xs[::-1], ys[::-1]
    k = min(max(bisect.bisect_right(xs, x), 1), len(xs) - 1)
    return ys[k - 1] + (ys[k] - ys[k - 1]) * (x - xs[k - 1]) / (xs[k] - xs[k - 1])


def _piecewise_linear_sympy(sp, x, *points):
    xs, ys = list(points[0::2]), list(points[1::2])
    if all(v.is_number for v in xs) and xs[0] > xs[-1]:
        xs, ys = xs[::-1], ys[::-1]
    segments = [(ys[k - 1] + (ys[k] - ys[k - 1]) * (x - xs[k - 1]) / (xs[k] - xs[k - 1]),
                 x < xs[k]) for k in range(1, len(xs) - 1)]
    last = len(xs) - 1
    return sp.Piecewise(*segments, (ys[last - 1] + (ys[last] - ys[last - 1]) * (
        x - xs[last - 1]) / (xs[last] - xs[last - 1]), True))


@functools.cache
def operation(name: str) -> Function:
    """The function or operator an ``apply`` step names; ``pwl#n``: ngspice's pwl() of n
    arguments (x and the points), whose count the call fixes."""
    if name.startswith("pwl#"):
        return Function(int(name[4:]), _piecewise_linear, _piecewise_linear_sympy)
    return FUNCTIONS.get(name) or OPERATORS[name]


@dataclass(frozen=True)
class UserFunction:
    """A ``.func name(a, b) = {expr}``: its parameters and body, expanded where called."""

    name: str
    parameters: tuple[str, ...]
    body: Expression


class Expression:
    """A parsed expression: its program, its text, and where the text starts.

    >>> from mna.netlist.model import SourceLocation
    >>> e = parse_expression("2*r0 + 1k", SourceLocation("x.net", 1, 1))
    >>> e.evaluate({"r0": 3.0})
    1006.0
    """

    __slots__ = ("program", "text", "location")

    def __init__(self, program: tuple[Instruction, ...], text: str, location: SourceLocation):
        self.program = program
        self.text = text
        self.location = location

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"

    # -- what it reads -------------------------------------------------------------------------
    @property
    def names(self) -> dict[str, SourceLocation]:
        """Each parameter (or constant) name it reads, at its first place."""
        found: dict[str, SourceLocation] = {}
        for step in self.program:
            if step.code == "name" and step.argument not in found:
                found[step.argument] = self.location.shifted(step.offset)
        return found

    @property
    def probes(self) -> dict[Probe, SourceLocation]:
        return {step.argument: self.location.shifted(step.offset)
                for step in self.program if step.code == "probe"}

    @property
    def uses_time(self) -> bool:
        return any(step.code == "time" for step in self.program)

    @property
    def is_constant(self) -> bool:
        """Whether it reads nothing (a name, even ``pi``, may be a parameter's) and draws
        nothing (a random function has a new value in each Monte Carlo sample)."""
        return all(step.code == "number" or step.code == "apply" and step.argument not in DRAWS
                   for step in self.program)

    # -- evaluation ----------------------------------------------------------------------------
    def evaluate(self, values: Mapping[str, float], time: float | None = None,
                 probes: Mapping[Probe, float] | None = None) -> float:
        """Its value in floats, with parameters from `values` (constants where not given),
        and `time` and `probes` where it reads them."""
        return self._run(self.program, values, time, probes)[0]

    def draw(self, values: Mapping[str, float], variate: float) -> float:
        """The value of a random function's call (``agauss(1k, 50, 1)``) at `variate`, a
        number drawn from its law (`DRAWS`), with parameters from `values`."""
        *arguments, call = self.program
        try:
            return _check(DRAWS[call.argument].value(*self._run(arguments, values), variate))
        except (ArithmeticError, ValueError) as error:
            self._fail(call, _reason(call.argument, self._run(arguments, values), error))

    @property
    def law(self) -> str | None:
        """The law of the variate when the expression is a random function's call."""
        last = self.program[-1]
        return DRAWS[last.argument].law if last.code == "apply" and last.argument in DRAWS \
            else None

    def _run(self, program, values: Mapping[str, float], time: float | None = None,
             probes: Mapping[Probe, float] | None = None) -> list[float]:
        """The stack left by `program`, a program of this expression."""
        stack: list[float] = []
        push = stack.append
        for step in program:
            code = step.code
            if code == "number":
                push(step.argument)
            elif code == "apply":
                function = operation(step.argument)
                arguments = stack[len(stack) - function.arity:]
                del stack[len(stack) - function.arity:]
                try:
                    push(_check(function.numeric(*arguments)))
                except (ArithmeticError, ValueError, TypeError) as error:
                    self._fail(step, _reason(step.argument, arguments, error))
            elif code == "name":
                value = values.get(step.argument)
                if value is None:
                    value = CONSTANTS.get(step.argument)
                    if value is None:
                        self._fail(step, f"undefined parameter '{step.argument}'")
                push(value)
            elif code == "time" and time is not None:
                push(time)
            elif code == "probe" and probes is not None:
                push(probes[step.argument])
            else:
                what = "time" if code == "time" else f"{step.argument.kind}()"
                self._fail(step, f"{what} has no value here")
        return stack

    def _fail(self, step: Instruction, message: str) -> NoReturn:
        raise NetlistError(message, self.location.shifted(step.offset))

    def substitute(self, values: Mapping[str, Value]) -> Value:
        """The expression with the names of `values` replaced by them (a float when nothing
        is left to read): a subcircuit's parameters, a ``.func``'s arguments."""
        program: list[Instruction] = []
        for step in self.program:
            value = values.get(step.argument) if step.code == "name" else None
            if value is None:
                program.append(step)
            elif isinstance(value, Expression):
                program.extend(s._replace(offset=step.offset) for s in value.program)
            else:
                program.append(Instruction("number", float(value), step.offset))
        expression = Expression(tuple(program), self.text, self.location)
        return expression.evaluate({}) if expression.is_constant else expression

    def switches(self) -> list[tuple[str, Expression]]:
        """Where the expression changes its form: each ``(kind, g)`` with g an expression
        that crosses zero there. Kinds: ``"zero"`` (a comparison, min, max, abs, sign, the
        condition of if) and ``"integer"`` (floor, ceil: g crosses every whole number)."""
        found: list[tuple[str, Expression]] = []
        starts: list[int] = []   # where each value on the stack began in the program
        for index, step in enumerate(self.program):
            if step.code != "apply":
                starts.append(index)
                continue
            name = step.argument
            arity = operation(name).arity
            begins = starts[len(starts) - arity:]
            del starts[len(starts) - arity:]
            parts = [self.program[a:b] for a, b in zip(begins, [*begins[1:], index])]
            if name in RELATIONS or name in ("min", "max"):
                difference = (*parts[0], *parts[1], Instruction("apply", "-", step.offset))
                found.append(("zero", self._part(difference)))
            elif name in ("abs", "sign", "sgn", "u", "uramp", "pwr", "pwrs", "if", "?", "eq0",
                          "ne0", "gt0", "lt0", "ge0", "le0"):
                found.append(("zero", self._part(parts[0])))
            elif name == "u2":      # corners at 0 and 1
                found.append(("zero", self._part(parts[0])))
                one = (*parts[0], Instruction("number", 1.0, step.offset),
                       Instruction("apply", "-", step.offset))
                found.append(("zero", self._part(one)))
            elif name.startswith("pwl#"):    # a corner at each inner point
                for inner in parts[3:-2:2]:
                    corner = (*parts[0], *inner, Instruction("apply", "-", step.offset))
                    found.append(("zero", self._part(corner)))
            elif name in ("floor", "ceil", "int"):
                found.append(("integer", self._part(parts[0])))
            elif name == "nint":    # jumps where x - 1/2 is whole
                half = (*parts[0], Instruction("number", 0.5, step.offset),
                        Instruction("apply", "-", step.offset))
                found.append(("integer", self._part(half)))
            starts.append(begins[0] if begins else index)
        return found

    def _part(self, program) -> Expression:
        return Expression(tuple(program), self.text, self.location)

    def to_sympy(self, name: Callable[[str], object], probe: Callable[[Probe], object] | None
                 = None, time: object = None):
        """The sympy expression: `name` gives a parameter's value or symbol (None: the
        constant of that name), `probe` and `time` the symbols of probes and time."""
        import sympy

        stack: list = []
        for step in self.program:
            code = step.code
            if code == "number":
                value = step.argument
                stack.append(sympy.Integer(int(value)) if value == int(value)
                             and abs(value) < 2**53 else sympy.Float(value))
            elif code == "name":
                value = name(step.argument)
                if value is None:
                    value = {"pi": sympy.pi, "e": sympy.E}[step.argument]
                stack.append(value)
            elif code == "time":
                stack.append(time)
            elif code == "probe":
                stack.append(probe(step.argument))
            else:
                function = operation(step.argument)
                arguments = stack[len(stack) - function.arity:]
                del stack[len(stack) - function.arity:]
                if all(isinstance(a, sympy.Number) for a in arguments):
                    stack.append(self._folded(sympy, step, function, arguments))
                else:
                    stack.append(function.symbolic(sympy, *arguments))
        return stack[0]

    def _folded(self, sympy, step: Instruction, function: Function, arguments: list):
        """An operation on numbers alone, computed as `evaluate` computes it (so that a power
        tower or a root of a negative number is the same located error, never a huge exact
        integer or a complex number); kept exact for rational arithmetic."""
        floats = [float(a) for a in arguments]
        try:
            value = _check(function.numeric(*floats))
        except (ArithmeticError, ValueError, TypeError) as error:
            self._fail(step, _reason(step.argument, floats, error))
        if step.argument in EXACT:
            return function.symbolic(sympy, *arguments)
        return (sympy.Integer(int(value)) if value == int(value) and abs(value) < 2**53
                else sympy.Float(value))


Value: TypeAlias = "float | Expression"


def times(value: Value, factor: Value) -> Value:
    """`value` times `factor`: a number, or the expression of the product, placed where
    the first expression stands."""
    if not isinstance(value, Expression) and not isinstance(factor, Expression):
        return value * factor
    first, second = (value, factor) if isinstance(value, Expression) else (factor, value)
    program = (*first.program,
               *(second.program if isinstance(second, Expression)
                 else (Instruction("number", second, 0),)),
               Instruction("apply", "*", 0))
    return Expression(tuple(step._replace(offset=0) if index >= len(first.program) else step
                            for index, step in enumerate(program)), first.text, first.location)


class RandomCalls:
    """The random function calls of a netlist, each made a parameter of its own (``agauss@1``:
    a name no netlist can write) so that a Monte Carlo sample draws each call once: an
    element's own call is its own draw, and the elements that read one ``.param`` share
    its draw. `parameters` are in the order made, each reading only those before it."""

    def __init__(self):
        self.parameters: dict[str, Expression] = {}

    def hoist(self, value: Value) -> Value:
        """`value` with each random call replaced by the name of its new parameter."""
        if not isinstance(value, Expression) or value.is_constant:
            return value
        program: list[Instruction] = []
        starts: list[int] = []   # where each value on the stack began in `program`
        for step in value.program:
            if step.code != "apply":
                starts.append(len(program))
                program.append(step)
                continue
            arity = operation(step.argument).arity
            begins = starts[len(starts) - arity:]
            del starts[len(starts) - arity:]
            begin = begins[0] if begins else len(program)
            starts.append(begin)
            if step.argument not in DRAWS:
                program.append(step)
                continue
            call = Expression((*program[begin:], step), value.text, value.location)
            if call.uses_time or call.probes:
                value._fail(step, f"{step.argument}() draws from parameter values, not from "
                                  "time or probes")
            name = f"{step.argument}@{len(self.parameters) + 1}"
            self.parameters[name] = call
            del program[begin:]
            program.append(Instruction("name", name, step.offset))
        return Expression(tuple(program), value.text, value.location)


def _reason(name: str, arguments: list[float], error: Exception) -> str:
    shown = ", ".join(f"{a:g}" for a in arguments)
    if isinstance(error, TypeError):
        return f"{name}({shown}) takes real arguments"
    if name in BINARY or name == "^":
        shown, name = f"{arguments[0]:g} {name} {arguments[1]:g}", ""
    if isinstance(error, ZeroDivisionError):
        return f"division by zero in {name}({shown})" if name else f"division by zero: {shown}"
    described = f"{name}({shown})" if name else shown
    if isinstance(error, OverflowError):
        return f"{described} overflows"
    return f"{described} is not a real number"


def parse_expression(text: str, location: SourceLocation, *, time: bool = False,
                     probes: bool = False, functions: Mapping[str, UserFunction] | None = None,
                     condition: bool = False) -> Expression:
    """Parse `text`, which starts at `location`; `time` and `probes` allow ``time`` and
    ``V()``/``I()``; `functions` are the ``.func`` definitions in scope; in a `condition`
    (ngspice's ``.if``) a lone ``=`` compares, as ``==``.

    >>> from mna.netlist.model import SourceLocation
    >>> parse_expression("2^3^2 + (1 < 2)", SourceLocation("x.net", 1, 1)).evaluate({})
    513.0
    """
    return _Parser(text, location, time, probes, functions or {}, condition).parse()


class _Parser:
    """Precedence climbing over a small tokenizer, emitting the program in postfix order."""

    def __init__(self, text: str, location: SourceLocation, time: bool, probes: bool,
                 functions: Mapping[str, UserFunction], condition: bool = False):
        self.text = text
        self.location = location
        self.allow_time = time
        self.allow_probes = probes
        self.functions = functions
        self.condition = condition
        self.tokens = self._tokenize()
        self.index = 0
        self.depth = 0
        self.program: list[Instruction] = []

    def _tokenize(self) -> list[tuple[str, str, int]]:
        tokens = []
        position = 0
        while position < len(self.text):
            match = TOKEN.match(self.text, position)
            if match is None or match.lastgroup is None:
                rest = self.text[position:]
                if not rest.strip():
                    break
                self.fail(f"unexpected {rest.lstrip()[0]!r} in expression",
                          position + len(rest) - len(rest.lstrip()))
            kind, text = match.lastgroup, match.group(match.lastgroup)
            if text == "=":
                if not self.condition:
                    self.fail("unexpected '=' in expression", match.start(kind))
                text = "=="
            tokens.append((kind, text, match.start(kind)))
            position = match.end()
        tokens.append(("end", "", len(self.text)))
        return tokens

    def fail(self, message: str, offset: int) -> NoReturn:
        raise NetlistError(message, self.location.shifted(offset))

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.index]

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expect(self, text: str) -> None:
        _, value, offset = self.take()
        if value != text:
            self.fail(f"expected '{text}'" + (f", found '{value}'" if value else ""), offset)

    def emit(self, code: str, argument: object, offset: int) -> None:
        self.program.append(Instruction(code, argument, offset))

    def parse(self) -> Expression:
        if self.peek()[0] == "end":
            self.fail("empty expression", 0)
        self.binary(0)
        kind, text, offset = self.peek()
        if kind != "end":
            self.fail(f"unexpected '{text}' in expression", offset)
        return Expression(tuple(self.program), self.text, self.location)

    def nested(self, offset: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"expression nested more than {MAX_DEPTH} levels deep", offset)

    def binary(self, min_precedence: int) -> None:
        self.unary()
        while True:
            kind, text, offset = self.peek()
            if kind != "op" or text not in BINARY or BINARY[text][0] < min_precedence:
                return
            precedence, name = BINARY[text]
            self.take()
            self.nested(offset)
            if name == "?":    # c ? a : b, right-associative
                self.binary(1)
                self.expect(":")
                self.binary(0)
            else:
                self.binary(precedence + 1)
            self.depth -= 1
            self.emit("apply", name, offset)

    def unary(self) -> None:
        kind, text, offset = self.peek()
        if kind == "op" and text in ("-", "+", "!"):
            self.take()
            self.nested(offset)
            self.binary(UNARY_PRECEDENCE)
            self.depth -= 1
            if text != "+":
                self.emit("apply", "neg" if text == "-" else "!", offset)
            return
        self.power()

    def power(self) -> None:
        """Powers right to left: ``2^3^2`` is ``2^(3^2)``, and ``{9**9**9}`` overflows (the
        netlist language's own example; ngspice 39 groups them left to right)."""
        self.primary()
        kind, text, offset = self.peek()
        if kind == "op" and text in ("^", "**"):
            self.take()
            self.nested(offset)
            self.binary(UNARY_PRECEDENCE)   # 2^-1 is 0.5
            self.depth -= 1
            self.emit("apply", "^", offset)

    def primary(self) -> None:
        kind, text, offset = self.take()
        if kind == "number":
            self.emit("number", read_number(text, self.location.shifted(offset)), offset)
        elif kind == "op" and text == "(":
            self.nested(offset)
            self.binary(0)
            self.expect(")")
            self.depth -= 1
        elif kind == "name" and self.peek()[1] == "(":
            self.call(text, offset)
        elif kind == "name":
            self.name(text, offset)
        else:
            self.fail("expected a value" + (f", found '{text}'" if text else ""), offset)

    def name(self, text: str, offset: int) -> None:
        key = text.lower()
        if key == "time":
            if not self.allow_time:
                self.fail("'time' is only allowed in source values and behavioural elements",
                          offset)
            self.emit("time", None, offset)
        else:
            self.emit("name", key, offset)

    def call(self, text: str, offset: int) -> None:
        key = text.lower()
        if key == "pwr" and self.allow_probes and key not in self.functions:
            key = "pwrs"     # ngspice's B sources keep the sign; its .param expressions not
        self.take()
        if key in ("v", "i"):
            self.probe(key, offset)
            return
        user = self.functions.get(key)
        if user is None and key not in FUNCTIONS and key != "pwl":
            self.fail(f"unknown function '{text}'", offset)
        self.nested(offset)
        starts = []
        if self.peek()[1] != ")":     # f() calls a .func of no arguments
            starts.append(len(self.program))
            self.binary(0)
        while starts and self.peek()[1] == ",":
            self.take()
            starts.append(len(self.program))
            self.binary(0)
        self.expect(")")
        self.depth -= 1
        if key == "pwl" and user is None:   # pwl(x, x0, y0, x1, y1, ...): two points or more
            if len(starts) < 5 or len(starts) % 2 == 0:
                self.fail(f"pwl() takes x and pairs of points (at least two), got "
                          f"{len(starts)} arguments", offset)
            key = f"pwl#{len(starts)}"
        if user is None and key in ("min", "max") and len(starts) > 2:
            for _ in starts[1:]:   # of any number, folded (ngspice 39 takes two: its
                # .param's three-argument min(3, 1, 4) is 3)
                self.emit("apply", key, offset)
            return
        arity = len(user.parameters) if user else operation(key).arity
        if len(starts) != arity:
            self.fail(f"{text.lower()}() takes {arity} argument{'s' * (arity != 1)}, got "
                      f"{len(starts)}", offset)
        if user is None:
            self.emit("apply", key, offset)
            return
        # a .func call: its body with each parameter replaced by its argument's program
        arguments = [Expression(tuple(self.program[begin:end]), "", self.location)
                     for begin, end in zip(starts, [*starts[1:], len(self.program)])]
        del self.program[len(self.program) if not starts else starts[0]:]
        uses = Counter(s.argument for s in user.body.program if s.code == "name")
        grown = len(self.program) + len(user.body.program) + sum(
            uses[name] * (len(argument.program) - 1)
            for name, argument in zip(user.parameters, arguments))
        if grown > MAX_PROGRAM:   # each call copies its arguments: nested ones multiply
            self.fail(f"expression grows beyond {MAX_PROGRAM} operations with {key}() "
                      "expanded", offset)
        body = user.body.substitute(dict(zip(user.parameters, arguments)))
        if isinstance(body, Expression):
            if body.uses_time and not self.allow_time or body.probes and not self.allow_probes:
                self.fail(f"{key}() reads time or probes, which are not allowed here", offset)
            self.program.extend(s._replace(offset=offset) for s in body.program)
        else:
            self.emit("number", body, offset)

    def probe(self, key: str, offset: int) -> None:
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
        self.emit("probe", Probe(key.upper(), tuple(text for _, text, _ in names)), offset)
