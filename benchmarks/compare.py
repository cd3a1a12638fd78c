"""Shared code of the benchmarks that run mna and ngspice side by side on one netlist file.

Not a benchmark itself: `nonlinear_transient.py`, `nonlinear_op.py`, `ac.py`, `noise.py`,
`large_op.py` and `rossler.py` build their cases and hand them to `main`. Each case is one generated
netlist file that both tools run unchanged, each as a whole process:

- mna: ``sys.executable -m mna run -q FILE -o DIR``, its CSV outputs read back; mna only
  through its command line (``--mna-source DIR`` puts another source tree first on
  ``PYTHONPATH``), its bytecode compiled once into a temporary ``PYTHONPYCACHEPREFIX``
  before the first timed run, as installed;
- ngspice: ``ngspice -b -r out.raw FILE`` with ``SPICE_ASCIIRAWFILE=1`` (batch mode without
  ``-r`` or ``.print`` simulates nothing), the raw file parsed by ``tests/ngspice.py`` and
  checked for the expected plot and number of points.

``--repeats`` rounds each run ngspice and then mna; *mna / ngspice* is the fastest run over
the fastest run, *paired* the median of the rounds' ratios. A run longer than ``--timeout``
is killed and shown as ``> T``. *max diff* is the largest difference of the compared
vectors (transient: mna interpolated linearly onto ngspice's time points; op, dc, ac: the
same points; ac: complex values), *rel. diff* the same over the vector's range (op, ac,
noise: the largest magnitude; dc, tran: peak to peak).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


def _ngspice_module():
    spec = importlib.util.spec_from_file_location("mna_bench_ngspice",
                                                  ROOT / "tests" / "ngspice.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ngspice = _ngspice_module()
# ngspice's plot name of each analysis
PLOTS = {"op": "operating point", "dc": "dc transfer characteristic", "ac": "ac analysis",
         "tran": "transient analysis", "noise": "noise spectral density curves"}


@dataclasses.dataclass
class Case:
    name: str
    text: str                        # the netlist
    analysis: str                    # "op", "dc", "ac", "tran" or "noise"
    vectors: list[str]               # the saved vectors compared, e.g. ["V(n10)"]
    size: str                        # the "unknowns / points" column
    points: int | None = None        # the points both tools must write (None: not checked)
    tstop: float | None = None       # tran: the last time point both tools must reach
    window: float | None = None      # tran: compare only t <= window


@dataclasses.dataclass
class Run:
    wall: float | None               # seconds; None: failed or timed out
    table: pd.DataFrame | None = None
    error: str = ""


def add_arguments(parser: argparse.ArgumentParser, repeats: int = 3,
                  timeout: float = 600) -> None:
    parser.add_argument("--repeats", type=int, default=repeats,
                        help="rounds of one run of each tool (ngspice, then mna)")
    parser.add_argument("--timeout", type=float, default=timeout,
                        help="seconds before a run is killed and shown as '> T'")
    parser.add_argument("--mna-source", type=Path,
                        help="a source tree of mna put first on PYTHONPATH (default: as "
                             "installed)")


def _key(name: str) -> str:
    return name.lower()


def mna_environment(cache: Path, source: Path | None) -> dict[str, str]:
    """mna as installed: bytecode compiled once into `cache` (not into the source tree)."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment["PYTHONPYCACHEPREFIX"] = str(cache)
    if source is not None:
        environment["PYTHONPATH"] = os.pathsep.join(
            [str(source.resolve()), *filter(None, [os.environ.get("PYTHONPATH")])])
    return environment


def _mna_table(case: Case, out: Path) -> pd.DataFrame:
    path = out / f"{case.analysis}.csv"
    if case.analysis == "op":
        frame = pd.read_csv(path)
        return pd.DataFrame([frame["value"].to_numpy()], columns=frame["name"].map(_key))
    frame = pd.read_csv(path)
    if case.analysis != "ac":
        return frame.rename(columns=_key)
    table = {"frequency": frame["frequency"].to_numpy()}
    for column in frame.columns:
        if column.startswith("re("):
            name = column[3:-1]
            table[_key(name)] = frame[column].to_numpy() + 1j * frame[f"im({name})"].to_numpy()
    return pd.DataFrame(table)


