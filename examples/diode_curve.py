"""A diode's I-V curve from a .dc sweep, printed as a table.

    python examples/diode_curve.py
"""

from __future__ import annotations

import mna

NETLIST = """diode I-V curve
V1 in 0 0
R1 in a 10
D1 a 0 d1n4148
.model d1n4148 D(IS=2.52n N=1.752 RS=0.568 CJO=4p TT=20n BV=100)
.dc V1 0 2 0.25
"""


def main() -> None:
    (sweep,) = mna.run(mna.read_string(NETLIST, "diode_curve"))
    table = sweep.to_dataframe()
    table["I(D1) [mA]"] = -1e3 * table["I(V1)"]
    print(table[["V1", "V(a)", "I(D1) [mA]"]].to_string(index=False))


if __name__ == "__main__":
    main()
