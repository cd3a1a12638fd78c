""".meas, .four and .pz against ngspice 39's printed results, and against closed forms."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import mna
from mna.cli import main

MEASURED = """measurements on an RC driven by a pulse
V1 in 0 PULSE(0 1 0.1m 1u 1u 1m 2m)
R1 in out 1k
C1 out 0 1u
.tran 10u 3m
.meas tran tcross WHEN V(out)=0.5 RISE=1
.meas tran vfind FIND V(out) AT=1m
.meas tran vmax MAX V(out)
.meas tran vpp PP V(out)
.meas tran vrms RMS V(out) FROM=0 TO=2m
.meas tran delay TRIG V(in) VAL=0.5 RISE=1 TARG V(out) VAL=0.5 RISE=1
.meas tran vwhen FIND V(in) WHEN V(out)=0.3 FALL=1
.meas tran tlast WHEN V(out)=0.2 CROSS=LAST
"""


def printed(stdout: str) -> dict[str, float]:
    """ngspice's ``name = value`` lines of .meas."""
    return {m[1]: float(m[2]) for m in re.finditer(r"^(\w+)\s+=\s+(\S+)", stdout, re.M)}


def measured(text: str) -> mna.Result:
    return mna.run(mna.read_string(text))[-1]


@pytest.mark.ngspice
def test_measurements_agree_with_ngspice(ngspice):
    ours = measured(MEASURED)
    theirs = printed(ngspice.printout(MEASURED))
    assert ours.kind == "meas"
    for name in ("tcross", "vfind", "vmax", "vpp", "vrms", "delay", "vwhen", "tlast"):
        assert ours[name] == pytest.approx(theirs[name], rel=1e-3, abs=1e-9), name


@pytest.mark.ngspice
def test_a_terminal_current_is_measured_as_ngspice_measures_it(ngspice):
    text = ("collector current\nVCC c 0 DC 5\nVB b 0 DC 0.7 SIN(0.7 0.01 1k)\nQ1 c b 0 qn\n"
            ".model qn NPN(IS=1e-15 BF=100)\n.options reltol=1e-6\n.tran 10u 2m\n"
            ".print tran @q1[ic]\n.meas tran icmax MAX @q1[ic]\n"
            ".meas tran icavg AVG @q1[ic] FROM=1m TO=2m\n")
    ours = measured(text)
    theirs = printed(ngspice.printout(text))
    for name in ("icmax", "icavg"):
        assert ours[name] == pytest.approx(theirs[name], rel=1e-4, abs=0), name
    assert ours["icmax"] > 1.4 * ours["icavg"]   # the swing moves it


def test_measurements_against_the_closed_form():
    """The RC's rise from 0.1 ms: 1 - exp(-(t - 0.1m)/1m) crosses 0.5 at 0.1m + ln 2 ms."""
    ours = measured(MEASURED)
    assert ours["tcross"] == pytest.approx(1e-4 + 1e-6 / 2 + math.log(2) * 1e-3, rel=2e-4)
    assert ours["delay"] == pytest.approx(math.log(2) * 1e-3, rel=2e-4)
    assert ours["vfind"] == pytest.approx(1 - math.exp(-(1e-3 - 1e-4 - 0.5e-6) / 1e-3),
                                          rel=1e-4)
    assert math.isnan(measured(MEASURED + ".meas tran never WHEN V(out)=2\n")["never"])


@pytest.mark.ngspice
def test_trig_and_targ_at_a_given_instant(ngspice):
    """``TRIG AT=x`` against ngspice (whose ``TARG AT=x`` crashes it) and the closed form."""
    text = MEASURED + (".meas tran fromat TRIG AT=0.5m TARG V(out) VAL=0.5 RISE=1\n"
                       ".meas tran toat TRIG V(in) VAL=0.5 RISE=1 TARG AT=2m\n")
    ours = measured(text)
    theirs = printed(ngspice.printout(text.replace(".meas tran toat", "*")))
    assert ours["fromat"] == pytest.approx(theirs["fromat"], rel=1e-3)
    assert ours["fromat"] == pytest.approx(ours["tcross"] - 0.5e-3, rel=1e-12)
    assert ours["toat"] == pytest.approx(2e-3 - (1e-4 + 0.5e-6), rel=1e-9)


