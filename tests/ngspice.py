"""Run the reference simulator ngspice on a netlist and read back its results.

The test-suite and the benchmarks compare ``mna`` against ngspice.  `run` writes
the deck to a scratch directory, runs ngspice in batch mode with an ASCII raw
file, and parses each plot into a DataFrame whose column names are spelt the
same way across ngspice versions.

``.control ... .endc`` blocks are removed before running: in batch mode ngspice
versions differ on whether they run the dot-card analyses, the script, or both,
and a script may ``alter`` the circuit or ``write`` elsewhere.  Without it the
raw file holds exactly the dot-card analyses, so settings that matter must be
dot-cards (``.options``, ``.param``, ``.save``, ...).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

# From .control to .endc, or to the end of the deck if .endc is missing.
_CONTROL_BLOCK = re.compile(
    r"^[ \t]*\.control\b.*?(?:^[ \t]*\.endc\b[^\n]*(?:\n|\Z)|\Z)",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)
_FUNCTION = re.compile(r"^([vi])\((.+)\)$")
# Short analysis keywords accepted by ``Result[...]`` besides the full plot name.
_KEYWORDS = {
    "op": "operating point",
    "dc": "dc transfer characteristic",
    "ac": "ac analysis",
    "tran": "transient analysis",
}
_LOG_TAIL = 30  # lines of ngspice output quoted in error messages


class NgspiceError(RuntimeError):
    """ngspice failed, timed out, or wrote no usable raw file."""


@dataclass(frozen=True)
class Plot:
    """One analysis result (one plot of the raw file).

    Attributes
    ----------
    name : str
        ngspice's plot name, e.g. ``"Operating Point"``, ``"AC Analysis"``.
    variables : list of str
        Normalised variable names (see `normalise_name`), in file order; the
        first one is the scale (``time``, ``frequency``, ``V(v-sweep)``, ...).
    data : pandas.DataFrame
        One row per point, one column per variable.  AC plots are complex
        except for the real ``frequency`` column.
    """

    name: str
    variables: list[str]
    data: pd.DataFrame


@dataclass(frozen=True)
class Result:
    """All plots of one ngspice run, plus what a benchmark or a failure report needs.

    Attributes
    ----------
    plots : list of Plot
        In the order ngspice wrote them, which is ngspice's fixed analysis
        order, not necessarily the order of the cards in the deck.
    wall_time : float
        Seconds for the whole ngspice process (start-up, parsing, analyses
        and writing the raw file), measured with `time.perf_counter`.
    stderr : str
        ngspice's warnings, e.g. about convergence aids that were needed.
    """

    plots: list[Plot]
    wall_time: float
    stderr: str

    def __getitem__(self, key: str) -> Plot:
        """Return the first plot named `key`; ``op``, ``dc``, ``ac`` and ``tran`` also work."""
        wanted = _KEYWORDS.get(key.lower(), key.lower())
        for plot in self.plots:
            if plot.name.lower() == wanted:
                return plot
        raise KeyError(f"no plot {key!r}; ngspice wrote {[p.name for p in self.plots]}")


def available() -> bool:
    """Tell whether ngspice is on PATH, so callers can skip instead of fail."""
    return shutil.which("ngspice") is not None


def normalise_name(name: str, kind: str) -> str:
    """Spell a raw-file variable the same way whatever the ngspice version.

    ngspice writes node voltages as ``v(out)`` or bare ``out`` and branch
    currents as ``i(v1)`` or ``v1#branch``.  All become ``V(out)`` / ``I(v1)``:
    upper-case function, lower-case argument.  Variables that are neither a
    voltage nor a current (``time``, ``frequency``) are only lower-cased.

    Parameters
    ----------
    name : str
        Variable name as written in the raw file.
    kind : str
        Its type column (``voltage``, ``current``, ``time``, ...).
    """
    name = name.lower()
    if match := _FUNCTION.match(name):
        return f"{match[1].upper()}({match[2]})"
    if name.endswith("#branch"):
        return f"I({name.removesuffix('#branch')})"
    prefix = {"voltage": "V", "current": "I"}.get(kind.lower())
    return f"{prefix}({name})" if prefix else name


def strip_control(netlist_text: str) -> str:
    """Remove ``.control ... .endc`` blocks, keeping the title line verbatim."""
    title, _, body = netlist_text.partition("\n")
    return f"{title}\n{_CONTROL_BLOCK.sub('', body)}"


def run(netlist_text: str, *, timeout: float = 600) -> Result:
    """Run ngspice in batch mode on a deck and return its parsed plots.

    Parameters
    ----------
    netlist_text : str
        A complete SPICE deck; its first line is the title.  ``.include``
        paths must be absolute because the deck runs from a scratch directory.
    timeout : float
        Seconds before ngspice is killed.

    Raises
    ------
    NgspiceError
        On a timeout, a non-zero exit, or a missing or empty raw file; the
        message ends with the tail of ngspice's output.
    """
    with tempfile.TemporaryDirectory(prefix="ngspice-") as tmp:
        deck, raw = Path(tmp, "deck.cir"), Path(tmp, "out.raw")
        deck.write_text(strip_control(netlist_text).rstrip("\n") + "\n")
        env = {**os.environ, "SPICE_ASCIIRAWFILE": "1"}
        command = ["ngspice", "-b", "-r", str(raw), str(deck)]
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                command, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired as exc:
            raise NgspiceError(f"ngspice timed out after {timeout} s") from exc
        wall_time = time.perf_counter() - start
        # A failed run leaves a raw file whose point counts are stale: don't parse it.
        ok = proc.returncode == 0 and raw.exists()
        plots = parse_raw(raw.read_text()) if ok else []
    if not plots:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-_LOG_TAIL:])
        reason = f"exit status {proc.returncode}" if proc.returncode else "no analysis card?"
        raise NgspiceError(f"ngspice wrote no plots ({reason}); output tail:\n{tail}")
    return Result(plots, wall_time, proc.stderr)


def printout(netlist_text: str, *, timeout: float = 600) -> str:
    """What ngspice prints in batch mode without a raw file: the results of ``.meas``,
    ``.four`` and ``.print`` (with ``-r`` it measures and prints nothing)."""
    with tempfile.TemporaryDirectory(prefix="ngspice-") as tmp:
        deck = Path(tmp, "deck.cir")
        deck.write_text(strip_control(netlist_text).rstrip("\n") + "\n")
        proc = subprocess.run(["ngspice", "-b", str(deck)], cwd=tmp, capture_output=True,
                              text=True, timeout=timeout)
    if proc.returncode != 0:
        raise NgspiceError(f"ngspice exit status {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout


def parse_raw(text: str) -> list[Plot]:
    """Parse an ASCII ngspice raw file, which holds one plot per analysis.

    Each plot is a ``Key: value`` header with one line per variable after
    ``Variables:``, then one line per value after ``Values:`` (a point's first
    line starts with its index).  The header's counts delimit the plots.
    """
    lines = text.splitlines()
    plots: list[Plot] = []
    pos = 0
    while pos < len(lines):
        header: dict[str, str] = {}
        names: list[str] = []
        while pos < len(lines) and not lines[pos].startswith("Values:"):
            key, _, value = lines[pos].partition(":")
            pos += 1
            if key == "Binary":
                raise NgspiceError("ngspice wrote a binary raw file; expected ASCII")
            if key == "Variables":
                count = int(header["No. Variables"])
                fields = [line.split() for line in lines[pos : pos + count]]
                names = [normalise_name(f[1], f[2]) for f in fields]
                pos += count
            elif key.strip():
                header[key.strip()] = value.strip()
        if not header:  # trailing blank lines
            break
        points = int(header["No. Points"])
        values = lines[pos + 1 : pos + 1 + points * len(names)]
        pos += 1 + len(values)
        plots.append(_make_plot(header, names, values, points))
    return plots


def _make_plot(header: dict[str, str], names: list[str], values: list[str], points: int) -> Plot:
    """Build a Plot from one plot's value lines, parsed in one vectorised pass for speed."""
    is_complex = "complex" in header["Flags"].lower().split()
    width = 1 + (2 if is_complex else 1) * len(names)  # complex values are written "re,im"
    numbers = np.array(" ".join(values).replace(",", " ").split(), dtype=float)
    table = numbers.reshape(points, width)[:, 1:]  # drop the point index
    if not is_complex:
        return Plot(header["Plotname"], names, pd.DataFrame(table, columns=names))
    data = pd.DataFrame(table[:, 0::2] + 1j * table[:, 1::2], columns=names)
    # The scale (frequency) is real; ngspice 39 leaves junk in its imaginary part.  (A
    # pole-zero plot has no scale: its first variable is a pole.)
    if names[0] == "frequency":
        data[names[0]] = table[:, 0]
    return Plot(header["Plotname"], names, data)
