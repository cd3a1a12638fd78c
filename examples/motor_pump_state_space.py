"""The StateMint tutorial system (netlists/ss_motor_pump.net): its state-space model,
symbolic and numeric, and its transfer function from the supply voltage to the pipe flow.

    python examples/motor_pump_state_space.py
"""

from __future__ import annotations

from pathlib import Path

import mna

NETLIST = Path(__file__).resolve().parent.parent / "netlists" / "ss_motor_pump.net"


def main() -> None:
    circuit = mna.read(NETLIST)
    symbolic = mna.state_space(circuit, ["Vs"], ["I(Rpipe)"], symbolic=True, tf=True)
    print(symbolic.to_text())
    numeric = mna.state_space(circuit, ["Vs"], ["I(Rpipe)"])
    gain = numeric.frequency_response(0)[0, 0, 0].real
    print(f"poles {numeric.zpk()[0]['poles']}, DC gain {gain:.4g} m^3/s per V")


if __name__ == "__main__":
    main()
