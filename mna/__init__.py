"""mna: modified nodal analysis of electrical, mechanical, fluid and thermal systems.

>>> import mna
>>> circuit = mna.read_string("divider\\nV1 in 0 10\\nR1 in out 1k\\nR2 out 0 1k\\n.op\\n")
>>> mna.operating_point(circuit)["V(out)"]
5.0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mna.analysis import perform, run_all
from mna.assembly import assemble
from mna.circuit import Circuit
from mna.collector import collector_paused
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
from mna.netlist.requests import MonteCarlo, OperatingPoint, Sweep
from mna.results import OperatingPointResult, Result, TableResult
from mna.system import DescriptorSystem
from mna.writers import read_parquet, write_results

if TYPE_CHECKING:
    import pandas as pd


def read(path: str | Path) -> Circuit:
    """Read and elaborate the netlist file at `path`."""
    with collector_paused():
        return elaborate(parse_file(path))


def read_string(text: str, filename: str = "<string>") -> Circuit:
    """Read and elaborate netlist `text` (its first line is the title)."""
    with collector_paused():
        return elaborate(parse_text(text, filename))


def run(circuit: Circuit, workers: int | None = None, scheduler=None) -> list[Result]:
    """Perform every analysis the netlist asks for, in order (at every ``.step`` point and
    ``.mc`` sample, on `workers` processes or a Dask `scheduler`: see `step`)."""
    if circuit.steps or circuit.montecarlo:
        from mna.analysis.sweep import run_stepped  # loaded only for .step and .mc

        return run_stepped(circuit, workers, scheduler)
    return run_all(circuit)


def step(circuit: Circuit, values: Mapping[str, Sequence[float]] | None = None,
         workers: int | None = None, client=None) -> dict[str, pd.DataFrame]:
    r"""Every analysis at every combination of `values` (parameter name to its values; default
    the netlist's ``.step`` cards), one table per analysis by file stem (``op``, ``tran``,
    ...) with a leading column per parameter. Points run on `workers` processes (default
    ``.options workers``, 0: every core; 1: in this process) or on the Dask cluster of
    `client` (a ``distributed.Client``, its address, or ``"local"``).

    >>> import mna
    >>> c = mna.read_string("d\n.param r=1k\nV1 a 0 1\nR1 a b {r}\nR2 b 0 1k\n.op\n")
    >>> mna.step(c, {"r": [1e3, 3e3]}, workers=1)["op"].query("name == 'V(b)'")["value"].tolist()
    [0.5, 0.25]
    """
    if values is not None:
        circuit = dataclasses.replace(circuit, steps=tuple(
            Sweep(name.lower(), name, "parameter", None, listed=tuple(map(float, points)))
            for name, points in values.items()))
        for sweep in circuit.steps:
            sweep.check(circuit)
    return _tables(circuit, workers, client)


def monte_carlo(circuit: Circuit, n: int | None = None, seed: int | None = None,
                workers: int | None = None, client=None) -> dict[str, pd.DataFrame]:
    r"""Every analysis for `n` samples of the random functions (default the netlist's
    ``.mc``), one table per analysis by file stem with leading ``sample`` and parameter
    columns, and ``mc_summary``: each output's statistics. Sample k of `seed` is the same
    whatever runs it; `workers` and `client` as in `step`.

    >>> import mna
    >>> c = mna.read_string("rc\nV1 a 0 1\nR1 a b {agauss(1k, 50, 1)}\nR2 b 0 1k\n.op\n")
    >>> tables = mna.monte_carlo(c, 200, seed=1, workers=1)
    >>> 0.49 < tables["mc_summary"].query("output == 'V(b)'")["mean"].item() < 0.51
    True
    """
    mc = circuit.montecarlo
    count = n if n is not None else mc.count if mc is not None else None
    if count is None:
        raise ValueError("monte_carlo needs the number of samples n (the netlist has no .mc)")
    if count < 1:
        raise ValueError(f"monte_carlo needs at least one sample, got n={count}")
    seed = seed if seed is not None else mc.seed if mc is not None else None
    circuit = dataclasses.replace(circuit, montecarlo=MonteCarlo(
        count, seed, mc.location if mc is not None else None))
    return _tables(circuit, workers, client)


def _tables(circuit: Circuit, workers: int | None, client) -> dict[str, pd.DataFrame]:
    from mna.analysis.sweep import Plan, run_points
    from mna.tables import RunTables

    plan = Plan.of(circuit)
    tables = RunTables(plan)
    run_points(plan, tables, workers, client, tables.failures)
    return tables.frames()


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
    "monte_carlo",
    "run",
    "state_space",
    "step",
    "write_results",
]
