"""The element interface and its registry: one subclass per SPICE prefix, found by name.

An element says which nodes it joins and how (`edges`, for domain inference and topology
checks), which extra unknowns it needs (`branches`), how it writes into the descriptor system
(`stamp`), and how its through variable follows from the unknowns (`through`). Analyses only
ever call these methods.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, NamedTuple, NoReturn

from mna.domains import Domain, through_unit
from mna.errors import NetlistError
from mna.netlist.fields import GROUND
from mna.netlist.model import SourceLocation

if TYPE_CHECKING:
    import numpy as np

    from mna.assembly import OutputRow, Stamper
    from mna.expr import Probe
    from mna.netlist.fields import FieldReader, Scope


class Role(Enum):
    """How a branch behaves for topology: what conducts at DC, what forms loops and cut-sets."""

    DISSIPATOR = "D"
    ACROSS_STORE = "A"
    THROUGH_STORE = "T"
    ACROSS_SOURCE = "across source"
    THROUGH_SOURCE = "through source"
    PORT = "coupler port"


# what is open at DC: A-type storage, through sources
OPEN_AT_DC = (Role.ACROSS_STORE, Role.THROUGH_SOURCE)


class Edge(NamedTuple):
    """A branch of the circuit's graph, from node `a` to node `b`."""

    element: Element
    a: str
    b: str
    role: Role


