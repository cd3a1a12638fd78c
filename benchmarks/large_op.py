"""Linear operating-point benchmark: mna against ngspice on a long RC ladder, and start-up.

    python benchmarks/large_op.py [--sections 100000] [--repeats 3] [--timeout 600]
                                  [--mna-source DIR]

An RC ladder of N sections (100 Ohm, 1 pF) ends in 100 Ohm to ground, so its DC solution is
a straight line from the 1 V source down the resistor chain; ``.op`` with four probe nodes
saved. The "start-up" case is a three-element ``.op`` (V, R, R): the whole-process time of
each tool is then its start-up, reading and writing. Both tools run the same file as a whole
process; see `compare.py` for the columns.
"""

from __future__ import annotations

import argparse
import sys

import compare


def startup() -> compare.Case:
    text = "start-up: a divider\nV1 in 0 DC 1\nR1 in out 1k\nR2 out 0 1k\n.op\n.end\n"
    return compare.Case("start-up (V, R, R)", text, "op", ["V(in)", "V(out)"], "3", points=1)


def ladder(sections: int) -> compare.Case:
    lines = [f"RC ladder of {sections} sections to ground", "V1 n0 0 DC 1"]
    for k in range(1, sections + 1):
        lines += [f"R{k} n{k - 1} n{k} 100", f"C{k} n{k} 0 1p"]
    probes = [f"V(n{k})" for k in sorted({1, 10, sections // 2, sections})]
    lines += [f"Rend n{sections} 0 100", f".save {' '.join(probes)}", ".op", ".end"]
    return compare.Case(f"RC ladder N={sections}", "\n".join(lines) + "\n", "op", probes,
                        str(sections + 2), points=1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, nargs="+", default=[100000])
    compare.add_arguments(parser)
    args = parser.parse_args(argv)
    return compare.main("linear op", [startup(), *map(ladder, args.sections)], args)


if __name__ == "__main__":
    sys.exit(main())
