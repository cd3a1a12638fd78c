"""mna: modified nodal analysis of electrical, mechanical, fluid and thermal systems.

>>> import mna
>>> circuit = mna.read_string("divider\\nV1 in 0 10\\nR1 in out 1k\\nR2 out 0 1k\\n.op\\n")
>>> mna.operating_point(circuit)["V(out)"]
5.0
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mna.analysis import perform, run_all
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
from mna.netlist.elaborate import elaborate
from mna.netlist.parser import parse_file, parse_text
from mna.netlist.requests import OperatingPoint
from mna.results import OperatingPointResult, Result, TableResult
from mna.system import DescriptorSystem
from mna.writers import read_parquet, write_results


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while a netlist is read: reading makes many small
    long-lived objects and no reference cycles, and the collector's passes over them would
    cost more than the reading itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read(path: str | Path) -> Circuit:
    """Read and elaborate the netlist file at `path`."""
    with _collector_paused():
        return elaborate(parse_file(path))


def read_string(text: str, filename: str = "<string>") -> Circuit:
    """Read and elaborate netlist `text` (its first line is the title)."""
    with _collector_paused():
        return elaborate(parse_text(text, filename))


def run(circuit: Circuit) -> list[Result]:
    """Perform every analysis the netlist asks for, in order (at every ``.step`` point)."""
    if circuit.steps:
        from mna.analysis.sweep import run_stepped  # loaded only for .step

        return run_stepped(circuit)
    return run_all(circuit)


def state_space(circuit: Circuit, inputs: list[str] | None = None,
                outputs: list[str] | None = None, symbolic: bool = False, tf: bool = False,
                dense: bool = False):
    r"""The state-space model of `circuit` from sources `inputs` to outputs such as
    ``"V(out)"`` or ``"I(L1)"`` (defaults: every source; the netlist's outputs); A of a large
    sparse model is a scipy sparse matrix unless `dense`.

    >>> import mna
    >>> rc = mna.read_string("rc\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\n")
    >>> mna.state_space(rc, ["V1"], ["V(out)"]).A
    array([[-1000.]])
    """
    from mna.analysis.statespace import state_space as extract  # sympy, scipy.linalg

    names = None if outputs is None else tuple(circuit.output(text) for text in outputs)
    return extract(circuit, inputs, names, symbolic=symbolic, tf=tf, dense=dense)


def operating_point(circuit: Circuit) -> OperatingPointResult:
    """The DC operating point of `circuit`, whatever analyses its netlist names."""
    return perform(OperatingPoint(), circuit)


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
    "perform",
    "read_parquet",
    "read",
    "read_string",
    "run",
    "state_space",
    "write_results",
]
