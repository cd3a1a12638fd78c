"""The StateMint tutorial system (netlists/ss_motor_pump.net): its state-space model,
symbolic and numeric, and its transfer function from the supply voltage to the pipe flow.

    python examples/motor_pump_state_space.py
"""

from __future__ import annotations

from pathlib import Path

import mna
from mna.analysis.statespace import state_space
from mna.circuit import OutputName

NETLIST = Path(__file__).resolve().parent.parent / "netlists" / "ss_motor_pump.net"


def main() -> None:
    circuit = mna.read(NETLIST)
    flow = (OutputName("I", ("rpipe",)),)
    symbolic = state_space(circuit, inputs=["Vs"], outputs=flow, symbolic=True, tf=True)
    print(symbolic.to_text())
    numeric = state_space(circuit, inputs=["Vs"], outputs=flow)
    gain = numeric.frequency_response(0)[0, 0, 0].real
    print(f"poles {numeric.zpk()[0]['poles']}, DC gain {gain:.4g} m^3/s per V")


if __name__ == "__main__":
    main()
