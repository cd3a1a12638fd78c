"""SPICE's semiconductor devices against ngspice 39 on textbook circuits: the junction diode
(junction capacitance, breakdown), the Gummel-Poon BJT and the level-1 MOSFET.

Operating points and DC sweeps must agree within 1e-6 of each value (floors 1e-9 V, 1e-12 A),
AC responses within 1e-6 of each value, transients within 1e-3 of each signal's range at
ngspice's time points (mna's table interpolated linearly onto them).

The .op/.dc/.ac decks tighten ``reltol``: at SPICE's default of 1e-3 ngspice itself stops its
Newton iterations up to 1e-4 away from the solution in a DC sweep and 3e-5 in an AC
analysis (measured on these decks against its own tight solution; mna at the default is
within 1e-10 of its tight solution, as its devices apply SPICE's current convergence test), so
the comparison would measure where ngspice stops rather than the models. The transient decks
run at the default tolerances.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import mna

pytestmark = pytest.mark.ngspice

TIGHT = ".options reltol=1e-8 vntol=1e-12 abstol=1e-16\n"
RTOL, VOLT_FLOOR, AMP_FLOOR = 1e-6, 1e-9, 1e-12
TRAN_FRACTION = 1e-3


def results(text: str) -> dict[str, mna.Result]:
    """mna's results of `text` by kind."""
    return {result.kind: result for result in mna.run(mna.read_string(text))}


def _floor(name: str) -> float:
    return AMP_FLOOR if name.startswith("I(") else VOLT_FLOOR


def check_op(ours: mna.Result, reference) -> float:
    """Every value ngspice reports within RTOL (and the floor); the largest relative
    difference."""
    theirs = reference["op"].data.iloc[0]
    values = {name.lower(): value for name, value in zip(ours.names, ours.values)}
    worst, failures = 0.0, []
    for name, value in theirs.items():
        mine = values[name.lower()]
        difference = abs(mine - value)
        worst = max(worst, difference / max(abs(value), _floor(name) / RTOL))
        if difference > RTOL * abs(value) + _floor(name):
            failures.append(f"{name}: mna {mine!r}, ngspice {value!r}")
    assert not failures, "\n".join(failures)
    return worst


def check_table(ours: mna.Result, plot, floor_scale: float = 1.0) -> float:
    """Each column of ngspice's `plot` (a DC sweep or an AC response, point by point)."""
    columns = {name.lower(): values for name, values in ours.columns.items()}
    scale = plot.data.iloc[:, 0].to_numpy().real
    assert np.allclose(columns[ours.independent.lower()].real, scale, rtol=1e-12, atol=1e-12)
    worst = 0.0
    for name in plot.data.columns[1:]:
        theirs = plot.data[name].to_numpy()
        mine = columns[name.lower()]
        floor = _floor(name) * floor_scale
        difference = np.abs(mine - theirs)
        worst = max(worst, float(np.max(difference / np.maximum(np.abs(theirs),
                                                                 floor / RTOL))))
        bad = difference > RTOL * np.abs(theirs) + floor
        assert not bad.any(), (f"{name} at {scale[bad][:3]}: mna {mine[bad][:3]}, "
                               f"ngspice {theirs[bad][:3]}")
    return worst


def check_tran(ours: mna.Result, reference, names: list[str]) -> float:
    """Each signal of `names` on ngspice's time points, within TRAN_FRACTION of its range."""
    plot = reference["tran"].data
    columns = {name.lower(): values for name, values in ours.columns.items()}
    time = columns["time"]
    worst = 0.0
    for name in names:
        theirs = plot[name].to_numpy()
        mine = np.interp(plot["time"].to_numpy(), time, columns[name.lower()])
        span = theirs.max() - theirs.min()
        error = float(np.max(np.abs(mine - theirs))) / span
        worst = max(worst, error)
        assert error < TRAN_FRACTION, f"{name}: {error:.3g} of its range {span:.3g}"
    return worst


# -- bipolar transistors ------------------------------------------------------------------------

BJT_MODEL = (".model qn NPN(IS=1e-15 BF=150 VAF=80 VAR=20 IKF=50m IKR=10m ISE=1e-14 NE=1.5 "
             "BR=3 ISC=1e-13 NC=2 RB=100 RE=1 RC=10 CJE=20p VJE=0.75 MJE=0.33 CJC=8p "
             "VJC=0.75 MJC=0.33 XCJC=0.8 TF=400p TR=50n XTF=3 VTF=1.7 ITF=0.6 FC=0.5)\n")

COMMON_EMITTER = """common-emitter amplifier, divider bias, bypassed emitter
VCC vcc 0 12
VIN in 0 DC 0 AC 1 SIN(0 10m 10k)
RS in b1 1k
C1 b1 b 10u
R1 vcc b 47k
R2 b 0 10k
RC vcc c 4.7k
RE e 0 1k
CE e 0 100u
Q1 c b e qn
""" + BJT_MODEL


