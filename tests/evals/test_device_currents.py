"""A device's terminal currents as outputs (``@q1[ic]``, ``I(D1)``): against ngspice 39, and
against the current of a 0 V source written in series with the terminal, in every analysis;
their sum over a device's terminals is zero."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mna
from mna.elements.diode import BOLTZMANN_OVER_CHARGE
from mna.errors import NetlistError

NETLISTS = Path(__file__).resolve().parents[2] / "netlists"

DEVICES = """devices
V1 in 0 DC 0.7 AC 1 PULSE(0.6 0.8 10n 5n 5n 40n 100n)
R1 in a 100
{a}D1 {a2} 0 dd
VCC vcc 0 5
RC vcc c 1k
{c}Q1 {c2} a e 0 qq
RE e 0 10
RJ vcc dj 2k
J1 dj g 0 jj
VG g a DC -1.2
RM vcc dm 5k
M1 dm a sm 0 mm W=20u L=2u
RS sm 0 100
.model dd D(IS=1e-14 RS=2 CJO=5p TT=10n)
.model qq NPN(IS=1e-15 BF=100 RB=20 CJE=2p CJC=1p TF=1n VAF=50)
.model jj NJF(VTO=-2 BETA=1e-4 LAMBDA=0.01 CGS=1p CGD=1p)
.model mm NMOS(VTO=0.5 KP=1e-4 LAMBDA=0.02 CGSO=1e-10 CGDO=1e-10 CBD=1f)
.options reltol=1e-9 abstol=1e-15 vntol=1e-12
"""
CURRENTS = ["@d1[id]", "@q1[ic]", "@q1[ib]", "@q1[ie]", "@q1[is]", "@j1[id]", "@j1[ig]", "@j1[is]",
            "@m1[id]", "@m1[ig]", "@m1[is]", "@m1[ib]"]


def plain() -> str:
    return DEVICES.format(a="", a2="a", c="", c2="c")


def with_ammeters() -> str:
    """The same circuit with 0 V sources in series with the diode's anode and the
    transistor's collector."""
    return DEVICES.format(a="Va a a2 0\n", a2="a2", c="Vc c c2 0\n", c2="c2")


def columns(text: str, analysis: str) -> dict[str, np.ndarray]:
    (result,) = mna.run(mna.read_string(text + analysis))
    if result.kind == "op":
        return {name.lower(): np.array([value]) for name, value in zip(result.names,
                                                                        result.values)}
    return {name.lower(): np.asarray(value) for name, value in result.table().items()}


@pytest.mark.ngspice
def test_terminal_currents_match_ngspice_at_the_operating_point(ngspice):
    # not @q1[is]: ngspice 39 gives the current leaving the substrate at DC (gmin's, here)
    currents = [name for name in CURRENTS if name != "@q1[is]"]
    text = plain() + f".save {' '.join(currents)}\n.op\n"
    ours = mna.operating_point(mna.read_string(text))
    theirs = ngspice.run(text)["op"].data.iloc[0]
    for name in currents:
        assert ours[name.replace(name[1:3], name[1:3].upper())] == pytest.approx(
            theirs[f"I({name})"], rel=1e-7, abs=1e-11), name
    assert abs(theirs["I(@q1[ic])"]) > 1e-5 and abs(theirs["I(@m1[id])"]) > 1e-5


@pytest.mark.ngspice
def test_a_swept_collector_current_matches_ngspice(ngspice):
    text = plain() + ".save @q1[ic] @q1[ib]\n.dc V1 0.6 0.9 0.05\n"
    (ours,) = mna.run(mna.read_string(text))
    theirs = ngspice.run(text)["dc"].data
    for name in ("@Q1[ic]", "@Q1[ib]"):   # ngspice's ic leaves out the substrate junction's
        # current, here gmin's 1e-12 S at 5 V
        assert np.allclose(ours[name], theirs[f"I({name.lower()})"], rtol=1e-7, atol=1e-11)


