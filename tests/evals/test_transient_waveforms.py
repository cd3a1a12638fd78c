"""Source waveforms (PULSE, SIN, EXP, PWL, SFFM, AM, {expr}) against ngspice's own evaluation
and by hand, their breakpoints, and the CLI's --method / --plot on a transient."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mna
from mna.cli import main

TSTEP, TSTOP = 10e-6, 6e-3
DECK = """waveforms into resistors
V1 a 0 PULSE(0 1 1m)
V2 b 0 PULSE(-1 2 0.5m 0.2m 0.3m 1m 3m)
V3 c 0 SIN(0.5 2 1k 1m 100 30)
V4 d 0 EXP(0 1 1m 0.5m 4m 1m)
V5 e 0 PWL(0 0 1m 1 2m 1 3m -1)
V6 f 0 EXP(1 -1)
V7 g 0 PULSE(0 1)
V8 h 0 SIN(0 1)
V9 k 0 PULSE(0 1 0.1m 0.5m 0.5m 1m 1.2m)
R1 a 0 1k
R2 b 0 1k
R3 c 0 1k
R4 d 0 1k
R5 e 0 1k
R6 f 0 1k
R7 g 0 1k
R8 h 0 1k
R9 k 0 1k
.tran 10u 6m
.end
"""


def _waveforms():
    system = mna.assemble(mna.read_string(DECK))
    return {s.name.lower(): s.waveform for s in system.inputs}


@pytest.mark.ngspice
def test_waveforms_match_ngspice_at_its_time_points(ngspice):
    reference = ngspice.run(DECK)["tran"].data
    t = reference["time"].to_numpy()
    # V6: EXP with every timing default (td1 = tau = tstep, td2 = td1 + tstep); V8: SIN with
    # no frequency (1/tstop); V9: a period shorter than tr + pw + tf cuts the pulse short
    for name, node in zip("123456789", "abcdefghk", strict=True):
        ours = _waveforms()[f"v{name}"].values(t, TSTEP, TSTOP)
        theirs = reference[f"V({node})"].to_numpy()
        assert np.max(np.abs(ours - theirs)) < 1e-9, f"V{name}"


MODULATED = """SFFM and AM into resistors
V1 a 0 SFFM(0.5 1 10k 5 1k)
V2 b 0 SFFM(0.5 1)
V3 c 0 AM(1 0.5 1k 20k 0.1m)
V4 d 0 AM(2 1 500 5k)
R1 a 0 1k
R2 b 0 1k
R3 c 0 1k
R4 d 0 1k
.tran 1u 2m
"""


@pytest.mark.ngspice
def test_modulated_waveforms_match_ngspice_and_their_formulas(ngspice):
    reference = ngspice.run(MODULATED)["tran"].data
    t = reference["time"].to_numpy().real
    waves = {s.name.lower(): s.waveform for s in mna.assemble(mna.read_string(MODULATED)).inputs}
    for name, node in zip("1234", "abcd", strict=True):
        ours = waves[f"v{name}"].values(t, 1e-6, 2e-3)
        assert np.max(np.abs(ours - reference[f"V({node})"].to_numpy().real)) < 1e-9, name
    # SFFM defaults: fc = fs = 1/tstop, mdi = 0; AM is 0 before its delay
    assert np.allclose(waves["v1"].values(t, 1e-6, 2e-3), 0.5 + np.sin(
        2 * np.pi * 10e3 * t + 5 * np.sin(2 * np.pi * 1e3 * t)), atol=1e-12)
    assert np.allclose(waves["v2"].values(t, 1e-6, 2e-3), 0.5 + np.sin(2 * np.pi * 500 * t),
                       atol=1e-12)
    late = t - 0.1e-3
    assert np.allclose(waves["v3"].values(t, 1e-6, 2e-3), np.where(late < 0, 0.0, (
        0.5 + np.sin(2 * np.pi * 1e3 * late)) * np.sin(2 * np.pi * 20e3 * late)), atol=1e-12)
    (result,) = mna.run(mna.read_string(MODULATED))
    assert 0.1e-3 in result["time"]   # AM's delay is a breakpoint


def test_pulse_defaults_follow_ngspice():
    """PULSE(v1 v2): td = 0, tr = tf = tstep, pw = per = tstop."""
    wave = _waveforms()["v7"]
    t = np.array([0.0, TSTEP / 2, TSTEP, 3e-3, TSTOP])
    assert np.allclose(wave.values(t, TSTEP, TSTOP), [0.0, 0.5, 1.0, 1.0, 1.0])
    assert wave.at(0.0) == 0.0


def test_defaults_that_follow_ngspice_not_its_manual():
    """ngspice's source code, not its manual: EXP's td1 = 0 means tstep; SIN without a
    frequency runs at 1/tstop; a PULSE period shorter than tr + pw + tf is kept and cuts the
    pulse short (its corners after the period's end are no breakpoints)."""
    waves = _waveforms()
    t = np.array([TSTEP / 2, 2 * TSTEP, 3 * TSTEP])
    rise = 1 - np.exp(-(t - TSTEP).clip(0) / TSTEP)
    fall = 1 - np.exp(-(t - 2 * TSTEP).clip(0) / TSTEP)
    assert np.allclose(waves["v6"].values(t, TSTEP, TSTOP), 1 - 2 * rise + 2 * fall)
    assert np.allclose(waves["v8"].values(np.array([TSTOP / 4]), TSTEP, TSTOP), [1.0])
    pulse = waves["v9"]     # 0 -> 1, td 0.1m, tr = tf = 0.5m, pw 1m, per 1.2m: cut while high
    t = np.array([1.3e-3, 1.35e-3, 1.6e-3, 2.55e-3])
    assert np.allclose(pulse.values(t, TSTEP, TSTOP), [1.0, 0.1, 0.6, 0.1])
    corners = pulse.breakpoints(TSTEP, TSTOP)
    assert np.allclose(corners[:5], [0.1e-3, 0.6e-3, 1.3e-3, 1.8e-3, 2.5e-3])


def test_pulse_shape_and_breakpoints():
    wave = _waveforms()["v2"]    # -1 -> 2, td 0.5m, tr 0.2m, tf 0.3m, pw 1m, per 3m
    t = np.array([0.0, 0.5e-3, 0.6e-3, 0.7e-3, 1.7e-3, 1.85e-3, 2.0e-3, 3.6e-3])
    assert np.allclose(wave.values(t, TSTEP, TSTOP), [-1, -1, 0.5, 2, 2, 0.5, -1, 0.5])
    corners = wave.breakpoints(TSTEP, TSTOP)
    for expected in (0.5e-3, 0.7e-3, 1.7e-3, 2.0e-3, 3.5e-3, 3.7e-3, 4.7e-3, 5.0e-3):
        assert np.min(np.abs(corners - expected)) < 1e-15
    assert corners.max() <= TSTOP


def test_sin_exp_pwl_by_hand():
    waves = _waveforms()
    t = np.array([0.5e-3, 1.5e-3, 4.5e-3])
    sine = 0.5 + np.where(t < 1e-3, 2 * np.sin(np.deg2rad(30)),
                          2 * np.exp(-100 * (t - 1e-3))
                          * np.sin(2 * np.pi * 1e3 * (t - 1e-3) + np.deg2rad(30)))
    assert np.allclose(waves["v3"].values(t, TSTEP, TSTOP), sine)
    rise = 1 - np.exp(-(t - 1e-3).clip(0) / 0.5e-3)
    fall = -(1 - np.exp(-(t - 4e-3).clip(0) / 1e-3))
    assert np.allclose(waves["v4"].values(t, TSTEP, TSTOP), rise + fall)
    assert np.allclose(waves["v5"].values(np.array([0.5e-3, 2.5e-3, 5e-3]), TSTEP, TSTOP),
                       [0.5, 0.0, -1.0])
    assert np.allclose(waves["v5"].breakpoints(TSTEP, TSTOP), [1e-3, 2e-3, 3e-3])
    assert np.allclose(waves["v4"].breakpoints(TSTEP, TSTOP), [1e-3, 4e-3])


def test_cut_short_pulse_has_a_value_before_and_after_each_period_end():
    """PULSE(0 1 0 1u 1u 10u 5u) is cut while high at every period end: from the left 1,
    from the right 0 (the next rise starts), whatever the round-off of k * per; the first
    period's end keeps its value, as ngspice (which wraps only a time beyond a period)."""
    wave = mna.assemble(mna.read_string("p\nV1 a 0 PULSE(0 1 0 1u 1u 10u 5u)\nR1 a 0 1\n"
                                        ".tran 0.1u 40u\n")).inputs[0].waveform
    ends = 5e-6 * np.arange(1, 8)
    assert np.array_equal(wave.values(ends, 1e-7, 40e-6), [1, 0, 0, 0, 0, 0, 0])
    assert np.array_equal(wave.values(ends, 1e-7, 40e-6, before=True), [1] * 7)


def test_pwl_jump_has_a_value_before_and_after():
    wave = mna.assemble(mna.read_string("j\nV1 a 0 PWL(0 0 1m 0 1m 2 3m 0)\nR1 a 0 1\n"
                                        ".tran 1u 4m\n")).inputs[0].waveform
    t = np.array([0.5e-3, 1e-3, 2e-3, 4e-3])
    assert np.allclose(wave.values(t, TSTEP, TSTOP), [0, 2, 1, 0])
    assert np.allclose(wave.values(t, TSTEP, TSTOP, before=True), [0, 0, 1, 0])


def test_expression_of_time_drives_a_transient():
    circuit = mna.read_string("expr\n.param f0=50\nV1 a 0 {sin(2*pi*f0*time)}\nR1 a 0 1k\n"
                              ".tran 0.1m 40m\n")
    frame = mna.run(circuit)[0].to_dataframe()
    t = frame.index.to_numpy()
    assert np.max(np.abs(frame["V(a)"] - np.sin(2 * np.pi * 50 * t))) < 1e-12


@pytest.mark.parametrize("method", ["be", "gear2"])
def test_cli_method_and_plot(tmp_path, method, capsys):
    netlist = tmp_path / "rc.net"
    netlist.write_text("rc\nV1 in 0 PULSE(0 1 0 1u 1u 1 2)\nR1 in out 1k\nC1 out 0 1u\n"
                       ".tran 10u 3m\n")
    status = main(["run", str(netlist), "-o", str(tmp_path / "out"), "--plot",
                   "--method", method])
    assert status == 0
    assert (tmp_path / "out" / "tran.csv").read_text().startswith("time,")
    png = (tmp_path / "out" / "tran.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert re.search(r"TRAN: \d+ points", capsys.readouterr().out)


@pytest.mark.parametrize("times", ["0 0 1m 1 0.5m 3 2m 0", "0 0 {t1} 1 0.5m 3"])
def test_pwl_times_that_go_backwards_are_an_error(times):
    text = f"back\n.param t1=1m\nV1 a 0 PWL({times})\nR1 a 0 1k\n.tran 10u 3m\n"
    with pytest.raises(mna.NetlistError, match=r"PWL times must not decrease: t3 = 0.0005 comes "
                                                r"after t2 = 0.001") as error:
        mna.run(mna.read_string(text))
    assert error.value.location.line == 3


def test_an_axis_of_many_outputs_says_how_many_instead_of_a_legend(tmp_path):
    """2001 node voltages in one axis: a legend of them covered the figure, broke its layout
    (a matplotlib warning) and took most of a minute to place; the axis says how many it
    draws instead, while the current's axis keeps its legend."""
    from matplotlib.figure import Figure

    from mna.plots import MAX_LEGEND, _legend, plot_table

    lines = ["ladder", "V1 n0 0 PULSE(0 1 0 1n 1n 1 2)"]
    for k in range(1, 2001):
        lines += [f"R{k} n{k - 1} n{k} 100", f"C{k} n{k} 0 1p"]
    (result,) = mna.run(mna.read_string("\n".join(lines) + "\n.tran 1n 20n\n"))
    path = tmp_path / "tran.png"
    plot_table(result, path)   # warnings are errors in the tests
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    axes = Figure().subplots(1, 2)
    for axis, count in zip(axes, (MAX_LEGEND, MAX_LEGEND + 1), strict=True):
        for k in range(count):
            axis.plot([0, 1], [k, k], label=f"V({k})")
        _legend(axis, count, "outputs")
    assert axes[0].get_legend() is not None and not axes[0].texts
    assert axes[1].get_legend() is None
    assert [text.get_text() for text in axes[1].texts] == [f"{MAX_LEGEND + 1} outputs"]
