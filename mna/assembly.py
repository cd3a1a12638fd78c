"""Unknown numbering and the `Stamper`: the only code that writes matrix entries.

Elements call the stamp patterns here with node keys and unknown numbers. The reference node
is unknown number -1: a pattern appends its entries whole, and the entries in the reference's
row or column are dropped once, when `MatrixBuilder.entries` makes the matrix (an output row
drops them as they come). The same stamps build a numeric system (floats, scipy CSC) or a
symbolic one (sympy), depending on the backend.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from mna.collector import collector_paused
from mna.domains import across_unit
from mna.elements.device import Device, Instance
from mna.errors import NetlistError
from mna.expr import Expression, Value
from mna.netlist.fields import GROUND, OutputName
from mna.system import DescriptorSystem, Entries, InputSignal, ResistorNoise

if TYPE_CHECKING:
    from mna.circuit import Circuit
    from mna.elements.base import Element


class NumericBackend:
    """Values as floats, with the top-level parameters (and any overrides) evaluated in order."""

    def __init__(self, circuit: Circuit, overrides: dict[str, float] | None = None):
        overrides = {k.lower(): v for k, v in (overrides or {}).items()}
        self.values: dict[str, float] = {}
        for name, value in circuit.parameters.items():
            try:
                self.values[name] = (float(overrides[name]) if name in overrides
                                     else self.evaluate(value))
            except NetlistError as error:
                raise NetlistError(f"parameter {name}: {error.message}", error.location) from None

    def evaluate(self, value: Value) -> float:
        if isinstance(value, Expression):
            return value.evaluate(self.values)
        return value

    def symbol(self, name: str):
        """A parameter's value in a sympy expression (None: a constant)."""
        import sympy

        value = self.values.get(name)
        return None if value is None else sympy.Float(value)

    def sqrt(self, value: float) -> float:
        return math.sqrt(value)


class SymbolicBackend:
    """Values as sympy expressions; `.param` names stay symbols (spelled as first written),
    numbers become exact."""

    def __init__(self, circuit: Circuit):
        self.spelling = dict(circuit.parameter_names)
        self.parameters = circuit.parameters

    def symbol(self, name: str):
        import sympy

        spelled = self.spelling.get(name)
        if spelled is None and name in self.parameters:   # a random call's (``agauss@1``)
            return self.evaluate(self.parameters[name])
        return None if spelled is None else sympy.Symbol(spelled, real=True)

    def evaluate(self, value: Value):
        import sympy

        if isinstance(value, Expression):
            return value.to_sympy(self.symbol)
        return sympy.nsimplify(value, rational=True)

    def sqrt(self, value):
        import sympy

        return sympy.sqrt(value)


def _identity(index: int) -> int:
    return index