@dataclass(eq=False)
class Element:
    """Base of every element; subclasses set `prefix` and `usage` and are registered by it."""

    name: str
    location: SourceLocation
    nodes: tuple[str, ...]

    prefix: ClassVar[str] = ""
    usage: ClassVar[str] = ""
    registry: ClassVar[dict[str, type[Element]]] = {}   # by prefix in lower case

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        prefix = cls.__dict__.get("prefix")
        if not prefix:
            return
        if len(prefix) > 2:
            raise TypeError(f"prefix {prefix} of {cls.__name__}: at most two letters")
        key = prefix.lower()
        if key in Element.registry:
            raise TypeError(f"two element classes for prefix {prefix}: "
                            f"{Element.registry[key].__name__} and {cls.__name__}")
        Element.registry[key] = cls

    @staticmethod
    def class_for(key: str) -> type[Element] | None:
        """The class whose prefix starts `key`, a name in lower case; the longest prefix wins
        (``tf1`` is a transformer, not a ``t`` line)."""
        return Element.registry.get(key[:2]) or Element.registry.get(key[:1])

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Element:
        raise NotImplementedError

    @classmethod
    def from_plain(cls, name: str, location: SourceLocation, nodes: tuple[str, str],
                   word: str, scope: Scope) -> Element | None:
        """The element of a line ``name n+ n- word`` of words only (a netlist's commonest
        line) in `scope`, where the class reads it as `from_fields` would without a field
        reader; None for a class or `word` that needs the reader."""
        return None

    def copied(self, count: float) -> Element | None:
        """The element as it stands in an instance with ``m=count`` (ngspice's multiplier:
        that many copies of the instance in parallel, merged), or None where it cannot be
        (a switch, which ngspice leaves single). One that takes ``m=`` counts `count` times
        as many copies; one whose copies act as one (an across source, whose through
        variable is then their sum) is itself."""
        return None

    # -- topology ----------------------------------------------------------------------------
    def edges(self) -> list[Edge]:
        """The element's branches: each pair of nodes it joins, with its topological role."""
        raise NotImplementedError

    def tied_ports(self) -> tuple[tuple[str, str], ...]:
        """Ports (node pairs) whose across values fix one another (an ideal transformer's
        two): where sources fix one, the initial conditions take the others as fixed too."""
        return ()

    def domain_groups(self) -> list[tuple[str, ...]]:
        """Groups of nodes that must share one domain (the two ends of each branch)."""
        return [(edge.a, edge.b) for edge in self.edges()]

    def domain_hints(self) -> list[tuple[str, Domain, str]]:
        """Nodes whose domain this element fixes: (node, domain, reason)."""
        return []

    def validate(self, circuit) -> None:
        """Check the element against the elaborated `circuit` (its nodes' domains, the
        elements and models it refers to)."""

    def positive(self, s, value, what: str):
        """`value` in the assembly `s`; a number that is not positive and finite (a
        parameter can make it so) is an error at the element."""
        number = s.value(value)
        if isinstance(number, float) and not 0 < number < math.inf:
            self.fail(f"{what} must be positive, got {number:g}")
        return number

    def check_electrical(self, circuit, what: str) -> None:
        """A semiconductor device (`what`) has terminals in the electrical domain only."""
        for node in self.nodes:
            if node != GROUND and (domain := circuit.domain_of(node)) is not Domain.ELECTRICAL:
                self.fail(f"a {what} is electrical, but node {node} is in the {domain.value} "
                          "domain")

    def port_domain(self, domain_of) -> Domain:
        """The domain of the element's through variable `I(name)`: that of its first port."""
        for node in self.nodes[:2]:
            if node != GROUND:
                return domain_of(node)
        return Domain.ELECTRICAL

    def branch_domain(self, port: str, domain_of) -> Domain:
        """The domain of the extra unknown `port`."""
        return self.port_domain(domain_of)

    def branch_unit(self, port: str, domain_of) -> str:
        """The unit of the extra unknown `port`: a through variable of its domain."""
        return through_unit(self.branch_domain(port, domain_of))

    # -- assembly ----------------------------------------------------------------------------
    def internal_nodes(self, circuit) -> tuple[str, ...]:
        """Names of nodes inside the element (a diode's junction behind its series resistance)."""
        return ()

    def branches(self) -> tuple[str, ...]:
        """Names of the extra unknowns this element needs ('' is its own through variable)."""
        return ()

    def terminal_currents(self) -> dict[str, int]:
        """The through variables entering its terminals that outputs may read where they are
        no linear function of the unknowns (ngspice's names: a diode's ``id``, a bipolar
        transistor's ``ic``, ``ib``, ``ie``), each by its terminal's place in `nodes`. Where
        one is read, assembly joins that terminal to its node through an ammeter of its own
        (a 0-valued across source, whose through variable it is)."""
        return {}

    def probes(self) -> tuple[Probe, ...]:
        """The outputs of the circuit the element's law reads (a behavioural source's)."""
        return ()

    def has_small_signal_values(self) -> bool:
        """Whether the AC analysis stamps other values than the others (a resistor's
        ``ac=``)."""
        return False

    def reports_through(self) -> bool:
        """Whether `I(name)` is a default output: sources, T-type elements and couplers."""
        return bool(self.branches())

    def stamp(self, s: Stamper) -> None:
        raise NotImplementedError

    def plain_value(self) -> float | None:
        """The number that is the element's whole stamp (`stamp_plain`'s), where it is
        one; None for an element that `stamp` stamps."""
        return None

    @classmethod
    def stamp_plain(cls, s: Stamper, elements: list[Element], values: np.ndarray) -> None:
        """The stamps of `elements` of this class whose `plain_value` is `values`, as
        arrays (a large netlist's many resistors and capacitors)."""
        raise NotImplementedError

    def through(self, s: Stamper, row: OutputRow) -> None:
        """Write the element's through variable as a combination of unknowns into `row`."""
        row.x.add(s.branch(self), 1)

    def initial_conditions(self, s: Stamper, uic: bool) -> list[tuple[OutputRow, object]]:
        """Constraints ``row·x = value`` on the unknowns at t = 0 from the element's ``IC=``
        (values unevaluated); with `uic`, a storage element without ``IC=`` adds its rest
        state with value None (0 where no ``IC=`` or ``.ic`` speaks). Elements that store
        nothing have none."""
        return []

    def fail(self, message: str) -> NoReturn:
        raise NetlistError(f"{self.name}: {message}", self.location)


def read_ports_and_value(reader: FieldReader, ports: tuple[str, ...], what: str):
    """``name port... value`` with nothing after it: E, G, TF and GY lines."""
    nodes = reader.nodes(*ports)
    value = reader.value(what)
    reader.done()
    reader.no_more_options()
    return nodes, value


def two_terminal_edge(element: Element, role: Role) -> list[Edge]:
    return [Edge(element, element.nodes[0], element.nodes[1], role)]
