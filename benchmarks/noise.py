"""Noise benchmark: mna against ngspice on a long RC ladder and a two-stage BJT amplifier.

    python benchmarks/noise.py [--sections 10000] [--repeats 3] [--timeout 600]
                               [--mna-source DIR]

An RC ladder of N sections (100 Ohm, 1 pF) driven by ``V1 in 0 DC 0 AC 1``, its noise at
the tenth node swept by ``.noise V(n10) V1 dec 100 1k 10G`` (701 points, N thermal noise
sources); and a two-stage BJT amplifier (``dec 10 10 100Meg``, 71 points), where starting
the process is most of the time. The compared vectors are the output and input
noise spectra, over their largest value. Both tools run the same file as a whole process;
see `compare.py` for the columns.
"""

from __future__ import annotations

import argparse
import sys

import compare


def ladder(sections: int) -> compare.Case:
    lines = [f"RC ladder of {sections} sections, .noise", "V1 in 0 DC 0 AC 1"]
    for k in range(1, sections + 1):
        previous = "in" if k == 1 else f"n{k - 1}"
        lines += [f"R{k} {previous} n{k} 100", f"C{k} n{k} 0 1p"]
    lines += [f".noise V(n{min(10, sections)}) V1 dec 100 1k 10G", ".end"]
    return compare.Case(f"RC ladder N={sections}, .noise dec 100 1k 10G",
                        "\n".join(lines) + "\n", "noise",
                        ["onoise_spectrum", "inoise_spectrum"], f"{sections + 2} / 701",
                        points=701)


def amplifier() -> compare.Case:
    text = """two-stage amplifier: a common-emitter stage into an emitter follower
VCC vcc 0 15
VIN in 0 DC 0 AC 1
CIN in b1 10u
RB1 vcc b1 2.2Meg
RC1 vcc c1 5.6k
Q1 c1 b1 e1 qn
RE1 e1 0 100
Q2 vcc c1 out qn
RE2 out 0 2.2k
.model qn npn(bf=200 rb=50 re=1 rc=5 kf=1e-16 af=1 cjc=2p cje=5p vaf=80)
.noise V(out) VIN dec 10 10 100Meg
.end
"""
    return compare.Case("two-stage BJT amplifier, .noise dec 10 10 100Meg", text, "noise",
                        ["onoise_spectrum", "inoise_spectrum"], "14 / 71", points=71)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, nargs="+", default=[10000])
    compare.add_arguments(parser)
    args = parser.parse_args(argv)
    return compare.main("noise", [*map(ladder, args.sections), amplifier()], args)


if __name__ == "__main__":
    sys.exit(main())
