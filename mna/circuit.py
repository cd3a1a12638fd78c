"""The elaborated circuit: flat element list, node table with domains, parameters, analyses."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple, get_args

from mna.domains import Domain, across_unit, through_unit
from mna.netlist.fields import GROUND, GROUND_ALIASES, Value
from mna.netlist.model import SourceLocation

if TYPE_CHECKING:
    from mna.analysis.base import Analysis
    from mna.analysis.sweep import Step
    from mna.assembly import Numbering
    from mna.diagnostics import Graph
    from mna.elements.base import Element

Method = Literal["be", "trap", "gear2", "fe", "semi"]
StepControl = Literal["fixed", "adaptive"]
Linearise = Literal["step", "once"]
Solver = Literal["klu", "superlu"]
OPTION_CHOICES = {"method": get_args(Method), "stepcontrol": get_args(StepControl),
                  "linearise": get_args(Linearise), "solver": get_args(Solver)}


class Node(NamedTuple):
    """A node: its key, its name as first written, its domain (a tuple: one per node)."""

    key: str
    name: str
    domain: Domain
    location: SourceLocation


@dataclass(frozen=True)
class Options:
    """``.options`` that `mna` uses; SPICE's defaults."""

    method: Method = "trap"
    reltol: float = 1e-3
    abstol: float = 1e-12
    vntol: float = 1e-6
    gmin: float = 1e-12
    maxiter: int = 100
    stepcontrol: StepControl = "fixed"
    linearise: Linearise = "step"  # method=semi: Jacobian at every step, or once at t = 0
    solver: Solver = "klu"         # sparse LU (SuperLU without pyklu; see linalg.factor)


@dataclass(frozen=True)
class Model:
    """A ``.model`` card: a device type and its parameter values."""

    name: str
    kind: str
    parameters: dict[str, Value]
    location: SourceLocation


@dataclass(frozen=True)
class OutputName:
    """A requested output: ``V(n)``, ``V(a,b)`` or ``I(name)`` with keys as in the circuit."""

    kind: Literal["V", "I"]
    keys: tuple[str, ...]
    location: SourceLocation | None = None


@dataclass(frozen=True)
class Circuit:
    title: str
    path: str
    nodes: dict[str, Node]
    elements: tuple[Element, ...]
    parameters: dict[str, Value]
    parameter_names: dict[str, str] = field(default_factory=dict)  # key -> first spelling
    models: dict[str, Model] = field(default_factory=dict)
    options: Options = Options()
    initial: dict[OutputName, Value] = field(default_factory=dict)
    nodeset: dict[OutputName, Value] = field(default_factory=dict)
    analyses: tuple[Analysis, ...] = ()
    steps: tuple[Step, ...] = ()
    saves: tuple[OutputName, ...] = ()

    @property
    def elements_by_key(self) -> dict[str, Element]:
        return self._by_key

    def __post_init__(self):
        object.__setattr__(self, "_by_key", {e.name.lower(): e for e in self.elements})

    @functools.cached_property
    def graph(self) -> Graph:
        """Its graph (`mna.diagnostics.Graph`), made once for every topology check."""
        from mna.diagnostics import Graph  # the checks read the circuit's elements

        return Graph(self)

    @functools.cached_property
    def numbering(self) -> Numbering:
        """Its unknowns in order (`mna.assembly.Numbering`), made once for every assembly."""
        from mna.assembly import Numbering  # assembly reads the circuit's elements

        return Numbering(self)

    def domain_of(self, key: str) -> Domain:
        return self.nodes[key].domain

    def node_name(self, key: str) -> str:
        return GROUND if key == GROUND else self.nodes[key].name

    def output(self, text: str) -> OutputName:
        """``"V(n)"``, ``"V(a,b)"`` or ``"I(name)"`` as an `OutputName` of this circuit."""
        match = re.fullmatch(r"\s*([VvIi])\(\s*([^,()\s]+)\s*(?:,\s*([^,()\s]+)\s*)?\)\s*", text)
        if match is None or (match[1] in "Ii" and match[3]):
            raise ValueError(f"expected V(node), V(a,b) or I(element), got {text!r}")
        if match[1] in "Ii":
            key = match[2].lower()
            if key not in self.elements_by_key:
                raise ValueError(f"no element {match[2]!r} in the circuit")
            return OutputName("I", (key,))
        keys = tuple(GROUND if n.lower() in GROUND_ALIASES else n.lower()
                     for n in (match[2], match[3]) if n)
        for key, name in zip(keys, (match[2], match[3])):
            if key != GROUND and key not in self.nodes:
                raise ValueError(f"no node {name!r} in the circuit")
        return OutputName("V", keys)

    def label(self, output: OutputName) -> str:
        """The column name of an output, with each name spelled as first written."""
        if output.kind == "V":
            return f"V({','.join(self.node_name(k) for k in output.keys)})"
        return f"I({self.elements_by_key[output.keys[0]].name})"

    def unit(self, output: OutputName) -> str:
        if output.kind == "V":
            node = next((k for k in output.keys if k != GROUND), None)
            return across_unit(self.domain_of(node)) if node else "V"
        element = self.elements_by_key[output.keys[0]]
        return through_unit(element.port_domain(self.domain_of))

    def default_outputs(self) -> tuple[OutputName, ...]:
        """Every node's across variable and the through variable of every element with a
        through unknown or an input (sources, T-type elements, couplers, controlled sources)."""
        nodes = tuple(OutputName("V", (key,)) for key in self.nodes)
        throughs = tuple(
            OutputName("I", (e.name.lower(),))
            for e in self.elements
            if e.reports_through()
        )
        return nodes + throughs

    def outputs(self) -> tuple[OutputName, ...]:
        return self.saves or self.default_outputs()
