"""``.pz in+ in- out+ out- vol|cur pol|zer|pz``: poles and zeros of a transfer function.

The input is the independent source of the circuit across the input nodes (an across
source for ``vol``, a through source for ``cur``), or one put there when there is none;
the circuit is linearised about its operating point, and its state-space model from that
source to the across variable between the output nodes gives the poles (the eigenvalues of
A: the natural frequencies with the input source in place) and the zeros
(`StateSpaceResult.zpk`, from the system pencil).
"""

from __future__ import annotations

import numpy as np

from mna.analysis.statespace import state_space
from mna.elements.sources import AcrossSource, ThroughSource
from mna.netlist.fields import GROUND, OutputName
from mna.results import TableResult

SOURCE = "pz#input"


def pole_zero(request, circuit) -> TableResult:
    """The poles and zeros asked for, as a table of ``kind``, ``re``, ``im`` (rad/s)."""
    inp, inm, outp, outm = request.nodes
    kind = AcrossSource if request.source == "vol" else ThroughSource
    present = [e for e in circuit.elements if type(e) is kind and set(e.nodes) == {inp, inm}]
    if present:
        probed, name = circuit, present[0].name
    else:
        probed = circuit.with_element(kind(SOURCE, request.location, (inp, inm), 0.0, 1.0,
                                           0.0, None))
        name = SOURCE
    output = OutputName("V", (outp,) if outm == GROUND else (outp, outm))
    model = state_space(probed, (name,), (output,), tf=True, location=request.location)
    (channel,) = model.tf
    wanted = {"pol": ("pole",), "zer": ("zero",), "pz": ("pole", "zero")}[request.wanted]
    rows = [(name, value) for name, values in (("pole", channel["poles"]),
                                               ("zero", channel["zeros"]))
            if name in wanted for value in sorted(np.asarray(values, complex),
                                                  key=lambda v: (v.real, v.imag))]
    columns = {"kind": np.array([name for name, _ in rows], dtype=object),
               "re": np.array([v.real for _, v in rows]),
               "im": np.array([v.imag for _, v in rows])}
    return PoleZeroResult(columns, {"kind": "", "re": "rad/s", "im": "rad/s"},
                          gain=channel["gain"])


class PoleZeroResult(TableResult):
    """Poles and zeros, one per row; `gain` is the transfer function's leading factor."""

    selects_outputs = False

    def __init__(self, columns, units, gain: float):
        super().__init__("pz", columns, units, independent="kind")
        self.gain = gain

    def summary(self) -> str:
        lines = [f"  {kind:<4}  {re: .6g} {im:+.6g}j rad/s" for kind, re, im in
                 zip(self.columns["kind"], self.columns["re"], self.columns["im"])]
        return "Poles and zeros:\n" + "\n".join(lines or ["  (none)"])
