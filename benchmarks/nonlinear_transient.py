"""Nonlinear transient benchmark: mna against ngspice on a diode clipper ladder.

    python benchmarks/nonlinear_transient.py [--stages 10 100 1000] [--repeats 3]
                                             [--timeout 600] [--mna-source DIR]

Each stage is a 1 kOhm series resistor, two antiparallel diodes (IS=1e-14, N=1) and 10 pF to
ground; the ladder is driven by a 5 V, 1 MHz sine, ``.tran 1n 2u``, each tool with its
default method and step control. The probes are the first node (clipped at about one diode
drop) and the tenth (a smoothed, delayed copy). Both tools run the same file as a whole
process; see `compare.py` for the columns.
"""

from __future__ import annotations

import argparse
import sys

import compare


def clipper(stages: int) -> compare.Case:
    lines = [f"diode clipper ladder of {stages} stages", "V1 in 0 SIN(0 5 1MEG)"]
    for k in range(1, stages + 1):
        previous = "in" if k == 1 else f"n{k - 1}"
        lines += [f"R{k} {previous} n{k} 1k", f"Da{k} n{k} 0 dclip", f"Db{k} 0 n{k} dclip",
                  f"C{k} n{k} 0 10p"]
    probes = [f"V(n{k})" for k in sorted({1, min(10, stages)})]
    lines += [".model dclip D(IS=1e-14 N=1)", f".save {' '.join(probes)}", ".tran 1n 2u",
              ".end"]
    return compare.Case(f"clipper ladder, {stages} stages", "\n".join(lines) + "\n", "tran",
                        probes, str(stages + 2), tstop=2e-6)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", type=int, nargs="+", default=[10, 100, 1000])
    compare.add_arguments(parser)
    args = parser.parse_args(argv)
    return compare.main("nonlinear transient", [clipper(n) for n in args.stages], args)


if __name__ == "__main__":
    sys.exit(main())
