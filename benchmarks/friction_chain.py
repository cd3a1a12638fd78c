"""Friction benchmark: a chain of masses with friction to ground against the same chain with
linear dampers.

    python benchmarks/friction_chain.py [--sizes 100 1000] [--tstop 3] [--repeats 3]

Mass k (1 kg) is joined to mass k+1 by a spring (100 N/m) and to the ground by a friction
element (``.model friction(fc=1 fs=1.5 b=0.1)``: sticking, breaking away and stopping are
events) or, in the linear chain, by a damper (b = 1 N*s/m), or by the smooth friction law
(``stick=0``: no stuck state, no events). Every mass starts at its own
speed ``1 + 0.5 sin(k)`` m/s, the springs relaxed, so the masses slow down, stop, are pulled
loose by their neighbours and stop again at different instants. All run ``.tran 10m TSTOP
uic`` (without ``uic`` the springs, shorts at DC, would give every mass the first one's
speed) with the default tolerances, in process on a circuit already read; the fastest of
`--repeats` runs counts. Columns: unknowns, accepted time points, events (friction), wall
time, time per point, and each friction chain's time over the linear one's.
"""

from __future__ import annotations

import argparse
import logging
import math
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mna  # noqa: E402

LAWS = {"dampers": None, "friction": "friction(fc=1 fs=1.5 b=0.1)",
        "smooth friction": "friction(fc=1 b=0.1 stick=0 vreg=1e-3)"}


def chain(masses: int, tstop: float, law: str | None) -> str:
    lines = [f"chain of {masses} masses, {law or 'dampers'}",
             f".domain translational {' '.join(f'x{k}' for k in range(1, masses + 1))}"]
    for k in range(1, masses + 1):
        lines.append(f"C{k} x{k} 0 m=1 IC={1 + 0.5 * math.sin(k):.6f}")
        lines.append(f"R{k} x{k} 0 rub" if law else f"R{k} x{k} 0 b=1")
        if k < masses:
            lines.append(f"L{k} x{k} x{k + 1} k=100 IC=0")
    lines += [f".model rub {law}" if law else "", f".save V(x1) V(x{masses})",
              f".tran 10m {tstop} uic", ".end"]
    return "\n".join(lines) + "\n"


class Counter(logging.Handler):
    """Reads the controller's summary line: accepted steps and events."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.steps = self.events = 0

    def emit(self, record):
        if record.name == "mna.analysis.controller":
            self.steps, *_, self.events = record.args


def measure(masses: int, tstop: float, law: str | None, repeats: int) -> dict:
    circuit = mna.read_string(chain(masses, tstop, law))
    counter = Counter()
    logger = logging.getLogger("mna.analysis.controller")
    logger.addHandler(counter)
    logger.setLevel(logging.INFO)
    best = math.inf
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            (result,) = mna.run(circuit)
            best = min(best, time.perf_counter() - start)
    finally:
        logger.removeHandler(counter)
    points = len(result.to_dataframe())
    return {"unknowns": 3 * masses - 1 if law else 2 * masses - 1, "points": points,
            "events": counter.events, "seconds": best, "per_point": best / points}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--tstop", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d')}, {platform.machine()}, Python "
          f"{platform.python_version()}, .tran 10m {args.tstop:g}, best of {args.repeats}")
    print("| masses | chain | unknowns | points | events | wall [s] | per point [ms] | "
          "friction / linear |")
    print("|---|---|---|---|---|---|---|---|")
    for masses in args.sizes:
        rows = {name: measure(masses, args.tstop, law, args.repeats)
                for name, law in LAWS.items()}
        for name, row in rows.items():
            ratio = f"{row['seconds'] / rows['dampers']['seconds']:.2f}" if LAWS[name] else ""
            print(f"| {masses} | {name} | {row['unknowns']} | {row['points']} | "
                  f"{row['events']} | {row['seconds']:.2f} | {1e3 * row['per_point']:.3f} | "
                  f"{ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
