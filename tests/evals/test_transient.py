"""Transient analysis of whole netlists against closed-form solutions and ngspice.

Tolerances are stated per test: the trapezoidal rule's global error at the netlists' steps is
far below them (it is measured in tests/unit/analysis/test_integrators.py).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.linalg

import mna
from mna.analysis.transient import TransientResult
from mna.netlist.requests import Transient

NETLISTS = Path(__file__).resolve().parents[2] / "netlists"
# test-only netlists live in tests/data: netlists/ holds the documented examples, each with
# hand-derived operating-point values (tests/evals/test_op_netlists.py)
DATA = Path(__file__).resolve().parents[1] / "data"


def transient(circuit, index: int = 0) -> TransientResult:
    return mna.perform([a for a in circuit.analyses if isinstance(a, Transient)][index], circuit)


def without(text: str, *cards: str) -> str:
    pattern = re.compile(r"^\s*(" + "|".join(re.escape(c) for c in cards) + r")\b", re.I)
    return "\n".join("*" if pattern.match(line) else line for line in text.splitlines()) + "\n"


def step_response(A, b, t, x0=None):
    """x(t) of x' = A x + b (constant b) from x0: x_ss + e^{At} (x0 - x_ss)."""
    x_ss = -np.linalg.solve(A, b)
    x0 = np.zeros(len(b)) if x0 is None else x0
    return np.array([x_ss + scipy.linalg.expm(A * s) @ (x0 - x_ss) for s in t])


def test_series_rlc_step_response(read_netlist):
    frame = transient(read_netlist(DATA / "tran_series_rlc.net")).to_dataframe()
    t = frame.index.to_numpy()
    R, L, C = 10.0, 1e-3, 1e-6
    alpha, w0 = R / (2 * L), 1 / np.sqrt(L * C)
    wd = np.sqrt(w0**2 - alpha**2)
    v = 1 - np.exp(-alpha * t) * (np.cos(wd * t) + alpha / wd * np.sin(wd * t))
    i = np.exp(-alpha * t) * np.sin(wd * t) / (wd * L)
    # h = 0.5 us: TR's phase error ~ (wd h)^2 / 12 per radian, ~3e-4 of the 1 V swing
    assert np.max(np.abs(frame["V(out)"] - v)) < 2e-3
    assert np.max(np.abs(frame["I(L1)"] - i)) < 2e-3 * np.max(np.abs(i))


@pytest.mark.skipif(not mna.linalg.klu_available(), reason="no KLU library")
def test_both_solvers_give_the_same_steps(monkeypatch):
    text = (DATA / "tran_series_rlc.net").read_text()
    klu = transient(mna.read_string(text)).to_dataframe()

    def refused(*args):
        raise AssertionError("solver=superlu must not reach KLU")

    monkeypatch.setattr(mna.fast.klu.Numeric, "__init__", refused)
    superlu = transient(mna.read_string(text.replace("\n.end", "\n.options solver=superlu\n.end"))
                        ).to_dataframe()
    assert np.max(np.abs(klu.to_numpy() - superlu.to_numpy())) < 1e-12


@pytest.mark.skipif(not mna.linalg.klu_available(), reason="no KLU library")
def test_a_long_ladder_steps_the_same_in_nested_dissection_order():
    """From `DISSECTION_MIN` unknowns the steps' factors may take a nested dissection order
    (ordering=auto decides by the fill): the waveforms are KLU's own order's to round-off."""
    sections = 1200
    lines = ["ladder", "V1 n0 0 PULSE(0 1 0 10n 10n 1 2)"]
    for k in range(1, sections + 1):
        lines += [f"R{k} n{k - 1} n{k} 100", f"C{k} n{k} 0 1p"]
    text = "\n".join(lines + [".save V(n5) V(n600) I(V1)", ".tran 1n 200n 0 1n", ""])
    frames = [transient(mna.read_string(text + f".options ordering={ordering}\n")).to_dataframe()
              for ordering in ("amd", "dissection", "auto")]
    for frame in frames[1:]:
        assert np.max(np.abs(frame.to_numpy() - frames[0].to_numpy())) < 1e-12


