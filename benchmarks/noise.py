"""Noise benchmark: mna against ngspice on a long RC ladder and a BJT amplifier.

    python benchmarks/noise.py [--sections 10000] [--repeats 3] [--timeout 600]
                               [--mna-source DIR]

An RC ladder of N sections (100 Ohm, 1 pF) driven by ``V1 in 0 DC 0 AC 1``, its noise at
the tenth node swept by ``.noise V(n10) V1 dec 100 1k 10G`` (701 points, N thermal noise
sources); and ngspice's bjtnoise.cir amplifier (``dec 10 1k 100Meg``, 51 points), where
starting the process is most of the time. The compared vectors are the output and input
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
    text = """BJT noise (ngspice's examples/various/bjtnoise.cir)
vcc 4 0 50
vin 1 0 ac 1
ccouple 1 2 1
ibias 0 2 100uA
rload 4 3 1k
q1 3 2 0 0 test
.model test npn kf=1e-20 af=1 bf=100 rb=10 cjc=4e-12
.noise v(3) vin dec 10 1k 100Meg
.end
"""
    return compare.Case("BJT amplifier, .noise dec 10 1k 100Meg", text, "noise",
                        ["onoise_spectrum", "inoise_spectrum"], "5 / 51", points=51)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, nargs="+", default=[10000])
    compare.add_arguments(parser)
    args = parser.parse_args(argv)
    return compare.main("noise", [*map(ladder, args.sections), amplifier()], args)


if __name__ == "__main__":
    sys.exit(main())
