"""Transient benchmark: mna against ngspice on RC ladders and a 2-D RC mesh.

    python benchmarks/transient.py [--sizes 1000 10000 100000] [--mesh 50] [--steps 10000]
                                   [--no-ngspice] [--backend superlu|klu|both] [--repeats 1]
                                   [--no-bytecode-cache] [--phases]

Each case is one netlist, run unchanged by both tools (whole process: ``python -m mna run``
and ``ngspice -b``), with the trapezoidal rule, 10,000 steps of tstep (ngspice: tmax = tstep)
and one probed node saved; mna runs as installed, its bytecode compiled once (a cache in a
temporary folder) unless ``--no-bytecode-cache``. The table gives wall time, time per step,
the ratio mna/ngspice (fastest against fastest, and the median of the ratios of runs taken
side by side), the largest difference between the two waveforms at the probe
(ngspice's points, mna's interpolated), and, in process, mna's time per step against a bare
loop of the solver's `solve` on the same factors.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mna  # noqa: E402
from mna import linalg  # noqa: E402
from mna.analysis.integrators import LinearStepSolver  # noqa: E402
from mna.analysis.transient import Transient  # noqa: E402
from mna.circuit import Options  # noqa: E402
from mna.subnormals import flushed  # noqa: E402


def _ngspice_module():
    spec = importlib.util.spec_from_file_location("mna_bench_ngspice",
                                                  ROOT / "tests" / "ngspice.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def ladder(sections: int, steps: int) -> tuple[str, str]:
    """An RC ladder: a 1 V pulse (rise over 10 steps) into `sections` R-C sections."""
    tstep = 1e-9
    lines = [f"RC ladder of {sections} sections",
             f"V1 n0 0 PULSE(0 1 0 {10 * tstep:g} {10 * tstep:g} 1 2)"]
    for k in range(1, sections + 1):
        lines.append(f"R{k} n{k - 1} n{k} 100")
        lines.append(f"C{k} n{k} 0 1p")
    probe = "n10"
    lines += [".options method=trap", f".save V({probe})",
              f".tran {tstep:g} {steps * tstep:g} 0 {tstep:g}", ".end"]
    return "\n".join(lines) + "\n", probe


def mesh(side: int, steps: int) -> tuple[str, str]:
    """A side x side grid of 100 Ohm resistors, 1 pF to ground at every node, driven at a corner."""
    tstep = 1e-9
    lines = [f"2-D RC mesh {side}x{side}", f"V1 drive 0 PULSE(0 1 0 {10 * tstep:g} "
             f"{10 * tstep:g} 1 2)", "Rd drive m0_0 10"]
    count = 0
    for i in range(side):
        for j in range(side):
            lines.append(f"C{i}_{j} m{i}_{j} 0 1p")
            if i + 1 < side:
                count += 1
                lines.append(f"R{count} m{i}_{j} m{i + 1}_{j} 100")
            if j + 1 < side:
                count += 1
                lines.append(f"R{count} m{i}_{j} m{i}_{j + 1} 100")
    probe = "m3_3"
    lines += [".options method=trap", f".save V({probe})",
              f".tran {tstep:g} {steps * tstep:g} 0 {tstep:g}", ".end"]
    return "\n".join(lines) + "\n", probe


def installed_environment(cache: Path) -> dict[str, str]:
    """The environment of an installed mna: its modules' bytecode compiled and cached (pip
    compiles it on install; an editable install writes it on first import). Without it,
    where ``PYTHONDONTWRITEBYTECODE`` is set, every process compiles mna's ~50 modules
    again (0.24 s measured). The cache goes under `cache`, not into the source tree."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment["PYTHONPYCACHEPREFIX"] = str(cache)
    return environment


def run_mna_process(path: Path, out: Path, environment: dict[str, str]
                    ) -> tuple[float, pd.DataFrame]:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mna", "run", "-q", str(path), "-o", str(out)],
                   check=True, capture_output=True, env=environment)
    return time.perf_counter() - start, pd.read_csv(out / "tran.csv")


# One `mna run` in a fresh interpreter, timed phase by phase as the CLI runs them.
PHASES = """
import sys, time
start = time.perf_counter()
import mna
from mna.results import write_results
imported = time.perf_counter()
circuit = mna.read(sys.argv[1])
read = time.perf_counter()
results = mna.run(circuit)
ran = time.perf_counter()
write_results(results, sys.argv[2])
print(imported - start, read - imported, ran - read, time.perf_counter() - ran)
"""


def phases(path: Path, out: Path, environment: dict[str, str], repeats: int = 3) -> list[float]:
    """Seconds of interpreter start-up, imports, reading, the run and writing (best of
    `repeats` fresh processes each)."""
    best = [float("inf")] * 5
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=environment)
        interpreter = time.perf_counter() - start
        output = subprocess.run([sys.executable, "-c", PHASES, str(path), str(out)],
                                check=True, env=environment,
                                capture_output=True, text=True).stdout
        best = [min(b, v) for b, v in zip(best, [interpreter, *map(float, output.split())])]
    return best


