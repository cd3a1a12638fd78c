"""``.step param``: every analysis repeated over parameter values, tables stacked with the
stepped parameters as leading columns."""

from __future__ import annotations

import dataclasses
import itertools
from typing import TYPE_CHECKING

import numpy as np

from mna.analysis import run_all
from mna.errors import MnaError, in_context
from mna.progress import progress
from mna.results import Result

if TYPE_CHECKING:
    import pandas as pd


def run_stepped(circuit) -> list[Result]:
    """Every analysis at every combination of the ``.step`` values (first card outermost)."""
    points = list(itertools.product(*(s.values() for s in circuit.steps)))
    runs = []
    with progress(len(points), "step", "point") as bar:
        for point in points:
            parameters = {**circuit.parameters,
                          **{s.name: v for s, v in zip(circuit.steps, point)}}
            stepped = dataclasses.replace(circuit, parameters=parameters)
            try:
                runs.append(run_all(stepped))
            except MnaError as error:
                where = ", ".join(f"{s.label}={v:g}" for s, v in zip(circuit.steps, point))
                raise in_context(error, f"at the step {where}") from None
            bar.update()
    names = [s.label for s in circuit.steps]
    return [SteppedResult(names, points, [run[i] for run in runs])
            for i in range(len(runs[0]))]


class SteppedResult(Result):
    """The tables of one analysis at every step point, stacked with leading parameter columns."""

    def __init__(self, names: list[str], points: list[tuple[float, ...]], results: list[Result]):
        self.kind = results[0].kind
        self.names = names
        self.points = points
        self.results = results

    def table(self) -> dict[str, np.ndarray]:
        """The step points' tables one below the other, after a column per parameter."""
        tables = [result.table() for result in self.results]
        lengths = [len(next(iter(table.values()))) for table in tables]
        leading = {name: np.repeat([point[i] for point in self.points], lengths)
                   for i, name in enumerate(self.names)}
        return {**leading, **{name: np.concatenate([table[name] for table in tables])
                              for name in tables[0]}}

    def to_dataframe(self) -> pd.DataFrame:
        frame = super().to_dataframe()
        frame.attrs["units"] = {**self.results[0].to_dataframe().attrs.get("units", {}),
                                **{n: "" for n in self.names}}
        return frame

    def summary(self) -> str:
        heading = ", ".join(f"{n} ({len(set(p[i] for p in self.points))} values)"
                            for i, n in enumerate(self.names))
        return f"Stepped over {heading}:\n" + "\n".join(
            f"[{', '.join(f'{n}={v:g}' for n, v in zip(self.names, point))}] {result.summary()}"
            for point, result in zip(self.points, self.results)
        )
