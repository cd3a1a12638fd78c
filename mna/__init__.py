"""mna: modified nodal analysis of electrical, mechanical, fluid and thermal systems.

>>> import mna
>>> circuit = mna.read_string("divider\\nV1 in 0 10\\nR1 in out 1k\\nR2 out 0 1k\\n.op\\n")
>>> mna.operating_point(circuit)["V(out)"]
5.0
"""

from __future__ import annotations

from pathlib import Path

from mna import analysis, elements  # noqa: F401  (registers elements and analyses)
from mna.analysis import statespace
from mna.analysis.op import OperatingPoint
from mna.analysis.sweep import run_stepped
from mna.assembly import assemble
from mna.circuit import Circuit
from mna.errors import (
    ConvergenceError,
    DescriptorIndexError,
    MnaError,
    NetlistError,
    SingularSystemError,
    TopologyError,
)
from mna.netlist import collector_paused
from mna.netlist.elaborate import elaborate
from mna.netlist.parser import parse_file, parse_text
from mna.results import OperatingPointResult, Result, TableResult, write_results
from mna.system import DescriptorSystem


def read(path: str | Path) -> Circuit:
    """Read and elaborate the netlist file at `path`."""
    with collector_paused():   # one pause for both: no collection between them
        return elaborate(parse_file(path))


def read_string(text: str, filename: str = "<string>") -> Circuit:
    """Read and elaborate netlist `text` (its first line is the title)."""
    with collector_paused():   # one pause for both: no collection between them
        return elaborate(parse_text(text, filename))


def run(circuit: Circuit) -> list[Result]:
    """Perform every analysis the netlist asks for, in order (at every ``.step`` point)."""
    if circuit.steps:
        return run_stepped(circuit)
    return [spec.run(circuit) for spec in circuit.analyses]


def state_space(circuit: Circuit, inputs: list[str] | None = None,
                outputs: list[str] | None = None, symbolic: bool = False, tf: bool = False):
    r"""The state-space model of `circuit` from sources `inputs` to outputs such as
    ``"V(out)"`` or ``"I(L1)"`` (defaults: every source; the netlist's outputs).

    >>> import mna
    >>> rc = mna.read_string("rc\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\n")
    >>> mna.state_space(rc, ["V1"], ["V(out)"]).A
    array([[-1000.]])
    """
    names = None if outputs is None else tuple(circuit.output(text) for text in outputs)
    return statespace.state_space(circuit, inputs, names, symbolic=symbolic, tf=tf)


def operating_point(circuit: Circuit) -> OperatingPointResult:
    """The DC operating point of `circuit`, whatever analyses its netlist names."""
    return OperatingPoint().run(circuit)


__all__ = [
    "Circuit",
    "ConvergenceError",
    "DescriptorIndexError",
    "DescriptorSystem",
    "MnaError",
    "NetlistError",
    "OperatingPointResult",
    "Result",
    "SingularSystemError",
    "TableResult",
    "TopologyError",
    "assemble",
    "operating_point",
    "read",
    "read_string",
    "run",
    "state_space",
    "write_results",
]