def test_common_emitter_op_and_ac(ngspice):
    text = COMMON_EMITTER + TIGHT + ".op\n.ac dec 10 10 1g\n"
    ours, reference = results(text), ngspice.run(text)
    check_op(ours["op"], reference)
    check_table(ours["ac"], reference["ac"])
    # mid-band gain about -RC gm: tens, inverting
    gain = ours["ac"]["V(c)"][20]
    assert 50 < abs(gain) < 200 and gain.real < 0


BASE_RESISTANCE = """base resistance falling with the base charge (RBM) and crowding (IRB)
VCC vcc 0 5
V1 in 0 DC 0.8 AC 1 PULSE(0.7 2.5 10n 5n 5n 50n 200n)
RB1 in b1 1k
Q1 c1 b1 0 qirb
RC1 vcc c1 1k
RB2 in b2 1k
Q2 c2 b2 0 qrbm
RC2 vcc c2 1k
.model qirb NPN(IS=1e-15 BF=100 RB=200 RBM=20 IRB=1m VAF=50 IKF=20m CJE=2p CJC=1p TF=100p)
.model qrbm NPN(IS=1e-15 BF=100 RB=200 RBM=20 VAF=50 IKF=20m CJE=2p CJC=1p TF=100p)
"""


def test_base_resistance_modulation_is_ngspices(ngspice):
    text = BASE_RESISTANCE + TIGHT + ".op\n.dc V1 0.5 3 0.05\n.ac dec 5 1k 1g\n"
    ours, reference = results(text), ngspice.run(text)
    check_op(ours["op"], reference)
    check_table(ours["dc"], reference["dc"])
    check_table(ours["ac"], reference["ac"])
    text = BASE_RESISTANCE + TIGHT + ".tran 1n 400n\n"
    check_tran(results(text)["tran"], ngspice.run(text), ["V(c1)", "V(b1)", "V(c2)", "V(b2)"])
    # the modulation matters: 2 mA into the base drop 0.4 V across RB alone
    high = BASE_RESISTANCE.replace("DC 0.8", "DC 3") + ".op\n"
    fixed = results(high.replace(" RBM=20 IRB=1m", ""))["op"]
    assert fixed["V(b1)"] - results(high)["op"]["V(b1)"] > 0.1


def test_transistors_whose_base_current_is_round_off_converge(ngspice):
    """Random deck 4001, reduced: two transistors with RB nearly off; with RB's current and
    the base current cancelling inside one device, the balance test of b' had nothing but
    abstol and no iteration passed it."""
    text = """base at round-off
V1 n5 0 DC 0.8648
L1 n11 n5 0.01707
R8 n14 n2 848.1
V2 n8 n14 0
V4 n15 0 3.661
F2 n8 n13 V1 1.935
Q1 n5 t18 n17 qm1
Q2 t19 n2 n15 qm2
W1 n17 n13 V2 csw3
W2 n11 n15 V1 csw4
.model qm1 NPN(IS=3.033e-14 BF=208.6 BR=3.445 RB=104.5 RC=15.37 RE=0.653 CJE=3.897e-08)
.model qm2 PNP(IS=4.996e-16 BF=289.4 BR=9.984 VAF=138.7 RB=7.363 RE=0.2465 TF=4.139e-08)
.model csw3 CSW(IT=0.009236 IH=0.0001967 RON=22.22 ROFF=4.571e+06)
.model csw4 CSW(IT=1.367e-05 IH=0.000408 RON=2.223 ROFF=5.889e+06)
.options reltol=1e-6 vntol=1e-10 abstol=1e-15
.op
"""
    ours = results(text)["op"]   # n2 floats at about 0.49 MV behind the off switches
    theirs = ngspice.run(text)["op"].data.iloc[0]
    for name in ("V(n2)", "V(n13)", "V(n17)", "I(v4)"):
        assert ours[name] == pytest.approx(theirs[name], rel=1e-4, abs=1e-10), name


@pytest.mark.parametrize("device, model, knee", [
    ("D1 a 0 dmod", ".model dmod D(IS=1e-14)", True),
    ("Q1 0 a 0 nmod", ".model nmod NPN(IS=1e-15 BF=100)", True),
    ("D1 a 0 dmod OFF", ".model dmod D(IS=1e-14)", False),
    ("Q1 0 a 0 nmod 2 off", ".model nmod NPN(IS=1e-15 BF=100)", False)])