def test_mass_spring_damper_closed_form(read_netlist):
    frame = transient(read_netlist("translational_msd.net")).to_dataframe()
    t = frame.index.to_numpy()
    F, m, k, b = 10.0, 2.0, 200.0, 4.0
    wn, zeta = np.sqrt(k / m), b / (2 * np.sqrt(k * m))
    wd = wn * np.sqrt(1 - zeta**2)
    v = F / (m * wd) * np.exp(-zeta * wn * t) * np.sin(wd * t)
    assert frame.attrs["units"]["V(x)"] == "m/s" and frame.attrs["units"]["I(Lk)"] == "N"
    assert np.max(np.abs(frame["V(x)"] - v)) < 1e-4            # peak 0.43 m/s
    spring = F * (1 - np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta * wn / wd * np.sin(wd * t)))
    assert np.max(np.abs(frame["I(Lk)"] - spring)) < 1e-3       # -> 10 N


def test_rotational_shaft_closed_form(read_netlist):
    frame = transient(read_netlist("rotational_shaft.net")).to_dataframe()
    Tq, J1, J2, b1, b2, k = 5.0, 0.01, 0.05, 0.02, 0.08, 50.0
    # states w1, w2, shaft torque tau: J1 w1' = Tq - b1 w1 - tau, J2 w2' = tau - b2 w2,
    # tau' = k (w1 - w2)
    A = np.array([[-b1 / J1, 0, -1 / J1], [0, -b2 / J2, 1 / J2], [k, -k, 0]])
    b = np.array([Tq / J1, 0, 0])
    t = frame.index.to_numpy()[::40]
    x = step_response(A, b, t)
    got = frame[["V(w1)", "V(w2)", "I(Lshaft)"]].to_numpy()[::40]
    assert np.max(np.abs(got - x)) < 2e-3 * 50                 # 0.2% of the 50 rad/s swing
    assert abs(frame["V(w2)"].iloc[-1] - 50) < 0.5


def test_thermal_wall_closed_form(read_netlist):
    frame = transient(read_netlist("thermal_wall.net")).to_dataframe()
    q, Tamb, A_ = 500.0, 293.15, 10.0
    Rb, Ri, Rc = 0.2 / (1.0 * A_), 0.05 / (0.05 * A_), 1 / (25 * A_)
    Cb, Cs = 1800 * 840 * 0.2 * A_, 30 * 1400 * 0.05 * A_
    c = np.array([Cb / 2, Cb / 2 + Cs / 2, Cs / 2])
    A = np.array([[-1 / Rb, 1 / Rb, 0], [1 / Rb, -1 / Rb - 1 / Ri, 1 / Ri],
                  [0, 1 / Ri, -1 / Ri - 1 / Rc]]) / c[:, None]
    b = np.array([q, 0, Tamb / Rc]) / c
    t = frame.index.to_numpy()[::100]
    x = step_response(A, b, t, x0=np.full(3, Tamb))
    got = frame[["V(in)", "V(mid)", "V(out)"]].to_numpy()[::100]
    assert frame.attrs["units"]["V(in)"] == "K"
    assert np.max(np.abs(got - x)) < 0.01                      # K, on a 62 K rise
    at = frame.index.get_indexer([3.31e5], method="nearest")[0]
    assert abs(frame["V(in)"].iloc[at] - 333.1) < 0.1         # the header's value


def test_free_mass_starts_from_rest_with_a_warning(read_netlist, caplog):
    with caplog.at_level(logging.WARNING, logger="mna"):
        frame = transient(read_netlist(DATA / "tran_free_mass.net")).to_dataframe()
    assert "starts from rest" in caplog.text and "Cm" in caplog.text
    t = frame.index.to_numpy()
    assert np.max(np.abs(frame["V(x)"] - 5 * t)) < 1e-9


def test_initial_conditions_without_uic_hold_in_the_operating_point():
    circuit = mna.read_string("ic\nV1 in 0 0\nR1 in a 1k\nC1 a 0 1u IC=2\nR2 a b 1k\nC2 b 0 1u\n"
                              ".ic V(b)=-1\n.tran 1u 5m\n")
    frame = transient(circuit).to_dataframe()
    assert abs(frame["V(a)"].iloc[0] - 2) < 1e-12 and abs(frame["V(b)"].iloc[0] + 1) < 1e-12
    assert abs(frame["V(a)"].iloc[-1]) < 0.05                  # discharging towards 0


