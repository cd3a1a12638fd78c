"""Nonlinear operating-point benchmark: mna against ngspice on long diode ladders.

    python benchmarks/nonlinear_op.py [--stages 10000 100000] [--repeats 3] [--timeout 600]
                                      [--mna-source DIR]

Each stage is a 1 kOhm series resistor and a diode (IS=1e-14, N=1) to ground; a 5 V DC
source drives the ladder, and ``.op`` solves it by Newton's method (each tool with its own
continuation aids). The current spreads over thousands of diodes, so the node voltages fall
slowly along the ladder. Four probe nodes are saved and compared. Both tools run the same
file as a whole process; see `compare.py` for the columns.
"""

from __future__ import annotations

import argparse
import sys

import compare


def diode_ladder(stages: int) -> compare.Case:
    lines = [f"diode ladder of {stages} stages", "V1 n0 0 DC 5"]
    for k in range(1, stages + 1):
        lines += [f"R{k} n{k - 1} n{k} 1k", f"D{k} n{k} 0 dlad"]
    probes = [f"V(n{k})" for k in sorted({1, 10, 100, stages // 2, stages} & set(
        range(1, stages + 1)))]
    lines += [".model dlad D(IS=1e-14 N=1)", f".save {' '.join(probes)}", ".op", ".end"]
    return compare.Case(f"diode ladder, {stages} stages", "\n".join(lines) + "\n", "op",
                        probes, str(stages + 2), points=1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", type=int, nargs="+", default=[10000, 100000])
    compare.add_arguments(parser)
    args = parser.parse_args(argv)
    return compare.main("nonlinear op", [diode_ladder(n) for n in args.stages], args)


if __name__ == "__main__":
    sys.exit(main())
