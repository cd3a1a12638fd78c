"""Labelled results with units: what an analysis returns, as named columns or a DataFrame
(files are written by `mna.writers`, plots by `mna.plots`)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


class Result:
    """What an analysis returns; `kind` names its file (``op``, ``dc``, ``ac``, ``tran``)."""

    kind: str
    # whether its columns are the netlist's outputs (.save, .print, .meas read them), or
    # quantities of its own (a state-space model, poles and zeros, noise)
    selects_outputs = True

    def table(self) -> dict[str, np.ndarray]:
        """The result as named columns of equal length, in file order (complex kept)."""
        raise NotImplementedError

    def to_dataframe(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.table())

    def summary(self) -> str:
        raise NotImplementedError

    def column_units(self) -> dict[str, str]:
        """The unit of each column of `table` ('' where it has none)."""
        return {}

    def select(self, outputs: list[Selected]) -> Result:
        """The result with these outputs, each computed from the ones it has."""
        raise NotImplementedError(f"a {self.kind} result has no outputs to compute")


@dataclass(frozen=True)
class Selected:
    """An output of a result: its name, unit, and how it follows from the result's own
    outputs at one point (a mapping of their names to values)."""

    name: str
    unit: str
    compute: Callable[[Mapping[str, complex]], complex]


@dataclass(frozen=True)
class OperatingPointResult(Result):
    names: tuple[str, ...]
    values: tuple[float, ...]
    units: tuple[str, ...]

    kind = "op"
    heading = "Operating point"

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

    def column_units(self) -> dict[str, str]:
        return dict(zip(self.names, self.units))

    def select(self, outputs: list[Selected]) -> OperatingPointResult:
        point = dict(zip(self.names, self.values))
        return OperatingPointResult(tuple(o.name for o in outputs),
                                    tuple(float(o.compute(point)) for o in outputs),
                                    tuple(o.unit for o in outputs))

    def summary(self) -> str:
        width = max((len(n) for n in self.names), default=0)
        lines = [f"  {n:<{width}}  {v: .6g} {u}"
                 for n, v, u in zip(self.names, self.values, self.units)]
        return f"{self.heading}:\n" + "\n".join(lines)


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

    def column_units(self) -> dict[str, str]:
        return dict(self.units)

    def select(self, outputs: list[Selected]) -> TableResult:
        """The independent and leading columns, then `outputs` computed point by point."""
        names = {o.name for o in outputs}
        count = len(self.columns[self.independent])
        leading = list(self.columns)[:list(self.columns).index(self.independent) + 1]
        columns = {name: self.columns[name] for name in leading if name not in names}
        units = {name: self.units.get(name, "") for name in columns}
        points = [{name: values[k] for name, values in self.columns.items()}
                  for k in range(count)]
        for output in outputs:
            if output.name in self.columns:
                columns[output.name] = self.columns[output.name]
            else:
                columns[output.name] = np.array([output.compute(point) for point in points])
            units[output.name] = output.unit
        selected = copy.copy(self)
        selected.columns, selected.units = columns, units
        return selected

    def summary(self) -> str:
        count = len(next(iter(self.columns.values())))
        names = [n for n in self.columns if n != self.independent]
        values = self.columns[self.independent]
        unit = self.units.get(self.independent, "")
        return (f"{self.kind.upper()}: {count} points of {self.independent} from "
                f"{values[0]:g} to {values[-1]:g}{' ' + unit if unit else ''}; "
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
