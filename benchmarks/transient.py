"""Linear transient benchmark: mna against ngspice on RC ladders and a 2-D RC mesh.

    python benchmarks/transient.py [--sizes 1000 10000 100000] [--mesh 50] [--steps 10000]
                                   [--stepcontrol fixed adaptive] [--repeats 3]
                                   [--timeout 600] [--mna-source DIR]

Each case is one netlist that both tools run unchanged as a whole process: an RC ladder of N
sections of 100 Ohm / 1 pF (or a side x side grid of 100 Ohm resistors with 1 pF to ground
at every node), driven by a 1 V PULSE rising over ten steps, trapezoidal rule, `tstep` =
1 ns, 10,000 steps, ``tmax = tstep``, one probe node saved. ``stepcontrol=fixed`` steps at
`tstep` with the matrix factored once; ``adaptive`` (mna's default) chooses steps by the
truncation error within `tmax`, as ngspice does (which ignores the option). See `compare.py`
for the columns.
"""

from __future__ import annotations

import argparse
import sys

import compare

TSTEP = 1e-9


def ladder(sections: int, steps: int, control: str) -> compare.Case:
    lines = [f"RC ladder of {sections} sections",
             f"V1 n0 0 PULSE(0 1 0 {10 * TSTEP:g} {10 * TSTEP:g} 1 2)"]
    for k in range(1, sections + 1):
        lines += [f"R{k} n{k - 1} n{k} 100", f"C{k} n{k} 0 1p"]
    return _case(f"ladder N={sections}, {control}", lines, "n10", sections + 1, steps, control)


def mesh(side: int, steps: int, control: str) -> compare.Case:
    lines = [f"2-D RC mesh {side}x{side}",
             f"V1 drive 0 PULSE(0 1 0 {10 * TSTEP:g} {10 * TSTEP:g} 1 2)", "Rd drive m0_0 10"]
    count = 0
    for i in range(side):
        for j in range(side):
            lines.append(f"C{i}_{j} m{i}_{j} 0 1p")
            for di, dj in ((1, 0), (0, 1)):
                if i + di < side and j + dj < side:
                    count += 1
                    lines.append(f"R{count} m{i}_{j} m{i + di}_{j + dj} 100")
    return _case(f"mesh {side}x{side}, {control}", lines, "m3_3", side * side + 1, steps,
                 control)


def _case(name: str, lines: list[str], probe: str, nodes: int, steps: int,
          control: str) -> compare.Case:
    tstop = steps * TSTEP
    lines += [f".options method=trap stepcontrol={control}", f".save V({probe})",
              f".tran {TSTEP:g} {tstop:g} 0 {TSTEP:g}", ".end"]
    return compare.Case(name, "\n".join(lines) + "\n", "tran", [f"V({probe})"],
                        str(nodes + 1), tstop=tstop)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000])
    parser.add_argument("--mesh", type=int, default=50, help="mesh side (0: no mesh)")
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--stepcontrol", nargs="+", choices=("fixed", "adaptive"),
                        default=["fixed", "adaptive"])
    compare.add_arguments(parser, repeats=1, timeout=1800)
    args = parser.parse_args(argv)
    cases = [ladder(n, args.steps, control) for n in args.sizes for control in args.stepcontrol]
    if args.mesh:
        cases += [mesh(args.mesh, args.steps, control) for control in args.stepcontrol]
    return compare.main("linear transient", cases, args)


if __name__ == "__main__":
    sys.exit(main())
