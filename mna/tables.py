"""The tables of a ``.step``/``.mc`` run gathered point by point as they arrive: one tidy
table per analysis (leading ``sample`` and parameter columns), streamed to a file a block of
rows at a time (CSV appended, Parquet row groups) or kept for DataFrames, and the Monte
Carlo statistics of every output (``mc_summary.csv``), the samples that failed
(``mc_failures.csv``) and, for plots, the band of each output over the samples.

A streamed file is written under a temporary name and renamed when the run ends, so a failed
run leaves nothing half-written; memory holds one block of rows per analysis (Parquet: one
row group per block), and a band is read back from the file one column at a time.
"""

from __future__ import annotations

import csv
import itertools
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mna.analysis.montecarlo import Statistics
from mna.analysis.sweep import Failures, Plan, stacked
from mna.results import Result, TableResult, split_complex
from mna.writers import CSV_BLOCK, UNITS_KEY, cells, file_stems, write_atomic, write_csv

if TYPE_CHECKING:
    import pandas as pd

STREAMED = ("csv", "parquet")  # the formats a table is streamed in
SUMMARY_STEM = "mc_summary"
FAILURES_STEM = "mc_failures"
BANDED = ("tran", "ac")      # the kinds of table whose outputs get a band over the samples
BAND = (0.05, 0.5, 0.95)     # a band: the envelope's quantiles and the median
BAND_POINTS = 500            # the common grid of samples whose own grids differ

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Band:
    """The quantiles `BAND` of one output over the samples of one step point, at each `x`."""

    group: tuple[float, ...]     # the stepped values
    x: np.ndarray
    quantiles: np.ndarray        # one row per quantile of `BAND`


class _Stream:
    """One analysis's table: blocks of rows appended to a temporary file, renamed at the
    end (`directory` None: the blocks kept for a DataFrame)."""

    def __init__(self, path: Path | None, fmt: str, units: dict[str, str],
                 independent: str | None = None, outputs: dict[str, list[str]] | None = None):
        self.path = path
        self.fmt = fmt
        self.units = units
        self.independent = independent     # a band's x (None: no band)
        self.outputs = outputs or {}       # each banded output's columns in the file
        self.blocks: list[dict[str, np.ndarray]] = []
        self.rows = 0
        self.handle = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.temporary = path.with_name(f".{path.name}.{os.urandom(4).hex()}.part")

    def add(self, table: dict[str, np.ndarray]) -> None:
        self.blocks.append(split_complex(table))
        self.rows += len(next(iter(table.values()))) if table else 0
        if self.path is not None and self.rows >= CSV_BLOCK:
            self._flush()

    def _joined(self) -> dict[str, np.ndarray]:
        return {name: np.concatenate([block[name] for block in self.blocks])
                for name in self.blocks[0]}

    def _flush(self) -> None:
        if not self.blocks:
            return
        columns = self._joined()
        self.blocks, self.rows = [], 0
        if self.fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.table(columns)
            if self.handle is None:
                schema = table.schema.with_metadata({UNITS_KEY: json.dumps(self.units).encode()})
                self.handle = pq.ParquetWriter(self.temporary, schema)
            self.handle.write_table(table.replace_schema_metadata(self.handle.schema.metadata))
            return
        if self.handle is None:
            self.handle = open(self.temporary, "w", newline="")  # noqa: SIM115 (closed in close)
            csv.writer(self.handle, lineterminator="\n").writerow(columns)
        csv.writer(self.handle, lineterminator="\n").writerows(
            zip(*(cells(np.asarray(values)) for values in columns.values())))

    def close(self, keep: bool) -> None:
        """Write what is left and rename the file (`keep`), or remove it."""
        if self.path is None:
            return
        try:
            try:
                if keep:
                    self._flush()
            finally:
                if self.handle is not None:
                    self.handle.close()
            if keep:
                os.replace(self.temporary, self.path)
        finally:
            self.temporary.unlink(missing_ok=True)   # a write that failed leaves no part

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        frame = pd.DataFrame(self._joined() if self.blocks else {})
        frame.attrs["units"] = dict(self.units)
        return frame


