"""SPICE controlled sources E, G (across-controlled) and F, H (through-controlled), any domains."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

from mna.elements.base import Edge, Element, Role
from mna.elements.behavioural import BehaviouralSource
from mna.expr import Value, times
from mna.netlist.fields import FieldReader, plain_number
from mna.netlist.model import Braced, Call, field_text


def polynomial(reader: FieldReader, nodes: tuple[str, str], kind: str,
               probe) -> BehaviouralSource | None:
    """SPICE's ``POLY(n) controls... c0 c1 ...`` after the output nodes, as the behavioural
    source it is (None when the line has no POLY): the coefficients run over the monomials
    of the n controls by degree, each degree's in SPICE's order (x1^2, x1 x2, x2^2, ...).
    `probe(reader)` reads one control and gives its probe text (``V(a,b)``, ``I(V1)``)."""
    head = reader.peek()
    if not (isinstance(head, Call) and head.name.lower() == "poly"):
        return None
    reader.take("POLY(n)")
    location = reader.place()
    if len(head.args) != 1 or not isinstance(head.args[0], str) or not head.args[0].isdigit():
        reader.fail("POLY takes the number of controls, e.g. POLY(2)", location, usage=True)
    count = int(head.args[0])
    controls = [probe(reader) for _ in range(count)]
    coefficients = []
    while reader.remaining():
        item = reader.take("coefficient")
        coefficients.append(f"({item.text})" if isinstance(item, Braced) else field_text(item))
    if not coefficients:
        reader.fail("POLY needs at least one coefficient", reader.card.end(), usage=True)
    monomials = (term for degree in itertools.count()
                 for term in itertools.combinations_with_replacement(range(count), degree))
    terms = ["*".join([coefficient, *(controls[k] for k in monomial)])
             for coefficient, monomial in zip(coefficients, monomials)]
    reader.no_more_options()
    expression = reader.behavioural(Braced(" + ".join(terms), location))
    return BehaviouralSource(reader.name, reader.location, nodes, kind, expression)


def behavioural_form(reader: FieldReader, nodes: tuple[str, str],
                     kind: str) -> BehaviouralSource | None:
    """An E or G line's behavioural forms after its output nodes, as the B source each is
    (None for the others): ``VALUE={expr}`` or ``VALUE {expr}`` (PSpice), ``vol='expr'``
    (E) or ``cur='expr'`` (G) (ngspice), and PSpice's ``TABLE {expr} = (x1,y1) (x2,y2)
    ...``, linear between the points and held beyond them (ngspice's pwl())."""
    keys = [key for key in ("value", "vol" if kind == "v" else "cur") if key in reader.assigns]
    if reader.keyword("value"):   # VALUE {expr}, without '='
        braced = reader.take("the value {expr}")
        if not isinstance(braced, Braced):
            reader.fail("VALUE takes an expression in braces, e.g. VALUE {2*V(in)}",
                        reader.place(), usage=True)
        reader.done()
    elif keys:
        if len(keys) > 1 or reader.remaining():
            reader.fail(f"{reader.name}: give the controlling nodes and gain, or one of "
                        f"{' or '.join(k.upper() + '=' for k in keys)}{{expr}}", usage=True)
        assign = reader.assigns.pop(keys[0])
        value = assign.values[0]
        braced = value if isinstance(value, Braced) else Braced(field_text(value),
                                                                assign.places[0])
    else:
        return _table(reader, nodes, kind)
    reader.no_more_options()
    return BehaviouralSource(reader.name, reader.location, nodes, kind,
                             reader.behavioural(braced))


def _table(reader: FieldReader, nodes: tuple[str, str], kind: str) -> BehaviouralSource | None:
    """PSpice's ``TABLE {expr} = (x1,y1) (x2,y2) ...`` after the output nodes (None
    without one)."""
    if not reader.keyword("table"):
        return None
    control = reader.take("the table's control {expr}")
    if not isinstance(control, Braced):
        reader.fail("TABLE takes its control in braces, e.g. TABLE {V(in)} = (0,0) (1,2)",
                    reader.place(), usage=True)
    location = control.location
    points = []
    while reader.remaining():
        point = reader.take("point")
        if not (isinstance(point, Call) and point.name == "" and len(point.args) == 2):
            reader.fail(f"a TABLE point is a pair (x,y), not '{field_text(point)}'",
                        reader.place(), usage=True)
        points += [f"({item.text})" if isinstance(item, Braced) else field_text(item)
                   for item in point.args]
    if len(points) < 4:
        reader.fail("TABLE needs at least two points (x,y)", reader.card.end(), usage=True)
    reader.no_more_options()
    # pwl() goes on along its end segments: flat ones, a segment's length beyond, hold
    x0, y0, x1, xm, xn, yn = (points[k] for k in (0, 1, 2, -4, -2, -1))
    for first, second in ((x0, x1), (xm, xn)):
        same = plain_number(first)
        if first == second or (same is not None and same == plain_number(second)):
            reader.fail("a TABLE's first two points and its last two need different x (its "
                        "ends hold along their segments)", reader.card.end(), usage=True)
    held = [f"2*({x0})-({x1})", y0, *points, f"2*({xn})-({xm})", yn]
    expression = reader.behavioural(Braced(f"pwl(({control.text}), {', '.join(held)})",
                                           location))
    return BehaviouralSource(reader.name, reader.location, nodes, kind, expression)


@dataclass(eq=False)
class AcrossControlled(Element):
    """Output port ``n+ n-`` driven by the across variable between ``nc+ nc-``."""

    gain: Value

    @classmethod
    def from_fields(cls, reader: FieldReader):
        kind = "v" if cls.prefix == "E" else "i"
        fields = reader.card.fields
        third = fields[2] if len(fields) > 2 else None
        keyword = (isinstance(third, str) and third.lower() in ("table", "value")
                   and len(fields) > 3 and not isinstance(fields[3], str))   # else a node
        if third is None or isinstance(third, Call) or keyword:
            nodes = reader.nodes("n+", "n-")
            source = (behavioural_form(reader, nodes, kind)
                      or polynomial(reader, nodes, kind, _voltage_control))
            if source is None:
                reader.fail("expected the controlling nodes nc+ nc-, POLY(n), VALUE={expr} or "
                            "TABLE {expr}", reader.place(), usage=True)
            return source
        nodes = reader.nodes("n+", "n-", "nc+", "nc-")
        gain = reader.value("gain")
        reader.done()
        if kind == "i" and (copies := reader.copies()) is not None:
            gain = times(gain, copies)
        reader.no_more_options("m=" if kind == "i" else "")
        return cls(reader.name, reader.location, nodes, gain)

    def domain_groups(self):
        return [self.nodes[:2], self.nodes[2:]]


@dataclass(eq=False)
class VoltageControlledVoltageSource(AcrossControlled):
    """``across(n+,n-) = gain * across(nc+,nc-)``."""

    prefix = "E"
    usage = ("Ename n+ n- nc+ nc- gain | Ename n+ n- POLY(n) controls... coefficients... | "
             "Ename n+ n- VALUE={expr} | Ename n+ n- TABLE {expr} = (x1,y1) (x2,y2) ...")

    def edges(self):
        return [Edge(self, *self.nodes[:2], Role.ACROSS_SOURCE)]

    def branches(self):
        return ("",)

    def copied(self, count):
        return self

    def stamp(self, s) -> None:
        k = s.branch(self)
        s.G.incidence(*self.nodes[:2], k)
        s.G.across(k, *self.nodes[:2], 1)
        s.G.across(k, *self.nodes[2:], -s.value(self.gain))


@dataclass(eq=False)
class VoltageControlledCurrentSource(AcrossControlled):
    """A through variable ``gm * across(nc+,nc-)`` flowing n+ → element → n-."""

    prefix = "G"
    usage = ("Gname n+ n- nc+ nc- gm [m=copies] | Gname n+ n- POLY(n) controls... "
             "coefficients... | Gname n+ n- VALUE={expr} | Gname n+ n- TABLE {expr} = (x1,y1) "
             "(x2,y2) ...")

    def edges(self):
        return [Edge(self, *self.nodes[:2], Role.THROUGH_SOURCE)]

    def copied(self, count):
        return dataclasses.replace(self, gain=times(self.gain, count))

    def stamp(self, s) -> None:
        s.G.transconductance(*self.nodes, s.value(self.gain))

    def through(self, s, row) -> None:
        row.x.difference(*self.nodes[2:], s.value(self.gain))


def check_controller(element: Element, control: str, circuit) -> None:
    """That the element `control` whose through variable `element` reads has one."""
    controller = circuit.elements_by_key.get(control)
    if controller is None:
        element.fail(f"controlling element '{control}' is not in the circuit")
    if "" not in controller.branches():
        element.fail(f"controlling element {controller.name} has no through-variable unknown "
                     "(use a V source, an L, E, H, TF or GY)")


@dataclass(eq=False)
class ThroughControlled(Element):
    """Output port ``n+ n-`` driven by the through variable of another element."""

    control: str
    gain: Value

    @classmethod
    def from_fields(cls, reader: FieldReader):
        nodes = reader.nodes("n+", "n-")
        poly = polynomial(reader, nodes, "v" if cls.prefix == "H" else "i", _current_control)
        if poly is not None:
            return poly
        control = reader.element("controlling element")
        gain = reader.value("gain")
        reader.done()
        current = cls.prefix == "F"
        if current and (copies := reader.copies()) is not None:
            gain = times(gain, copies)
        reader.no_more_options("m=" if current else "")
        return cls(reader.name, reader.location, nodes, control, gain)

    def validate(self, circuit) -> None:
        check_controller(self, self.control, circuit)

    def control_branch(self, s) -> int:
        return s.branch(s.circuit.elements_by_key[self.control])


@dataclass(eq=False)
class CurrentControlledCurrentSource(ThroughControlled):
    """A through variable ``gain * I(Vctrl)`` flowing n+ → element → n-."""

    prefix = "F"
    usage = "Fname n+ n- Vctrl gain [m=copies]"

    def edges(self):
        return [Edge(self, *self.nodes, Role.THROUGH_SOURCE)]

    def copied(self, count):
        """As itself: its control, in the same instance, carries `count` times one copy's
        through variable already."""
        return self

    def stamp(self, s) -> None:
        s.G.incidence(*self.nodes, self.control_branch(s), s.value(self.gain))

    def through(self, s, row) -> None:
        row.x.add(self.control_branch(s), s.value(self.gain))


@dataclass(eq=False)
class CurrentControlledVoltageSource(ThroughControlled):
    """``across(n+,n-) = r * I(Vctrl)``."""

    prefix = "H"
    usage = "Hname n+ n- Vctrl transresistance"

    def edges(self):
        return [Edge(self, *self.nodes, Role.ACROSS_SOURCE)]

    def copied(self, count):
        """Its copies act as one, each reading one copy's share of its control's through
        variable (the control stands in the same instance)."""
        return dataclasses.replace(self, gain=times(self.gain, 1 / count))

    def branches(self):
        return ("",)

    def stamp(self, s) -> None:
        k = s.branch(self)
        s.G.incidence(*self.nodes, k)
        s.G.across(k, *self.nodes, 1)
        s.G.add(k, self.control_branch(s), -s.value(self.gain))


def _voltage_control(reader: FieldReader) -> str:
    """``nc+ nc-``, or PSpice's ``(nc+,nc-)``, as the probe of their voltage."""
    pair = reader.peek()
    if isinstance(pair, Call) and not pair.name and len(pair.args) == 2 and all(
            isinstance(node, str) for node in pair.args):
        reader.take("(nc+,nc-)")
        return f"V({pair.args[0]},{pair.args[1]})"
    return f"V({reader.word('nc+')},{reader.word('nc-')})"


def _current_control(reader: FieldReader) -> str:
    return f"I({reader.word('controlling source')})"