def test_uic_solves_the_algebraic_unknowns_consistently():
    circuit = mna.read_string("uic\nV1 in 0 10\nR1 in a 1k\nR2 a 0 1k\nL1 a b 1m IC=1m\n"
                              "R3 b 0 1k\nC1 b 0 1u IC=3\n.tran 1u 1m uic\n")
    frame = transient(circuit).to_dataframe()
    first = frame.iloc[0]
    assert abs(first["I(L1)"] - 1e-3) < 1e-15 and abs(first["V(b)"] - 3) < 1e-12
    # KCL at a with I(L1) fixed: (10 - a)/1k = a/1k + 1m  ->  a = 4.5 V
    assert abs(first["V(a)"] - 4.5) < 1e-12


def test_uic_takes_ic_node_values_where_no_element_gives_one():
    """.ic under uic: the capacitors start at the .ic node voltages (not at rest), and the
    waveform is the closed form of the two-section RC ladder from there."""
    circuit = mna.read_string("ic\nV1 in 0 1\nR1 in a 1k\nC1 a 0 1u\nR2 a b 1k\nC2 b 0 1u\n"
                              ".ic V(a)=3 V(b)=-1\n.tran 5u 5m uic\n")
    frame = transient(circuit).to_dataframe()
    t = frame.index.to_numpy()
    A = np.array([[-2.0, 1.0], [1.0, -1.0]]) * 1e3
    exact = step_response(A, np.array([1e3, 0.0]), t, x0=np.array([3.0, -1.0]))
    assert np.max(np.abs(frame[["V(a)", "V(b)"]].to_numpy() - exact)) < 1e-4


def test_uic_ic_on_one_node_of_a_floating_capacitor_leaves_the_other_at_rest():
    circuit = mna.read_string("float\nR1 a 0 1k\nC1 a b 1u\nC2 b 0 1u\nR2 b 0 1k\n"
                              ".ic V(a)=2\n.tran 1u 10u uic\n")
    start = transient(circuit).to_dataframe().iloc[0]
    assert start["V(a)"] == pytest.approx(2.0) and start["V(b)"] == pytest.approx(0.0, abs=1e-12)


def test_result_is_indexed_by_time_and_the_file_starts_with_time(tmp_path):
    text = (DATA / "tran_series_rlc.net").read_text().replace(".end", ".options interp\n.end")
    result = transient(mna.read_string(text))
    frame = result.to_dataframe()
    assert frame.index.name == "time" and "time" not in frame.columns
    assert np.allclose(np.diff(frame.index), 0.5e-6, atol=0)   # interp: the tstep grid
    paths = mna.write_results([result], tmp_path)
    assert [p.name for p in paths] == ["tran.csv"]
    written = pd.read_csv(paths[0])
    assert list(written.columns)[0] == "time"
    assert np.allclose(written["V(out)"], frame["V(out)"])


def test_save_chooses_the_outputs():
    circuit = mna.read_string("save\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\n.save V(out) I(C1)\n"
                              ".tran 1u 2m uic\n")
    frame = transient(circuit).to_dataframe()
    assert list(frame.columns) == ["V(out)", "I(C1)"]
    # the capacitor's through variable C dv/dt = (1 - v)/R
    assert np.max(np.abs(frame["I(C1)"].iloc[2:] - (1 - frame["V(out)"].iloc[2:]) / 1e3)) < 1e-6


@pytest.mark.parametrize("name", ["be", "trap", "gear2"])
def test_fixed_step_factors_once(name):
    circuit = mna.read_string(f"rc\nV1 in 0 PULSE(0 1 1m 1u 1u 1m 3m)\nR1 in out 1k\nC1 out 0 1u\n"
                              f".options method={name} stepcontrol=fixed\n.tran 2u 6m\n")
    result = transient(circuit)
    # the trapezoidal rule and Gear-2 restart at t = 0 and after corners on a matrix of their
    # own; Gear-2's first step after a restart is twice as long as the one before it. The
    # rise ends at 1.001 ms, within the restart at 1 ms, whose half step is then backward
    # Euler: on the matrix of the trapezoidal rule's full step, a new one for Gear-2
    assert result.factorizations == {"be": 1, "trap": 2, "gear2": 4}[name]


def test_a_start_off_its_balance_by_round_off_runs_at_a_tight_reltol():
    """uic leaves V(n3) a unit in the last place off V1's 3.84 V. Zeroing that imbalance
    as the start's rate (the row holds no charge) moved the first step's point by it, which
    the error estimate at reltol 2e-10 read as a jump at every step size: the run stopped
    at 9e-15 s. V(n3) stays V1's within round-off."""
    frame = transient(mna.read_string(
        "rlc\nL1 n1 0 0.000811479 IC=0\nR1 n2 0 1139.47\nR3 n4 n3 18.4283\n"
        "C1 n3 n4 2.54227e-06\nC2 n2 n1 1.2239e-09\nR4 n4 n2 539.152\nV1 n3 0 DC 3.84\n"
        "C3 n3 0 1.98204e-07 IC=1.425\n.options reltol=2e-10\n"
        ".tran 4.28e-06 0.000214 uic\n")).to_dataframe()
    assert frame.index[-1] == pytest.approx(0.000214, rel=1e-12)
    assert np.max(np.abs(frame["V(n3)"] - 3.84)) < 1e-14