@pytest.mark.ngspice
def test_transient_terminal_currents_match_ngspice(ngspice):
    """ngspice's include the junctions' charge currents, as mna's: they agree as the two
    tools' transient solutions do (the current of a 0 V source in series, alike)."""
    text = with_ammeters() + (".save @d1[id] @q1[ic] I(Va) I(Vc)\n.options reltol=1e-6\n"
                              ".tran 0.5n 100n 0 0.2n\n")
    (ours,) = mna.run(mna.read_string(text))
    theirs = ngspice.run(text)["tran"].data
    for name, source in (("@D1[id]", "I(Va)"), ("@Q1[ic]", "I(Vc)")):
        reference = theirs[f"I({name.lower()})"].to_numpy()
        ours_there = np.interp(theirs["time"], ours["time"], ours[name])
        agreement = np.max(np.abs(np.interp(theirs["time"], ours["time"], ours[source])
                                  - theirs[source.replace("V", "v")]))
        assert np.max(np.abs(ours_there - reference)) < 2 * agreement + 1e-9 * np.ptp(reference)
        assert np.ptp(reference) > 1e-4   # the pulse moves it


@pytest.mark.parametrize("analysis", [".op\n", ".dc V1 0.5 0.9 0.1\n", ".ac dec 3 1k 1g\n",
                                      ".tran 0.5n 100n\n"])
def test_a_terminal_current_is_that_of_a_0_v_source_in_series(analysis):
    measured = columns(with_ammeters() + ".save @d1[id] I(D1) @q1[ic] I(Va) I(Vc)\n",
                       analysis)
    for name, source in (("@d1[id]", "i(va)"), ("i(d1)", "i(va)"), ("@q1[ic]", "i(vc)")):
        assert np.allclose(measured[name], measured[source], rtol=1e-12, atol=1e-18), name
    assert np.max(np.abs(measured["@q1[ic]"])) > 1e-6


@pytest.mark.parametrize("analysis", [".ac dec 3 1k 1g\n", ".tran 0.5n 100n\n"])
def test_the_terminal_currents_of_a_device_sum_to_zero(analysis):
    measured = columns(plain() + f".save {' '.join(CURRENTS[1:])}\n", analysis)
    for device, ports in (("q1", "cbes"), ("j1", "dgs"), ("m1", "dgsb")):
        currents = [measured[f"@{device}[i{port}]"] for port in ports]
        scale = max(np.max(np.abs(c)) for c in currents)
        assert np.max(np.abs(sum(currents))) <= 1e-9 * scale, device
        assert scale > 1e-9


def test_a_small_signal_collector_current_is_the_slope_of_the_swept_one():
    """.ac's @q1[ic] per volt at 1 Hz is d Ic / d V1 of .dc at the operating point (the
    capacitances do not yet speak there)."""
    text = plain() + ".save @q1[ic]\n"
    (ac,) = mna.run(mna.read_string(text + ".ac lin 1 1 1\n"))
    (dc,) = mna.run(mna.read_string(text + ".dc V1 0.699 0.701 0.001\n"))
    slope = (dc["@Q1[ic]"][2] - dc["@Q1[ic]"][0]) / 0.002
    assert ac["@Q1[ic]"][0] == pytest.approx(slope, rel=1e-5)


def test_a_behavioural_current_source_reports_its_current_and_a_source_reads_a_diode_current():
    text = ("b\n.options reltol=1e-9 abstol=1e-15 vntol=1e-12\nV1 a 0 DC 2\n"
            "B1 a 0 I=V(a)*V(a)*1m\nD1 a k dd\nRK k 0 1k\nB2 m 0 V=I(D1)*1k\nRM m 0 1k\n"
            ".model dd D(IS=1e-14)\n.save I(B1) I(D1) V(m) V(k)\n")
    op = mna.operating_point(mna.read_string(text))
    assert op["I(B1)"] == pytest.approx(4e-3, rel=1e-12)
    assert op["I(D1)"] == pytest.approx(op["V(k)"] / 1e3, rel=1e-9)
    assert op["V(m)"] == pytest.approx(op["I(D1)"] * 1e3, rel=1e-9)


