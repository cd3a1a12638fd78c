"""PNG plots of analysis results: `write_plots(results, directory)`, one file per result.

A table result (``.dc``, ``.tran``) gets one axis per unit, stacked and sharing the
independent variable, each labelled with its unit. Each kind of result can have its own
plotter in `PLOTTERS` (an AC result wants a Bode plot: magnitude and phase against log
frequency); a kind without one falls back to `plot_table` for real tables and is skipped
otherwise. A ``.mc`` run gets `write_mc_plots`: histograms of its scalars and bands of its
``.tran`` and ``.ac`` outputs over the samples.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mna.results import Result, TableResult
from mna.tables import BAND, Band
from mna.writers import file_stems, write_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from mna.tables import RunTables

log = logging.getLogger(__name__)

MAX_PANELS = 12    # outputs drawn in one .mc figure; the others are left out (with a note)
PANEL_COLUMNS = 3
MAX_LEGEND = 12    # lines an axis's legend names; beyond, the axis says how many it draws


def plot_table(result: TableResult, path: Path, logarithmic: bool = False) -> None:
    """One axis per unit against the independent variable (both on log scales with
    `logarithmic`: noise spectra); legends name the outputs."""
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
            (axis.loglog if logarithmic else axis.plot)(x, np.asarray(result.columns[name]),
                                                        label=name)
        axis.set_ylabel(f"[{unit}]" if unit else "[1]")
        axis.grid(True, which="both" if logarithmic else "major", alpha=0.3)
        _legend(axis, len(names), "outputs")
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
        _legend(magnitude, len(names), "outputs")
    unit = result.units.get(result.independent, "Hz")
    axes[-1].set_xlabel(f"{result.independent} [{unit}]")
    axes[0].set_title("ac analysis (Bode)")
    write_atomic(path, lambda p: figure.savefig(p, format="png", dpi=110))


# kind -> plotter.
PLOTTERS: dict[str, Callable[[Result, Path], None]] = {
    "dc": plot_table,
    "tran": plot_table,
    "ac": plot_bode,
    "noise": functools.partial(plot_table, logarithmic=True),
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


def write_mc_plots(tables: RunTables, directory: str | Path) -> list[Path]:
    """The plots of a ``.mc`` run beside its tables: ``<stem>_hist.png``, a histogram over
    the samples of each scalar that the summary follows (an ``.op`` or ``.meas`` value, the
    final value of a table's output), and ``<stem>_band.png``, the median and 5-95 %
    envelope of each output of a ``.tran`` or ``.ac`` table against time or frequency (one
    curve per ``.step`` point); at most `MAX_PANELS` outputs a figure."""
    directory = Path(directory)
    steps = [s.label for s in tables.plan.circuit.steps]
    paths = []
    for stem, outputs in tables.statistics.samples().items():
        path = directory / f"{stem}_hist.png"
        _plot_histograms(stem, _first_panels(stem, outputs), steps, path)
        paths.append(path)
    for stem, stream in tables.streams.items():
        if stream.independent is None:
            continue
        names = list(_first_panels(stem, stream.outputs))
        path = directory / f"{stem}_band.png"
        _plot_bands(stem, stream.independent, tables.bands(stem, names), stream.units,
                    steps, path)
        paths.append(path)
    return paths


def _first_panels(stem: str, outputs: dict) -> dict:
    if len(outputs) > MAX_PANELS:
        log.info("%s: plotting the first %d of %d outputs", stem, MAX_PANELS, len(outputs))
    return dict(list(outputs.items())[:MAX_PANELS])


def _panels(count: int) -> tuple[Figure, list]:
    from matplotlib.figure import Figure

    columns = min(count, PANEL_COLUMNS)
    rows = -(-count // columns)
    figure = Figure(figsize=(max(6.4, 4.2 * columns), 1.2 + 2.8 * rows),
                    layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for axis in axes[count:]:
        axis.set_visible(False)
    return figure, list(axes[:count])


def _step_label(steps: list[str], group: tuple[float, ...]) -> str | None:
    return ", ".join(f"{name}={value:g}" for name, value in zip(steps, group)) or None


def _plot_histograms(stem: str, outputs: dict[str, dict[tuple, np.ndarray]],
                     steps: list[str], path: Path) -> None:
    figure, axes = _panels(len(outputs))
    for axis, (output, groups) in zip(axes, outputs.items()):
        for group, values in groups.items():
            finite = values[np.isfinite(values)]
            axis.hist(finite, bins=int(np.clip(np.sqrt(len(finite)), 5, 50)),
                      alpha=0.6 if len(groups) > 1 else 1.0, label=_step_label(steps, group))
        axis.set_xlabel(output)
        axis.set_ylabel("samples")
        axis.grid(True, alpha=0.3)
        if steps:
            _legend(axis, len(groups), "step points")
    figure.suptitle(f"{stem}: over the Monte Carlo samples")
    write_atomic(path, lambda p: figure.savefig(p, format="png", dpi=110))


def _plot_bands(stem: str, independent: str, bands: dict[str, list[Band]],
                units: dict[str, str], steps: list[str], path: Path) -> None:
    """Median and envelope against the independent variable; AC magnitudes in dB on a
    logarithmic frequency axis."""
    figure, axes = _panels(len(bands))
    ac = stem.startswith("ac")
    low, median, high = (BAND.index(q) for q in (min(BAND), 0.5, max(BAND)))
    for axis, (output, groups) in zip(axes, bands.items()):
        for band in groups:
            rows = band.quantiles
            if ac:
                with np.errstate(divide="ignore"):
                    rows = 20 * np.log10(rows)
                axis.set_xscale("log")
            line, = axis.plot(band.x, rows[median], label=_step_label(steps, band.group))
            axis.fill_between(band.x, rows[low], rows[high], color=line.get_color(),
                              alpha=0.25, linewidth=0)
        unit = units.get(output, "")
        axis.set_ylabel(f"|{output}| [dB]" if ac else f"{output} [{unit}]" if unit else output)
        axis.set_xlabel(f"{independent} [{units.get(independent, '')}]")
        axis.grid(True, which="both", alpha=0.3)
        if steps:
            _legend(axis, len(groups), "step points")
    figure.suptitle(f"{stem}: median and {100 * min(BAND):g}-{100 * max(BAND):g} % "
                    "envelope over the samples")
    write_atomic(path, lambda p: figure.savefig(p, format="png", dpi=110))


def _legend(axis, count: int, what: str) -> None:
    """A legend naming the `count` lines of `axis`, or for more than `MAX_LEGEND` a note of
    how many it draws (a legend of hundreds covers the figure and takes minutes to place)."""
    if count <= MAX_LEGEND:
        axis.legend(loc="best", fontsize="small")
    else:
        axis.text(0.99, 0.97, f"{count} {what}", transform=axis.transAxes, ha="right",
                  va="top", fontsize="small",
                  bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"})
