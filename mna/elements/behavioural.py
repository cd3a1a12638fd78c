"""Behavioural sources ``B... V={expr}`` / ``I={expr}`` of probes, ``time`` and parameters.

Every B source of a circuit is one device: sympy differentiates each expression once, and
one generated function evaluates all of them and their exact gradients per call. Probes may
read any domain, so a B source couples domains (Joule heating).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from mna.elements.base import Edge, Element, Role
from mna.elements.device import Device, Instance, Load, terminal_array
from mna.expr import LAMBDIFY_FUNCTIONS, Expression, Probe, Value, times
from mna.netlist.fields import GROUND, FieldReader, OutputName
from mna.netlist.model import Braced


def time_symbol():
    """``time`` in a behavioural expression."""
    import sympy

    return sympy.Symbol("time", real=True)


def local_symbol(index: int):
    """The `index`-th terminal value of one B source's expression."""
    import sympy

    return sympy.Symbol(f"z{index}", real=True)


# the float functions of `LAMBDIFY_FUNCTIONS` and Python's min and max in numpy's arithmetic
# (numpy's own max is the largest entry along an axis)
GUARDED_FUNCTIONS = {"nint": np.rint, "min": np.minimum, "max": np.maximum}


class Behavioural(Device):
    """Every B source: `signs` weights each one's value into its terminals' equations (an
    ``I=`` source: +1 at n+, -1 at n-; a ``V=`` source: -1 at its branch row).

    Each comparison ``a > b`` (or ``<``, ``>=``, ``<=``) in an expression is a switching
    function (``a - b``, or ``b - a``), and its truth comes from its mode: between the
    instants where a comparison changes, the expression is smooth for Newton. A DC solution
    from nothing starts with each comparison as it is at rest (every terminal at 0 V, t = 0),
    as ngspice's first iteration evaluates it: where a circuit has a solution on either
    side, it settles in ngspice's.
    """

    noiseless = True

    def __init__(self, names, terminals, signs: np.ndarray, function, guarded, switches,
                 owners: np.ndarray, strict: np.ndarray):
        super().__init__(names, terminals)
        self.signs = signs
        self.function = function
        self._guarded = guarded
        self.switches = switches
        self.owners = owners   # the instance of each comparison: each has its own count
        self.strict = strict
        at_rest = self.switching(np.zeros(terminals.shape), 0.0)
        holds = (at_rest > 0) | ((at_rest == 0) & ~strict) | np.isnan(at_rest)
        self.modes = np.where(holds, 1.0, -1.0)

    def settle(self, v, t):
        """As `Device.settle`, but a comparison at a tie holds as its relation says there
        (``>=`` and ``<=`` do, ``>`` and ``<`` do not), as ngspice evaluates it: a node that a
        source holds at the threshold is a tie, not a crossing to come."""
        values = self.switching(v, t)
        settled = np.where(values == 0, np.where(self.strict, -1.0, 1.0),
                           np.where(np.isnan(values), self.modes, np.sign(values)))
        changed = not np.array_equal(settled, self.modes)
        self.modes = settled
        return changed

    @classmethod
    def build(cls, instances: list[Instance]) -> Behavioural:
        import sympy

        width = max(len(instance.terminals) for instance in instances)
        variables = [[sympy.Symbol(f"z{k}_{j}", real=True) for j in range(width)]
                     for k in range(len(instances))]
        values, gradients, switches, modes, owners, strict = [], [], [], [], [], []
        for k, (own, instance) in enumerate(zip(variables, instances)):
            expression = instance.parameters["expression"].xreplace(
                {local_symbol(j): own[j] for j in range(width)})
            comparisons = {}
            for relation in sorted(expression.atoms(sympy.StrictGreaterThan, sympy.GreaterThan,
                                                   sympy.StrictLessThan, sympy.LessThan),
                                   key=sympy.default_sort_key):
                mode = sympy.Symbol(f"m{len(modes)}", real=True)
                modes.append(mode)
                owners.append(k)
                strict.append(relation.rel_op in (">", "<"))
                greater = relation.rel_op in (">", ">=")
                switches.append(relation.lhs - relation.rhs if greater
                                else relation.rhs - relation.lhs)
                comparisons[relation] = sympy.StrictGreaterThan(mode, 0)
            expression = expression.xreplace(comparisons)
            values.append(expression)
            gradients.append([_smooth(sympy.diff(expression, z)) for z in own])
        flat = [z for own in variables for z in own]
        namespace = [LAMBDIFY_FUNCTIONS, "math"]
        function = sympy.lambdify([flat, time_symbol(), modes], [values, gradients], namespace,
                                  cse=True)

        @functools.cache
        def guarded():   # the same in numpy's arithmetic, made where first needed
            return sympy.lambdify([flat, time_symbol(), modes], [values, gradients],
                                  [GUARDED_FUNCTIONS, "numpy"], cse=True)

        switching = sympy.lambdify([flat, time_symbol()], switches, namespace, cse=True)
        signs = np.zeros((len(instances), width))
        for row, instance in enumerate(instances):
            for local, sign in instance.parameters["rows"]:
                signs[row, local] = sign
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, width), signs, function, guarded,
                   switching, np.array(owners, dtype=int), np.array(strict, dtype=bool))

    def load(self, v, t):
        try:
            values, gradients = self.function(v.ravel().tolist(), t, self.modes.tolist())
            values = np.asarray(values, dtype=float)
            gradients = np.asarray(gradients, dtype=float)
        except (ArithmeticError, ValueError, TypeError):   # TypeError: a complex power
            values, gradients = self._load_guarded(v, t)
        return Load(self.signs * values[:, None], self.signs[:, :, None] * gradients[:, None, :])

    def _load_guarded(self, v, t) -> tuple[np.ndarray, np.ndarray]:
        """Values and gradients where a float operation failed, in numpy's arithmetic: a
        value that is not finite (a logarithm of 0) stays NaN, for Newton to report; a
        slope that is not finite where its value is (sqrt(abs(V(a))) at V(a) = 0, as
        ngspice's guarded division gives it) counts as none."""
        with np.errstate(all="ignore"):
            values, gradients = self._guarded()(list(v.ravel()), np.float64(t),
                                                self.modes.tolist())
            values = np.asarray(values, dtype=float)
            gradients = np.asarray(gradients, dtype=float)
        finite = np.isfinite(values)
        values[~finite] = np.nan
        gradients[~np.isfinite(gradients)] = 0.0
        gradients[~finite] = np.nan
        return values, gradients

    def mode_owners(self):
        return self.owners

    def switching(self, v, t):
        if not len(self.owners):
            return np.empty(0)
        try:
            return np.asarray(self.switches(v.ravel().tolist(), t), dtype=float)
        except (ArithmeticError, ValueError):
            return np.full(len(self.owners), np.nan)