def test_terminal_currents_inside_an_instance():
    text = ("x\n.options reltol=1e-12 abstol=1e-18 vntol=1e-15\nV1 a 0 DC 0.7\n"
            ".subckt pn p\nD1 p 0 dd\n.model dd D(IS=1e-14)\n.ends\n"
            "X1 a pn\nX2 a pn m=3\n.save @x1.d1[id] @x2.d1[id] I(V1)\n")
    op = mna.operating_point(mna.read_string(text))
    assert op["@X2.D1[id]"] == pytest.approx(3 * op["@X1.D1[id]"], rel=1e-10)
    assert op["I(V1)"] == pytest.approx(-4 * op["@X1.D1[id]"], rel=1e-10)


@pytest.mark.parametrize("save, message", [
    ("@q1[ix]", "Q1 has no terminal current 'ix' (its own: ic, ib, ie)"),
    ("I(Q1)", "Q1 has a current at each terminal: @Q1[ic], @Q1[ib], @Q1[ie]"),
    ("@r9[id]", "R9 has no unknown 'id'"),
    ("@q7[ic]", "no element 'q7' in the circuit"),
])
def test_a_terminal_current_that_is_not_there_is_refused_at_its_place(save, message):
    text = ("bad\nV1 c 0 DC 5\nVB b 0 DC 0.7\nQ1 c b 0 qq\nR9 c 0 1k\n.model qq NPN\n"
            f".save {save}\n.op\n")
    with pytest.raises(NetlistError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")) as raised:
        mna.run(mna.read_string(text))
    assert raised.value.location.line == 7


def test_a_measured_terminal_leaves_a_uic_start_as_a_0_v_source_does():
    """The ammeter ties the diode's junction to the source's node: its charge's rest state
    is the source's to fix, and C1 keeps its own (1.1e-7 V, 0.200000048 before)."""
    text = ("uic\nV1 a 0 DC 0.7\nR1 a c 1k\nC1 c 0 1n IC=0.2\n{d}.model dd D(IS=1e-14 CJO=10p)\n"
            ".save V(c) {saved}\n.tran 0.1u 4u uic\n")
    (measured,) = mna.run(mna.read_string(text.format(d="D1 a 0 dd\n", saved="@d1[id]")))
    (written,) = mna.run(mna.read_string(text.format(d="Vm a aq 0\nD1 aq 0 dd\n",
                                                     saved="I(Vm)")))
    assert measured["V(c)"][0] == 0.2
    assert np.allclose(measured["V(c)"], written["V(c)"], rtol=1e-12, atol=0)
    assert np.allclose(measured["@D1[id]"], written["I(Vm)"], rtol=1e-12, atol=1e-18)


def test_terminal_currents_are_outputs_of_every_card_that_takes_one():
    text = ("cards\nV1 in 0 DC 0.7 AC 1 SIN(0.7 0.01 1k)\nR1 in a 100\nD1 a 0 dd\n"
            ".model dd D(IS=1e-14)\n.tran 10u 2m\n.four 1k @d1[id]\n"
            ".meas tran tw WHEN @d1[id]=0.6m RISE=1\n.meas tran peak MAX @d1[id]\n")
    measures = mna.run(mna.read_string(text))[-1]
    assert 0 < measures["tw"] < 2e-3 and measures["peak"] > 0.6e-3
    # the 1 kHz swing of 10 mV moves the diode current by about 10 mV / (100 + rd)
    assert 2e-5 < measures["@D1[id]:h1"] < 1e-4
    circuit = mna.read_string("ss\nV1 in 0 DC 0.7\nR1 in a 100\nD1 a 0 dd\n"
                              ".model dd D(IS=1e-14)\n.ss in=V1 out=@d1[id],V(a)\n")
    (model,) = mna.run(circuit)
    api = mna.state_space(circuit, ["V1"], ["@d1[id]"])
    # the diode's small-signal current per volt of V1: 1 / (100 + rd)
    op = mna.operating_point(mna.read_string("op\nV1 in 0 DC 0.7\nR1 in a 100\nD1 a 0 dd\n"
                                             ".model dd D(IS=1e-14)\n"))
    rd = 0.025852 / op["I(V1)"] * -1   # kT/q at 27 degrees over the current
    assert float(np.asarray(api.D)[0, 0]) == pytest.approx(1 / (100 + rd), rel=1e-3)
    assert float(np.asarray(model.D)[0, 0]) == pytest.approx(1 / (100 + rd), rel=1e-3)


def test_an_initial_value_of_a_device_current_is_refused_at_its_place():
    with pytest.raises(NetlistError, match=r"I\(D1\) is a device's current") as raised:
        mna.read_string("ic\nV1 a 0 1\nR1 a b 1k\nD1 b 0 dd\n.model dd D\n.ic I(D1)=1m\n"
                        ".tran 1u 10u\n")
    assert raised.value.location.line == 6


@pytest.mark.ngspice
def test_save_all_beside_device_currents_keeps_the_default_outputs(ngspice):
    """ngspice's `.save all @q1[ic]`: every default vector and the current (mna saved the
    current alone)."""
    text = ("all\nV1 a 0 5\nR1 a c 1k\nR2 a b 100k\nQ1 c b 0 qm\n.model qm NPN(IS=1e-15)\n"
            ".save all @q1[ic]\n.op\n")
    ours = mna.operating_point(mna.read_string(text))
    theirs = ngspice.run(text)["op"].data.iloc[0]
    assert set(ours.names) == {"V(a)", "V(c)", "V(b)", "I(V1)", "@Q1[ic]"}
    assert {name.lower() for name in ours.names} == {name.lower().replace("i(@", "@")[:-1]
                                                     if name.startswith("I(@") else
                                                     name.lower() for name in theirs.index}
    assert ours["@Q1[ic]"] == pytest.approx(theirs["I(@q1[ic])"], rel=1e-3)


def test_the_current_mirror_example_is_its_closed_form():
    """netlists/current_mirror.net: a 1:4 mirror whose output is an instance with m=4;
    its header's closed form without the Early effect, and its printed values."""
    op = mna.operating_point(mna.read(NETLISTS / "current_mirror.net"))
    vt = BOLTZMANN_OVER_CHARGE * (27 + 273.15)
    reference = (5 - op["V(r)"]) / 4.3e3
    collector = op["@Q1[ic]"]
    assert -op["I(VCC)"] == pytest.approx(reference, rel=1e-12)
    assert collector == pytest.approx(reference / (1 + 5 / 100), rel=1e-6)
    assert op["V(r)"] == pytest.approx(vt * math.log(collector / 1e-15), rel=1e-6)
    # to gmin's 1e-12 S across x2's base-collector junctions, 1.29 V reverse there
    assert op["@X2.Q1[ic]"] == pytest.approx(4 * collector, rel=1e-8)
    assert -op["I(Vout)"] == pytest.approx(op["@X2.Q1[ic]"], rel=1e-12)
    assert op["@X2.Q1[ib]"] == pytest.approx(4 * collector / 100, rel=1e-6)
    # the header's figures
    assert op["V(r)"] == pytest.approx(0.713332, abs=1e-6)
    assert op["@X2.Q1[ic]"] == pytest.approx(0.0037977, rel=1e-4)


@pytest.mark.ngspice
def test_the_current_mirror_example_matches_ngspice(ngspice):
    text = (NETLISTS / "current_mirror.net").read_text().replace(
        ".save V(r) I(VCC) I(Vout) @q1[ic] @q1[ib] @x2.q1[ic] @x2.q1[ib]",
        ".save V(r) I(VCC) I(Vout) @q1[ic] @q1[ib]\n.options reltol=1e-9 abstol=1e-15 "
        "vntol=1e-12")
    ours = mna.operating_point(mna.read_string(text))
    theirs = ngspice.run(text)["op"].data.iloc[0]
    for name, their in (("V(r)", "V(r)"), ("I(VCC)", "I(vcc)"), ("I(Vout)", "I(vout)"),
                        ("@Q1[ic]", "I(@q1[ic])"), ("@Q1[ib]", "I(@q1[ib])")):
        assert ours[name] == pytest.approx(theirs[their], rel=1e-7, abs=1e-11), name
