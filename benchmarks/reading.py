"""Reading benchmark: lexing and parsing, elaboration and assembly of RC ladders, and import time.

    python benchmarks/reading.py [--sizes 1000 10000 100000] [--repeat 3]

For each ladder (the netlist of ``benchmarks/transient.py``: a PULSE source and N sections of
100 Ohm / 1 pF, so 2N + 1 element lines) it prints the best of `repeat` runs of each stage:
*read* (lexer and parser: text to `Netlist`), *elaborate* (`Netlist` to `Circuit`), *assemble*
(`mna.assemble`: `Circuit` to `DescriptorSystem`), and the total per element line. Then the
time to ``import mna``, as the total of ``python -X importtime -c "import mna"`` (best of
`repeat`) and as a whole ``python -c "import mna"`` process.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transient import ladder  # noqa: E402  (this folder is on the path of a script run here)

import mna  # noqa: E402
from mna.netlist.elaborate import elaborate  # noqa: E402
from mna.netlist.parser import parse_text  # noqa: E402


def _best(function, repeat: int):
    """The best wall time of `repeat` calls and the last result. The garbage collector stays
    on, as in a real run: its passes over the millions of objects read are part of the cost."""
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def stages(sections: int, repeat: int) -> dict[str, float]:
    text, _ = ladder(sections, 10000)
    read, netlist = _best(lambda: parse_text(text, "ladder.net"), repeat)
    elab, circuit = _best(lambda: elaborate(netlist), repeat)
    assemble, _ = _best(lambda: mna.assemble(circuit), repeat)
    return {"lines": 2 * sections + 1, "read": read, "elaborate": elab, "assemble": assemble}


def import_time(repeat: int) -> tuple[float, float]:
    """Best of `repeat`: the ``-X importtime`` total of ``import mna``, and a whole
    ``python -c 'import mna'`` process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    best_total = best_wall = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import mna"],
                              capture_output=True, text=True, check=True, env=env)
        wall = time.perf_counter() - start
        # the cumulative column of the top-level `mna` line is the whole import
        cumulative = [int(m[1]) for m in re.finditer(r"\|\s*(\d+) \| mna$", done.stderr, re.M)]
        best_total = min(best_total, cumulative[-1] * 1e-6)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mna"], check=True, env=env)
        best_wall = min(best_wall, time.perf_counter() - start, wall)
    return best_total, best_wall


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    machine = platform.processor() or platform.machine()
    print(f"# {time.strftime('%Y-%m-%d')}, {platform.node()}, {machine}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, best of {args.repeat}")
    header = "| sections | lines | read [s] | elaborate [s] | assemble [s] | total / line [us] |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for sections in args.sizes:
        row = stages(sections, args.repeat)
        total = row["read"] + row["elaborate"] + row["assemble"]
        print(f"| {sections} | {row['lines']} | {row['read']:.3f} | {row['elaborate']:.3f} | "
              f"{row['assemble']:.3f} | {total / row['lines'] * 1e6:.1f} |", flush=True)
    total, wall = import_time(args.repeat)
    print(f"\nimport mna: {total:.3f} s (-X importtime total), {wall:.3f} s whole process "
          "(python -c 'import mna')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
