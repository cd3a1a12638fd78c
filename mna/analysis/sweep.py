"""``.step param`` and ``.mc``: every analysis repeated at each point (each combination of
the stepped values, times each Monte Carlo sample), the points run by
`mna.analysis.parallel`; tables stacked with leading columns ``sample``, the stepped
parameters and the sampled ones. A ``.mc`` sample whose analyses fail is a `Failure`: the
run goes on without it (a failing ``.step`` point stops the run)."""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mna.analysis import run_all
from mna.analysis.montecarlo import sample_parameters, sampled_names
from mna.analysis.parallel import cores, executor, gather
from mna.errors import MnaError, in_context
from mna.netlist.requests import check_count
from mna.results import Result

if TYPE_CHECKING:
    import pandas as pd

    from mna.circuit import Circuit

log = logging.getLogger(__name__)

REPORTED = 20   # failing samples logged one by one; the others are only counted

Point = tuple[tuple[float, ...], "int | None"]   # stepped values, Monte Carlo sample


@dataclass(frozen=True)
class Failure:
    """A Monte Carlo sample whose analyses failed, and why (the error's message)."""

    sample: int
    seed: int
    stepped: tuple[float, ...]
    error: str


class Failures:
    """The failing samples of a run: each counted and kept, the first `REPORTED` logged."""

    def __init__(self) -> None:
        self.failures: list[Failure] = []

    def add(self, failure: Failure) -> None:
        self.failures.append(failure)
        if len(self.failures) <= REPORTED:
            log.warning("sample %d of seed %d failed and is left out: %s", failure.sample,
                        failure.seed, failure.error)
        elif len(self.failures) == REPORTED + 1:
            log.warning("further failing samples are left out and counted, not reported")

    def check(self, points: int) -> None:
        """Refuse a run whose every point failed."""
        if points and len(self.failures) == points:
            first = self.failures[0]
            raise MnaError(f"every one of the {points} samples failed; sample {first.sample} "
                           f"of seed {first.seed}: {first.error}")


@dataclass(frozen=True)
class Plan:
    """The points of a run and how one is performed: what each worker receives once.
    `seed` is the Monte Carlo seed (chosen at random when the netlist gives none)."""

    circuit: Circuit
    seed: int | None

    @classmethod
    def of(cls, circuit: Circuit) -> Plan:
        mc = circuit.montecarlo
        if mc is None:
            return cls(circuit, None)
        seed = mc.seed if mc.seed is not None else int(
            np.random.SeedSequence().generate_state(1)[0])
        return cls(circuit, seed)

    @property
    def sampled(self) -> list[str]:
        return sampled_names(self.circuit) if self.seed is not None else []

    @property
    def names(self) -> list[str]:
        """The leading columns: ``sample``, each stepped parameter, each sampled one."""
        spelled = self.circuit.parameter_names
        return ([*(["sample"] if self.seed is not None else []),
                 *(s.label for s in self.circuit.steps),
                 *(spelled[name] for name in self.sampled)])

    def group(self, leading: tuple[float, ...]) -> tuple[float, ...]:
        """The stepped values among a point's leading values: what its sample is one of."""
        start = int(self.seed is not None)
        return leading[start:start + len(self.circuit.steps)]

    def points(self) -> list[Point]:
        stepped = list(itertools.product(*(s.values() for s in self.circuit.steps)))
        mc = self.circuit.montecarlo
        samples = range(mc.count) if mc is not None else [None]
        return list(itertools.product(stepped, samples))

    def __call__(self, point: Point) -> tuple[tuple[float, ...], list[Result]] | Failure:
        """The leading values and the results of every analysis at `point` (a failing
        sample: its `Failure`)."""
        values, sample = point
        circuit = self.circuit
        fixed = {s.name: v for s, v in zip(circuit.steps, values)}
        try:
            if sample is None:
                parameters, drawn = {**circuit.parameters, **fixed}, ()
            else:
                parameters, known = sample_parameters(circuit, fixed, self.seed, sample)
                drawn = tuple(known[name] for name in self.sampled)
            results = run_all(dataclasses.replace(circuit, parameters=parameters))
        except MnaError as error:
            if values:
                error = in_context(error, "at the step " + ", ".join(
                    f"{s.label}={v:g}" for s, v in zip(circuit.steps, values)))
            if sample is None:
                raise error from None
            return Failure(sample, self.seed, values, str(error))
        leading = (*(() if sample is None else (sample,)), *values, *drawn)
        return leading, results


def run_points(plan: Plan, consume: Callable[[tuple[float, ...], list[Result]], None],
               workers: int | None = None, scheduler: object = None,
               failures: Failures | None = None) -> Failures:
    """Every point of `plan` on `workers` processes (default ``.options workers``, 0 every
    core) or a Dask `scheduler`; `consume(leading, results)` gets each point's outputs in
    order as they arrive, `failures` (returned) the failing samples; `MnaError` if every
    sample failed."""
    points = plan.points()
    workers = plan.circuit.options.workers if workers is None else workers
    workers = min(workers or cores(), len(points))   # no idle processes for a short run
    failures = Failures() if failures is None else failures

    def take(output: tuple[tuple[float, ...], list[Result]] | Failure) -> None:
        if isinstance(output, Failure):
            failures.add(output)
        else:
            consume(*output)

    with executor(plan, workers, scheduler) as (pool, token, slots):
        gather(pool, token, slots, points, take, "sample" if plan.seed is not None else "step")
    failures.check(len(points))
    return failures


def run_stepped(circuit: Circuit, workers: int | None = None,
                scheduler: object = None) -> list[Result]:
    """Every analysis at every point, each analysis's tables stacked in memory."""
    points: list[tuple[float, ...]] = []
    runs: list[list[Result]] = []
    plan = Plan.of(circuit)

    def keep(leading: tuple[float, ...], results: list[Result]) -> None:
        if not runs:   # the first point's tables, as long as most points' will be
            rows = sum(len(next(iter(r.table().values()), ())) for r in results)
            card = circuit.steps[0] if circuit.steps else circuit.montecarlo
            check_count(rows * len(plan.points()),
                        f"{'.step' if circuit.steps else '.mc'} (the rows of all its tables)",
                        circuit, card.location, per_point=False)
        points.append(leading)
        runs.append(results)

    run_points(plan, keep, workers, scheduler)
    return [SteppedResult(plan.names, points, [run[i] for run in runs])
            for i in range(len(runs[0]))]


def stacked(names: list[str], leading: tuple[float, ...],
            table: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`table` after a column per leading value."""
    rows = len(next(iter(table.values()))) if table else 0
    return {**{name: np.full(rows, value) for name, value in zip(names, leading)}, **table}


class SteppedResult(Result):
    """The tables of one analysis at every point, stacked with leading parameter columns."""

    def __init__(self, names: list[str], points: list[tuple[float, ...]], results: list[Result]):
        self.kind = results[0].kind
        self.names = names
        self.points = points
        self.results = results

    def table(self) -> dict[str, np.ndarray]:
        """The points' tables one below the other, after a column per parameter."""
        tables = [stacked(self.names, point, result.table())
                  for point, result in zip(self.points, self.results)]
        return {name: np.concatenate([table[name] for table in tables]) for name in tables[0]}

    def column_units(self) -> dict[str, str]:
        return {**{n: "" for n in self.names}, **self.results[0].column_units()}

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