def test_a_circuit_with_two_operating_points_settles_in_ngspices(ngspice, device, model,
                                                                 knee):
    """A negative conductance across a junction: 0 V is an operating point, and so is the
    junction's knee, where its current takes over. Newton from 0 V stays at 0 V; SPICE's
    first iteration puts every junction at its critical voltage (``MODEINITJCT``), from
    where both tools find the knee, unless the element line says ``OFF``: then the
    junction starts at 0 V and is held there until Newton converges (0 V)."""
    text = ("two operating points\nG1 0 a a 0 2m\nR1 a 0 1k\n" + device + "\n" + model
            + "\n" + TIGHT + ".op\n")
    ours = results(text)["op"]
    check_op(ours, ngspice.run(text))
    assert 0.6 < ours["V(a)"] < 0.8 if knee else ours["V(a)"] == 0.0


@pytest.mark.parametrize("devices", [
    "D1 b 0 dmod OFF\nD2 b c dmod area=2 off",
    "Q1 c b 0 0 qn OFF\nM1 c b 0 0 nm W=10u OFF L=1u",
    "Q1 c b 0 qn 1 OFF\nM1 c c 0 0 nm OFF"])
def test_devices_marked_off_are_released_once_newton_converges(ngspice, devices):
    """``OFF`` only chooses where a DC solution starts: held at 0 V until Newton converges,
    the junctions then go free, and the operating point is the one ngspice finds (the
    element lines in every form ngspice reads: after the area, before or after W=, L=)."""
    text = ("off\nV1 a 0 5\nR1 a b 10k\nR2 a c 2k\nR3 c 0 20k\n" + devices + "\n"
            ".model dmod D(IS=1e-14)\n.model qn NPN(IS=1e-16 BF=100)\n"
            ".model nm NMOS(VTO=0.8 KP=60u)\n" + TIGHT + ".op\n")
    ours = results(text)["op"]
    check_op(ours, ngspice.run(text))
    assert ours["V(b)"] > 0.5   # conducting: released from 0 V


@pytest.mark.parametrize("bulk", ["-1", "0.3"])
def test_body_effect_in_ac_is_ngspices_on_both_sides_of_zero_bulk_bias(ngspice, bulk):
    """A common-source stage whose bulk is driven: reverse-biased (-1 V) and forward-biased
    (0.3 V, where SPICE linearises the threshold's square root and keeps ``gamma / (2
    sarg)`` for the body transconductance); the AC gain from the bulk matches ngspice's."""
    text = ("body effect\nVDD vdd 0 5\nVG g 0 1.5\nVB b 0 " + bulk + " AC 1\nRD vdd d 10k\n"
            "M1 d g 0 b nm W=10u L=1u\n"
            ".model nm NMOS(LEVEL=1 VTO=0.8 KP=60u GAMMA=0.5 PHI=0.65 LAMBDA=0.02)\n"
            + TIGHT + ".op\n.ac dec 2 1 1k\n")
    ours, reference = results(text), ngspice.run(text)
    check_op(ours["op"], reference)
    check_table(ours["ac"], reference["ac"])
    assert abs(ours["ac"]["V(d)"][0]) > 0.1    # the bulk drives the drain


def test_common_emitter_transient(ngspice):
    text = COMMON_EMITTER + ".tran 1u 300u\n"
    ours, reference = results(text), ngspice.run(text)
    check_tran(ours["tran"], reference, ["V(c)", "V(b)", "I(vcc)"])


DIFFERENTIAL_PAIR = """differential pair with a current mirror tail and a PNP level shift
VCC vcc 0 10
VEE vee 0 -10
V1 in1 0 DC 0
V2 in2 0 DC 0
RB1 in1 b1 1k
RB2 in2 b2 1k
Q1 c1 b1 e qn
Q2 c2 b2 e qn
RC1 vcc c1 10k
RC2 vcc c2 10k
Q3 e bias vee vee qn
Q4 bias bias vee qn
RBIAS 0 bias 20k
Q5 sub 0 c1 qp
RSUB sub vee 100k
.model qn NPN(IS=2e-16 BF=120 VAF=60 IKF=20m ISE=5e-15 NE=1.6 BR=2 NR=1.01 VAR=15 RB=50
+ RE=2 RC=20 CJE=1p CJC=0.5p CJS=2p)
.model qp PNP(IS=1e-16 BF=50 VAF=40 BR=1 RB=100 RC=30 ISS=1e-17)
""" + TIGHT + ".op\n.dc V1 -0.2 0.2 0.01\n"


def test_differential_pair_op_and_dc_sweep(ngspice):
    ours, reference = results(DIFFERENTIAL_PAIR), ngspice.run(DIFFERENTIAL_PAIR)
    check_op(ours["op"], reference)
    check_table(ours["dc"], reference["dc"])
    sweep = ours["dc"]
    # the tail current moves to Q1 as in1 rises: c2 climbs to the supply, c1 falls (held
    # near one junction drop by Q5's emitter)
    assert sweep["V(c2)"][-1] > 9.9 > 5 > sweep["V(c2)"][0]
    assert sweep["V(c1)"][-1] < sweep["V(c1)"][0] < 0.9


