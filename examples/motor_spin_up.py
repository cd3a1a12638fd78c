"""Spin up the DC motor of netlists/dc_motor.net and plot speed and current.

    python examples/motor_spin_up.py [OUTPUT.png]
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import mna  # noqa: E402

NETLIST = Path(__file__).resolve().parent.parent / "netlists" / "dc_motor.net"


def main(output: str = "motor_spin_up.png") -> None:
    circuit = mna.read(NETLIST)
    steady = mna.operating_point(circuit)
    transient = next(r for r in mna.run(circuit) if r.kind == "tran").to_dataframe()
    units = transient.attrs["units"]
    figure, (speed, current) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    speed.plot(transient.index, transient["V(load)"], label="load")
    speed.plot(transient.index, transient["V(rotor)"], label="rotor", alpha=0.6)
    speed.axhline(steady["V(load)"], color="grey", linestyle=":", label="operating point")
    speed.set_ylabel(f"speed [{units['V(load)']}]")
    speed.legend()
    current.plot(transient.index, transient["I(La)"])
    current.set_ylabel(f"armature current [{units['I(La)']}]")
    current.set_xlabel("time [s]")
    figure.tight_layout()
    figure.savefig(output)
    print(f"steady speed {steady['V(load)']:.1f} rad/s, peak current "
          f"{transient['I(La)'].max():.1f} A; wrote {output}")


if __name__ == "__main__":
    main(*sys.argv[1:])
