"""Result files: one writer per format (`WRITERS`, whose names ``--format`` offers), each file
written under a temporary name and renamed, so that no file is ever half-written.

A table goes to CSV (complex columns as ``re(...)``/``im(...)``), Parquet (units in the
schema's metadata; `read_parquet` gives them back in ``attrs``) or JSON; a state-space model
is always JSON.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mna.progress import progress
from mna.results import Result, split_complex

if TYPE_CHECKING:
    import pandas as pd

UNITS_KEY = b"mna.units"
CSV_BLOCK = 10_000    # rows converted to text at a time


@dataclass(frozen=True)
class Writer:
    """A file format: its file suffix and how a result's table is written to a path."""

    suffix: str
    write: Callable[[Result, Path], None]


def write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Call `write(temporary_path)`, then rename: a failed write leaves nothing behind. The
    file is made with the process's umask, as any tool's would be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.urandom(4).hex()}.part")
    os.close(os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_csv(columns: dict[str, np.ndarray], path: Path) -> None:
    """The columns as CSV, cell for cell as pandas' ``to_csv(index=False)`` writes them
    (floats in shortest round-trip form, NaN as an empty cell), without importing pandas;
    written a block of rows at a time."""
    arrays = [np.asarray(values) for values in columns.values()]
    rows = len(arrays[0]) if arrays else 0
    with open(path, "w", newline="") as handle, progress(rows, path.name, "row") as bar:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        for start in range(0, rows, CSV_BLOCK):
            writer.writerows(zip(*(cells(values[start:start + CSV_BLOCK])
                                   for values in arrays)))
            bar.update(min(CSV_BLOCK, rows - start))


def cells(values: np.ndarray) -> list:
    """A column as CSV cells: NaN as an empty cell."""
    if values.dtype.kind == "f" and np.isnan(values).any():
        values = np.where(np.isnan(values), "", values.astype(object))
    return values.tolist()


def _csv(result: Result, path: Path) -> None:
    write_csv(split_complex(result.table()), path)


def _parquet(result: Result, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(split_complex(result.table()))
    units = json.dumps(result.column_units()).encode()
    pq.write_table(table.replace_schema_metadata({**(table.schema.metadata or {}),
                                                  UNITS_KEY: units}), path)


def _json(result: Result, path: Path) -> None:
    if hasattr(result, "to_json"):
        path.write_text(result.to_json())
        return
    columns = {name: _json_cells(np.asarray(values)) for name, values in
               split_complex(result.table()).items()}
    path.write_text(json.dumps({"kind": result.kind, "units": result.column_units(),
                                "columns": columns}, indent=1, allow_nan=False))


def _json_cells(values: np.ndarray) -> list:
    """A column as JSON values: a number that is not finite (a .meas that found nothing,
    -inf dB) as null, since JSON has no NaN."""
    if values.dtype.kind != "f":
        return values.tolist()
    return [value if math.isfinite(value) else None for value in values.tolist()]


WRITERS: dict[str, Writer] = {
    "csv": Writer("csv", _csv),
    "parquet": Writer("parquet", _parquet),
    "json": Writer("json", _json),
}


def read_parquet(path: str | Path) -> pd.DataFrame:
    """A Parquet file of `mna` as a DataFrame, the units in ``attrs["units"]``."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    frame = table.to_pandas()
    frame.attrs["units"] = json.loads((table.schema.metadata or {}).get(UNITS_KEY, b"{}"))
    return frame


def file_stems(results: list[Result]) -> list[str]:
    """``op``, ``tran``, ``tran_2`` ...: one file per analysis, numbered by kind."""
    seen: dict[str, int] = {}
    stems = []
    for result in results:
        seen[result.kind] = seen.get(result.kind, 0) + 1
        stems.append(result.kind if seen[result.kind] == 1
                     else f"{result.kind}_{seen[result.kind]}")
    return stems


def write_results(results: list[Result], directory: str | Path, fmt: str = "csv") -> list[Path]:
    """Write every result into `directory` in format `fmt` (a state-space model as JSON);
    returns the paths written."""
    directory = Path(directory)
    paths = []
    for result, stem in zip(results, file_stems(results), strict=True):
        writer = WRITERS["json" if hasattr(result, "to_json") else fmt]
        path = directory / f"{stem}.{writer.suffix}"
        write_atomic(path, lambda temporary, w=writer, r=result: w.write(r, temporary))
        paths.append(path)
    return paths
