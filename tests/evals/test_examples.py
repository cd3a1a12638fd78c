"""The example scripts run and print what their systems predict."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, monkeypatch, tmp_path, *args: str) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", [name, *args])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")


def test_motor_spin_up_reaches_the_operating_point(monkeypatch, tmp_path, capsys):
    run_example("motor_spin_up.py", monkeypatch, tmp_path, "spin.png")
    out = capsys.readouterr().out
    # the header of netlists/dc_motor.net: 400 rad/s at steady state, a ~23.5 A current peak
    assert "steady speed 400.0 rad/s, peak current 23.5 A" in out
    assert (tmp_path / "spin.png").stat().st_size > 10_000


def test_motor_pump_model_has_the_tutorial_pole(monkeypatch, tmp_path, capsys):
    run_example("motor_pump_state_space.py", monkeypatch, tmp_path)
    out = capsys.readouterr().out
    # netlists/ss_motor_pump.net: tau_k' = -20.374 tau_k + 2.4948 Vs; flow = tau_k/(D Rf)
    assert "poles [-20.37422037]" in out
    gain = 2.4948 / 20.374 / (0.5 * 6)
    assert f"DC gain {gain:.4g}" in out


def test_diode_curve_prints_a_forward_knee(monkeypatch, tmp_path, capsys):
    run_example("diode_curve.py", monkeypatch, tmp_path)
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    volts = {float(r[0]): (float(r[1]), float(r[2])) for r in rows}
    # below the knee almost all of V1 stands across the diode; above it ~0.8 V does
    assert volts[0.25][0] == pytest.approx(0.25, abs=1e-3)
    assert 0.75 < volts[2.0][0] < 0.9
    assert volts[2.0][1] == pytest.approx((2.0 - volts[2.0][0]) / 10 * 1e3, rel=1e-6)


def test_jfet_noise_finds_the_corner_its_netlist_derives(monkeypatch, tmp_path, capsys):
    run_example("jfet_noise.py", monkeypatch, tmp_path, "noise.png")
    out = capsys.readouterr().out
    # netlists/jfet_preamp.net: gain -gm RD, the 1/f corner KF Id / (4kT/RD + (8/3) kT gm)
    # = 3.934 kHz, white noise RD sqrt(4kT/RD + (8/3) kT gm) / 10 = 2.52 nV/sqrt(Hz)
    assert "gain -10 V/V" in out and "output 5000 Ohm" in out
    assert "1/f corner 3.93e+03 Hz" in out
    assert "white input noise 2.52 nV/sqrt(Hz)" in out
    assert (tmp_path / "noise.png").stat().st_size > 10_000