POWER_TRANSISTOR = """PSpice's 2N3055: high injection rolled off with NK = 0.6
VC c 0 DC 5
VB b 0 DC 0.7
Q1 c b 0 Q2N3055
.model Q2N3055 NPN(Is=974.4f Xti=3 Eg=1.11 Vaf=50 Bf=99.49 Ise=2.708p Ne=1.266 Ikf=8.669
+ Nk=.6 Xtb=1.5 Br=1.779 Isc=1.724n Nc=1.546 Ikr=1.009 Rc=.1 Cjc=363.7p Mjc=.4035 Vjc=.75
+ Fc=.5 Cje=575.8p Mje=.3926 Vje=.75 Tr=3.26u Tf=19.48n Itf=1.071 Xtf=1.055 Vtf=10 Rb=.1)
""" + TIGHT + ".op\n.dc VB 0.4 1.4 0.0625\n"


def test_high_injection_exponent_nk_is_ngspices(ngspice):
    """The base charge ``q1 (1 + (1 + 4 q2)^NK) / 2`` of PSpice's 2N3055 (NK = 0.6, where
    SPICE's is the square root) from cut-off to 10 A of collector current."""
    ours, reference = results(POWER_TRANSISTOR), ngspice.run(POWER_TRANSISTOR)
    check_op(ours["op"], reference)
    check_table(ours["dc"], reference["dc"])
    assert -ours["dc"]["I(VC)"][-1] > 5   # deep in high injection


JUNCTION_CURRENTS = """a transistor whose junctions have their own saturation currents
.temp {temperature}
VC c 0 DC 2
VB b 0 DC 0
Q1 c b 0 qj 2
Q2 c b e2 qp 3
RE e2 0 100
.model qj NPN(IS=1e-15 IBE=2e-15 IBC=5e-16 NF=1.05 NR=1.1 BF=80 BR=2 VAF=60 IKF=0.1
+ ISE=1e-14 NE=1.5 EG=1.12 XTI=3.5 XTB=1.2)
.model qp PNP(IS=3e-15 IBE=1e-15 IBC=4e-15 BF=50 RB=20 RE=0.5)
""" + TIGHT + ".op\n.dc VB -1 1.2 0.0625\n"


@pytest.mark.parametrize("temperature", [27, 80])
def test_junction_saturation_currents_ibe_and_ibc_are_ngspices(ngspice, temperature):
    """IBE and IBC, given both, take the place of IS in each junction's current and scale
    with temperature by NF and NR, and the area scales each once: at 27 and 80 degrees,
    forward, saturated and reverse, the operating point and the sweep as ngspice's."""
    text = JUNCTION_CURRENTS.format(temperature=temperature)
    ours, reference = results(text), ngspice.run(text)
    check_op(ours["op"], reference)
    check_table(ours["dc"], reference["dc"])


HOT_RESISTANCES = """a transistor's resistances at {temperature} degrees
.temp {temperature}
VC c 0 DC 3
VB b 0 DC 0
Q1 c b 0 qr
Q2 c b 0 qm
.model qr NPN(IS=1e-15 BF=100 IKF=50m RB=200 RBM=20 IRB=1m RC=5 RE=2 TRB1=3m TRB2=1e-5
+ TRM1=-2m TRM2=2e-5 TRC=4m TRC2=-1e-5 TRE1=1m TRE2=3e-6 TIRB1=5m TIRB2=1e-5)
.model qm NPN(IS=1e-15 BF=100 IKF=50m RB=100 RBM=10 TRB=6m TRM1=1m)
""" + TIGHT + ".op\n.dc VB 0 1.5 0.03125\n"


@pytest.mark.parametrize("temperature", [27, 100])
def test_temperature_coefficients_of_a_transistors_resistances_are_ngspices(ngspice,
                                                                            temperature):
    """RB, RBM, RC, RE and IRB scaled by ``1 + t1 dT + t2 dT^2`` (TRB1 TRB2, TRM1 TRM2,
    TRC1 TRC2, TRE1 TRE2, TIRB1 TIRB2, as PSpice's libraries give them): the operating
    point and a sweep of the base to high injection as ngspice's at 27 and 100 degrees."""
    text = HOT_RESISTANCES.format(temperature=temperature)
    ours, reference = results(text), ngspice.run(text)
    check_op(ours["op"], reference)
    check_table(ours["dc"], reference["dc"])


@pytest.mark.parametrize("device, model, name", [
    ("D1 b 0 dm", "dm D(IS=1e-14 RS=10 TRS1=-0.1)", "RS"),
    ("Q1 b b 0 dm", "dm NPN(IS=1e-14 RC=10 TRC1=-0.1)", "RC")])