class MatrixBuilder:
    """Triplets of one matrix. The patterns join nodes, given by their keys and numbered
    once each through `numbering` (the reference is -1); `add` takes node keys or unknown
    numbers. Each pattern appends its entries together."""

    def __init__(self, numbering: Numbering):
        self._number = numbering.node_index
        self._index = numbering.index_of
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.values: list = []
        self._blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []   # of `conductances`

    def add(self, row, col, value) -> None:
        self.rows.append(self._index(row))
        self.cols.append(self._index(col))
        self.values.append(value)

    def conductance(self, a, b, value) -> None:
        """The four-entry pattern of a branch of admittance `value` between nodes a and b
        (none for a branch from a node to itself: its entries would cancel, adding only
        their rounding to the node's others)."""
        a, b = self._number[a], self._number[b]
        if a == b:
            return
        self.rows.extend((a, a, b, b))
        self.cols.extend((a, b, a, b))
        self.values.extend((value, -value, -value, value))

    def conductances(self, a: Sequence[str], b: Sequence[str], values: np.ndarray) -> None:
        """`conductance` of many branches (numeric values), as arrays."""
        number = self._number
        a = np.fromiter(map(number.__getitem__, a), np.int64, len(a))
        b = np.fromiter(map(number.__getitem__, b), np.int64, len(b))
        between = a != b
        a, b, values = a[between], b[between], values[between]
        self._blocks.append((np.concatenate([a, a, b, b]), np.concatenate([a, b, a, b]),
                             np.concatenate([values, -values, -values, values])))

    def transconductance(self, a, b, c, d, value) -> None:
        """A through variable ``value*(x_c - x_d)`` leaving node a, entering node b."""
        number = self._number
        a, b, c, d = number[a], number[b], number[c], number[d]
        self.rows.extend((a, a, b, b))
        self.cols.extend((c, d, c, d))
        self.values.extend((value, -value, -value, value))

    def incidence(self, a, b, column, value=1) -> None:
        """Unknown `column` (times `value`) flows out of node a and into node b."""
        self.rows.extend((self._number[a], self._number[b]))
        self.cols.extend((column, column))
        self.values.extend((value, -value))

    def across(self, row, a, b, value=1) -> None:
        """``value*(x_a - x_b)`` in equation `row`."""
        self.rows.extend((row, row))
        self.cols.extend((self._number[a], self._number[b]))
        self.values.extend((value, -value))

    def entries(self, shape: tuple[int, int], symbolic: bool) -> Entries:
        """The matrix of the entries outside the reference's row and column."""
        rows = np.concatenate([np.array(self.rows, dtype=np.int64),
                               *(rows for rows, _, _ in self._blocks)])
        cols = np.concatenate([np.array(self.cols, dtype=np.int64),
                               *(cols for _, cols, _ in self._blocks)])
        kept = (rows >= 0) & (cols >= 0)
        assert not (symbolic and self._blocks), "arrays of numbers in a symbolic matrix"
        values = ([v for v, k in zip(self.values, kept.tolist()) if k] if symbolic
                  else np.concatenate([np.array(self.values, dtype=float),
                                       *(values for _, _, values in self._blocks)])[kept])
        return Entries.of(rows[kept], cols[kept], values, shape, symbolic)


class RowBuilder:
    """Entries of an output map (``P``, ``Q`` or ``R``), written one row at a time into the
    row `row`; columns are node keys or unknown (or input) numbers, those of the reference
    dropped."""

    def __init__(self, col_index: Callable = _identity):
        self._col = col_index
        self.row = 0
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.values: list = []

    def add(self, col, value) -> None:
        col = self._col(col)
        if col >= 0:
            self.rows.append(self.row)
            self.cols.append(col)
            self.values.append(value)

    def difference(self, a, b, value) -> None:
        """``value*(x_a - x_b)``."""
        self.add(a, value)
        self.add(b, -value)

    def entries(self, shape: tuple[int, int], symbolic: bool) -> Entries:
        return Entries.of(self.rows, self.cols, self.values, shape, symbolic)


class OutputRow:
    """Outputs ``y = p·x + q·x' + r·u``, written by `Element.through` or a node probe: one
    row, or after `begin` the next of many (the rows of a system's output maps, written
    into one set of lists)."""

    def __init__(self, stamper: Stamper):
        self.x = RowBuilder(stamper.index_of)
        self.dx = RowBuilder(stamper.index_of)
        self.u = RowBuilder()

    def begin(self, row: int) -> None:
        """Write row `row` from now on."""
        self.x.row = self.dx.row = self.u.row = row


