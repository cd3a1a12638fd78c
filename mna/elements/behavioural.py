"""Behavioural sources ``B... V={expr}`` / ``I={expr}`` of probes, ``time`` and parameters.

The expression is differentiated once by sympy and compiled (lambdify) into the residual and
its exact Jacobian; probes may read any domain, so a B source couples domains (Joule heating).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mna.elements.base import Edge, Element, Role
from mna.expr import Expression, Probe
from mna.netlist.fields import GROUND, FieldReader, OutputName
from mna.netlist.model import Braced
from mna.nonlinear import NonlinearPart


def time_symbol():
    import sympy

    return sympy.Symbol("time", real=True)


class Expression_(NonlinearPart):
    """``sign * expr(z, time)`` added to equation rows; z are the unknowns it reads."""

    def __init__(self, name, indices, rows, signs, expression, variables):
        import sympy

        super().__init__(name, indices)
        self.rows = rows
        self.signs = np.asarray(signs, float)
        gradient = [sympy.diff(expression, v) for v in variables]
        self._value = sympy.lambdify([variables, time_symbol()], expression, "math")
        self._gradient = sympy.lambdify([variables, time_symbol()], gradient, "math")
        self.size = len(indices)

    def currents(self, x, time):
        try:
            value = float(self._value(list(x), time))
            gradient = np.asarray(self._gradient(list(x), time), float)
        except (OverflowError, ValueError, ZeroDivisionError):
            value, gradient = np.nan, np.full(self.size, np.nan)  # Newton reports the failure
        f = np.zeros(self.size)
        jacobian = np.zeros((self.size, self.size))
        for row, sign in zip(self.rows, self.signs):
            f[row] += sign * value
            jacobian[row] += sign * gradient
        return f, jacobian


@dataclass(eq=False)
class BehaviouralSource(Element):
    """``V={expr}``: across source of that value; ``I={expr}``: through source n+ → n-."""

    kind: str
    expression: Expression

    prefix = "B"
    usage = "Bname n+ n- V={expr} | Bname n+ n- I={expr}   (expr of V(n), V(a,b), I(name), time)"

    @classmethod
    def from_fields(cls, reader: FieldReader) -> BehaviouralSource:
        nodes = (reader.node("n+"), reader.node("n-"))
        reader.done()
        given = [k for k in ("v", "i") if k in reader.assigns]
        if len(given) != 1:
            reader.fail(f"{reader.name}: give exactly one of V={{expr}} or I={{expr}}", usage=True)
        assign = reader.assigns.pop(given[0])
        value = assign.values[0]
        braced = value if isinstance(value, Braced) else Braced(str(value), assign.places[0])
        expression = reader.behavioural(braced)
        reader.no_more_options()
        return cls(reader.name, reader.location, nodes, given[0], expression)

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

    def validate(self, circuit) -> None:
        for probe, location in self.expression.probes.items():
            circuit.check_output(OutputName(probe.kind, probe.names), location)

    def branches(self):
        return ("",) if self.kind == "v" else ()

    def reports_through(self) -> bool:
        return self.kind == "v"

    def stamp(self, s) -> None:
        import sympy

        if self.kind == "v":
            k = s.branch(self)
            s.G.incidence(*self.nodes, k)
            s.G.across(k, *self.nodes, 1)
            indices, rows, signs = [k], [0], [-1.0]
        else:
            indices, rows, signs = [s.index_of(n) for n in self.nodes], [0, 1], [1.0, -1.0]
        variables = [sympy.Symbol(f"z{i}", real=True) for i in range(len(indices))]

        def variable(index: int | None):
            if index is None:
                return sympy.Integer(0)
            if index not in indices:
                indices.append(index)
                variables.append(sympy.Symbol(f"z{len(variables)}", real=True))
            return variables[indices.index(index)]

        expression = self.expression.to_sympy(
            s.backend.symbol, lambda probe: self._probe(s, probe, variable), time_symbol())
        s.nonlinear(Expression_(self.name, indices, rows, signs, expression, variables))

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

    def through(self, s, row) -> None:
        if self.kind == "v":
            row.x.add(s.branch(self), 1)
        else:
            self.fail("the through variable of a B I= source is its expression; probe it with "
                      "a 0 V source in series")