def test_a_nodeset_of_the_reference_is_ignored():
    # V(0) is no unknown: a ValueError in the operating point and the transient's start
    text = "d\nV1 a 0 SIN(0 1 1k)\nR1 a b 1k\nD1 b 0 dm\n.model dm D\n.tran 10u 1m\n"
    plain = transient(mna.read_string(text)).to_dataframe()
    held = transient(mna.read_string(text + ".nodeset V(0)=0\n")).to_dataframe()
    assert plain.equals(held)
    assert (mna.operating_point(mna.read_string(text + ".nodeset V(0)=1\n"))["V(b)"]
            == mna.operating_point(mna.read_string(text))["V(b)"])


def test_a_corner_within_a_fixed_runs_restart_restarts_it_again():
    """A 4 us pulse into a 0.1 us RC on a 10 us grid: the rise restarts the run at 1.02 ms,
    and the fall comes in that restart's second quarter step. Its trapezoidal half step,
    from the rate averaged over the fall, rang at -0.96 per step from 0.03 V; a backward
    Euler half step and a second restart from the grid leave what any corner in such a step
    leaves (2.5e-5 V after a lone one), where the output is 0 within 1e-300."""
    circuit = mna.read_string("rc\nV1 in 0 PULSE(0 1 1.0185m 1n 1n 4u 1)\nR1 in out 100\n"
                              "C1 out 0 1n\n.options method=trap stepcontrol=fixed\n"
                              ".tran 10u 2m\n")
    frame = transient(circuit).to_dataframe()
    assert np.abs(frame["V(out)"][frame.index > 1.03e-3]).max() < 1e-4


def test_adaptive_steps_land_on_breakpoints_within_tmax(read_netlist):
    fixed = transient(read_netlist("electrical_divider.net")).to_dataframe()
    circuit = read_netlist("electrical_divider.net")
    options = dataclasses.replace(circuit.options, stepcontrol="adaptive")
    circuit = dataclasses.replace(circuit, options=options)
    result = transient(circuit)
    frame = result.to_dataframe()
    t = frame.index.to_numpy()
    for corner in (1e-3, 1.01e-3, 4.01e-3, 4.02e-3):
        assert np.min(np.abs(t - corner)) < 1e-15
    assert np.max(np.diff(t)) <= 2e-6 * (1 + 1e-9)             # tmax = tstep here
    assert result.factorizations <= 20
    reference = np.interp(t, fixed.index, fixed["V(c)"])
    assert np.max(np.abs(frame["V(c)"] - reference)) < 5e-3   # V, reltol 1e-3 of ~5 V


def test_adaptive_takes_long_steps_where_nothing_happens():
    circuit = mna.read_string("rc\nV1 in 0 PULSE(0 1 1m 1u 1u 1 2)\nR1 in out 1k\nC1 out 0 1u\n"
                              ".options stepcontrol=adaptive\n.tran 1u 20m 0 1m\n")
    result = transient(circuit)
    t = result.to_dataframe().index.to_numpy()
    assert len(t) < 400                                       # 20 000 at the fixed 1 us
    assert np.max(np.diff(t)) <= 1e-3 * (1 + 1e-9)
    v = result["V(out)"]
    exact = np.where(t > 1e-3, 1 - np.exp(-np.maximum(t - 1.001e-3, 0) / 1e-3), 0.0)
    assert np.max(np.abs(v - exact)) < 2e-2


@pytest.mark.ngspice
@pytest.mark.parametrize("name", ["electrical_divider.net", "ngspice_deck.net",
                                  "ported_deck.net"])
