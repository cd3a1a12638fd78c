"""The elaborated circuit: flat element list, node table with domains, parameters, requests."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Literal, NamedTuple, get_args

from mna.domains import Domain, across_unit, through_unit
from mna.elements.sources import Source
from mna.errors import NetlistError
from mna.expr import Value
from mna.netlist.fields import (
    GROUND,
    GROUND_ALIASES,
    TEMPERATURE,
    TERMINAL_CURRENT,
    OutputName,
    Scope,
    read_output,
)
from mna.netlist.model import SourceLocation, word_place

if TYPE_CHECKING:
    from mna.diagnostics import Graph
    from mna.elements.base import Element
    from mna.netlist.requests import Fourier, Measure, MonteCarlo, Request, Sweep

Method = Literal["be", "trap", "gear2", "fe"]
StepControl = Literal["adaptive", "fixed"]
Linearise = Literal["newton", "step", "once"]
Solver = Literal["klu", "superlu"]
Ordering = Literal["auto", "amd", "dissection"]
OPTION_CHOICES = {"method": get_args(Method), "stepcontrol": get_args(StepControl),
                  "linearise": get_args(Linearise), "solver": get_args(Solver),
                  "ordering": get_args(Ordering)}


class Node(NamedTuple):
    """A node: its key, its name as first written, its domain, and where it is first named
    (`Card.lazy_place`: `location` finds the column when a message needs it)."""

    key: str
    name: str
    domain: Domain
    place: SourceLocation
    index: int | None   # of the word that names it on a line of words only (`word_place`)

    @property
    def location(self) -> SourceLocation:
        return word_place(self.place, self.index)


@dataclass(frozen=True)
class Options:
    """``.options`` that `mna` uses, with SPICE's defaults."""

    method: Method = "trap"
    reltol: float = 1e-3
    abstol: float = 1e-12
    vntol: float = 1e-6
    chgtol: float = 1e-14
    trtol: float = 7.0
    gmin: float = 1e-12
    maxiter: int = 100       # Newton iterations of a DC solution (ngspice's itl1)
    tranmaxiter: int = 10    # Newton iterations of a time step (ngspice's itl4)
    stepcontrol: StepControl = "adaptive"
    interp: bool = False     # the transient's table on the tstep grid, not the steps taken
    linearise: Linearise = "newton"   # a time step: Newton, or one linearised solve (MTT's
    #                                   semi-implicit steps) with the Jacobian of each step
    #                                   or of the first
    solver: Solver = "klu"   # sparse LU (SuperLU without KLU; see linalg.factor)
    ordering: Ordering = "auto"
    maxpoints: int = 10_000_000   # rows of a table an analysis may produce
    temp: float = 27.0       # °C: the circuit's temperature (.temp), SPICE's default
    tnom: float = 27.0       # °C: where model parameters were measured
    workers: int = 0         # processes running .step and .mc points (0: every core)


@dataclass(frozen=True)
class Model:
    """A ``.model`` card: a device type and its parameter values."""

    name: str
    kind: str
    parameters: dict[str, Value]
    location: SourceLocation


