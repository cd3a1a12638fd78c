"""Labelled results with units: pandas tables, atomic CSV/Parquet files, plots."""

from __future__ import annotations

import csv
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

FileFormat = Literal["csv", "parquet"]


class Result:
    """What an analysis returns; `kind` names its file (``op``, ``dc``, ``ac``, ``tran``)."""

    kind: str

    def table(self) -> dict[str, np.ndarray]:
        """The result as named columns of equal length, in file order (complex kept)."""
        raise NotImplementedError

    def to_dataframe(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.table())

    def summary(self) -> str:
        raise NotImplementedError

    def file_suffix(self, fmt: FileFormat) -> str:
        return fmt

    def write(self, path: Path, fmt: FileFormat) -> None:
        """Write the result's table to `path` (atomically); complex columns split in two."""
        columns = split_complex(self.table())
        if fmt == "csv":
            write_atomic(path, lambda p: write_csv(p, columns))
        else:
            import pandas as pd

            write_atomic(path, lambda p: pd.DataFrame(columns).to_parquet(p, index=False))


@dataclass(frozen=True)
class OperatingPointResult(Result):
    names: tuple[str, ...]
    values: tuple[float, ...]
    units: tuple[str, ...]

    kind = "op"

    def __getitem__(self, name: str) -> float:
        lowered = name.lower()
        for key, value in zip(self.names, self.values):
            if key.lower() == lowered:
                return value
        raise KeyError(name)

    def table(self) -> dict[str, np.ndarray]:
        """Columns ``name, value, unit``, one row per output."""
        return {"name": np.array(self.names, dtype=object),
                "value": np.array(self.values, dtype=float),
                "unit": np.array(self.units, dtype=object)}

    def to_dataframe(self) -> pd.DataFrame:
        """`table` with the units also in ``attrs``."""
        frame = super().to_dataframe()
        frame.attrs["units"] = dict(zip(self.names, self.units))
        return frame

    def summary(self) -> str:
        width = max((len(n) for n in self.names), default=0)
        lines = [f"  {n:<{width}}  {v: .6g} {u}"
                 for n, v, u in zip(self.names, self.values, self.units)]
        return "Operating point:\n" + "\n".join(lines)


class TableResult(Result):
    """A table over an independent variable (sweep, frequency, time): one column per output."""

    def __init__(self, kind: str, columns: dict[str, np.ndarray], units: dict[str, str],
                 independent: str):
        self.kind = kind
        self.columns = columns
        self.units = units
        self.independent = independent

    def __getitem__(self, name: str) -> np.ndarray:
        lowered = name.lower()
        return next(v for k, v in self.columns.items() if k.lower() == lowered)

    def table(self) -> dict[str, np.ndarray]:
        return self.columns

    def to_dataframe(self) -> pd.DataFrame:
        frame = super().to_dataframe()
        frame.attrs["units"] = dict(self.units)
        return frame

    def summary(self) -> str:
        count = len(next(iter(self.columns.values())))
        names = [n for n in self.columns if n != self.independent]
        values = self.columns[self.independent]
        return (f"{self.kind.upper()}: {count} points of {self.independent} from "
                f"{values[0]:g} to {values[-1]:g} {self.units.get(self.independent, '')}; "
                f"outputs {', '.join(names)}")


def split_complex(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The columns as written to a file: a complex column becomes ``re(...)`` and ``im(...)``."""
    split = {}
    for name, values in columns.items():
        values = np.asarray(values)
        if np.iscomplexobj(values):
            split[f"re({name})"], split[f"im({name})"] = values.real, values.imag
        else:
            split[name] = values
    return split


def write_csv(path: str | Path, columns: dict[str, np.ndarray]) -> None:
    """The columns as CSV, cell for cell as pandas' ``to_csv(index=False)`` writes them
    (floats in shortest round-trip form, NaN as an empty cell), without importing pandas:
    that import costs a third of a second, more than writing 10,000 rows."""
    cells = []
    for values in columns.values():
        values = np.asarray(values)
        if values.dtype.kind == "f" and np.isnan(values).any():
            values = np.where(np.isnan(values), "", values.astype(object))
        cells.append(values.tolist())
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(zip(*cells))


def file_stems(results: list[Result]) -> list[str]:
    """``op``, ``tran``, ``tran_2`` ...: one file per analysis, numbered by kind."""
    seen: dict[str, int] = {}
    stems = []
    for result in results:
        seen[result.kind] = seen.get(result.kind, 0) + 1
        stems.append(result.kind if seen[result.kind] == 1
                     else f"{result.kind}_{seen[result.kind]}")
    return stems


def write_atomic(path: Path, write) -> None:
    """Call `write(temporary_path)`, then rename: a failed write leaves nothing behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    os.close(handle)
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def write_results(results: list[Result], directory: str | Path,
                  fmt: FileFormat = "csv") -> list[Path]:
    """Write every result into `directory`; returns the paths written."""
    directory = Path(directory)
    paths = []
    for result, stem in zip(results, file_stems(results)):
        path = directory / f"{stem}.{result.file_suffix(fmt)}"
        result.write(path, fmt)
        paths.append(path)
    return paths
