"""PNG plots of analysis results: `write_plots(results, directory)`, one file per result.

A table result (``.dc``, ``.tran``) gets one axis per unit, stacked and sharing the
independent variable, each labelled with its unit. Each kind of result can have its own
plotter in `PLOTTERS` (an AC result wants a Bode plot: magnitude and phase against log
frequency); a kind without one falls back to `plot_table` for real tables and is skipped
otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np

from mna.results import Result, TableResult
from mna.writers import file_stems, write_atomic

log = logging.getLogger(__name__)


def plot_table(result: TableResult, path: Path) -> None:
    """One axis per unit against the independent variable; legends name the outputs."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    x_name = result.independent
    x = np.asarray(result.columns[x_name])
    by_unit: dict[str, list[str]] = {}
    for name in result.columns:
        if name != x_name:
            by_unit.setdefault(result.units.get(name, ""), []).append(name)
    figure = Figure(figsize=(8, 2.2 + 1.8 * len(by_unit)), layout="constrained")
    axes = figure.subplots(len(by_unit), 1, sharex=True, squeeze=False)[:, 0]
    for axis, (unit, names) in zip(axes, by_unit.items(), strict=True):
        for name in names:
            axis.plot(x, np.asarray(result.columns[name]), label=name)
        axis.set_ylabel(f"[{unit}]" if unit else "[1]")
        axis.grid(True, alpha=0.3)
        axis.legend(loc="best", fontsize="small")
    x_unit = result.units.get(x_name, "")
    axes[-1].set_xlabel(f"{x_name} [{x_unit}]" if x_unit else x_name)
    axes[0].set_title(f"{result.kind} analysis")
    write_atomic(path, lambda p: figure.savefig(p, format="png", dpi=110))


def plot_bode(result: TableResult, path: Path) -> None:
    """Bode plot of an AC table: magnitude in dB and phase in degrees against log frequency,
    one pair of axes per output unit (dB relative to 1 of that unit per unit of input)."""
    from matplotlib.figure import Figure

    f = np.asarray(result.columns[result.independent], dtype=float)
    by_unit: dict[str, list[str]] = {}
    for name, column in result.columns.items():
        if name != result.independent and np.iscomplexobj(np.asarray(column)):
            by_unit.setdefault(result.units.get(name, ""), []).append(name)
    figure = Figure(figsize=(8, 1.5 + 3.2 * max(len(by_unit), 1)), layout="constrained")
    axes = figure.subplots(2 * max(len(by_unit), 1), 1, sharex=True, squeeze=False)[:, 0]
    for k, (unit, names) in enumerate(by_unit.items()):
        magnitude, phase = axes[2 * k], axes[2 * k + 1]
        for name in names:
            value = np.asarray(result.columns[name], dtype=complex)
            with np.errstate(divide="ignore"):
                magnitude.semilogx(f, 20 * np.log10(np.abs(value)), label=name)
            phase.semilogx(f, np.degrees(np.unwrap(np.angle(value))), label=name)
        magnitude.set_ylabel(f"|{unit or '1'}| [dB]")
        phase.set_ylabel("phase [deg]")
        for axis in (magnitude, phase):
            axis.grid(True, which="both", alpha=0.3)
        magnitude.legend(loc="best", fontsize="small")
    unit = result.units.get(result.independent, "Hz")
    axes[-1].set_xlabel(f"{result.independent} [{unit}]")
    axes[0].set_title("ac analysis (Bode)")
    write_atomic(path, lambda p: figure.savefig(p, format="png", dpi=110))


# kind -> plotter.
PLOTTERS: dict[str, Callable[[Result, Path], None]] = {
    "dc": plot_table,
    "tran": plot_table,
    "ac": plot_bode,
}


def _plotter(result: Result) -> Callable[[Result, Path], None] | None:
    plotter = PLOTTERS.get(result.kind)
    if plotter is not None:
        return plotter
    if isinstance(result, TableResult) and not any(
            np.iscomplexobj(np.asarray(v)) for v in result.columns.values()):
        return plot_table
    return None


def write_plots(results: list[Result], directory: str | Path) -> list[Path]:
    """Write ``<stem>.png`` beside each result file that can be plotted; returns the paths.

    >>> import mna, tempfile
    >>> c = mna.read_string("rc\\nV1 in 0 1\\nR1 in o 1k\\nC1 o 0 1u\\n.tran 10u 1m uic\\n")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in write_plots(mna.run(c), d)]
    ['tran.png']
    """
    directory = Path(directory)
    paths = []
    for result, stem in zip(results, file_stems(results), strict=True):
        plotter = _plotter(result)
        if plotter is None:
            log.info("no plot for the %s result", result.kind)
            continue
        path = directory / f"{stem}.png"
        plotter(result, path)
        paths.append(path)
    return paths
