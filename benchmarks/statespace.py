"""State-space benchmark: numeric `.ss` models of RC ladders of growing size.

    python benchmarks/statespace.py [--sizes 100 300 1000 3000]

Each ladder is V1 driving N sections of 1 kOhm and 1 nF; the model has N states. The table
gives the wall time of the reduction (in process, netlist already read) and of the whole
command ``mna ss ladder.net --format json``, and checks the DC gain of the model (1).
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mna  # noqa: E402


def ladder(sections: int) -> str:
    lines = [f"RC ladder of {sections} sections", "V1 n0 0 AC 1"]
    for k in range(1, sections + 1):
        lines += [f"R{k} n{k - 1} n{k} 1k", f"C{k} n{k} 0 1n"]
    lines.append(f".ss in=V1 out=V(n{sections})")
    return "\n".join(lines) + "\n"


def measure(sections: int, directory: Path) -> dict:
    path = directory / f"ladder_{sections}.net"
    path.write_text(ladder(sections))
    circuit = mna.read(path)
    start = time.perf_counter()
    (model,) = mna.run(circuit)
    reduction = time.perf_counter() - start
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mna", "ss", str(path), "--format", "json"],
                   check=True, stdout=subprocess.DEVNULL)
    command = time.perf_counter() - start
    gain = model.frequency_response(0.0)[0, 0, 0].real
    return {"sections": sections, "states": len(model.states), "reduction_s": reduction,
            "command_s": command, "dc_gain": gain}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000, 3000])
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")
    print(f"{'sections':>8} {'states':>6} {'reduction (s)':>13} {'mna ss (s)':>10} {'DC gain':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for sections in args.sizes:
            row = measure(sections, Path(folder))
            print(f"{row['sections']:>8} {row['states']:>6} {row['reduction_s']:>13.2f} "
                  f"{row['command_s']:>10.2f} {row['dc_gain']:>10.6f}")


if __name__ == "__main__":
    main()