def test_a_series_resistance_that_its_temperature_coefficients_cancel_is_a_located_error(
        device, model, name):
    # 1 - 0.1 (37 - 27) = 0: ngspice's conductance is infinite (it ends in gmin stepping);
    # it was a division by zero
    text = f"cancelled\nV1 a 0 1\nR1 a b 1k\n{device}\n.model {model}\n.temp 37\n.op\n"
    with pytest.raises(mna.NetlistError, match=rf"model 'dm': {name} is 0 at the circuit's "
                       "temperature") as info:
        mna.run(mna.read_string(text))
    assert (info.value.location.line, info.value.location.column) == (4, 1)


# -- MOSFETs ------------------------------------------------------------------------------------

MOS_MODELS = (
    ".model nm NMOS(LEVEL=1 VTO=0.8 KP=60u GAMMA=0.4 PHI=0.65 LAMBDA=0.03 TOX=20n "
    "CGSO=0.3n CGDO=0.3n CGBO=0.2n CJ=0.2m CJSW=1n)\n"
    ".model pm PMOS(LEVEL=1 VTO=-0.9 KP=25u GAMMA=0.5 PHI=0.65 LAMBDA=0.05 TOX=20n "
    "CGSO=0.3n CGDO=0.3n CGBO=0.2n CJ=0.3m CJSW=1n)\n")

INVERTER = """CMOS inverter
VDD vdd 0 5
M1 out in 0 0 nm W=10u L=1u AD=20p AS=20p PD=24u PS=24u
M2 out in vdd vdd pm W=20u L=1u AD=40p AS=40p PD=44u PS=44u
CL out 0 100f
""" + MOS_MODELS


def test_cmos_inverter_op_and_transfer_curve(ngspice):
    text = INVERTER + "VIN in 0 DC 2.2\n" + TIGHT + ".op\n.dc VIN 0 5 0.05\n"
    ours, reference = results(text), ngspice.run(text)
    check_op(ours["op"], reference)
    check_table(ours["dc"], reference["dc"])
    curve = ours["dc"]["V(out)"]
    assert curve[0] > 4.99 and curve[-1] < 0.01


def test_cmos_inverter_transient(ngspice):
    # a sine from its crest (no step in any slope at t = 0) swings the input rail to rail
    text = INVERTER + "VIN in 0 SIN(2.5 2.5 25meg 0 0 90)\n.tran 0.067n 40n\n"
    ours, reference = results(text), ngspice.run(text)
    check_tran(ours["tran"], reference, ["V(out)"])


MIRROR = """NMOS current mirror (source and drain resistances) and a PMOS mirror
VDD vdd 0 5
IREF vdd g 50u
M1 g g 0 0 nm W=20u L=2u
M2 out g 0 0 nm W=40u L=2u
VOUT out 0 DC 2
M3 p1 p1 vdd vdd pm W=30u L=2u
M4 x p1 vdd vdd pm W=30u L=2u
R3 p1 0 50k
RX x 0 20k
.model nm NMOS(VTO=0.7 KP=110u GAMMA=0.45 PHI=0.7 LAMBDA=0.04 RD=20 RS=20)
.model pm PMOS(VTO=-0.8 KP=40u GAMMA=0.5 PHI=0.7 LAMBDA=0.06)
""" + TIGHT + ".op\n.dc VOUT -0.5 5 0.1\n"


def test_current_mirror_op_and_output_sweep(ngspice):
    ours, reference = results(MIRROR), ngspice.run(MIRROR)
    check_op(ours["op"], reference)
    check_table(ours["dc"], reference["dc"])
    # saturated M2 copies twice the reference current
    sweep = ours["dc"]
    at_two_volts = -sweep["I(VOUT)"][25]
    assert 95e-6 < at_two_volts < 115e-6


MODEL_SIZES = """a MOSFET model that gives W and L
VDD vdd 0 10
RD1 vdd d1 1k
RD2 vdd d2 1k
VG g 0 -3
M1 d1 g 0 0 sized
M2 d2 g 0 0 sized W=50u
.model sized NMOS(VTO=-5 KP=20.71u W=3.1m L=2u RS=20m)
""" + TIGHT + ".op\n"


def test_a_mosfet_models_w_and_l_are_its_instances_where_they_give_none(ngspice):
    """Vendor cards give W and L in the model (13 of a survey's level-1 models): an
    instance without its own takes them, as in ngspice (M1: 9.84 mA, against 41 uA at the
    default 100 um square); one with W= keeps it and takes the model's L."""
    ours, reference = results(MODEL_SIZES), ngspice.run(MODEL_SIZES)
    check_op(ours["op"], reference)


# -- diodes ------------------------------------------------------------------------------------

RECTIFIER = """fast full-wave bridge rectifier at 1 MHz (junction and diffusion charge)
V1 a b SIN(0 5 1meg)
RG b 0 1meg
D1 a p dfast
D2 b p dfast
D3 n a dfast
D4 n b dfast
RL p n 1k
CL p n 1n
RN n 0 1meg
.model dfast D(IS=5e-15 N=1.05 RS=3 CJO=20p VJ=0.7 M=0.4 TT=20n FC=0.5)
.tran 5n 4u
"""


