"""The tables of a ``.step``/``.mc`` run gathered point by point as they arrive: one tidy
table per analysis (leading ``sample`` and parameter columns), streamed to a file a block of
rows at a time (CSV appended, Parquet row groups) or kept for DataFrames, and the Monte
Carlo statistics of every output (``mc_summary.csv``).

A streamed file is written under a temporary name and renamed when the run ends, so a failed
run leaves nothing half-written; memory holds one block of rows per analysis.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mna.analysis.montecarlo import Statistics
from mna.analysis.sweep import Plan, stacked
from mna.results import Result, split_complex
from mna.writers import CSV_BLOCK, UNITS_KEY, cells, file_stems, write_atomic, write_csv

if TYPE_CHECKING:
    import pandas as pd

SUMMARY_STEM = "mc_summary"


class _Stream:
    """One analysis's table: blocks of rows appended to a temporary file, renamed at the
    end (`directory` None: the blocks kept for a DataFrame)."""

    def __init__(self, path: Path | None, fmt: str, units: dict[str, str]):
        self.path = path
        self.fmt = fmt
        self.units = units
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
            if keep:
                self._flush()
        finally:
            if self.handle is not None:
                self.handle.close()
            if keep:
                os.replace(self.temporary, self.path)
            else:
                self.temporary.unlink(missing_ok=True)

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

    def __call__(self, leading: tuple[float, ...], results: list[Result]) -> None:
        for stem, result in zip(file_stems(results), results):
            if hasattr(result, "to_json"):   # a state-space model: no table to stack
                continue
            table = result.table()
            stream = self.streams.get(stem)
            if stream is None:
                units = {**dict.fromkeys(self.plan.names, ""), **result.column_units()}
                path = (None if self.directory is None
                        else self.directory / f"{stem}.{self.fmt}")
                stream = self.streams[stem] = _Stream(path, self.fmt, units)
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
            path = self.directory / f"{SUMMARY_STEM}.csv"
            write_atomic(path, lambda temporary: write_csv(self.statistics.table(), temporary))
            paths.append(path)
        return paths

    def frames(self) -> dict[str, pd.DataFrame]:
        """The tables kept in memory by file stem, with ``mc_summary`` for ``.mc``."""
        import pandas as pd

        frames = {stem: stream.frame() for stem, stream in self.streams.items()}
        if self.plan.seed is not None:
            frames[SUMMARY_STEM] = pd.DataFrame(self.statistics.table())
        return frames

    def summary(self) -> str:
        """The Monte Carlo statistics as printed."""
        count = self.plan.circuit.montecarlo.count
        return (f"Monte Carlo: {count} samples, seed={self.plan.seed}\n"
                + self.statistics.summary())