class Numbering:
    """The unknowns of a circuit in order: node across variables, nodes inside elements,
    then element branches (through variables), with their labels and units. `measured`:
    the terminal currents read (`measured_terminals`), each an ammeter's node and branch."""

    def __init__(self, circuit: Circuit, measured: Mapping[str, tuple[str, ...]]):
        self.node_index = {key: i for i, key in enumerate(circuit.nodes)}
        self.node_index[GROUND] = -1
        unknowns = [f"V({node.name})" for node in circuit.nodes.values()]
        units = [across_unit(node.domain) for node in circuit.nodes.values()]
        branched = []   # elements with extra unknowns, and their names
        for element in circuit.elements:
            ammeters = measured.get(element.name.lower(), ())
            for suffix in (*element.internal_nodes(circuit), *(f"@{a}" for a in ammeters)):
                self.node_index[_internal_key(element, suffix)] = len(unknowns)
                unknowns.append(f"V({element.name}#{suffix})")
                units.append(across_unit(element.port_domain(circuit.domain_of)))
            if ports := (*element.branches(), *ammeters):
                branched.append((element, ports))
        self.across_count = len(unknowns)
        self.branch_index: dict[tuple[int, str], int] = {}
        for element, ports in branched:
            for port in ports:
                self.branch_index[(id(element), port)] = len(unknowns)
                label = element.name if not port else f"{element.name}:{port}"
                unknowns.append(f"I({label})")
                units.append(element.branch_unit(port, circuit.domain_of))
        self.unknowns = tuple(unknowns)
        self.units = tuple(units)

    def index_of(self, item) -> int:
        """The number of a node's unknown (-1 for the reference node); a number as is."""
        return self.node_index[item] if isinstance(item, str) else item


class Stamper:
    """Collects G, C, B of a circuit in the numbering of its unknowns; with `small_signal`,
    the values of the AC analysis where an element has its own (a resistor's ``ac=``).
    `value` and `sqrt` are the backend's: floats, or sympy expressions; with `noise`, the
    noise sources of the linear conductances are collected too. The terminal currents that
    the circuit's outputs and `outputs` read get ammeters (`measured_terminals`): one
    circuit and `outputs` make one numbering."""

    def __init__(self, circuit: Circuit, backend, small_signal: bool = False,
                 noise: bool = False, outputs: Sequence[OutputName] = ()):
        self.circuit = circuit
        self.backend = backend
        self.small_signal = small_signal
        self.value = backend.evaluate
        self.sqrt = backend.sqrt
        self.measured = measured_terminals(circuit, outputs)
        numbering = Numbering(circuit, self.measured)
        self.index_of = numbering.index_of
        self.node_index = numbering.node_index
        self.branch_index = numbering.branch_index
        self.unknowns = numbering.unknowns
        self.units = numbering.units
        self.across_count = numbering.across_count
        self.input_index: dict[int, int] = {}
        self.input_elements: list[Element] = []
        self.instances: dict[type[Device], list[Instance]] = {}
        self.model_values: dict[tuple, Mapping[str, float]] = {}   # derived once per model
        self.G = MatrixBuilder(numbering)
        self.C = MatrixBuilder(numbering)
        self.B = MatrixBuilder(numbering)
        self.noise: list[ResistorNoise] | None = [] if noise else None

    def branch(self, element: Element, port: str = "") -> int:
        return self.branch_index[(id(element), port)]

    def ammeter_ties(self) -> list[tuple[int, int]]:
        """The unknowns each ammeter holds equal: a measured terminal's node and its own."""
        ties = []
        for key, ports in self.measured.items():
            element = self.circuit.elements_by_key[key]
            for port in ports:
                node = element.nodes[element.terminal_currents()[port]]
                ties.append((self.index_of(node),
                             self.index_of(_internal_key(element, f"@{port}"))))
        return ties

    def internal(self, element: Element, suffix: str) -> str:
        """The key of a node inside `element` (usable wherever a node key is)."""
        return _internal_key(element, suffix)

    def noisy_conductance(self, name: str, a: str, b: str, conductance, **flicker) -> None:
        """A conductance between nodes `a` and `b` that makes thermal noise, source `name`
        (a resistor, a device's series resistance), and flicker noise where `flicker`
        gives its `ResistorNoise` parameters."""
        self.G.conductance(a, b, conductance)
        if self.noise is not None and isinstance(self.backend, NumericBackend):
            self.noise.append(ResistorNoise(name, self.index_of(a), self.index_of(b),
                                            float(conductance), **flicker))

    def device(self, kind: type[Device], name: str, terminals, parameters: dict) -> None:
        """An instance of nonlinear device `kind` on `terminals` (node keys or unknown
        numbers); symbolic assembly cannot take one."""
        if isinstance(self.backend, SymbolicBackend):
            raise NetlistError("a nonlinear element has no symbolic model; linearise "
                               "numerically instead")
        numbers = tuple(map(self.index_of, terminals))
        self.instances.setdefault(kind, []).append(Instance(name, numbers, parameters))

    def output_row(self) -> OutputRow:
        """An empty output row, for an element to write a combination of unknowns into."""
        return OutputRow(self)

    def through_row(self, element: Element) -> OutputRow:
        """`element`'s through variable as a combination of unknowns, derivatives and inputs."""
        row = OutputRow(self)
        element.through(self, row)
        return row

    def input(self, element: Element) -> int:
        """The column of B that belongs to source `element` (allocated on first use)."""
        if id(element) not in self.input_index:
            self.input_index[id(element)] = len(self.input_elements)
            self.input_elements.append(element)
        return self.input_index[id(element)]