def test_electrical_deck_against_ngspice(ngspice, read_netlist, name):
    text = without((NETLISTS / name).read_text(), ".ss", ".ac")
    reference = ngspice.run(text)["tran"].data
    frame = transient(mna.read_string(text, name)).to_dataframe()
    t = reference["time"].to_numpy()
    compared = 0
    for column in frame.columns:
        key = "V(" + column[2:].lower()                           # ngspice's spelling
        if column.startswith("V(") and key in reference.columns:
            ours = np.interp(t, frame.index, frame[column])
            theirs = reference[key].to_numpy()
            swing = max(np.ptp(theirs), np.max(np.abs(theirs)), 1e-12)
            assert np.max(np.abs(ours - theirs)) < 2e-3 * swing, column
            compared += 1
    assert compared >= 4


# -- no trapezoidal ringing: backward-Euler restarts at t = 0 and after every corner ----------

RAMP_ACROSS_C = """a source with corners straight across a capacitor
V1 in 0 PULSE(0 1 0.1m {ramp} {ramp} 0.2m 1m)
C1 in 0 1u
R1 in 0 1k
.options method={method} stepcontrol={control}
.tran 2u 0.6m
"""


@pytest.mark.parametrize("control", ["fixed", "adaptive"])
@pytest.mark.parametrize("method", ["trap", "gear2"])
@pytest.mark.parametrize("ramp", ["18u", "17u"], ids=["corners-on-grid", "corners-off-grid"])
def test_source_current_is_exact_on_the_flat_top(method, control, ramp):
    """I(V1) = -(V/R + C dV/dt): -1 mA on the top, 0 before the pulse and after it. The
    trapezoidal rule used to carry the jump in C dV/dt at each corner as a +-0.11 A ringing."""
    text = RAMP_ACROSS_C.format(method=method, control=control, ramp=ramp)
    frame = transient(mna.read_string(text)).to_dataframe()
    t, current = frame.index.to_numpy(), frame["I(V1)"].to_numpy()
    corner = 0.1e-3 + float(ramp[:-1]) * 1e-6
    top = (t > corner + 2 * 2e-6) & (t < 0.3e-3 - 1e-6)
    after = t > 0.3e-3 + 2 * float(ramp[:-1]) * 1e-6 + 2 * 2e-6
    assert top.sum() > 50 and after.sum() > 50
    assert np.max(np.abs(current[top] + 1e-3)) < 1e-9
    assert np.max(np.abs(current[after])) < 1e-9


def test_the_first_step_keeps_to_the_tolerances():
    """An RC (tau = 1 ms) charged from rest by a source on at t = 0: the first step (about
    tau / 13) used to go unchecked, its backward-Euler error, 2.7e-3 V, the largest of the
    run (reltol = 1e-6); it is checked from the start's rates: over that first span the
    error is now 2e-6 V at most, and the run's largest (of later trapezoidal steps) 1.2e-4."""
    frame = transient(mna.read_string(
        "first step\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u IC=0\n.options reltol=1e-6\n"
        ".tran 10m 1 uic\n")).to_dataframe()
    t, v = frame.index.to_numpy(), frame["V(out)"].to_numpy()
    error = np.abs(v - (1 - np.exp(-t / 1e-3)))
    assert np.max(error[t <= 7.8125e-5]) < 1e-5
    assert np.max(error) < 2e-4


@pytest.mark.parametrize("options", ["", "uic"])
def test_a_capacitor_that_a_source_drives_from_the_start_runs(options):
    """C1 across a sine source: at t = 0 its charge's rate is the operating point's, 0, while
    the source's slope forces C w at once; the first step's error estimate, taken from
    those rates, shrinks with the step instead of holding, so the step is taken as is (the
    check stopped the run at t = 0). From the first step on, the source's current is
    -(C w cos(w t) + sin(w t) / R)."""
    frame = transient(mna.read_string(
        f"driven\nV1 in 0 SIN(0 1 1k)\nC1 in 0 1m\nR1 in 0 1k\n.tran 10u 2m {options}\n"
    )).to_dataframe().iloc[1:]
    t, w = frame.index.to_numpy(), 2 * np.pi * 1e3
    exact = -(1e-3 * w * np.cos(w * t) + np.sin(w * t) / 1e3)
    assert np.max(np.abs(frame["I(V1)"] - exact)) < 1e-3 * 1e-3 * w