FORMS = """ngspice's further .meas forms
.param half=0.5
V1 in 0 PULSE(0 1 0.1m 1u 1u 1m 2m)
R1 in out 1k
C1 out 0 1u
.tran 10u 3m
.meas tran tmax MAX_AT V(out)
.meas tran tmin MIN_AT V(out) FROM=1.5m TO=3m
.meas tran tcross WHEN V(out)=V(in) CROSS=LAST
.meas tran tval TRIG V(in) VAL='half' RISE=1 TARG V(out) VAL={half} RISE=1
.meas tran ratio PARAM='tval / tmax'
.meas tran cut MAX V(out) FROM=2m TO=7m
.meas tran cutrms RMS V(out) FROM=2m TO=7m
.meas tran cutinteg INTEG V(out) FROM=-1 TO=1m
.meas tran named WHEN V(out)=half RISE=1
.meas tran prod FIND par('V(in)*V(out)') AT=1m
"""


@pytest.mark.ngspice
def test_where_extremes_are_two_outputs_cross_parameters_and_windows_cut_to_the_run(ngspice):
    """MIN_AT/MAX_AT, ``WHEN V(a)=V(b)``, values that read parameters, PARAM= of earlier
    measurements, and a window past the run's end or before its start cut to the run."""
    ours = measured(FORMS)
    theirs = printed(ngspice.printout(FORMS))
    for name in ("tmax", "tmin", "tcross", "tval", "ratio", "cut", "cutrms", "cutinteg",
                 "named", "prod"):
        assert ours[name] == pytest.approx(theirs[name], rel=1e-3), name
    assert ours["ratio"] == ours["tval"] / ours["tmax"]
    assert ours["tval"] == pytest.approx(math.log(2) * 1e-3, rel=2e-4)
    with pytest.raises(mna.NetlistError, match="'later' is neither a parameter nor a meas"):
        mna.read_string(FORMS + ".meas tran early PARAM='later + 1'\n"
                        ".meas tran later MAX V(out)\n")


def test_measurements_are_written_to_meas_csv(tmp_path):
    netlist = tmp_path / "m.net"
    netlist.write_text(MEASURED)
    assert main(["run", "-q", str(netlist), "-o", str(tmp_path / "out")]) == 0
    table = (tmp_path / "out" / "meas.csv").read_text().splitlines()
    assert table[0] == "name,value,unit" and table[1].startswith("tcross,0.00079")
    assert table[1].endswith(",s")


def test_a_measurement_of_a_missing_analysis_is_located():
    with pytest.raises(mna.NetlistError, match=r"\.meas x: the netlist has no \.ac") as info:
        mna.run(mna.read_string(MEASURED + ".meas ac x MAX V(out)\n"))
    assert info.value.location.line == 14


FOURIER = """Fourier analysis of a clipped sine
V1 in 0 SIN(0 1 1k)
R1 in out 1k
D1 out 0 dm
D2 0 out dm
.model dm D(IS=1e-14)
.tran 1u 5m 0 1u
.four 1k V(out)
"""


@pytest.mark.ngspice
def test_fourier_agrees_with_ngspice(ngspice):
    ours = measured(FOURIER)
    table = ngspice.printout(FOURIER)
    rows = re.findall(r"^\s*(\d)\s+(\S+)\s+(\S+)\s+(\S+)\s", table, re.M)
    for harmonic, _, magnitude, _ in rows[1:]:
        expected = float(magnitude)
        if expected > 1e-6:     # the even harmonics are round-off in both
            assert ours[f"V(out):h{harmonic}"] == pytest.approx(expected, rel=1e-3)
    thd = float(re.search(r"THD: (\S+) %", table)[1])
    assert ours["V(out):thd"] == pytest.approx(thd, rel=1e-3)


