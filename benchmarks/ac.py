"""AC benchmark: mna against ngspice on a long RC ladder.

    python benchmarks/ac.py [--sections 10000] [--repeats 3] [--timeout 600]
                            [--mna-source DIR]

An RC ladder of N sections (100 Ohm, 1 pF) driven by ``V1 in 0 DC 0 AC 1``, one probe node
(the tenth) saved, swept by ``.ac dec 100 1k 10G`` (701 points) and, as a second case on the
same ladder, ``.ac lin 1000 1k 10G``. The difference is complex, over the largest magnitude.
Both tools run the same file as a whole process; see `compare.py` for the columns.
"""

from __future__ import annotations

import argparse
import sys

import compare

SWEEPS = {"dec 100 1k 10G": 701, "lin 1000 1k 10G": 1000}


def ladder(sections: int, sweep: str) -> compare.Case:
    lines = [f"RC ladder of {sections} sections, .ac {sweep}", "V1 in 0 DC 0 AC 1"]
    for k in range(1, sections + 1):
        previous = "in" if k == 1 else f"n{k - 1}"
        lines += [f"R{k} {previous} n{k} 100", f"C{k} n{k} 0 1p"]
    probe = f"V(n{min(10, sections)})"
    lines += [f".save {probe}", f".ac {sweep}", ".end"]
    return compare.Case(f"RC ladder N={sections}, .ac {sweep}", "\n".join(lines) + "\n", "ac",
                        [probe], f"{sections + 2} / {SWEEPS[sweep]}", points=SWEEPS[sweep])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, nargs="+", default=[10000])
    compare.add_arguments(parser)
    args = parser.parse_args(argv)
    cases = [ladder(n, sweep) for n in args.sections for sweep in SWEEPS]
    return compare.main("ac", cases, args)


if __name__ == "__main__":
    sys.exit(main())
