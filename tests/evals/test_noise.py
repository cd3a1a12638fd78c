""".noise: output and input noise spectra and their integrals, against closed forms
(resistor dividers, kT/C of an RC, a junction's shot and flicker noise, a MEMS proof
mass's Brownian noise and equipartition, a tank's pressure noise) and against ngspice 39
on the same decks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad

import mna
from mna.analysis.noise import frequencies, interval_power
from mna.elements.diode import BOLTZMANN, CHARGE

KELVIN = 300.15   # 27 °C, the default temperature
NETLISTS = Path(__file__).resolve().parents[2] / "netlists"


def noise(text: str):
    (result,) = [r for r in mna.run(mna.read_string(text)) if r.kind == "noise"]
    return result


def test_a_divider_has_the_thermal_noise_of_its_parallel_resistance():
    result = noise("divider\nV1 in 0 DC 0 AC 1\nR1 in out 1k\nR2 out 0 3k\n"
                   ".noise V(out) V1 dec 1 1 1k\n")
    density = math.sqrt(4 * BOLTZMANN * KELVIN * 750)
    assert np.allclose(result["onoise_spectrum"], density, rtol=1e-12, atol=0)
    assert np.allclose(result["inoise_spectrum"], density / 0.75, rtol=1e-12, atol=0)
    assert result["onoise_total"][-1] == pytest.approx(density * math.sqrt(999), rel=1e-12, abs=0)
    assert result["onoise_total"][0] == 0.0
    assert result.units["onoise_spectrum"] == "V/sqrt(Hz)"
    assert result.units["inoise_total"] == "V"


def test_a_resistor_with_noisy_0_makes_no_noise():
    # ngspice's noisy=0 (it was refused): only R1's noise reaches V(out), divided by 0.75
    result = noise("divider\nV1 in 0 DC 0 AC 1\nR1 in out 1k\nR2 out 0 3k noisy=0\n"
                   ".noise V(out) V1 dec 1 1 1k\n")
    density = math.sqrt(4 * BOLTZMANN * KELVIN * 1e3) * 0.75
    assert np.allclose(result["onoise_spectrum"], density, rtol=1e-12, atol=0)


def test_an_rc_low_pass_integrates_towards_kt_over_c():
    """``4 k T R / (1 + (w R C)^2)`` over f1..f2 is ``2 k T / (pi C) (atan(2 pi f2 R C) -
    atan(2 pi f1 R C))``; over every frequency, kT/C whatever R."""
    r, c = 1e3, 1e-9
    result = noise(f"rc\nV1 in 0 DC 0 AC 1\nR1 in out {r:g}\nC1 out 0 {c:g}\n"
                   ".noise V(out) V1 dec 50 1 1e12\n")
    f = result["frequency"]
    exact = 2 * BOLTZMANN * KELVIN / (math.pi * c) * (
        math.atan(2 * math.pi * f[-1] * r * c) - math.atan(2 * math.pi * f[0] * r * c))
    assert result["onoise_total"][-1] ** 2 == pytest.approx(exact, rel=1e-3, abs=0)
    assert result["onoise_total"][-1] ** 2 == pytest.approx(BOLTZMANN * KELVIN / c, rel=1e-3, abs=0)
    w = 2 * np.pi * f * r * c
    assert np.allclose(result["onoise_spectrum"] ** 2, 4 * BOLTZMANN * KELVIN * r / (1 + w**2),
                       rtol=1e-10, atol=0)
    assert np.all(np.diff(result["onoise_total"]) >= 0)


def test_the_integral_of_a_power_law_is_exact():
    """Between two points a density ``a f^p`` integrates exactly, 1/f (p = -1) included."""
    f0, f1 = 1.0, 100.0
    for p in (0.0, -1.0, -2.0, 1.5):
        integral = interval_power(f0, f1, np.array([f0**p]), np.array([f1**p]))[0]
        exact = np.log(f1 / f0) if p == -1 else (f1 ** (p + 1) - f0 ** (p + 1)) / (p + 1)
        assert integral == pytest.approx(exact, rel=1e-12, abs=0), p
    # the flank of a resonance at 5 kHz: a slope of 98, where f^99 overflows a float
    f0, f1, n0, n1 = 4786.3, 5011.87, 3.2676e-16, 3.0068e-14
    slope = math.log(n1 / n0) / math.log(f1 / f0)
    reference, _ = quad(lambda f: n0 * (f / f0) ** slope, f0, f1, epsrel=1e-12)
    assert interval_power(f0, f1, np.array([n0]), np.array([n1]))[0] == pytest.approx(
        reference, rel=1e-9, abs=0)


def test_a_junction_has_shot_and_flicker_noise():
    """A diode fed 1 mA by a current source: its small-signal resistance ``n Vt / I`` turns
    the current noise ``2 q I + KF I^AF / f`` into the output noise."""
    current, kf, af = 1e-3, 1e-16, 1.2
    result = noise(f"diode\nI1 0 d DC {current:g} AC 1\nD1 d 0 dm\n"
                   f".model dm D(is=1e-14 n=1.5 kf={kf:g} af={af:g})\n"
                   ".noise V(d) I1 dec 2 1 1e4 1\n")
    vte = 1.5 * BOLTZMANN * KELVIN / CHARGE
    rd = 1 / ((current + 1e-14) / vte + 1e-12)     # the junction's conductance and gmin's
    f = result["frequency"]
    assert np.allclose(result["onoise_spectrum"] ** 2,
                       rd**2 * (2 * CHARGE * current + kf * current**af / f), rtol=1e-6, atol=0)
    assert np.allclose(result["inoise_spectrum"], result["onoise_spectrum"] / rd, rtol=1e-7,
                       atol=0)   # rd: the drain's resistance, to 8e-9
    shares = result["onoise_D1_id"] ** 2 + result["onoise_D1_1overf"] ** 2
    assert np.allclose(shares, result["onoise_spectrum"] ** 2, rtol=1e-12, atol=0)


def test_a_resistor_model_with_kf_adds_flicker_noise():
    """1 mA through 2 kOhm: ``4 k T / R + KF I^AF / f^EF`` (ngspice's resistor model)."""
    result = noise("r\nI1 0 a DC 1m AC 1\nR1 a 0 2k rm\n.model rm R(kf=1e-20 af=1.5 ef=1.2)\n"
                   ".noise V(a) I1 dec 2 1 1e3 1\n")
    f = result["frequency"]
    assert np.allclose(result["onoise_spectrum"] ** 2,
                       4e6 * (4 * BOLTZMANN * KELVIN / 2e3 + 1e-20 * 1e-3**1.5 / f**1.2),
                       rtol=1e-12, atol=0)
    assert np.allclose(result["onoise_R1_1overf"] ** 2, 4e6 * 1e-20 * 1e-3**1.5 / f**1.2,
                       rtol=1e-12, atol=0)


def test_a_motor_and_its_damper_are_both_noisy():
    """A damper b pushes with a force of density 4kTb (the fluctuation-dissipation theorem,
    as a resistor's 4kT/R): through the motor (ratio n) it is a current 4kT b/n² at its
    terminals, beside the armature's 4kT/Ra; both seen through the impedance there, which
    `.tf` gives (Ra || n²/b)."""
    motor = ("motor\nV1 in 0 DC 0 AC 1\nRa in ea 2\nTFm ea 0 rotor 0 0.05\n"
             "Rbm rotor 0 b=1e-3\nCJ rotor 0 J=1e-9\n")
    result = noise(motor + ".noise V(ea) V1 lin 2 1 2 1\n")
    (impedance,) = mna.run(mna.read_string(motor + ".tf V(ea) V1\n"))
    seen = impedance["output_impedance_at_V(ea)"]
    assert seen == pytest.approx(2 * 2.5 / 4.5, rel=1e-12, abs=0)   # Ra || n^2 / b
    assert np.allclose(result["onoise_spectrum"] ** 2,
                       4 * BOLTZMANN * KELVIN * (1 / 2 + 1e-3 / 0.05**2) * seen**2,
                       rtol=1e-9, atol=0)
    assert np.allclose(result["onoise_Rbm_thermal"] ** 2,
                       4 * BOLTZMANN * KELVIN * 1e-3 / 0.05**2 * seen**2, rtol=1e-9, atol=0)


def test_brownian_noise_of_a_mems_proof_mass():
    """A mass on a spring and a damper: the force noise referred to the input force is
    sqrt(4kTb) at every frequency, and the velocity noise over all of them has the
    equipartition's mean square kT/m."""
    m, k, b = 1e-9, 1.0, 2e-5
    result = noise(f"mems\nI1 0 v DC 0 AC 1\nCm v 0 m={m:g}\nRb v 0 b={b:g}\n"
                   f"Lk v 0 k={k:g}\n.noise V(v) I1 dec 400 1 1e9\n")
    assert np.allclose(result["inoise_spectrum"], math.sqrt(4 * BOLTZMANN * KELVIN * b),
                       rtol=1e-9, atol=0)
    assert result.units["inoise_spectrum"] == "N/sqrt(Hz)"
    assert result["onoise_total"][-1] ** 2 == pytest.approx(BOLTZMANN * KELVIN / m, rel=1e-4, abs=0)


def test_a_tank_has_the_pressure_noise_of_equipartition_and_heat_is_noiseless():
    """A fluid capacitance behind a pipe: mean square pressure kT/C (as kT/C of an RC);
    the same network in the thermal domain makes no noise (not modelled)."""
    fluid = noise("tank\nI1 0 p DC 0 AC 1\nCt p 0 C=1e-9\nRp p 0 R=1e8\n.domain fluid p\n"
                  ".noise V(p) I1 dec 100 1e-6 1e9\n")
    assert fluid["onoise_total"][-1] ** 2 == pytest.approx(BOLTZMANN * KELVIN / 1e-9,
                                                           rel=1e-4, abs=0)
    heat = noise("wall\nI1 0 t DC 0 AC 1\nCt t 0 C=1e-9\nRt t 0 R=1e8\n.domain thermal t\n"
                 ".noise V(t) I1 dec 1 1 10\n")
    assert np.all(heat["onoise_spectrum"] == 0)


def test_the_jfet_preamp_example_has_the_values_of_its_header():
    """netlists/jfet_preamp.net: gain -gm RD, 5 kOhm out, the gate's gmin times Miller's 11
    in, white noise RD^2 (4kT/RD + (8/3) kT gm) and flicker noise RD^2 KF Id / f."""
    tf, result = [r for r in mna.run(mna.read(NETLISTS / "jfet_preamp.net"))
                  if r.kind in ("tf", "noise")]
    assert tf["transfer_function"] == pytest.approx(-10, rel=1e-6, abs=0)
    assert tf["output_impedance_at_V(d)"] == pytest.approx(5e3, rel=1e-6, abs=0)
    assert tf["VIN#input_impedance"] == pytest.approx(1 / 12e-12, rel=1e-6, abs=0)
    f = result["frequency"]
    white = 5e3**2 * (4 * BOLTZMANN * KELVIN / 5e3 + 8 / 3 * BOLTZMANN * KELVIN * 2e-3)
    assert np.allclose(result["onoise_spectrum"] ** 2, white + 5e3**2 * 1e-16 * 1e-3 / f,
                       rtol=1e-6, atol=0)
    assert np.allclose(result["inoise_spectrum"], result["onoise_spectrum"] / 10, rtol=1e-6, atol=0)


def test_flicker_noise_at_0_hz_is_infinite_and_so_is_its_integral():
    result = noise("d\nV1 a 0 DC 1 AC 1\nR1 a b 1k\nD1 b 0 dm\n.model dm D(kf=1e-16)\n"
                   ".noise V(b) V1 lin 3 0 10\n")
    assert result["onoise_spectrum"][0] == math.inf
    assert np.all(np.isfinite(result["onoise_spectrum"][1:]))
    assert list(result["onoise_total"]) == [0.0, math.inf, math.inf]


def test_the_mems_example_has_the_noise_floor_of_its_header():
    """netlists/mems_accelerometer.net: the force noise sqrt(4kTb) = 5.758e-14 N/sqrt(Hz)
    flat, an acceleration noise floor of 5.87 ug/sqrt(Hz), finite totals."""
    (result,) = [r for r in mna.run(mna.read(NETLISTS / "mems_accelerometer.net"))
                 if r.kind == "noise"]
    assert np.allclose(result["inoise_spectrum"], 5.758e-14, rtol=1e-3, atol=0)
    assert result["inoise_spectrum"][0] / 1e-9 / 9.80665 == pytest.approx(5.87e-6, rel=1e-3, abs=0)
    assert np.all(np.isfinite(result["onoise_total"]))


def test_frequencies_step_as_ngspice_steps_them():
    assert len(frequencies("dec", 10, 1e3, 1e8, 1e-3)) == 51
    assert frequencies("oct", 1, 1.0, 8.0, 1e-3).tolist() == [1.0, 2.0, 4.0, 8.0]
    assert frequencies("lin", 3, 0.0, 10.0, 1e-3).tolist() == [0.0, 5.0, 10.0]
    assert frequencies("lin", 1, 5.0, 10.0, 1e-3).tolist() == [5.0]


@pytest.mark.parametrize("card, message", [
    (".noise I(R1) V1 dec 1 1 10", "expected the output V(out) or V(out,ref)"),
    (".noise V(out) R1 dec 1 1 10", "'R1' is not an independent source"),
    (".noise V(out) V1 dec 1 10", "missing fstop"),
    (".noise V(out) V1 log 1 1 10", "expected dec, oct or lin"),
    (".noise V(out) V1 dec 1 1 10 -1", "pts_per_summary must be a whole number"),
])
def test_refused_cards_are_located(card, message):
    with pytest.raises(mna.NetlistError, match=message.replace("(", r"\(").replace(")", r"\)")
                       ) as caught:
        mna.run(mna.read_string("r\nV1 in 0 DC 0 AC 1\nR1 in out 1k\nR2 out 0 1k\n"
                                + card + "\n"))
    assert caught.value.location.line == 5


def test_a_saturated_mosfet_has_channel_thermal_and_flicker_noise():
    """Square law at VGS - VTO = 1 V, no channel-length modulation: Id = beta/2, gm = beta;
    the drain resistor carries the channel's ``(8/3) k T gm`` and ``KF Id^AF / (f W Leff
    Cox^2)`` and its own ``4 k T / R``."""
    kf, af, tox, w, length, ld = 1e-24, 1.2, 20e-9, 20e-6, 2e-6, 0.1e-6
    beta = 50e-6 * w / (length - 2 * ld)
    result = noise(f"mos\nV1 g 0 DC 2 AC 1\nVdd vdd 0 10\nRd vdd d 10k\n"
                   f"M1 d g 0 0 nm W={w:g} L={length:g}\n"
                   f".model nm NMOS(vto=1 kp=50u kf={kf:g} af={af:g} tox={tox:g} ld={ld:g})\n"
                   ".noise V(d) V1 dec 2 1 1e4 1\n")
    f = result["frequency"]
    cox = 3.9 * 8.854214871e-12 / tox
    drain = beta / 2   # the bulk-drain diode's leakage and gmin add under 1e-9 of it
    channel = 8 / 3 * BOLTZMANN * KELVIN * beta + kf * drain**af / (f * w * (length - 2 * ld)
                                                                     * cox**2)
    assert np.allclose(result["onoise_spectrum"] ** 2,
                       1e8 * (channel + 4 * BOLTZMANN * KELVIN / 1e4), rtol=1e-6, atol=0)
    assert np.allclose(result["inoise_spectrum"], result["onoise_spectrum"] / (beta * 1e4),
                       rtol=1e-6, atol=0)


def test_shares_beyond_maxpoints_are_refused_before_the_sweep():
    """Each source's share is a column: sources times frequencies values, bounded as a
    table's rows are."""
    with pytest.raises(mna.NetlistError, match=r"asks for 6 points, more than maxpoints=5") \
            as caught:
        mna.run(mna.read_string("r\nV1 in 0 DC 0 AC 1\nR1 in out 1k\nR2 out 0 1k\n"
                                ".options maxpoints=5\n.noise V(out) V1 lin 3 1 3 1\n"))
    assert caught.value.location.line == 6


def test_a_device_without_a_noise_model_is_refused(monkeypatch):
    from mna.elements.device import Device
    from mna.elements.mosfet import Mosfets

    monkeypatch.setattr(Mosfets, "noise", Device.noise)
    with pytest.raises(mna.NetlistError, match="no noise model of M1"):
        mna.run(mna.read_string("mos\nV1 g 0 DC 2 AC 1\nVd d 0 5\nM1 d g 0 0 nm\n"
                                ".model nm NMOS(vto=1 kp=1e-4)\n"
                                ".noise V(d) V1 dec 1 1 10\n"))


BJT_NOISE = """common-emitter stage, base biased by a current through a coupling capacitor
VCC vcc 0 24
VIN in 0 DC 0 AC 1
CIN in b 2u
IB 0 b 15u
RC vcc c 4.7k
Q1 c b e 0 qn
RE e 0 22
.model qn npn(bf=150 rb=35 re=0.5 rc=4 kf=3e-16 af=1.2 cjc=3p cje=6p vaf=60)
.noise V(c) VIN dec 10 100 50Meg 1
"""
JUNCTIONS = """diode and resistors, ac= on one (its noise is the DC resistance's)
V1 in 0 DC 2 AC 1
R1 in a 1k ac=2k
D1 a b dm
Rb b 0 500
.model dm D(is=1e-14 rs=20 kf=1e-15 af=1.2 n=1.5)
.options reltol=1e-7 abstol=1e-18 vntol=1e-12
.noise v(b, 0) V1 oct 3 10 1e6 1
"""
MODULATED = """a transistor whose base resistance the base current crowds (IRB)
vcc 4 0 10
vin 1 0 dc 0.75 ac 1
rs 1 2 100
rload 4 3 2k
q1 3 2 0 test
.model test npn bf=100 rb=100 rbm=10 irb=1m kf=1e-18 af=1.3 re=2 rc=5
.options reltol=1e-7 abstol=1e-18 vntol=1e-12
.noise v(3) vin dec 5 10 1e7
"""

MOSFETS = """a common-source stage into a source follower, series resistances, one model with TOX
VDD vdd 0 5
VIN g 0 DC 1.5 AC 1
RD vdd d 10k
M1 d g s 0 nm W=40u L=2u
RS s 0 200
M2 o d vdd vdd pm W=10u L=1u
RO o 0 5k
.model nm NMOS(vto=0.8 kp=50u lambda=0.02 rd=15 rs=12 kf=1e-25 af=1.3 tox=20n gamma=0.4)
.model pm PMOS(vto=-0.9 kp=20u kf=3e-24 af=0.9)
.options reltol=1e-7 abstol=1e-18 vntol=1e-12
.noise v(o) VIN dec 5 1 1e8 1
"""

RESISTOR_FLICKER = """resistor models with flicker noise, sized and in parallel copies
V1 in 0 DC 3 AC 1
R1 in a 10k rmod l=10u w=2u m=2
R2 a 0 5k rmod
R3 a 0 20k
.model rmod R(kf=1e-22 af=1.5 ef=1.1 lf=1 wf=0.5 short=0.1u narrow=0.1u)
.noise v(a) V1 dec 5 1 1e5 1
"""

MULTIPLIED = """devices with m=, and an instance with m=: each copy's flicker noise
V1 vcc 0 DC 5
VB bb 0 DC 0.65 AC 1
RB bb b 1k
Q1 c b 0 qq m=3
RC vcc c 2k
D1 c d dd m=2
RD d 0 5k
.subckt leg a
D2 a k dd
RK k 0 20k
.ends
X1 c leg m=4
.model qq NPN(IS=1e-16 BF=50 RB=10 CJE=1p KF=1e-15 AF=1.3)
.model dd D(IS=1e-14 KF=1e-14 AF=1.2)
.options reltol=1e-9 abstol=1e-15 vntol=1e-12
.noise V(c) VB dec 3 1 1meg
"""   # no RS: ngspice 39 gives its noise the area (and m) twice, a bug it has since fixed


@pytest.mark.ngspice
@pytest.mark.parametrize("deck", [BJT_NOISE, JUNCTIONS, MODULATED, MOSFETS, RESISTOR_FLICKER,
                                  MULTIPLIED],
                         ids=["common_emitter", "junctions", "modulated_base", "mosfets",
                              "resistor_flicker", "multiplied"])
def test_against_ngspice(deck, ngspice):
    spectra, totals = ngspice.run(deck).plots
    result = noise(deck)
    assert np.allclose(result["frequency"], spectra.data["frequency"], rtol=1e-12, atol=0)
    for name in ("onoise_spectrum", "inoise_spectrum"):
        assert np.allclose(result[name], spectra.data[name], rtol=1e-6, atol=0), name
    for name in ("onoise_total", "inoise_total"):
        assert result[name][-1] == pytest.approx(totals.data[f"V({name})"].iloc[0], rel=1e-6, abs=0)
    shares = [name for name in result.columns if name.startswith("onoise_")
              and name.lower() in spectra.data]
    for name in shares:   # each source's share, where ngspice names it as mna does
        assert np.allclose(result[name], spectra.data[name.lower()], rtol=1e-6, atol=0), name