def test_fourier_of_a_pure_sine():
    """Exact to round-off where the points lie on the Fourier grid (fixed steps of 1 us)."""
    ours = measured("sine\nV1 a 0 SIN(0.5 2 1k 0 0 30)\nR1 a 0 1\n.tran 10u 3m 0 1u\n"
                    ".options stepcontrol=fixed\n.four 1k V(a)\n")
    assert ours["V(a):dc"] == pytest.approx(0.5, abs=1e-9)
    assert ours["V(a):h1"] == pytest.approx(2.0, rel=1e-9)
    assert ours["V(a):h1 phase"] == pytest.approx(30.0, abs=1e-6)
    assert ours["V(a):thd"] < 1e-9


BANDPASS = """pole-zero: RLC band-pass
V1 in 0 DC 0 AC 1
R1 in a 100
L1 a b 10m
C1 b out 1u
R2 out 0 1k
C2 out 0 100n
.pz in 0 out 0 vol pz
"""


@pytest.mark.ngspice
def test_poles_and_zeros_agree_with_ngspice(ngspice):
    (ours,) = mna.run(mna.read_string(BANDPASS))
    stdout = ngspice.printout(BANDPASS + ".print pz all\n")
    values = [complex(float(re_), float(im)) for re_, im in
              re.findall(r"(-?[\d.]+e[+-]\d+),\s+(-?[\d.]+e[+-]\d+)", stdout)]
    theirs = np.sort_complex(np.array(values))
    mine = np.sort_complex(ours["re"] + 1j * ours["im"])
    assert len(mine) == len(theirs) == 4
    assert np.allclose(mine, theirs, rtol=1e-5, atol=1e-6)   # ngspice prints 6 digits


def test_poles_of_a_current_driven_rc_are_its_time_constants():
    (result,) = mna.run(mna.read_string("rc\nR1 a 0 1k\nC1 a 0 1u\nR2 a b 1k\nC2 b 0 1u\n"
                                        ".pz a 0 b 0 cur pol\n.print pz all\n"))
    # G = [[2, -1], [-1, 1]] mS, C = 1 uF each: poles at -1000 (3 -+ sqrt 5) / 2 (ngspice's
    # .print pz all asks for what the .pz result holds anyway)
    assert list(result["kind"]) == ["pole", "pole"]
    assert np.allclose(np.sort(result["re"]), -1000 * np.array([3 + 5**0.5, 3 - 5**0.5]) / 2)


@pytest.mark.parametrize("nodes, gain, zeros", [("out 0", 1e3, []), ("0 out", -1e3, []),
                                                 ("out in", -1.0, [0.0])])
def test_the_gain_keeps_the_sign_of_the_output_nodes(nodes, gain, zeros):
    """V(out)/V1 of an RC low-pass is 1000 / (s + 1000); its negative with the output nodes
    swapped (the gain of an output from ground once lost its sign); across R, -s/(s + 1000)."""
    (result,) = mna.run(mna.read_string("rc\nV1 in 0 DC 0 AC 1\nR1 in out 1k\nC1 out 0 1u\n"
                                        f".pz in 0 {nodes} vol pz\n"))
    assert result.gain == pytest.approx(gain, rel=1e-12)
    assert list(result["re"][result["kind"] == "zero"]) == zeros


def test_mean_and_rms_of_a_single_point_are_its_value_and_magnitude():
    result = measured("one point\nV1 a 0 1\nR1 a 0 1k\n.dc V1 2 2 1\n"
                      ".meas dc m AVG I(V1)\n.meas dc r RMS I(V1)\n")
    assert result["m"] == pytest.approx(-2e-3, rel=1e-12)     # I(V1) = -V/R = -2 mA
    assert result["r"] == pytest.approx(2e-3, rel=1e-12)


def test_a_derivative_on_a_single_point_is_undefined_and_from_after_to_is_refused():
    text = "one point\nV1 a 0 1\nR1 a 0 1k\n.dc V1 2 2 1\n"
    assert math.isnan(measured(text + ".meas dc d DERIV I(V1) AT=2\n")["d"])
    with pytest.raises(mna.NetlistError, match="FROM=3 lies after TO=1") as info:
        mna.read_string(text + ".meas dc x MAX I(V1) FROM=3 TO=1\n")
    assert info.value.location.line == 5