def _smooth(derivative):
    """A derivative fit for Newton: steps (`Heaviside`) as piecewise values, and the
    derivatives of steps and of floor/ceil (impulses) as zero."""
    import sympy

    derivative = derivative.replace(lambda e: isinstance(e, sympy.Derivative),
                                    lambda e: sympy.Integer(0))
    derivative = derivative.replace(sympy.DiracDelta, lambda *args: sympy.Integer(0))
    return derivative.rewrite(sympy.Piecewise)


@dataclass(eq=False)
class BehaviouralSource(Element):
    """``V={expr}``: across source of that value; ``I={expr}``: through source n+ → n-;
    ngspice's ``tc1=``, ``tc2=`` scale the value by ``1 + tc1 dT + tc2 dT^2`` (dT from TNOM
    to the circuit's temperature), or divide it (`divided`: a behavioural resistor's
    current, whose resistance they scale)."""

    kind: str
    expression: Expression
    tc1: Value = 0.0
    tc2: Value = 0.0
    divided: bool = False

    prefix = "B"
    usage = ("Bname n+ n- V={expr} | Bname n+ n- I={expr} [tc1= tc2= m=]   (expr of V(n), "
             "V(a,b), I(name), time)")

    @classmethod
    def from_fields(cls, reader: FieldReader) -> BehaviouralSource:
        nodes = reader.nodes("n+", "n-")
        reader.done()
        given = [k for k in ("v", "i") if k in reader.assigns]
        if len(given) != 1:
            reader.fail(f"{reader.name}: give exactly one of V={{expr}} or I={{expr}}", usage=True)
        assign = reader.assigns.pop(given[0])
        value = assign.values[0]
        braced = value if isinstance(value, Braced) else Braced(str(value), assign.places[0])
        expression = reader.behavioural(braced)
        coefficients = reader.options(("tc1", "tc2"))
        if given[0] == "i" and (copies := reader.copies()) is not None:
            expression = times(expression, copies)
        reader.no_more_options("v= or i=, tc1=, tc2=" + (", m=" if given[0] == "i" else ""))
        return cls(reader.name, reader.location, nodes, given[0], expression, **coefficients)

    def edges(self):
        return [Edge(self, *self.nodes, self._role())]

    def _role(self) -> Role:
        """``I={f(V(n+,n-))}`` that reads its own nodes conducts (a nonlinear resistor);
        otherwise a B source is a source for the topology checks."""
        if self.kind == "v":
            return Role.ACROSS_SOURCE
        own = set(self.nodes) - {GROUND}
        reads_own = any(probe.kind == "V" and own & set(probe.names)
                        for probe in self.expression.probes)
        return Role.DISSIPATOR if reads_own else Role.THROUGH_SOURCE

    def copied(self, count):
        """A current `count` times one copy's; a voltage as one. One that reads a through
        variable, which stands for the copies' sum, cannot be."""
        if any(probe.kind == "I" for probe in self.expression.probes):
            self.fail("reads a through variable I(...), which in an instance with m= is the "
                      "sum of its copies': not supported there")
        if self.kind == "v":
            return self
        return dataclasses.replace(self, expression=times(self.expression, count))

    def validate(self, circuit) -> None:
        for probe, location in self.expression.probes.items():
            circuit.check_output(OutputName(probe.kind, probe.names), location)

    def branches(self):
        return ("",) if self.kind == "v" else ()

    def reports_through(self) -> bool:
        return self.kind == "v"

    def stamp(self, s) -> None:
        if self.kind == "v":
            k = s.branch(self)
            s.G.incidence(*self.nodes, k)
            s.G.across(k, *self.nodes, 1)
            terminals, rows = [k], ((0, -1.0),)
        else:
            terminals = [s.index_of(n) for n in self.nodes]
            rows = ((0, 1.0), (1, -1.0))

        def variable(index: int):
            """The local symbol of unknown `index`; the reference's (-1) is 0."""
            import sympy

            if index < 0:
                return sympy.Integer(0)
            if index not in terminals:
                terminals.append(index)
            return local_symbol(terminals.index(index))

        expression = self.expression.to_sympy(
            s.backend.symbol, lambda probe: self._probe(s, probe, variable), time_symbol())
        if (self.tc1, self.tc2) != (0.0, 0.0):
            rise = s.circuit.options.temp - s.circuit.options.tnom
            factor = 1 + s.value(self.tc1) * rise + s.value(self.tc2) * rise**2
            expression = expression / factor if self.divided else expression * factor
        s.device(Behavioural, self.name, tuple(terminals),
                 {"expression": expression, "rows": rows})

    def _probe(self, s, probe: Probe, variable):
        """A probe as a combination of the local variables of the unknowns it reads."""
        import sympy

        if probe.kind == "V":
            a, b = (*probe.names, GROUND)[:2]
            return variable(s.index_of(a)) - variable(s.index_of(b))
        row = s.through_row(s.circuit.elements_by_key[probe.names[0]])
        if row.dx.cols or row.u.cols:
            self.fail(f"I({probe.names[0]}) depends on derivatives or inputs; probe a V source, "
                      "an inductor-type element, a resistor or a controlled source instead")
        return sum((value * variable(col) for col, value in zip(row.x.cols, row.x.values)),
                   sympy.Integer(0))

    def terminal_currents(self):
        return {} if self.kind == "v" else {"i": 0}

    def probes(self):
        return tuple(self.expression.probes)

    def through(self, s, row) -> None:
        row.x.add(s.branch(self, "" if self.kind == "v" else "i"), 1)