@pytest.mark.parametrize("source", ["SIN(0 1 50)", "PULSE(0 1 0.1m 10u 10u 0.3m 0.77m)"])
@pytest.mark.parametrize("control", ["adaptive", "fixed"])
@pytest.mark.parametrize("name", ["be", "trap", "gear2"])
def test_a_capacitor_nothing_drains_keeps_its_charge_to_round_off(name, control, source):
    """C2 holds 432.535 V and nothing drains it, while an RC beside it sets the steps. The
    factors of a step size serve the sizes equal to it in 12 digits (the steps that land on
    the pulse's corners differ in their last digits), so a step is solved with them and
    refined once for its own size; the step's history and its matrix were of two sizes, and
    the charge drifted by up to 5e-9 V over 2000 steps (3e-5 V over the pulses of 2 s)."""
    frame = transient(mna.read_string(
        f"charge\nV1 in 0 {source}\nR1 in a 1k\nC1 a 0 10u IC=0\nC2 b 0 27.2163u IC=432.535\n"
        f"R2 b 0 1e30\n.options method={name} stepcontrol={control}\n.tran 0.1m 0.2 uic\n"
    )).to_dataframe()
    assert np.max(np.abs(frame["V(b)"] - 432.535)) < 1e-11


def test_inconsistent_uic_start_settles_at_once():
    """C1 sits across V1 with IC=0 against its 1 V: the first step must take the algebraic
    unknowns to the consistent state, not ring around it (it used to: +-3000 A)."""
    frame = transient(mna.read_string(
        "uic\nV1 in 0 1\nC1 in 0 1u IC=0\nR1 in out 1k\nC2 out 0 1u IC=0.5\n"
        ".tran 2u 1m uic\n")).to_dataframe().iloc[1:]
    consistent = -(1 - frame["V(out)"]) / 1e3          # C1's current is 0 once V(in) = 1
    assert np.max(np.abs(frame["I(V1)"] - consistent)) < 1e-9
    dual = transient(mna.read_string(
        "uic dual\nI1 0 a 1m\nL1 a b 1m IC=0\nR1 b 0 1k\nC1 b 0 1u\n.tran 2u 1m uic\n"
    )).to_dataframe().iloc[1:]
    assert np.max(np.abs(dual["V(a)"] - dual["V(b)"])) < 1e-9   # L1's voltage: 0 at 1 mA


@pytest.mark.parametrize("control", ["fixed", "adaptive"])
def test_a_jump_on_the_grid_is_applied_at_its_time_not_a_step_early(control):
    """PWL with a time given twice jumps there; the step ending at the jump sees the value
    before it. V(out) is then 0 up to 0.1 ms and 1 - e^(-(t - 0.1m)/RC) after, to the
    error of the restart's backward-Euler quarter steps, ~(h/RC)^2/16 = 6e-4 (it was 0.048
    at the jump)."""
    frame = transient(mna.read_string(
        "jump\nV1 in 0 PWL(0 0 0.1m 0 0.1m 1 1m 1)\nR1 in out 1k\nC1 out 0 0.1u\n"
        f".options stepcontrol={control}\n.tran 10u 0.5m\n")).to_dataframe()
    t, v = frame.index.to_numpy(), frame["V(out)"].to_numpy()
    exact = np.where(t > 1e-4, 1 - np.exp(-(t - 1e-4) / 1e-4), 0.0)
    assert np.max(np.abs(v[t <= 1e-4])) == 0.0
    assert np.max(np.abs(v - exact)) < 1e-3


def test_tmax_zero_means_not_given():
    text = ("rc\nV1 in 0 PULSE(0 1 0 1u 1u 1 2)\nR1 in out 1k\nC1 out 0 1u\n.tran 10u 1m 0 {}\n"
            ".options stepcontrol=fixed\n")
    with_zero = transient(mna.read_string(text.format("0"))).to_dataframe()
    without = transient(mna.read_string(text.format(""))).to_dataframe()
    assert with_zero.equals(without) and len(without) == 101


def test_a_jump_within_round_off_of_a_grid_time_is_on_it():
    """0.3m is not 3 * 0.1m in floating point; the step ending there still sees the value
    before the jump (V(out) stays 0 there, not 0.048)."""
    frame = transient(mna.read_string(
        "jump\nV1 in 0 PWL(0 0 0.3m 0 0.3m 1 10 1)\nR1 in out 1k\nC1 out 0 1u\n"
        ".options stepcontrol=fixed\n.tran 0.1m 1m\n")).to_dataframe()
    assert frame["V(out)"].iloc[3] == 0.0 and frame["V(out)"].iloc[4] > 0.05


