"""Two-port couplers between any domains (TF, GY) and inductive coupling (K)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from mna.domains import Domain
from mna.elements.base import Edge, Element, Role, read_ports_and_value
from mna.elements.passive import Inductor
from mna.expr import Value, times
from mna.netlist.fields import GROUND, FieldReader


@dataclass(eq=False)
class TwoPort(Element):
    """Ports ``a+ a-`` and ``b+ b-``; `I(name)` is the through variable entering ``a+``."""

    ratio: Value

    @classmethod
    def from_fields(cls, reader: FieldReader):
        nodes, ratio = read_ports_and_value(reader, ("a+", "a-", "b+", "b-"), "ratio")
        return cls(reader.name, reader.location, nodes, ratio)

    def edges(self):
        return [Edge(self, *self.nodes[:2], Role.PORT), Edge(self, *self.nodes[2:], Role.PORT)]

    def validate(self, circuit) -> None:
        if self.ratio == 0:
            self.fail("ratio must be non-zero")


@dataclass(eq=False)
class Transformer(TwoPort):
    """``across(a) = n across(b)``, ``through(a) = -through(b)/n``: lossless by construction."""

    prefix = "TF"
    usage = "TFname a+ a- b+ b- ratio"

    def tied_ports(self):
        return (self.nodes[:2], self.nodes[2:])

    def copied(self, count):
        return self

    def branches(self):
        return ("",)

    def stamp(self, s) -> None:
        k = s.branch(self)
        n = s.value(self.ratio)
        s.G.incidence(*self.nodes[:2], k)
        s.G.incidence(*self.nodes[2:], k, -n)
        s.G.across(k, *self.nodes[:2], 1)
        s.G.across(k, *self.nodes[2:], -n)


@dataclass(eq=False)
class Gyrator(TwoPort):
    """``across(a) = r through(b)``, ``through(a) = -across(b)/r``; two unknowns, no division."""

    prefix = "GY"
    usage = "GYname a+ a- b+ b- ratio"

    def branches(self):
        return ("", "b")

    def copied(self, count):
        """Copies in parallel: each port's through variable `count` times one copy's."""
        return dataclasses.replace(self, ratio=times(self.ratio, 1 / count))

    def branch_domain(self, port, domain_of):
        """Unknown ``b`` is port b's through variable, in port b's domain."""
        if not port:
            return self.port_domain(domain_of)
        return next((domain_of(n) for n in self.nodes[2:] if n != GROUND), Domain.ELECTRICAL)

    def stamp(self, s) -> None:
        ka, kb = s.branch(self), s.branch(self, "b")
        r = s.value(self.ratio)
        s.G.incidence(*self.nodes[:2], ka)
        s.G.incidence(*self.nodes[2:], kb)
        s.G.across(ka, *self.nodes[:2], 1)
        s.G.add(ka, kb, -r)
        s.G.across(kb, *self.nodes[2:], 1)
        s.G.add(kb, ka, r)


@dataclass(eq=False)
class Coupling(Element):
    """Mutual inductance ``M = k sqrt(L1 L2)`` between two T-type elements."""

    inductors: tuple[str, str]
    coefficient: Value
    copies: float = 1.0   # of the instance with m= around: a coupled pair in each

    prefix = "K"
    usage = "Kname L1 L2 k"

    @classmethod
    def from_fields(cls, reader: FieldReader):
        inductors = (reader.element("first inductor"), reader.element("second inductor"))
        coefficient = reader.value("coupling coefficient")
        reader.done()
        reader.no_more_options()
        return cls(reader.name, reader.location, (), inductors, coefficient)

    def edges(self):
        return []

    def copied(self, count):
        return dataclasses.replace(self, copies=self.copies * count)

    def validate(self, circuit) -> None:
        for key in self.inductors:
            if not isinstance(circuit.elements_by_key.get(key), Inductor):
                self.fail(f"'{key}' is not an inductor-type element (L) of the circuit")
        if self.inductors[0] == self.inductors[1]:
            self.fail(f"couples '{self.inductors[0]}' with itself")
        first, second = (circuit.elements_by_key[key].port_domain(circuit.domain_of)
                         for key in self.inductors)
        if first is not second:
            self.fail(f"couples a {first.value} element with a {second.value} one")
        if isinstance(self.coefficient, float) and not 0 < abs(self.coefficient) <= 1:
            self.fail(f"coupling coefficient must satisfy 0 < |k| <= 1, got {self.coefficient:g}")

    def stamp(self, s) -> None:
        first, second = (s.circuit.elements_by_key[key] for key in self.inductors)
        # of one copy of each (m= copies in parallel share the current, each coupled so),
        # and divided among the coupled pairs of an instance's copies
        product = first.one_copy(s) * second.one_copy(s)
        if isinstance(product, float) and not product > 0:
            self.fail(f"couples {first.name} and {second.name}, whose values at their "
                      "temperature, scaled, are not of one sign")
        mutual = s.value(self.coefficient) * s.sqrt(product) / self.copies
        k1, k2 = s.branch(first), s.branch(second)
        s.C.add(k1, k2, mutual)
        s.C.add(k2, k1, mutual)

    def through(self, s, row) -> None:
        self.fail("a coupling has no through variable")
