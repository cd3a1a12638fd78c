"""Parallel ``.step`` benchmark: a 100-point step of a 1,000-section RC ladder transient, mna
on 1 and 2 worker processes against ngspice's ``alter`` loop on the same circuit.

    python benchmarks/step_parallel.py [--sections 1000] [--points 100] [--steps 1000]
                                       [--workers 1 2] [--repeats 3] [--timeout 1800]

The ladder: a drive resistor ``R0`` of ``{rs}`` ohms, then N sections of 100 ohm / 1 pF,
driven by a 1 V PULSE rising over ten steps, trapezoidal rule, ``tstep`` = 1 ns, ``tmax`` =
``tstep``, node 10 saved (``--stepcontrol fixed`` lets mna factor the matrix once per run).
``.step param rs 50 ...`` (5 ohm apart) in mna; in ngspice a ``.control`` loop of ``alter R0
= ...`` and ``tran``, each run's final value echoed and counted, so that a run which simulated
nothing cannot pass for a fast one. Each tool runs as a whole process (mna: ``python -m mna
run -q FILE -o DIR --workers N``); the table shows the fastest of `--repeats` runs and the
largest difference between the tools' final values.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

TSTEP = 1e-9
R_START, R_STEP = 50.0, 5.0


def ladder(sections: int, steps: int, control: str = "adaptive") -> list[str]:
    lines = [f"RC ladder of {sections} sections, stepped drive resistor",
             ".param rs=50",
             f"V1 in 0 PULSE(0 1 0 {10 * TSTEP:g} {10 * TSTEP:g} 1 2)",
             "R0 in n0 {rs}"]
    for k in range(1, sections + 1):
        lines += [f"R{k} n{k - 1} n{k} 100", f"C{k} n{k} 0 1p"]
    lines += [f".options method=trap stepcontrol={control}", ".save V(n10)",
              f".tran {TSTEP:g} {steps * TSTEP:g} 0 {TSTEP:g}"]
    return lines


def mna_deck(sections: int, steps: int, points: int, control: str) -> str:
    stop = R_START + R_STEP * (points - 1)
    return "\n".join([*ladder(sections, steps, control), f".step param rs {R_START:g} {stop:g} "
                      f"{R_STEP:g}", ".end"]) + "\n"


def ngspice_deck(sections: int, steps: int, points: int) -> str:
    lines = [line for line in ladder(sections, steps) if not line.startswith(".tran")]
    lines = [line.replace("{rs}", f"{R_START:g}") for line in lines if line != ".param rs=50"]
    probe = "v(n10)"
    lines += [".control", "set noaskquit", "let k = 0", f"while k < {points}",
              f"  alter R0 = {R_START:g} + {R_STEP:g} * k",
              f"  tran {TSTEP:g} {steps * TSTEP:g} 0 {TSTEP:g}",
              f"  let final = {probe}[length({probe}) - 1]",
              "  echo final $&final", "  destroy", "  let k = k + 1", "end", "quit", ".endc",
              ".end"]
    return "\n".join(lines) + "\n"


def timed(command: list[str], timeout: float, env=None) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return seconds, proc.stdout


def run_mna(deck: Path, out: Path, workers: int, timeout: float) -> tuple[float, np.ndarray]:
    seconds, _ = timed([sys.executable, "-m", "mna", "run", "-q", str(deck), "-o", str(out),
                        "--workers", str(workers)], timeout)
    table = pd.read_csv(out / "tran.csv")
    finals = table.groupby("rs", sort=True).last().iloc[:, -1].to_numpy()
    return seconds, finals


def run_ngspice(deck: Path, points: int, timeout: float) -> tuple[float, np.ndarray]:
    seconds, printed = timed(["ngspice", "-b", str(deck)], timeout)
    finals = np.array([float(v) for v in re.findall(r"^final\s+(\S+)", printed, re.M)])
    if len(finals) != points or not np.isfinite(finals).all():
        raise RuntimeError(f"ngspice printed {len(finals)} final values, expected {points}")
    return seconds, finals


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=1000)
    parser.add_argument("--points", type=int, default=100)
    parser.add_argument("--steps", type=int, default=1000, help="time steps of tstep")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--stepcontrol", choices=("adaptive", "fixed"), default="adaptive",
                        help="mna's step control (ngspice ignores the option)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="step-parallel-") as tmp:
        folder = Path(tmp)
        ours, theirs = folder / "ladder.net", folder / "ladder.cir"
        ours.write_text(mna_deck(args.sections, args.steps, args.points, args.stepcontrol))
        theirs.write_text(ngspice_deck(args.sections, args.steps, args.points))
        ngspice_runs = [run_ngspice(theirs, args.points, args.timeout)
                        for _ in range(args.repeats)]
        reference_seconds = min(s for s, _ in ngspice_runs)
        reference = ngspice_runs[0][1]
        rows.append(("ngspice alter loop", reference_seconds, 1.0, "", 0.0))
        single = None
        for workers in args.workers:
            runs = [run_mna(ours, folder / f"out{workers}", workers, args.timeout)
                    for _ in range(args.repeats)]
            seconds = min(s for s, _ in runs)
            single = single or seconds
            difference = float(np.max(np.abs(runs[0][1] - reference)))
            rows.append((f"mna .step, {workers} worker{'s' * (workers > 1)}", seconds,
                         reference_seconds / seconds, f"{single / seconds:.2f}x", difference))
    print(f"{args.points}-point .step of a {args.sections}-section RC ladder transient "
          f"({args.steps} steps of {TSTEP:g} s, mna stepcontrol={args.stepcontrol}), "
          f"{os.cpu_count()} cores, best of {args.repeats}")
    print(f"{'run':<24} {'seconds':>9} {'vs ngspice':>11} {'vs 1 worker':>12} "
          f"{'max diff of final V':>20}")
    for name, seconds, speedup, scaling, difference in rows:
        print(f"{name:<24} {seconds:>9.2f} {speedup:>10.2f}x {scaling:>12} {difference:>20.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
