"""Chaotic transient benchmark: mna against ngspice on the Rossler attractor.

    python benchmarks/rossler.py [--tstop 300] [--window 20] [--repeats 1] [--timeout 600]
                                 [--mna-source DIR]

Three 1 F capacitors to ground, each charged by a behavioural current source, integrate
x' = -y - z, y' = x + 0.2 y, z' = 0.2 + z (x - 5.7) from x, y, z = 0.1, 0, 0 with
``.tran 1m 300 uic`` (``Bx 0 x I={...}`` pushes its current into x); 1e12 Ohm to ground at
each node gives ngspice a DC path and changes the derivatives by 1e-12 of the state. The
orbit is chaotic, so two correct integrators part after a while: the waveforms are compared
only for t <= --window (the case's name says which). Both tools run the same file as a whole
process; see `compare.py` for the columns.
"""

from __future__ import annotations

import argparse
import sys

import compare


def rossler(tstop: float, window: float) -> compare.Case:
    text = "\n".join([
        "Rossler attractor",
        "Bx 0 x I={-V(y)-V(z)}",
        "By 0 y I={V(x)+0.2*V(y)}",
        "Bz 0 z I={0.2+V(z)*(V(x)-5.7)}",
        "Cx x 0 1 IC=0.1", "Cy y 0 1 IC=0", "Cz z 0 1 IC=0",
        "Rx x 0 1e12", "Ry y 0 1e12", "Rz z 0 1e12",
        f".tran 1m {tstop:g} uic", ".end"]) + "\n"
    return compare.Case(f"Rossler, tstop {tstop:g} s (diff over t <= {window:g} s)", text,
                        "tran", ["V(x)", "V(y)", "V(z)"], "3", tstop=tstop, window=window)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tstop", type=float, default=300)
    parser.add_argument("--window", type=float, default=20)
    compare.add_arguments(parser, repeats=1)
    args = parser.parse_args(argv)
    return compare.main("Rossler transient", [rossler(args.tstop, args.window)], args)


if __name__ == "__main__":
    sys.exit(main())
