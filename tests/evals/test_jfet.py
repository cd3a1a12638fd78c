"""JFETs (``J`` lines, NJF and PJF models: ngspice's level 1 with the doping tail B) against
the Shichman-Hodges closed forms and against ngspice 39 on the same decks (DC curves, the
operating point, AC, transient and noise of an amplifier, temperature)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import mna


def dc(text: str):
    return next(r for r in mna.run(mna.read_string(text)) if r.kind == "dc")


def curves(model: str, polarity: float = 1.0):
    """Drain current (into the drain) against VD for VG = -1 and 0 V (times `polarity`)."""
    result = dc(f"curves\nVD d 0 0\nVG g 0 0\nJ1 d g 0 jx\n.model jx {model}\n"
                f".dc VD {polarity * 0.1:g} {polarity * 6:g} {polarity * 0.1:g} "
                f"VG {polarity * -1:g} 0 {polarity:g}\n")
    return (polarity * np.asarray(result["VD"]), polarity * np.asarray(result["VG"]),
            -polarity * np.asarray(result["I(VD)"]))


@pytest.mark.parametrize("kind, polarity", [("NJF", 1.0), ("PJF", -1.0)])
def test_square_law_in_both_regions(kind, polarity):
    """B = 1: ``beta (2 vgst - vds) vds`` below ``vds = vgst``, ``beta vgst^2`` above, both
    times ``1 + lambda vds`` (the gate junctions' reverse current is below 1e-9 of it)."""
    beta, vto, lam = 1e-3, -2.0, 0.02   # VTO is an N channel's in either (SPICE's)
    vds, vgs, current = curves(f"{kind}(vto={vto:g} beta={beta:g} lambda={lam:g})", polarity)
    vgst = vgs - vto
    expected = beta * (1 + lam * vds) * np.where(vds < vgst, (2 * vgst - vds) * vds, vgst**2)
    assert np.allclose(current, expected, rtol=1e-8)


def test_the_doping_tail_bends_the_saturated_current():
    """``beta vgst^2 (B + (1 - B) vgst / (PB - VTO))`` in saturation."""
    b, pb, vto, beta = 0.6, 0.8, -2.0, 1e-3
    vds, vgs, current = curves(f"NJF(vto={vto:g} beta={beta:g} b={b:g} pb={pb:g})")
    vgst = vgs - vto
    saturated = vds > vgst
    expected = beta * vgst**2 * (b + (1 - b) * vgst / (pb - vto))
    assert np.allclose(current[saturated], expected[saturated], rtol=1e-8)


def test_area_and_m_scale_the_device_and_its_resistances():
    """Area 2 and M=3: six unit devices in parallel (RD and RS each one's)."""
    one = dc("one\nVD d 0 0\nVG g 0 -0.5\nJ1 d g 0 jx\n.model jx NJF(rd=60 rs=30 beta=1m)\n"
             ".dc VD 0 5 0.5\n")
    six = dc("six\nVD d 0 0\nVG g 0 -0.5\nJ1 d g 0 jx 2 m=3\n.model jx NJF(rd=60 rs=30 beta=1m)\n"
             ".dc VD 0 5 0.5\n")
    assert np.allclose(np.asarray(six["I(VD)"]), 6 * np.asarray(one["I(VD)"]), rtol=1e-9,
                       atol=1e-10)


@pytest.mark.parametrize("line, message", [
    ("J1 d g 0 jm", "model 'jm' is a NMOS model, not NJF or PJF"),
    ("J1 d g 0 jx ic=1,2", "unknown parameter 'ic='"),
    ("J1 d g 0 jx 0", "area must be positive"),
])
def test_refused_lines_are_located(line, message):
    with pytest.raises(mna.NetlistError, match=message) as caught:
        mna.run(mna.read_string(f"j\nVD d 0 1\nVG g 0 0\n{line}\n.model jx NJF()\n"
                                ".model jm NMOS()\n.op\n"))
    assert caught.value.location.line == 4


def test_fc_above_its_limit_is_held_there_with_a_warning(caplog):
    """With the gate forward of FC PB the capacitance depends on FC: 0.99 gives what 0.95
    gives, not what 0.99 would."""
    def gate_current(fc: float) -> complex:
        (ac,) = mna.run(mna.read_string(
            f"j\nVD d 0 1\nVG g 0 DC 0.58 AC 1\nJ1 d g 0 jx\n"
            f".model jx NJF(cgs=1p pb=0.6 is=1e-20 fc={fc:g})\n.ac lin 1 1Meg 1Meg\n"))
        return complex(np.asarray(ac["I(VG)"])[0])

    with caplog.at_level(logging.WARNING):
        limited = gate_current(0.99)
    assert "FC = 0.99 limited to 0.95" in caplog.text
    assert limited == gate_current(0.95)
    assert abs(limited - gate_current(0.9)) > 1e-3 * abs(limited)


CURVES = """N and P channel curves: area, m, RD, RS, the tail B, gate current where forward
VD d 0 DC 5
VG g 0 DC -0.5
J1 d g 0 jn 2 m=3
VD2 d2 0 DC -4
VG2 g2 0 DC 0.3
J2 d2 g2 0 jp
.model jn NJF(vto=-2 beta=1.2m lambda=0.02 rd=15 rs=12 b=0.8 is=1e-13 pb=0.7)
.model jp PJF(vto=1.8 beta=0.5m lambda=0.01 b=1.1 is=2e-14)
.options reltol=1e-9 abstol=1e-18 vntol=1e-12
.save i(VD) i(VD2)
.dc VD -3 8 0.25 VG -2.5 0.6 0.5
"""
AMPLIFIER = """a self-biased common-source stage into a follower, with gate capacitances
VDD vdd 0 15
VIN in 0 DC 0 AC 1 SIN(0 0.2 10k)
C1 in g 1u
RG g 0 1Meg
J1 d g s jn
RS s 0 680
CS s 0 100u
RD vdd d 3.3k
C2 d out 1u
RL out 0 10k
J2 vdd out2 o2 jp2
RO o2 0 1k
RB out2 0 100k
.model jn NJF(vto=-2.5 beta=1.5m lambda=0.015 rd=20 rs=10 b=0.9 cgs=4p cgd=2p pb=0.8 kf=1e-17
+ af=1.1)
.model jp2 NJF(vto=-1.5 beta=0.8m cgs=2p cgd=1p)
.options reltol=1e-6 abstol=1e-15 vntol=1e-9
"""
HOT = """at 85 degrees: VTO, BETA, IS and the junction potential follow the temperature
.temp 85
VD d 0 DC 3
VG g 0 DC 0
J1 d g 0 jn
.model jn NJF(vto=-1.5 beta=2m is=1e-12 tcv=2m bex=-1.2 xti=2 eg=1.2 pb=0.9 cgs=1p)
.options reltol=1e-9 abstol=1e-18 vntol=1e-12
.save i(VD)
.dc VG -2 0.5 0.1
"""


def _ngspice_columns(plot, names):
    lowered = {name.lower(): name for name in plot.data.columns}
    return {name: plot.data[lowered[name.lower()]].to_numpy() for name in names}


@pytest.mark.ngspice
@pytest.mark.parametrize("deck, kind, outputs, tolerance", [
    (CURVES, "dc", ["I(VD)", "I(VD2)"], 1e-10),
    (HOT, "dc", ["I(VD)"], 1e-10),
    (AMPLIFIER + ".save v(out) v(d) v(s) v(o2) i(VDD)\n.op\n", "op",
     ["V(d)", "V(s)", "V(o2)", "I(VDD)"], 1e-10),
    (AMPLIFIER + ".save v(out) v(d) v(s)\n.ac dec 10 10 100Meg\n", "ac",
     ["V(out)", "V(d)", "V(s)"], 1e-9),
    (AMPLIFIER + ".save v(out) v(d) v(s)\n.tran 1u 100u 0 0.1u\n", "tran",
     ["V(out)", "V(d)", "V(s)"], 3e-5),
], ids=["curves", "temperature", "op", "ac", "tran"])
def test_against_ngspice(deck, kind, outputs, tolerance, ngspice):
    theirs = _ngspice_columns(ngspice.run(deck)[kind], [*outputs, "time"] if kind == "tran"
                              else outputs)
    ours = next(r for r in mna.run(mna.read_string(deck)) if r.kind == kind)
    for name in outputs:
        mine = np.asarray(ours[name])
        if kind == "tran":
            mine = np.interp(theirs["time"], np.asarray(ours["time"]), mine)
        scale = np.max(np.abs(theirs[name]))
        assert np.max(np.abs(mine - theirs[name])) <= tolerance * scale, name


@pytest.mark.ngspice
@pytest.mark.parametrize("level", ["", " nlev=3 gdsnoi=1.3"], ids=["nlev2", "nlev3"])
def test_noise_against_ngspice(level, ngspice):
    deck = (AMPLIFIER.replace("af=1.1)", f"af=1.1{level})")
            + ".noise v(out) VIN dec 5 10 10Meg 1\n")
    spectra, totals = ngspice.run(deck).plots
    (result,) = [r for r in mna.run(mna.read_string(deck)) if r.kind == "noise"]
    assert np.allclose(result["onoise_spectrum"], spectra.data["onoise_spectrum"], rtol=1e-8,
                       atol=0)
    assert result["onoise_total"][-1] == pytest.approx(
        totals.data["V(onoise_total)"].iloc[0], rel=1e-8)
    for name in ("onoise_J1_id", "onoise_J1_1overf", "onoise_J1_rd", "onoise_J1_rs"):
        assert np.allclose(result[name], spectra.data[name.lower()], rtol=1e-8, atol=0), name


def test_state_space_tf_and_ac_of_a_jfet_stage_agree():
    """Linearised about its operating point, the common-source stage of
    netlists/jfet_preamp.net with 10 nF at the drain: one state, the pole -1/(RD C), the DC
    gain -gm RD = -10 in `.ss`, `.tf` and at 1 Hz in `.ac`."""
    text = ("stage\nVDD vdd 0 15\nVIN g 0 DC -1 AC 1\nRD vdd d 5k\nCL d 0 10n\nJ1 d g 0 jx\n"
            ".model jx NJF(vto=-2 beta=1m)\n.ss in=VIN out=V(d)\n.tf V(d) VIN\n.ac lin 1 1 1\n")
    model, tf, ac = mna.run(mna.read_string(text))
    a, b, c, d = (np.asarray(m, float) for m in (model.A, model.B, model.C, model.D))
    assert np.allclose(np.linalg.eigvals(a), [-1 / (5e3 * 10e-9)], rtol=1e-6)
    gain = (d - c @ np.linalg.solve(a, b)).item()
    assert gain == pytest.approx(-10, rel=1e-6)
    assert tf["transfer_function"] == pytest.approx(gain, rel=1e-9)
    assert abs(np.asarray(ac["V(d)"])[0]) == pytest.approx(10 / np.hypot(1, 2 * np.pi * 5e-5),
                                                          rel=1e-6)