def assemble(
    circuit: Circuit,
    overrides: dict[str, float] | None = None,
    outputs: tuple[OutputName, ...] | None = None,
    symbolic: bool = False,
    small_signal: bool = False,
    noise: bool = False,
) -> DescriptorSystem:
    """Stamp every element of `circuit` into a descriptor system.

    `overrides` replaces top-level parameter values (for ``.step`` and ``.dc param``);
    `outputs` defaults to the circuit's ``.save`` list or its default outputs;
    `small_signal` takes the AC analysis's own values where elements have them;
    `noise` collects the resistors' noise sources (`DescriptorSystem.noise`, for ``.noise``).
    """
    with collector_paused():
        return _assembled(circuit, overrides, outputs, symbolic, small_signal, noise)


def _assembled(circuit: Circuit, overrides: dict[str, float] | None,
               outputs: tuple[OutputName, ...] | None, symbolic: bool,
               small_signal: bool, noise: bool) -> DescriptorSystem:
    backend = SymbolicBackend(circuit) if symbolic else NumericBackend(circuit, overrides)
    outputs = outputs if outputs is not None else circuit.probed_outputs()
    s = Stamper(circuit, backend, small_signal, noise, outputs)
    # elements whose stamp is a plain number, by class, stamped together as arrays after
    # the others (numeric, without noise sources); only sums of entries in one place move,
    # by their rounding
    plain: dict[type[Element], tuple[list[Element], list[float]]] = {}
    for element in circuit.elements:
        if not (symbolic or noise or (s.measured and element.name.lower() in s.measured)) and (
                value := element.plain_value()) is not None:
            elements, values = plain.setdefault(type(element), ([], []))
            elements.append(element)
            values.append(value)
        else:
            _stamp(element, s)
    for kind, (elements, values) in plain.items():
        kind.stamp_plain(s, elements, np.array(values))
    rows = s.output_row()
    for number, output in enumerate(outputs):
        rows.begin(number)
        write_output(rows, s, circuit, output)
    n, m = len(s.unknowns), len(s.input_elements)
    inputs = tuple(
        InputSignal(
            e.name,
            e.input_unit(circuit.domain_of),
            e.dc_value(backend) if not symbolic else 0.0,
            e.ac_value(backend) if not symbolic else 0j,
            _resolved_waveform(e, backend) if e.waveform is not None and not symbolic else None,
        )
        for e in s.input_elements
    )
    return DescriptorSystem(
        g=s.G.entries((n, n), symbolic),
        c=s.C.entries((n, n), symbolic),
        b=s.B.entries((n, m), symbolic),
        unknowns=s.unknowns,
        units=s.units,
        inputs=inputs,
        outputs=tuple(circuit.label(o) for o in outputs),
        output_units=tuple(circuit.unit(o) for o in outputs),
        p=rows.x.entries((len(outputs), n), symbolic),
        q=rows.dx.entries((len(outputs), n), symbolic),
        r=rows.u.entries((len(outputs), m), symbolic),
        across_count=s.across_count,
        devices=tuple(kind.build(instances) for kind, instances in s.instances.items()),
        symbolic=symbolic,
        noise=tuple(s.noise or ()),
    )