def test_fast_rectifier_transient(ngspice):
    ours, reference = results(RECTIFIER), ngspice.run(RECTIFIER)
    check_tran(ours["tran"], reference, ["V(p)", "V(n)", "V(a)"])


BREAKDOWN = """Zener diodes in breakdown
V1 in 0 DC 0
R1 in k 1k
D1 0 k dz
R2 in k2 2k
D2 0 k2 dz2
.model dz D(IS=1e-14 N=1.05 RS=2 BV=5.1 IBV=1m NBV=1.2)
.model dz2 D(IS=5e-15 BV=12 IBV=10u CJO=10p)
""" + TIGHT + ".op\n.dc V1 -2 20 0.1\n"


def test_diode_breakdown_sweep(ngspice):
    ours, reference = results(BREAKDOWN), ngspice.run(BREAKDOWN)
    check_table(ours["dc"], reference["dc"])
    sweep = ours["dc"]
    assert 5.1 < sweep["V(k)"][-1] < 5.3   # held near BV
    assert 12 < sweep["V(k2)"][-1] < 12.3


TEMPERATURE = """a diode, a BJT and a MOSFET at 75 degrees
.temp 75
V1 in 0 5 AC 1
R1 in a 2k
D1 a 0 dm
R2 in c 4.7k
Q1 c bq 0 qn
RB in bq 470k
R3 in d 10k
M1 d d 0 0 nm W=10u L=2u AD=10p AS=10p PD=10u PS=10u
VPD pd 0 -0.3
D2 pd 0 dm2
.model dm D(IS=1e-14 N=1.1 CJO=2p VJ=0.8 EG=1.2 XTI=2.5 BV=20 IBV=1m)
.model dm2 D(IS=1e-12 BV=0.25 IBV=10u TNOM=50)
.model qn NPN(IS=1e-15 BF=100 XTB=1.5 ISE=1e-14 NE=1.5 VAF=50 EG=1.15 XTI=3.5 CJE=1p
+ CJC=2p VJC=0.6 MJC=0.4 TF=1n)
.model nm NMOS(VTO=0.7 KP=100u GAMMA=0.4 PHI=0.65 LAMBDA=0.02 CJ=1m CJSW=1n PB=0.7 TOX=10n
+ CGSO=1n)
""" + TIGHT + ".op\n.ac dec 5 1meg 10g\n"


def test_temperature_scaling(ngspice):
    ours, reference = results(TEMPERATURE), ngspice.run(TEMPERATURE)
    check_op(ours["op"], reference)
    check_table(ours["ac"], reference["ac"])


PSPICE_DIODES = """PSpice's diode models: recombination current, knee currents
V1 in 0 DC 0
R1 in a 100
D1 a 0 D1N4148
R2 in b 1k
D2 b 0 dk
.model D1N4148 D(Is=2.682n N=1.836 Rs=.5664 Ikf=44.17m Xti=3 Eg=1.11 Cjo=4p M=.3333 Vj=.5
+ Fc=.5 Isr=1.565n Nr=2 Bv=100 Ibv=100u Tt=11.54n)
.model dk D(IS=1e-12 N=1.2 ISR=1e-9 NR=2.5 IKF=1m IKR=0.1m VJ=0.8 M=0.45 RS=3 TRS1=4m
+ TRS2=1e-5 BV=30 IBV=1u CJO=1p)
"""


@pytest.mark.parametrize("temperature", [27, 75])
def test_recombination_and_knee_currents_of_pspice_diode_models(ngspice, temperature):
    """PSpice's 1N4148 and a diode with every added parameter (ISR and NR's recombination
    current, IKF and IKR's knees, TRS1 and TRS2's series resistance) through forward bias,
    reverse bias and breakdown, at 27 and 75 degrees: the operating point and the sweep as
    ngspice's. (In steps of 0.0625 V ngspice's sweep keeps stale values at three points
    where dk breaks down, which its own .op there does not.)"""
    text = PSPICE_DIODES + f".temp {temperature}\n" + TIGHT + ".op\n.dc V1 -120 3 0.25\n"
    ours, reference = results(text), ngspice.run(text)
    check_op(ours["op"], reference)
    check_table(ours["dc"], reference["dc"])


def test_pspice_1n4148_rectifier_transient(ngspice):
    """The 1N4148's diffusion charge TT i of a current with its recombination and knee,
    switched at 1 MHz into 1 nF and 1 kOhm, on ngspice's time points (at reltol 1e-6: at
    the default both tools' steps leave 1e-3 of the range between them, with these
    parameters or without)."""
    text = PSPICE_DIODES.replace("V1 in 0 DC 0", "V1 in 0 SIN(0 5 1meg)") + (
        "CL a 0 1n\n.options reltol=1e-6\n.tran 5n 4u\n")
    check_tran(results(text)["tran"], ngspice.run(text), ["V(a)", "V(b)"])


