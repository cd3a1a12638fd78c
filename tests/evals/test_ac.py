"""AC analysis of an RC low-pass and a series RLC against closed forms and ngspice."""

from __future__ import annotations

import numpy as np
import pytest

import mna
from mna.analysis.ac import frequencies

try:
    from tests import ngspice
except ImportError:  # pragma: no cover - run from another directory
    import importlib.util
    import pathlib

    spec = importlib.util.spec_from_file_location(
        "ngspice", pathlib.Path(__file__).resolve().parents[1] / "ngspice.py")
    ngspice = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ngspice)

RC = """RC low-pass
V1 in 0 DC 0 AC 1
R1 in out 1k
C1 out 0 100n
.ac dec 10 10 100k
.end
"""

RLC = """series RLC
V1 in 0 DC 0 AC 2 30
R1 in a 10
L1 a b 10m
C1 b 0 1u
.ac lin 50 100 5k
.end
"""


def rc_expected(f):
    return 1 / (1 + 2j * np.pi * f * 1e3 * 100e-9)


def rlc_expected(f):
    s = 2j * np.pi * f
    u = 2 * np.exp(1j * np.radians(30))
    current = u / (10 + s * 10e-3 + 1 / (s * 1e-6))
    return current, current / (s * 1e-6)


def run_ac(text):
    (table,) = mna.run(mna.read_string(text))
    return table


def test_frequency_grids_follow_spice():
    assert frequencies("dec", 10, 10, 100e3, 1e-3).size == 41
    assert frequencies("oct", 4, 1, 16, 1e-3).tolist() == pytest.approx(2 ** (np.arange(17) / 4))
    assert frequencies("lin", 50, 100, 5e3, 1e-3)[[0, -1]].tolist() == [100, 5e3]
    # an octave sweep keeps a last point up to reltol of a step past fstop, as ngspice does
    assert frequencies("oct", 1, 100, 799.9, 1e-3)[-1] == 800
    assert frequencies("oct", 1, 100, 798.0, 1e-3)[-1] == 400
    assert frequencies("oct", 1, 100, 799.9, 1e-6)[-1] == 400



def test_rc_lowpass_against_closed_form():
    table = run_ac(RC)
    f = table["frequency"]
    assert np.abs(table["V(out)"] - rc_expected(f)).max() < 1e-12
    assert table.units["V(out)"] == "V" and table.units["frequency"] == "Hz"


def test_series_rlc_against_closed_form():
    table = run_ac(RLC)
    f = table["frequency"]
    current, vc = rlc_expected(f)
    assert np.abs(table["I(L1)"] - current).max() < 1e-12 * np.abs(current).max()
    assert np.abs(table["V(b)"] - vc).max() < 1e-12 * np.abs(vc).max()
    assert np.abs(table["I(V1)"] + current).max() < 1e-12 * np.abs(current).max()


def test_ac_csv_has_re_im_columns(tmp_path):
    paths = mna.write_results(mna.run(mna.read_string(RC)), tmp_path)
    header = paths[0].read_text().splitlines()[0].split(",")
    assert header[:3] == ["frequency", "re(V(in))", "im(V(in))"]


def test_bode_plot_is_written(tmp_path):
    from mna.plots import write_plots

    paths = write_plots(mna.run(mna.read_string(RLC)), tmp_path)
    assert [p.name for p in paths] == ["ac.png"] and paths[0].stat().st_size > 0


@pytest.mark.ngspice
@pytest.mark.skipif(not ngspice.available(), reason="ngspice is not installed")
@pytest.mark.parametrize("deck,outputs", [(RC, ["V(out)"]), (RLC, ["V(b)", "V(a)"])])
def test_ac_against_ngspice(deck, outputs):
    ours = run_ac(deck)
    theirs = ngspice.run(deck)["ac"].data
    f = np.asarray(theirs["frequency"], float)
    assert f.size == ours["frequency"].size
    assert np.abs(f - ours["frequency"]).max() <= 1e-9 * f.max()
    for name in outputs:
        reference = np.asarray(theirs[name.lower()] if name.lower() in theirs else theirs[name])
        assert np.abs(ours[name] - reference).max() < 1e-6 * np.abs(reference).max()


def _lc_line(solver: str, sections: int = 200) -> str:
    """An LC line whose inductances and capacitances spread over nine decades, with a VCCS
    and a CCVS every fifth section: pivots on the diagonal are tiny at some frequencies."""
    rng = np.random.default_rng(9)
    lines = ["LC line with controlled sources", "V1 in 0 DC 0 AC 1", "Rs in a0 50"]
    for k in range(1, sections + 1):
        lines += [f"L{k} a{k - 1} a{k} {10 ** rng.uniform(-12, -3):.4g}",
                  f"C{k} a{k} 0 {10 ** rng.uniform(-15, -6):.4g}"]
        if k % 5 == 0:
            lines += [f"G{k} a{k} 0 a{k - 3} 0 {10 ** rng.uniform(-6, 1):.4g}",
                      f"H{k} h{k} 0 V1 {10 ** rng.uniform(-3, 3):.4g}", f"Rh{k} h{k} a{k} 1e6"]
    lines += [f"RL a{sections} 0 50", f".options solver={solver}", ".ac dec 10 1m 1T"]
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(not mna.linalg.klu_available(), reason="no KLU library")
def test_klu_pivots_as_soundly_as_partial_pivoting():
    """SuperLU's partial pivoting is the reference: KLU (its pivot tolerance, its pivot order
    kept from one frequency to the next) must agree to round-off at every frequency (with
    KLU's default tolerance some outputs were off by many orders of magnitude)."""
    klu = mna.run(mna.read_string(_lc_line("klu")))[0].to_dataframe()
    superlu = mna.run(mna.read_string(_lc_line("superlu")))[0].to_dataframe()
    assert ((klu - superlu).abs().max() / superlu.abs().max()).max() < 1e-9


@pytest.mark.ngspice
@pytest.mark.skipif(not ngspice.available(), reason="ngspice is not installed")
@pytest.mark.parametrize("sweep", ["dec 1 1 500", "dec 3 1 500", "dec 7 13 4.1k",
                                   "dec 10 1 1k", "oct 2 100 1000", "lin 7 1 500",
                                   "oct 1 100 799.9", "oct 3 1 10", "oct 2 50 798"])
def test_frequencies_are_ngspices(sweep):
    # ngspice 39 spreads a dec sweep's whole steps evenly so the last lands on fstop
    deck = "rc\nV1 in 0 DC 0 AC 1\nR1 in out 1k\nC1 out 0 1u\n"
    (ours,) = mna.run(mna.read_string(deck + f".ac {sweep}\n"))
    theirs = np.asarray(ngspice.run(deck + f".ac {sweep}\n")["ac"].data["frequency"], float)
    assert ours.columns["frequency"].shape == theirs.shape
    assert np.abs(ours.columns["frequency"] - theirs).max() <= 1e-9 * theirs.max()