def measured_terminals(circuit: Circuit, outputs: Sequence[OutputName]
                       ) -> dict[str, tuple[str, ...]]:
    """The terminal currents (`Element.terminal_currents`) that `outputs`, the circuit's
    outputs and its elements' laws read, by element key: ``@q1[ic]``, or ``I(D1)`` of an
    element with one."""
    found: dict[str, dict[str, None]] = {}
    probes = [probe for output in (*circuit.probed_outputs(), *outputs) if output.kind != "V"
              for probe in output.probes()]
    for probe in (*probes, *circuit.element_probes):
        if probe.kind != "I":
            continue
        currents = circuit.elements_by_key[probe.keys[0]].terminal_currents()
        port = probe.keys[1] if probe.keys[1:] else next(iter(currents), None)
        if port in currents and (probe.keys[1:] or len(currents) == 1):
            found.setdefault(probe.keys[0], {})[port] = None
    return {key: tuple(ports) for key, ports in found.items()}


def _stamp(element: Element, s: Stamper) -> None:
    """`element`'s stamps (behind ammeters where its terminal currents are measured); an
    error without a place is put at the element."""
    if s.measured and (ammeters := s.measured.get(element.name.lower())):
        element = _behind_ammeters(element, ammeters, s)
    try:
        element.stamp(s)
    except NetlistError as error:
        if error.location is not None:
            raise
        raise NetlistError(f"{element.name}: {error.message}", element.location) from None


def _behind_ammeters(element: Element, ports: tuple[str, ...], s: Stamper) -> Element:
    """`element` with each terminal of `ports` moved onto a node of its own, which an
    ammeter joins to the terminal's node (its branch, the element's unknown of that port,
    is the current entering the terminal)."""
    nodes = list(element.nodes)
    for port in ports:
        index = element.terminal_currents()[port]
        inner = _internal_key(element, f"@{port}")
        k = s.branch(element, port)
        s.G.incidence(nodes[index], inner, k)
        s.G.across(k, nodes[index], inner, 1)
        nodes[index] = inner
    return dataclasses.replace(element, nodes=tuple(nodes))


def output_row(s: Stamper, circuit: Circuit, output: OutputName) -> OutputRow:
    """`output` as a combination of unknowns, their derivatives and inputs."""
    row = s.output_row()
    write_output(row, s, circuit, output)
    return row


def write_output(row: OutputRow, s: Stamper, circuit: Circuit, output: OutputName) -> None:
    """Write `output` into `row`'s current row."""
    if output.kind == "I" and len(output.keys) == 2:   # an element's extra unknown
        row.x.add(s.branch(circuit.elements_by_key[output.keys[0]], output.keys[1]), 1)
    elif output.kind == "I":
        circuit.elements_by_key[output.keys[0]].through(s, row)
    else:
        row.x.difference(*(*output.keys, GROUND)[:2], 1)


def _resolved_waveform(element, backend):
    """The element's waveform with its parameters evaluated, checked once they are numbers."""
    waveform = element.waveform.resolve(backend)
    if problem := waveform.invalid():
        raise NetlistError(f"{element.name}: {problem}", element.location)
    return waveform


def _internal_key(element: Element, suffix: str) -> str:
    return f"{element.name.lower()}#{suffix}"
