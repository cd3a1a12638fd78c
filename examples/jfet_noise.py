"""A JFET preamplifier's gain, impedances and noise: where its 1/f noise meets the white.

    python examples/jfet_noise.py [noise.png]

Runs netlists/jfet_preamp.net (.op, .tf, .noise) and reads the 1/f corner off the input
noise spectrum: the frequency where the flicker noise's share of the power equals the
white noise's, interpolated on a log scale between the two frequencies that enclose it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import mna

NETLIST = Path(__file__).resolve().parents[1] / "netlists" / "jfet_preamp.net"


def main(plot: str | None = None) -> None:
    _, tf, noise = mna.run(mna.read(NETLIST))
    print(f"gain {tf['transfer_function']:.4g} V/V, input {tf['VIN#input_impedance']:.3g} Ohm, "
          f"output {tf['output_impedance_at_V(d)']:.4g} Ohm")
    f = np.asarray(noise["frequency"])
    flicker = np.asarray(noise["onoise_J1_1overf"]) ** 2
    white = np.asarray(noise["onoise_spectrum"]) ** 2 - flicker
    excess = np.log(flicker / white)            # falls through 0 at the corner
    k = int(np.flatnonzero(excess < 0)[0])
    corner = np.exp(np.interp(0.0, excess[[k, k - 1]], np.log(f[[k, k - 1]])))
    print(f"1/f corner {corner:.3g} Hz; white input noise {np.sqrt(white[-1]) / 10 * 1e9:.3g} "
          f"nV/sqrt(Hz); total input noise {noise['inoise_total'][-1] * 1e6:.3g} uV "
          f"from {f[0]:g} to {f[-1]:g} Hz")
    if plot:
        from matplotlib.figure import Figure

        figure = Figure(figsize=(6, 4), layout="constrained")
        axis = figure.subplots()
        axis.loglog(f, noise["inoise_spectrum"], label="input noise")
        axis.axvline(corner, color="grey", linestyle=":", label=f"1/f corner {corner:.3g} Hz")
        axis.set_xlabel("frequency [Hz]")
        axis.set_ylabel("[V/sqrt(Hz)]")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend()
        figure.savefig(plot, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