def test_uic_storage_across_a_source_takes_its_value_and_the_rest_starts_at_rest():
    """C1 sits across V1 (its rest state cannot hold), C2 behind R1 starts at rest, so
    V(g) = 2 (1 - e^(-t/RC)) with RC = 1 ns from t = 0. The settling step was 1 ns whatever
    the circuit's time scale and started V(g) at 0.33 V."""
    frame = transient(mna.read_string(
        "uic\nV1 in 0 2\nC1 in 0 1p\nR1 in g 1k\nC2 g 0 1p\n.tran 0.1n 5n uic\n"
    )).to_dataframe()
    t, v = frame.index.to_numpy(), frame["V(g)"].to_numpy()
    assert abs(v[0]) < 1e-8 and frame["I(V1)"].iloc[0] == pytest.approx(-2e-3, rel=1e-6)
    assert np.max(np.abs(v - 2 * (1 - np.exp(-t / 1e-9)))) < 1e-3 * 2


def test_an_ic_on_a_node_an_inductor_shorts_is_ignored_in_the_operating_point(caplog):
    """L1 holds V(x) at 0 V at DC: .ic V(x)=0.3 cannot hold there (it was refused as
    singular; ngspice fights it with a large conductance and prints 3e16 V), so it is
    ignored with a warning and the start is the operating point: I(L1) = 1 mA."""
    with caplog.at_level("WARNING", logger="mna"):
        start = transient(mna.read_string(
            "short\nI1 0 x 1m\nL1 x 0 1m\nR1 x 0 1k\nC1 x 0 1n\n.ic V(x)=0.3\n.tran 1u 10u\n"
        )).to_dataframe().iloc[0]
    assert ".ic V(x) = 0.3 is ignored: voltage (across) sources, inductors" in caplog.text
    assert start["V(x)"] == 0.0 and start["I(L1)"] == pytest.approx(1e-3, rel=1e-12)


@pytest.mark.parametrize("tie, b_of_a", [("V1 a b 0.2", lambda a: a - 0.2),
                                          ("L1 a b 1m", lambda a: a),
                                          ("TF1 a 0 b 0 2", lambda a: a / 2)])
def test_ic_values_that_a_source_ties_together_need_not_both_hold(tie, b_of_a, caplog):
    """.ic on both ends of a floating source, of an inductor (a short at DC) or on both
    ports of a transformer: the second value is fixed by the first and the tie (all were
    refused as singular; ngspice runs the first two), so it is ignored with a warning and
    the first holds."""
    with caplog.at_level("WARNING", logger="mna"):
        start = transient(mna.read_string(
            f"tie\nI1 0 a 1m\nR1 a 0 1k\n{tie}\nR2 b 0 1k\nC1 b 0 1n\n"
            ".ic V(a)=0.7 V(b)=0.5\n.tran 1u 10u\n")).to_dataframe().iloc[0]
    assert ".ic V(b) = 0.5 is ignored: the values before it and the sources" in caplog.text
    assert start["V(a)"] == pytest.approx(0.7, abs=1e-12)
    assert start["V(b)"] == pytest.approx(b_of_a(0.7), abs=1e-12)


def test_an_ic_on_a_transformer_port_that_a_source_fixes_is_ignored(caplog):
    """V1 fixes the primary, and through TF1 the secondary: .ic V(b)=0.3 cannot hold in
    the operating point (it was refused as singular), so it is ignored with a warning and
    the start is the operating point, V(b) = 2 V / 2."""
    with caplog.at_level("WARNING", logger="mna"):
        start = transient(mna.read_string(
            "fixed secondary\nV1 a 0 2\nTF1 a 0 b 0 2\nC1 b 0 1u\nR1 b 0 1k\n.ic V(b)=0.3\n"
            ".tran 1u 10u\n")).to_dataframe().iloc[0]
    assert ".ic V(b) = 0.3 is ignored: voltage (across) sources, inductors" in caplog.text
    assert start["V(b)"] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("order", ["C1 a m 1n\nC2 m 0 1n", "C2 m 0 1n\nC1 a m 1n"])
@pytest.mark.parametrize("source", ["V1 a 0 5", "V1 p 0 5\nTF1 p 0 a 0 1"])
def test_uic_capacitors_in_series_across_a_source_share_its_voltage(order, source):
    """Both start at rest, but together they sit across V1: the start settles as SPICE's
    first step does, by charge, to 2.5 V each, whatever the cards' order. (A rest state
    closing the loop was dropped, which put 5 V on the one read last; through the
    transformer the settling Newton could not meet its own test in so short a step.)"""
    frame = transient(mna.read_string(
        f"series\n{source}\n{order}\nR1 m 0 1meg\n.tran 1n 100n uic\n")).to_dataframe()
    assert frame["V(a)"].iloc[0] == pytest.approx(5.0, rel=1e-12)
    assert frame["V(m)"].iloc[0] == pytest.approx(2.5, rel=1e-6)