def in_process(text: str, backend: str, steps: int) -> dict[str, float]:
    """mna's stepping time per step and a bare `solve` loop on the same factors."""
    circuit = mna.read_string(text)
    circuit = dataclasses.replace(circuit,
                                  options=dataclasses.replace(circuit.options, solver=backend))
    analysis = next(a for a in circuit.analyses if isinstance(a, Transient))
    start = time.perf_counter()
    analysis.run(circuit)
    total = time.perf_counter() - start
    system = mna.assemble(circuit)
    h = analysis.times(circuit)[0]
    # factors as the steps make them: KLU's order or nested dissection, chosen by timing as
    # in the run (which a fresh timing could choose otherwise on a close call)
    factors = LinearStepSolver(system.C, system.G, system.unknowns, backend).factor_for(2.0 / h)
    rhs = np.ones(system.size)
    count = min(steps, 2000)
    with flushed():   # as the steps run
        start = time.perf_counter()
        for _ in range(count):
            x = factors.solve_in_place(rhs)
            if x is rhs:
                rhs[:] = 1.0
        bare = (time.perf_counter() - start) / count
    return {"total": total, "per_step": total / steps, "bare": bare}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000])
    parser.add_argument("--mesh", type=int, default=50, help="mesh side (0: no mesh)")
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--no-ngspice", action="store_true")
    parser.add_argument("--backend", choices=("superlu", "klu", "both"), default="both")
    parser.add_argument("--repeats", type=int, default=1,
                        help="whole-process runs of each tool per case, in alternation; the "
                             "fastest of each counts, and 'paired' is the median of the "
                             "rounds' ratios")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="mna's processes compile its modules every time, as where "
                             "PYTHONDONTWRITEBYTECODE is set (default: compiled once, as "
                             "installed)")
    parser.add_argument("--phases", action="store_true",
                        help="then time the phases of one mna process per case (best of 3)")
    args = parser.parse_args(argv)
    ngspice = None if args.no_ngspice else _ngspice_module()
    if ngspice is not None and not ngspice.available():
        print("ngspice is not installed: mna columns only")
        ngspice = None
    backends = ["superlu", "klu"] if args.backend == "both" else [args.backend]
    if "klu" in backends and linalg.solver_in_use("klu") != "klu":
        print("pyklu is not installed: SuperLU only (pip install -e '.[klu]')")
        backends = ["superlu"]
    # what the whole-process run factors with: the default solver, if its package is installed
    process_solver = linalg.solver_in_use(Options().solver)
    cases = [(f"ladder N={n}", *ladder(n, args.steps)) for n in args.sizes]
    if args.mesh:
        cases.append((f"mesh {args.mesh}x{args.mesh}", *mesh(args.mesh, args.steps)))
    print(f"# {time.strftime('%Y-%m-%d')}, {platform.node()}, "
          f"{platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, steps = {args.steps}")
    header = ("| case | unknowns | backend | mna wall [s] | mna / step [us] "
              "| bare solve / step [us] | step / bare | ngspice wall [s] "
              "| ngspice / step [us] | mna / ngspice | paired | max diff [V] |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    with tempfile.TemporaryDirectory(prefix="mna-bench-") as tmp:
        environment = dict(os.environ)
        if not args.no_bytecode_cache:
            environment = installed_environment(Path(tmp, "pycache"))
            subprocess.run([sys.executable, "-c", "import mna.cli"], check=True, env=environment)
        for name, text, probe in cases:
            path = Path(tmp, "case.net")
            path.write_text(text)
            # whole processes in rounds, each tool once per round: a drift of the machine's
            # speed (it is shared) then slows both alike, and each round's ratio sees one state
            ng_runs, mna_runs = [], []
            for _ in range(args.repeats):
                if ngspice is not None:
                    ng_runs.append(ngspice.run(text, timeout=3600))
                mna_runs.append(run_mna_process(path, Path(tmp, "out"), environment))
            reference = ng_runs[0]["tran"].data if ng_runs else None
            if reference is not None:
                ng_wall = min(result.wall_time for result in ng_runs)
                ng_steps = len(reference) - 1
                paired = np.median([ours / theirs.wall_time
                                    for (ours, _), theirs in zip(mna_runs, ng_runs, strict=True)])
            for backend in backends:
                # the whole-process runs use the default solver; the in-process timing runs
                # each backend
                wall, table = float("nan"), None
                if backend == backends[0]:
                    wall, table = min(wall for wall, _ in mna_runs), mna_runs[0][1]
                timing = in_process(text, backend, args.steps)
                size = mna.assemble(mna.read_string(text)).size
                label = (backend if wall != wall
                         else f"{backend} (process: {process_solver})")
                row = [name, str(size), label,
                       f"{wall:.2f}" if wall == wall else "-",
                       f"{timing['per_step'] * 1e6:.1f}", f"{timing['bare'] * 1e6:.1f}",
                       f"{timing['per_step'] / timing['bare']:.2f}"]
                if reference is not None and table is not None:
                    t = reference["time"].to_numpy()
                    ours = np.interp(t, table["time"], table[f"V({probe})"])
                    diff = np.max(np.abs(ours - reference[f"V({probe})"].to_numpy()))
                    row += [f"{ng_wall:.2f}", f"{ng_wall / max(ng_steps, 1) * 1e6:.1f}",
                            f"{wall / ng_wall:.3f}", f"{paired:.3f}", f"{diff:.2e}"]
                elif reference is not None:
                    row += [f"{ng_wall:.2f}", f"{ng_wall / max(ng_steps, 1) * 1e6:.1f}",
                            f"{timing['total'] / ng_wall:.3f} (in-process)", "-", "-"]
                else:
                    row += ["-"] * 5
                print("| " + " | ".join(row) + " |", flush=True)
        if args.phases:
            print("\n| case | interpreter [s] | imports [s] | read [s] | run [s] | write [s] |")
            print("|---|---|---|---|---|---|")
            for name, text, _ in cases:
                path = Path(tmp, "case.net")
                path.write_text(text)
                seconds = phases(path, Path(tmp, "out"), environment)
                print(f"| {name} | " + " | ".join(f"{v:.2f}" for v in seconds) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