def test_the_small_signal_conductance_of_a_recombination_current_is_its_slope():
    """The AC response of a diode with ISR, NR and IKF, biased at 0.6 V through 1 kOhm, is
    the slope of its DC operating point (a central difference of 2e-4 V): 0.4544. ngspice
    39's is 0.4452, against 0.454 from its own DC points: its generation factor's derivative
    lacks a 1/VJ."""
    deck = ("diode\nV1 in 0 DC {v} AC 1\nR1 in a 1k\nD1 a 0 dx\n.model dx D(IS=1e-14 ISR=1e-9 "
            "NR=2 VJ=0.7 M=0.5 IKF=0.2m)\n" + TIGHT)
    (response,) = mna.run(mna.read_string(deck.format(v=0.6) + ".ac lin 1 1k 1k\n"))
    low, high = (mna.operating_point(mna.read_string(deck.format(v=v) + ".op\n"))["V(a)"]
                 for v in (0.5999, 0.6001))
    assert response["V(a)"][0].real == pytest.approx((high - low) / 2e-4, rel=1e-6)


NGSPICE_LIMITS = """ngspice's defaults and limits of model parameters
VF f 0 DC 5
R1 f a 1k
D1 a 0 dnr
R2 f b 1k
D2 b 0 dtiny
VR r 0 DC -5 AC 1
R3 r c 1k
D3 c 0 dgraded
VCC vcc 0 5
RB vcc bq 100k
RC vcc cq 1k
Q1 cq bq 0 qnk
.model dnr D(IS=1e-14 ISR=1e-10)
.model dtiny D(IS=1e-30)
.model dgraded D(Is=68.65f Isr=11.02u Nr=2 M=.9735 CJO=10p)
.model qnk NPN(IS=1e-14 BF=100 IKF=10m NK=2)
""" + TIGHT + ".op\n.ac dec 5 1k 1g\n"


def test_model_parameters_take_ngspices_defaults_and_limits(ngspice, caplog):
    """A recombination current's NR defaults to 1 (PSpice's to 2), a saturation current
    below 1e-28 A is raised to it, a diode's grading coefficient above 0.9 is limited to
    0.9 (with a warning: its capacitance and recombination current change) and a
    transistor's NK above 1 to 1, as ngspice 39 does them (found on vendor libraries)."""
    with caplog.at_level(logging.WARNING):
        ours = results(NGSPICE_LIMITS)
    assert "M=0.9735 limited to 0.9" in caplog.text
    reference = ngspice.run(NGSPICE_LIMITS)
    check_op(ours["op"], reference)
    check_table(ours["ac"], reference["ac"])


LIBRARY_LIMITS = """models of vendor libraries past ngspice's limits, and others' parameters
VF f 0 DC 5
VR r 0 DC -5
R1 f a 1k
D1 a 0 dgrade
R3 f a3 2k
D3 a3 0 dgrade
R2 r b 1k
D2 b 0 dideal
VCC vcc 0 5
RB vcc bq 100k
RC vcc cq 1k
Q1 cq bq 0 qlimits
Q3 cq bq 0 qlimits
RB2 vcc bp 47k
Q2 cq2 bp 0 qptf
RC2 vcc cq2 2k
.model dgrade D(IS=1e-14 CJO=5p M=1.2 FC=-0.5 Isr=1n Nr=2 Vp=1 Ipk=2 Diss=0.5)
.model dideal D(IS=1e-14 Ron=0.1 Roff=1meg Vfwd=0.6 Vrev=20 Epsilon=0.1 Revepsilon=0.2)
.model qlimits NPN(IS=1e-14 BF=100 CJE=10p MJE=1.1 CJC=5p MJC=1.05 FC=1.2 BVBE=6 BVCBO=60
+ IBVBE=1u)
.model qptf NPN(IS=1e-14 BF=200 TF=300p PTF=30)
""" + TIGHT + ".op\n"


def test_vendor_models_past_ngspices_limits_run_as_ngspice_runs_them(ngspice, caplog):
    """Vendor libraries' cards that mna refused (a survey of 9,232 models against ngspice):
    a diode's M=1.2 (limited to 0.9) and FC<0, a transistor's MJE, MJC above 1 and FC above
    1 (limited to 0.999, 0.9999), LTspice's ideal-diode and soft-recovery parameters and a
    transistor's breakdown ratings (ignored, as ngspice ignores them), each with a warning,
    once per model; and PTF, which enters no operating point. The operating point as
    ngspice's."""
    with caplog.at_level(logging.WARNING):
        ours = results(LIBRARY_LIMITS)
    for warned in ("M=1.2 limited to 0.9", "MJE=1.1 limited to 0.999", "FC=1.2 limited",
                   "Ron=0.1 Roff=1meg", "BVBE=6 BVCBO=60"):
        assert caplog.text.count(warned) == 1, warned
    check_op(ours["op"], ngspice.run(LIBRARY_LIMITS))
    with pytest.raises(mna.NetlistError, match=r"PTF \(excess phase\) is not supported in .ac"):
        mna.read_string(LIBRARY_LIMITS + ".ac dec 5 1k 1g\n")