def _check_points(case: Case, table: pd.DataFrame) -> str:
    if case.points is not None and len(table) != case.points:
        return f"{len(table)} points, expected {case.points}"
    if case.tstop is not None and abs(table["time"].iloc[-1] - case.tstop) > 1e-6 * case.tstop:
        return f"stopped at t = {table['time'].iloc[-1]:g}, expected {case.tstop:g}"
    missing = [v for v in case.vectors if _key(v) not in table.columns]
    return f"no {', '.join(missing)}" if missing else ""


def _timed(command: list[str], environment: dict[str, str], timeout: float, cwd: Path
           ) -> tuple[subprocess.CompletedProcess | None, float]:
    """The finished process (None when it ran out of `timeout`) and its wall time."""
    start = time.perf_counter()
    try:
        process = subprocess.run(command, capture_output=True, text=True, env=environment,
                                 timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return None, timeout
    return process, time.perf_counter() - start


def run_mna(case: Case, path: Path, out: Path, environment: dict[str, str],
            timeout: float) -> Run:
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "mna", "run", "-q", str(path), "-o", str(out)]
    process, wall = _timed(command, environment, timeout, path.parent)
    if process is None:
        return Run(None, error=f"mna timed out (> {timeout:g} s)")
    if process.returncode != 0:
        tail = (process.stderr.strip().splitlines() or ["?"])[-1]
        return Run(None, error=f"mna exit {process.returncode}: {tail}")
    table = _mna_table(case, out)
    problem = _check_points(case, table)
    return Run(wall, table, f"mna: {problem}" if problem else "")


def run_ngspice(case: Case, path: Path, raw: Path, timeout: float) -> Run:
    raw.unlink(missing_ok=True)
    command = ["ngspice", "-b", "-r", str(raw), str(path)]
    environment = {**os.environ, "SPICE_ASCIIRAWFILE": "1"}
    process, wall = _timed(command, environment, timeout, raw.parent)
    if process is None:
        return Run(None, error=f"ngspice timed out (> {timeout:g} s)")
    plots = ngspice.parse_raw(raw.read_text()) if raw.exists() else []
    wanted = PLOTS[case.analysis]
    plot = next((p for p in plots if p.name.lower() == wanted), None)
    if plot is None:
        tail = "; ".join((process.stdout + process.stderr).strip().splitlines()[-3:])
        return Run(None, error=f"ngspice wrote no {wanted} plot (exit {process.returncode}): "
                               f"{tail}")
    table = plot.data.rename(columns=_key)
    problem = _check_points(case, table)
    return Run(wall, table, f"ngspice: {problem}" if problem else "")


def difference(case: Case, ours: pd.DataFrame, theirs: pd.DataFrame) -> tuple[float, float]:
    """The largest difference of the compared vectors, absolute and over their range."""
    absolute = relative = 0.0
    if case.analysis == "tran":
        time_points = theirs["time"].to_numpy()
        inside = time_points <= (case.window if case.window is not None else np.inf)
        time_points = time_points[inside]
    elif case.analysis in ("dc", "ac", "noise") and (
            len(ours) != len(theirs)
            or not np.allclose(ours.iloc[:, 0].to_numpy(), theirs.iloc[:, 0].to_numpy(),
                               rtol=1e-9, atol=0)):
        raise ValueError("the two tools' sweep points differ")
    for vector in map(_key, case.vectors):
        reference = theirs[vector].to_numpy()
        if case.analysis == "tran":
            reference = reference[inside]
            values = np.interp(time_points, ours["time"].to_numpy(), ours[vector].to_numpy())
        else:
            values = ours[vector].to_numpy()
        error = float(np.max(np.abs(values - reference)))
        if case.analysis in ("op", "ac", "noise"):
            scale = float(np.max(np.abs(reference)))
        else:
            scale = float(np.ptp(reference))
        absolute = max(absolute, error)
        relative = max(relative, error / scale if scale > 0 else np.inf)
    return absolute, relative


def _seconds(run: Run | None, timeout: float) -> str:
    if run is None:
        return "-"
    if run.wall is None:
        return f"> {timeout:g}" if "timed out" in run.error else "failed"
    return f"{run.wall:.2f}"


def _ratio(value: float) -> str:
    return f"{value:.3g}" if value >= 0.01 else f"{value:.2e}"