@pytest.mark.parametrize("card", ["FIND V(b) AT=1", "FIND V(b) AT=-1", "DERIV V(b) AT=6m",
                                  "AVG V(b) FROM=10 TO=20", "MAX V(b) FROM=-2 TO=-1"])
def test_a_point_or_window_outside_the_run_finds_nothing(card, caplog):
    # ngspice fails such a measurement; holding the last value would be a made-up number
    text = ("rc\nV1 a 0 PULSE(0 1 0 1n 1n 1 2)\nR1 a b 1k\nC1 b 0 1u\n.tran 10u 5m\n"
            f".meas tran m {card}\n.meas tran inside FIND V(b) AT=5m\n")
    result = measured(text)
    assert math.isnan(result["m"]) and "found nothing" in caplog.text
    assert result["inside"] == pytest.approx(1 - math.exp(-5), rel=1e-3)


def test_a_param_of_a_measurement_that_found_nothing_finds_nothing(caplog):
    # it stopped the run: "nan / 0.693 overflows"
    result = measured("rc\nV1 a 0 PULSE(0 1 0 1u 1u 1 2)\nR1 a b 1k\nC1 b 0 1u\n"
                      ".tran 10u 1m\n.meas tran t50 WHEN V(b)=2\n"
                      ".meas tran tau PARAM='t50/0.693'\n.meas tran t10 WHEN V(b)=0.1\n")
    assert math.isnan(result["t50"]) and math.isnan(result["tau"])
    assert "tau reads t50, which found nothing" in caplog.text
    assert result["t10"] == pytest.approx(1e-3 * math.log(1 / 0.9), rel=2e-2)


def test_measurements_of_a_sweep_that_runs_down():
    result = measured("down\nV1 a 0 1\nR1 a 0 1\n.dc V1 5 0 -1\n.meas dc top MAX V(a)\n"
                      ".meas dc mean AVG V(a)\n.meas dc at2 FIND V(a) AT=2\n"
                      ".meas dc slope DERIV V(a) AT=3\n.meas dc past FIND V(a) AT=7\n")
    assert (result["top"], result["mean"], result["at2"]) == pytest.approx((5.0, 2.5, 2.0))
    assert result["slope"] == pytest.approx(1.0) and math.isnan(result["past"])


@pytest.mark.parametrize("count", ["0", "-1", "1.5"])
def test_a_crossing_count_is_a_whole_number_from_1(count):
    with pytest.raises(mna.NetlistError, match="rise= must be a whole number"):
        mna.read_string(f"t\nV1 a 0 SIN(0 1 1k)\nR1 a 0 1\n.tran 10u 5m\n"
                        f".meas tran w WHEN V(a)=0.5 RISE={count}\n")


def test_measurements_of_minus_infinite_decibels_stay_quiet():
    result = measured("t\nV1 a 0 PULSE(0 1 1m 1u 1u 1m 2m)\nR1 a 0 1k\nV2 q 0 0\n"
                      ".tran 10u 3m\n.meas tran top MAX VDB(q)\n.meas tran swing PP VDB(q)\n")
    assert result["top"] == -math.inf and math.isnan(result["swing"])


@pytest.mark.ngspice
def test_ac_measurements_of_a_plain_probe_take_its_real_part_as_ngspice(ngspice):
    text = ("rc\nV1 in 0 DC 0 AC 1\nR1 in out 1k\nC1 out 0 1u\n.ac dec 100 10 10k\n"
            ".meas ac f3 WHEN V(out)=0.70710678\n.meas ac f3m WHEN VM(out)=0.70710678\n"
            ".meas ac low MIN V(out)\n")
    ours, theirs = measured(text), printed(ngspice.printout(text))
    for name in ("f3", "f3m", "low"):
        assert ours[name] == pytest.approx(theirs[name], rel=1e-4), name
    tau = 1e-3    # Re H = 1 / (1 + (w tau)^2) and |H| = 1 / sqrt(1 + (w tau)^2)
    assert ours["f3"] == pytest.approx(math.sqrt(math.sqrt(2) - 1) / (2 * math.pi * tau),
                                       rel=1e-3)
    assert ours["f3m"] == pytest.approx(1 / (2 * math.pi * tau), rel=1e-3)