# -- extreme values ----------------------------------------------------------------------------

def test_junction_limit_near_the_float_limit_is_finite_and_quiet():
    """A diverging Newton step (node voltages near 1e308) is limited without overflow
    warnings and to a finite junction voltage."""
    import warnings

    from mna.elements.diode import junction_limit

    new = np.array([1e308, -1e308, 1e308, -1e308, 1e308, -1e308])
    old = np.array([0.7, 0.7, -1.0, -1e308, -1e308, 1e308])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        limited = junction_limit(new, old, 0.025, 0.6)
    assert np.isfinite(limited).all()
    assert 0.7 < limited[0] < 20 and limited[1] == pytest.approx(-1.7)


@pytest.mark.parametrize("volts", ["1e308", "-1e308"])
def test_diode_with_a_huge_source_fails_cleanly(volts):
    import warnings

    text = f"huge\nV1 a 0 {volts}\nR1 a b 1\nD1 b 0 dmod\n.model dmod D(IS=1e-14)\n.op\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(mna.MnaError, match="no convergence"):
            mna.run(mna.read_string(text))


@pytest.mark.parametrize("element, model, message", [
    ("D1 b 0 m", "D(N=0)", "N must be > 0, got 0"),
    ("D1 b 0 m", "D(TNOM=-273.15)", "TNOM must be > -273.15"),
    ("D1 b 0 m", "D(M=-0.5)", "M must be >= 0, got -0.5"),
    ("D1 b 0 m", "D(FC=1)", "FC must be < 1, got 1"),
    ("D1 b 0 m", "D(EG=100)", "temperature overflow"),
    ("Q1 a b 0 m", "NPN(ISE=1e-14 NE=0)", "NE must be > 0, got 0"),
    ("Q1 a b 0 m", "NPN(RE=-1)", "RE must be >= 0, got -1"),
    ("M1 b a 0 0 m W=1u L=1u", "NMOS(TOX=0)", "TOX must be > 0, got 0"),
    ("M1 b a 0 0 m W=1u L=1u", "NMOS(PHI=0)", "PHI must be > 0, got 0"),
])
def test_model_parameters_out_of_range_are_located_errors(element, model, message):
    text = f"t\n.temp 300\nV1 a 0 1\nR1 a b 1k\n{element}\n.model m {model}\n.op\n"
    with pytest.raises(mna.NetlistError, match=message) as info:
        mna.run(mna.read_string(text))
    assert info.value.location.line == 5


def test_devices_start_a_dc_solution_where_spice_does():
    """SPICE's ``MODEINITJCT``, whatever the terminal values: a diode and a BJT's emitter
    junction at ``vcrit = vt ln(vt / (sqrt(2) IS))``, the collector junction at 0 V; a
    MOSFET's gate at the threshold, drain on the source and bulk 1 V reversed (an NMOS's
    voltages, a PMOS's mirrored)."""
    from mna.assembly import assemble

    circuit = mna.read_string(
        "starting values\nV1 a 0 1\nD1 a 0 dmod\nQ1 a a 0 nmod\nM1 a a 0 0 nch W=10u L=1u\n"
        "M2 0 0 a a pch W=10u L=1u\n.model dmod D(IS=1e-14 N=2)\n.model nmod NPN(IS=1e-16)\n"
        ".model nch NMOS(VTO=0.7 KP=50u)\n.model pch PMOS(VTO=-0.9 KP=20u)\n.op\n")
    kinds = {type(device).__name__: device for device in assemble(circuit).devices}
    vt = 1.380649e-23 * 300.15 / 1.602176634e-19
    terminals = np.full((2, 8), 0.3)
    diodes = kinds["Diodes"]
    start = diodes.start(terminals[:1, :2])
    assert start[0, 0] - start[0, 1] == pytest.approx(2 * vt * np.log(2 * vt / (2**0.5 * 1e-14)))
    bjts = kinds["Transistors"]
    vbe, vbc, _, _ = bjts.junctions(bjts.start(terminals[:1, :bjts.width]))
    assert (vbe[0], vbc[0]) == (pytest.approx(vt * np.log(vt / (2**0.5 * 1e-16))), 0.0)
    mosfets = kinds["Mosfets"]
    vgs, vds, vbs = mosfets.voltages(mosfets.start(terminals[:, :mosfets.width]))
    assert vgs == pytest.approx([0.7, 0.9]) and list(vds) == [0, 0] and list(vbs) == [-1, -1]