@dataclass(frozen=True, eq=False)
class Circuit:
    """A flat circuit: what elaboration hands to assembly and the analyses.

    Invariants: every node an element or output names is in `nodes` (the reference ``0`` is
    not) and has one domain; element names are unique case-insensitively and
    `elements_by_key` finds them by lower-case name; every output in `saves`, `initial` and
    `nodeset` exists; `parameters` hold the top-level parameters in dependency order, each a
    number or an expression of those before it; `graph` is the elements' graph, checked for
    source loops and cut-sets. Nothing in it is evaluated for a particular analysis.
    """

    title: str
    path: str
    nodes: dict[str, Node]
    elements: tuple[Element, ...]
    graph: Graph
    parameters: dict[str, Value] = field(default_factory=dict)
    parameter_names: dict[str, str] = field(default_factory=dict)  # key -> first spelling
    models: dict[str, Model] = field(default_factory=dict)
    options: Options = Options()
    initial: dict[OutputName, Value] = field(default_factory=dict)
    nodeset: dict[OutputName, Value] = field(default_factory=dict)
    analyses: tuple[Request, ...] = ()
    steps: tuple[Sweep, ...] = ()
    montecarlo: MonteCarlo | None = None
    measures: tuple[Measure, ...] = ()
    fouriers: tuple[Fourier, ...] = ()
    saves: tuple[OutputName, ...] = ()
    save_all: bool = False   # ``.save all`` beside the outputs it lists: those and the default
    elements_by_key: dict[str, Element] = field(default_factory=dict)

    @property
    def repeats(self) -> float:
        """How many tables of each analysis a run holds together: one per ``.step`` point
        (``.mc`` samples are written as they arrive)."""
        return math.prod(step.count for step in self.steps)

    def domain_of(self, key: str) -> Domain:
        return self.nodes[key].domain

    def with_element(self, element: Element) -> Circuit:
        """The circuit with `element` added, on nodes it has (an analysis's probe source)."""
        return replace(
            self, elements=(*self.elements, element),
            elements_by_key={**self.elements_by_key, element.name.lower(): element})

    def replacing(self, element: Element) -> Circuit:
        """The circuit with `element` in place of its namesake (a swept resistor)."""
        key = element.name.lower()
        return replace(self, elements=tuple(element if e.name.lower() == key else e
                                            for e in self.elements),
                       elements_by_key={**self.elements_by_key, key: element})

    def at_temperature(self, temperature: float) -> Circuit:
        """The circuit at `temperature` (°C): its ``.temp`` and ``temper``."""
        return replace(self, options=replace(self.options, temp=temperature),
                       parameters={**self.parameters, TEMPERATURE: temperature})

    def node_name(self, key: str) -> str:
        return GROUND if key == GROUND else self.nodes[key].name

    def source(self, name: str, location: SourceLocation | None) -> Source:
        """The independent source called `name`; an error where there is none."""
        element = self.elements_by_key.get(name.lower())
        if not isinstance(element, Source):
            raise NetlistError(f"'{name}' is not an independent source of the circuit",
                               location)
        return element

    def check_output(self, output: OutputName, location: SourceLocation | None = None) -> None:
        """An error, located, when `output` names a node or element the circuit lacks."""
        if output.kind == "E":
            for probe in output.probes():
                self.check_output(probe, location)
            return
        where = output.location or location
        if output.kind == "I":
            element = self.elements_by_key.get(output.keys[0])
            if element is None:
                raise NetlistError(f"no element '{output.keys[0]}' in the circuit", where)
            ports = [p for p in element.branches() if p]
            currents = element.terminal_currents()
            if not output.keys[1:] and len(currents) > 1:
                raise NetlistError(f"{element.name} has a current at each terminal: "
                                   + ", ".join(f"@{element.name}[{c}]" for c in currents), where)
            if output.keys[1:] and output.keys[1] not in (*ports, *currents):
                what = (f"terminal current '{output.keys[1]}' (its own: {', '.join(currents)})"
                        if currents else
                        f"unknown '{output.keys[1]}' (its own: {', '.join(ports)})" if ports else
                        f"unknown '{output.keys[1]}' (its through variable is I({element.name}))")
                raise NetlistError(f"{element.name} has no {what}", where)
            return
        for key in output.keys:
            if key != GROUND and key not in self.nodes:
                raise NetlistError(f"no node '{key}' in the circuit", where)

    def output(self, text: str) -> OutputName:
        """``"V(n)"``, ``"V(a,b)"``, ``"I(name)"`` or ``"@q1[ic]"`` as an `OutputName` of this
        circuit."""
        if TERMINAL_CURRENT.fullmatch(text.strip()):
            output = read_output(text.strip(), Scope(), None)
            try:
                self.check_output(output)
            except NetlistError as error:
                raise ValueError(error.message) from None
            return output
        match = re.fullmatch(r"\s*([VvIi])\(\s*([^,()\s]+)\s*(?:,\s*([^,()\s]+)\s*)?\)\s*", text)
        if match is None or (match[1] in "Ii" and match[3]):
            raise ValueError(f"expected V(node), V(a,b) or I(element), got {text!r}")
        names = [n for n in (match[2], match[3]) if n]
        if match[1] in "Ii":
            if names[0].lower() not in self.elements_by_key:
                raise ValueError(f"no element '{names[0]}' in the circuit")
            return OutputName("I", (names[0].lower(),))
        keys = tuple(GROUND if n.lower() in GROUND_ALIASES else n.lower() for n in names)
        for key, name in zip(keys, names):
            if key != GROUND and key not in self.nodes:
                raise ValueError(f"no node '{name}' in the circuit")
        return OutputName("V", keys)

    def label(self, output: OutputName) -> str:
        """The column name of an output, with each name spelled as first written (an
        expression as written)."""
        if output.kind == "E":
            return output.expression.text
        if output.kind == "V":
            return f"V{output.part}({','.join(self.node_name(k) for k in output.keys)})"
        element = self.elements_by_key[output.keys[0]]
        if output.keys[1:] and output.keys[1] in element.terminal_currents():
            return f"@{element.name}[{output.keys[1]}]"   # as ngspice names it
        port = "".join(f":{p}" for p in output.keys[1:])
        return f"I{output.part}({element.name}{port})"

    def unit(self, output: OutputName) -> str:
        if output.kind == "E":
            return ""
        if output.part in ("DB", "P"):
            return "dB" if output.part == "DB" else "rad"
        if output.kind == "V":
            node = next((k for k in output.keys if k != GROUND), None)
            return across_unit(self.domain_of(node)) if node else "V"
        element = self.elements_by_key[output.keys[0]]
        if output.keys[1:]:
            return element.branch_unit(output.keys[1], self.domain_of)
        return through_unit(element.port_domain(self.domain_of))

    def default_outputs(self) -> tuple[OutputName, ...]:
        """Every node's across variable and the through variable of every element with a
        through unknown or an input (sources, T-type elements, couplers, controlled sources)."""
        nodes = tuple(OutputName("V", (key,)) for key in self.nodes)
        throughs = tuple(OutputName("I", (e.name.lower(),))
                         for e in self.elements if e.reports_through())
        return nodes + throughs

    def outputs(self) -> tuple[OutputName, ...]:
        """The outputs asked for: the ``.save`` list, or every default one (with ``.save
        all``, those and the list's)."""
        if self.saves and not self.save_all:
            return self.saves
        defaults = self.default_outputs()
        known = set(defaults)
        return (*defaults, *(output for output in self.saves if output not in known))

    @cached_property
    def element_probes(self) -> tuple[OutputName, ...]:
        """The outputs that the laws of elements read (behavioural sources')."""
        return tuple(OutputName(probe.kind, probe.names) for element in self.elements
                     for probe in element.probes())

    def probed_outputs(self) -> tuple[OutputName, ...]:
        """The probes the outputs and the measurements read, each once, in order: what
        analyses compute (an expression of them is computed from their values, and the
        table holds what was asked for: `mna.analysis.perform`)."""
        return self._probed

    @cached_property
    def _probed(self) -> tuple[OutputName, ...]:
        found: dict[tuple[str, tuple[str, ...]], OutputName] = {}
        measured = [o for m in (*self.measures, *self.fouriers) for o in m.outputs]
        for output in (*self.outputs(), *measured):
            for probe in output.probes():
                found.setdefault((probe.kind, probe.keys), probe)
        return tuple(found.values())