def test_uic_ic_on_a_node_a_source_fixes_still_charges_its_capacitor():
    """As in ngspice, .ic V(a)=1 under uic starts C1 charged to 1 V, though V1 then holds
    V(a) at 5 V: V(m) starts at 4 V and decays through R1."""
    frame = transient(mna.read_string(
        "ic\nV1 a 0 5\nC1 a m 1n\nR1 m 0 1k\n.ic V(a)=1\n.tran 10n 5u uic\n")).to_dataframe()
    t = frame.index.to_numpy()
    assert np.max(np.abs(frame["V(m)"] - 4 * np.exp(-t / 1e-6))) < 1e-3 * 4


def test_initial_values_that_sources_fix_are_ignored_with_a_warning(caplog):
    """C2's IC= and .ic V(in) name what V1 fixes: ngspice runs such a deck (its sources win),
    so they are ignored with a warning (the deck used to be refused as singular), and
    .ic V(out) still holds: V(out) = 1 - 0.8 e^(-t/RC) with RC = 1 ms."""
    text = ("ic\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\nC2 in 0 1u IC=0\n"
            ".ic V(in)=0.5 V(out)=0.2\n.tran 10u 5m\n")
    with caplog.at_level("WARNING", logger="mna"):
        frame = transient(mna.read_string(text)).to_dataframe()
    assert "IC(C2) = 0 is ignored: voltage (across) sources" in caplog.text
    assert ".ic V(in) = 0.5 is ignored: voltage (across) sources" in caplog.text
    t = frame.index.to_numpy()
    assert frame["V(out)"].iloc[0] == pytest.approx(0.2, abs=1e-12)
    assert np.max(np.abs(frame["V(out)"] - (1 - 0.8 * np.exp(-t / 1e-3)))) < 1e-3


def test_uic_ic_of_an_element_leaves_its_neighbour_at_rest():
    """C1 starts at its IC= 1 V; C2 (a to b) has none and no .ic speaks: it starts at rest,
    so V(b) = V(a) = 1 V."""
    start = transient(mna.read_string(
        "ic\nC1 a 0 1u IC=1\nC2 a b 1u\nR1 b 0 1k\nR2 a 0 1k\n.tran 1u 3u uic\n"
    )).to_dataframe().iloc[0]
    assert start["V(a)"] == pytest.approx(1.0) and start["V(b)"] == pytest.approx(1.0)


def test_a_jump_reaches_a_nonlinear_circuit_at_its_time():
    """Newton's steps too: the step ending at the jump sees the value before it, and the
    printed source current agrees with the state (both 0 at 1 ms, both moving after)."""
    frame = transient(mna.read_string(
        "jump\nI1 0 a PWL(0 0 1m 0 1m 1m 3m 1m)\nD1 a 0 dmod\nC1 a 0 1n\n"
        ".model dmod D(IS=1e-14)\n.tran 0.1m 2m\n")).to_dataframe()
    at_jump = frame.loc[np.isclose(frame.index, 1e-3)].iloc[0]
    assert at_jump["V(a)"] == pytest.approx(0.0, abs=1e-9)
    assert at_jump["I(I1)"] == pytest.approx(0.0, abs=1e-15)
    assert frame["V(a)"].iloc[-1] > 0.5


@pytest.mark.ngspice
def test_an_inductor_initial_current_its_circuit_fixes_is_ignored_as_ngspice_ignores_it(
        ngspice, caplog):
    """L1 in series with a 1 mA source and IC=2m: no operating point keeps 2 mA (it was a
    singular system); a warning, and 1 mA, as ngspice without uic."""
    text = "ic\nI1 0 a DC 1m\nL1 a b 1m IC=2m\nR1 b 0 1k\n.tran 1u 10u\n"
    with caplog.at_level("WARNING", logger="mna"):
        (result,) = mna.run(mna.read_string(text))
    assert "IC(L1) ignored: the circuit's equations fix it at t = 0" in caplog.text
    theirs = ngspice.run(text + ".save I(L1)\n")["tran"].data
    assert result["I(L1)"][0] == pytest.approx(theirs["I(l1)"].iloc[0], rel=1e-12) == 1e-3
    assert np.allclose(result["I(L1)"], 1e-3, rtol=1e-12, atol=0)