class RunTables:
    """Consumes a run point by point (`Plan` order): each analysis's table with the leading
    columns, to files in `directory` (format `fmt`) or kept in memory, and, for ``.mc``,
    the statistics of each output over the samples of each step point."""

    def __init__(self, plan: Plan, directory: str | Path | None = None, fmt: str = "csv"):
        self.plan = plan
        self.directory = None if directory is None else Path(directory)
        self.fmt = fmt
        self.streams: dict[str, _Stream] = {}
        self.statistics = Statistics([s.label for s in plan.circuit.steps])
        self.failures = Failures()
        self.skipped: set[str] = set()   # the stems of state-space models, warned about

    def __call__(self, leading: tuple[float, ...], results: list[Result]) -> None:
        for stem, result in zip(file_stems(results), results):
            if hasattr(result, "to_json"):   # a state-space model: no table to stack
                if stem not in self.skipped:
                    self.skipped.add(stem)
                    log.warning("the .ss model (%s) is not kept for each .mc sample: run it "
                                "without .mc", stem)
                continue
            table = result.table()
            stream = self.streams.get(stem)
            if stream is None:
                units = {**dict.fromkeys(self.plan.names, ""), **result.column_units()}
                path = (None if self.directory is None
                        else self.directory / f"{stem}.{self.fmt}")
                stream = self.streams[stem] = _Stream(path, self.fmt, units,
                                                      *_banded(result, table))
            stream.add(stacked(self.plan.names, leading, table))
            if self.plan.seed is not None:
                self.statistics.add(self.plan.group(leading), stem, table)

    def close(self, keep: bool = True) -> list[Path]:
        """End the run: the files renamed into place (`keep`) or removed; the paths written,
        the summary's too."""
        for stream in self.streams.values():
            stream.close(keep)
        if not keep or self.directory is None:
            return []
        paths = [stream.path for stream in self.streams.values()]
        if self.plan.seed is not None:
            tables = {SUMMARY_STEM: self.statistics.table()}
            if self.failures.failures:
                tables[FAILURES_STEM] = self._failed()
            for stem, table in tables.items():
                path = self.directory / f"{stem}.csv"
                write_atomic(path, lambda temporary, t=table: write_csv(t, temporary))
                paths.append(path)
        return paths

    def _failed(self) -> dict[str, np.ndarray]:
        """The failing samples: sample, stepped values, seed and error."""
        failures = self.failures.failures
        steps = [s.label for s in self.plan.circuit.steps]
        return {"sample": np.array([f.sample for f in failures]),
                **{name: np.array([f.stepped[k] for f in failures], float)
                   for k, name in enumerate(steps)},
                "seed": np.array([f.seed for f in failures]),
                "error": np.array([f.error for f in failures], object)}

    def bands(self, stem: str, outputs: list[str]) -> dict[str, list[Band]]:
        """The band of each of `outputs` (a complex one's magnitude) of the written table
        `stem` over the samples of each step point, against its independent variable (on a
        common grid of `BAND_POINTS` where the samples' grids differ, each sample
        interpolated linearly): read from the file one column at a time."""
        stream = self.streams[stem]
        grouping = self.plan.names[:1 + len(self.plan.circuit.steps)]   # sample, stepped
        *keys, x = _read_columns(stream.path, self.fmt, [*grouping, stream.independent])
        edges = np.flatnonzero(np.any([np.diff(key) != 0 for key in keys], axis=0)) + 1
        blocks = list(zip(np.r_[0, edges], np.r_[edges, len(x)]))   # one a sample
        layouts = []
        for group, members in itertools.groupby(
                blocks, lambda block: tuple(float(key[block[0]]) for key in keys[1:])):
            members = list(members)
            first = x[members[0][0]:members[0][1]]
            same = all(np.array_equal(x[start:stop], first) for start, stop in members)
            grid = first if same else np.linspace(x[members[0][0]:members[-1][1]].min(),
                                                  x[members[0][0]:members[-1][1]].max(),
                                                  BAND_POINTS)
            layouts.append((group, members, grid, same))
        bands: dict[str, list[Band]] = {}
        for output in outputs:
            parts = _read_columns(stream.path, self.fmt, stream.outputs[output])
            values = np.abs(parts[0] + 1j * parts[1]) if len(parts) == 2 else parts[0]
            bands[output] = [Band(group, grid, np.quantile(
                values[members[0][0]:members[-1][1]].reshape(len(members), -1) if same
                else np.array([np.interp(grid, x[a:b], values[a:b]) for a, b in members]),
                BAND, axis=0)) for group, members, grid, same in layouts]
        return bands

    def frames(self) -> dict[str, pd.DataFrame]:
        """The tables kept in memory by file stem, with ``mc_summary`` for ``.mc`` (and
        ``mc_failures`` when samples failed)."""
        import pandas as pd

        frames = {stem: stream.frame() for stem, stream in self.streams.items()}
        if self.plan.seed is not None:
            frames[SUMMARY_STEM] = pd.DataFrame(self.statistics.table())
            if self.failures.failures:
                frames[FAILURES_STEM] = pd.DataFrame(self._failed())
        return frames

    def summary(self) -> str:
        """The Monte Carlo statistics as printed."""
        count = self.plan.circuit.montecarlo.count
        failed = len(self.failures.failures)   # runs: a sample at each step point
        return (f"Monte Carlo: {count} samples, seed={self.plan.seed}"
                + (f", {failed} runs failed and left out" if failed else "")
                + "\n" + self.statistics.summary())


def _banded(result: Result, table: dict[str, np.ndarray]
            ) -> tuple[str | None, dict[str, list[str]]]:
    """A table's independent variable and each output's columns in the file, if its outputs
    get a band (`BANDED`)."""
    if result.kind not in BANDED or not isinstance(result, TableResult):
        return None, {}
    return result.independent, {
        name: [f"re({name})", f"im({name})"] if np.iscomplexobj(values) else [name]
        for name, values in table.items() if name != result.independent}


def _read_columns(path: Path, fmt: str, names: list[str]) -> list[np.ndarray]:
    """The columns `names` of a written table, and only those."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path, columns=names)
        return [table.column(name).to_numpy() for name in names]
    import pandas as pd

    frame = pd.read_csv(path, usecols=names)
    return [frame[name].to_numpy() for name in names]