def measure(case: Case, directory: Path, environment: dict[str, str],
            args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """One row of the table, and notes on what went wrong."""
    path = directory / "case.net"
    path.write_text(case.text)
    ng_runs: list[Run] = []
    mna_runs: list[Run] = []
    for _ in range(args.repeats):
        # a run that failed or timed out is not tried again
        if not ng_runs or ng_runs[-1].wall is not None:
            ng_runs.append(run_ngspice(case, path, directory / "out.raw", args.timeout))
        if not mna_runs or mna_runs[-1].wall is not None:
            mna_runs.append(run_mna(case, path, directory / "out", environment, args.timeout))
    notes = sorted({run.error for run in ng_runs + mna_runs if run.error})
    ng_done = [r for r in ng_runs if r.wall is not None]
    mna_done = [r for r in mna_runs if r.wall is not None]
    ng_best = min(ng_done, key=lambda r: r.wall) if ng_done else ng_runs[-1]
    mna_best = min(mna_done, key=lambda r: r.wall) if mna_done else mna_runs[-1]
    ratio = paired = diff = rel = "-"
    if ng_done and mna_done:
        ratio = _ratio(mna_best.wall / ng_best.wall)
        pairs = [m.wall / n.wall for m, n in zip(mna_runs, ng_runs)
                 if m.wall is not None and n.wall is not None]
        paired = f"{_ratio(float(np.median(pairs)))} ({len(pairs)})"
        try:
            absolute, relative = difference(case, mna_done[0].table, ng_done[0].table)
            diff, rel = f"{absolute:.2e}", f"{relative:.2e}"
        except (KeyError, ValueError) as exc:
            notes.append(f"not compared: {exc}")
    elif ng_done and mna_runs[-1].wall is None and "timed out" in mna_runs[-1].error:
        ratio = f"> {_ratio(args.timeout / ng_best.wall)}"
    elif mna_done and ng_runs[-1].wall is None and "timed out" in ng_runs[-1].error:
        ratio = f"< {_ratio(mna_best.wall / args.timeout)}"
    row = [case.name, case.size, _seconds(mna_best, args.timeout),
           _seconds(ng_best, args.timeout), ratio, paired, diff, rel]
    return row, notes


def ngspice_version() -> str:
    try:
        output = subprocess.run(["ngspice", "-v"], capture_output=True, text=True,
                                timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "ngspice not found"
    match = re.search(r"ngspice-\S+", output)
    return match[0] if match else "ngspice (version?)"


def mna_version(environment: dict[str, str], cwd: Path) -> str:
    """Where the mna processes import mna from, and its git commit if it has one."""
    origin = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('mna').origin)"],
        capture_output=True, text=True, env=environment, check=True, cwd=cwd).stdout.strip()
    folder = Path(origin).parent.parent
    commit = subprocess.run(["git", "-C", str(folder), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    return f"mna from {folder}" + (f" ({commit})" if commit else "")


def main(title: str, cases: list[Case], args: argparse.Namespace) -> int:
    """Run every case and print the header line, the table and the notes."""
    if not ngspice.available():
        print("ngspice is not installed")
        return 1
    with tempfile.TemporaryDirectory(prefix="mna-compare-") as tmp:
        environment = mna_environment(Path(tmp, "pycache"), args.mna_source)
        # from the scratch folder: a `python -m` or `-c` process puts its working folder
        # first on sys.path, before PYTHONPATH and the installed package
        subprocess.run([sys.executable, "-c", "import mna.cli"], check=True, env=environment,
                       cwd=tmp)
        print(f"# {title}: {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}, {ngspice_version()}, "
              f"{mna_version(environment, Path(tmp))}; {args.repeats} round(s), timeout "
              f"{args.timeout:g} s")
        print()
        print("| case | unknowns / points | mna wall [s] | ngspice wall [s] | mna / ngspice "
              "| paired (rounds) | max diff | rel. diff |")
        print("|---|---|---|---|---|---|---|---|", flush=True)
        all_notes = []
        for case in cases:
            row, notes = measure(case, Path(tmp), environment, args)
            print("| " + " | ".join(row) + " |", flush=True)
            all_notes += [f"- {case.name}: {note}" for note in notes]
        if all_notes:
            print("\n" + "\n".join(all_notes))
    return 0
