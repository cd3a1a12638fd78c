"""Monte Carlo: the parameters of a sample, drawn from its own generator, and the statistics
of the outputs over the samples (``mc_summary.csv``).

Sample k of seed S draws from ``numpy.random.SeedSequence([S, k])``: one standard normal and
one uniform variate per random call, in the circuit's order, so the sample is the same
whichever process runs it and however many samples run before it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from mna.expr import Expression, Value

QUANTILES = (0.05, 0.5, 0.95)


def random_calls(circuit) -> list[str]:
    """The parameters that are random calls (``agauss@1``), in the circuit's order."""
    return [name for name, value in circuit.parameters.items()
            if isinstance(value, Expression) and value.law is not None]


def sampled_names(circuit) -> list[str]:
    """The netlist's own ``.param`` names whose value depends on a draw."""
    random = set(random_calls(circuit))
    for name, value in circuit.parameters.items():
        if isinstance(value, Expression) and not random.isdisjoint(value.names):
            random.add(name)
    return [name for name in circuit.parameter_names if name in random]


def sample_parameters(circuit, fixed: Mapping[str, float], seed: int,
                      sample: int) -> tuple[dict[str, Value], dict[str, float]]:
    """The circuit's parameters in sample `sample` (each random call a number drawn for it,
    the `fixed` ones as given, the others unchanged) and every parameter's value there."""
    calls = random_calls(circuit)
    generator = np.random.default_rng(np.random.SeedSequence([seed, sample]))
    variates = {"normal": generator.standard_normal(len(calls)),
                "uniform": generator.uniform(-1.0, 1.0, len(calls))}
    index = {name: k for k, name in enumerate(calls)}
    parameters = {**circuit.parameters, **fixed}
    values: dict[str, float] = {}
    for name, value in parameters.items():
        if name in index:
            value = parameters[name] = value.draw(values, float(variates[value.law][index[name]]))
        values[name] = value.evaluate(values) if isinstance(value, Expression) else value
    return parameters, values


def scalars(table: Mapping[str, np.ndarray]) -> dict[str, float]:
    """The numbers of one result that a summary follows over the samples: each value of an
    operating point or a measurement, the final value of each output of a table (the
    magnitude of a complex one)."""
    if "name" in table and "value" in table:
        return dict(zip(table["name"].tolist(), np.asarray(table["value"], float).tolist()))
    names = list(table)[1:]
    return {f"{name} (final)" if not np.iscomplexobj(table[name]) else f"|{name}| (final)":
            float(abs(table[name][-1])) for name in names if len(table[name])}


class Statistics:
    """The scalars of each analysis gathered sample by sample (a float per sample and
    scalar: what 1e5 samples of a small circuit hold), then their statistics."""

    def __init__(self, names: list[str]):
        self.names = names           # leading columns that group the rows (stepped values)
        self.values: dict[tuple, list[float]] = {}

    def add(self, group: tuple[float, ...], stem: str, table: Mapping[str, np.ndarray]) -> None:
        for output, value in scalars(table).items():
            self.values.setdefault((group, stem, output), []).append(value)

    def samples(self) -> dict[str, dict[str, dict[tuple, np.ndarray]]]:
        """Each analysis's scalars by output and group: their values over the samples."""
        found: dict[str, dict[str, dict[tuple, np.ndarray]]] = {}
        for (group, stem, output), values in self.values.items():
            found.setdefault(stem, {}).setdefault(output, {})[group] = np.asarray(values)
        return found

    def table(self) -> dict[str, np.ndarray]:
        """One row per group, analysis and scalar: count, mean, std, min, max, quantiles."""
        rows = []
        for (group, stem, output), values in self.values.items():
            data = np.asarray(values)
            finite = data[np.isfinite(data)]
            stats = ([finite.mean(), finite.std(ddof=1) if len(finite) > 1 else np.nan,
                      finite.min(), finite.max(), *np.quantile(finite, QUANTILES)]
                     if len(finite) else [np.nan] * (4 + len(QUANTILES)))
            rows.append((*group, stem, output, len(finite), *stats))
        heads = [*self.names, "analysis", "output", "samples", "mean", "std", "min", "max",
                 *(f"q{round(100 * q):02d}" for q in QUANTILES)]
        kinds = {"analysis": object, "output": object, "samples": int}
        return {head: np.array([row[k] for row in rows], dtype=kinds.get(head, float))
                for k, head in enumerate(heads)}

    def summary(self) -> str:
        """The statistics as printed lines."""
        table = self.table()
        width = max((len(o) for o in table["output"]), default=0)
        lines = []
        for k in range(len(table["output"])):
            group = ", ".join(f"{n}={table[n][k]:g}" for n in self.names)
            lines.append(f"  {'[' + group + '] ' if group else ''}{table['analysis'][k]:<5} "
                         f"{table['output'][k]:<{width}}  mean {table['mean'][k]: .6g}  "
                         f"std {table['std'][k]:.4g}  min {table['min'][k]: .6g}  "
                         f"max {table['max'][k]: .6g}")
        return "\n".join(lines)
