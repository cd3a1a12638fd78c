"""``.mc`` and the random functions: draws as SPICE defines them, sample k of a seed the same
whatever runs it (one process, a pool, a Dask cluster), statistics against first-order
propagation of the tolerance."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mna
from mna.cli import main

SAMPLES = 2000
R, SIGMA_R, C = 1e3, 50.0, 1e-6
# |H| = 1/sqrt(2) at f3 = 1/(2 pi R C); 10 Hz between frequencies puts the linear
# interpolation of .meas within 0.1 Hz of it, below the 0.18 Hz sampling error of the mean
RC_LOWPASS = f"""rc low-pass
V1 in 0 AC 1
R1 in out {{agauss({R:g}, {SIGMA_R:g}, 1)}}
C1 out 0 {C:g}
.ac lin 16 100 250
.meas ac f3 WHEN VM(out)=0.70710678
.mc {SAMPLES} seed=2024
"""


@pytest.fixture(scope="module")
def in_process():
    """The reference run: one worker, no pool."""
    return mna.monte_carlo(mna.read_string(RC_LOWPASS), workers=1)


def test_3db_frequency_follows_first_order_propagation(in_process):
    f3 = in_process["meas"].query("name == 'f3'")["value"].to_numpy()
    assert len(f3) == SAMPLES and np.isfinite(f3).all()
    f0 = 1 / (2 * np.pi * R * C)
    spread = f0 * SIGMA_R / R                       # |df/dR| sigma_R
    mean_error = spread / np.sqrt(SAMPLES)
    std_error = spread / np.sqrt(2 * (SAMPLES - 1))
    assert abs(f3.mean() - f0) < 4 * mean_error
    assert abs(f3.std(ddof=1) - spread) < 4 * std_error
    summary = in_process["mc_summary"].query("analysis == 'meas' and output == 'f3'")
    assert summary["mean"].item() == pytest.approx(f3.mean(), rel=1e-12)
    assert summary["q50"].item() == pytest.approx(np.median(f3), rel=1e-12)


def test_two_workers_give_bit_identical_tables(in_process):
    pooled = mna.monte_carlo(mna.read_string(RC_LOWPASS), workers=2)
    for stem in ("ac", "meas", "mc_summary"):
        pd.testing.assert_frame_equal(pooled[stem], in_process[stem], check_exact=True)


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="the dask extra is not installed")
def test_a_dask_cluster_gives_bit_identical_tables(in_process):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        clustered = mna.monte_carlo(mna.read_string(RC_LOWPASS), client=client)
        by_address = mna.monte_carlo(mna.read_string(RC_LOWPASS),
                                     client=cluster.scheduler_address)
    for stem in ("ac", "meas", "mc_summary"):
        pd.testing.assert_frame_equal(clustered[stem], in_process[stem], check_exact=True)
        pd.testing.assert_frame_equal(by_address[stem], in_process[stem], check_exact=True)


DRAWS = """draws
.param shared=agauss(1k, 100, 1)
I1 0 a 1m
R1 a 0 {agauss(1k, 100, 1)}
I2 0 b 1m
R2 b 0 {agauss(1k, 100, 1)}
I3 0 c 1m
R3 c 0 {shared}
I4 0 d 1m
R4 d 0 {shared}
I5 0 e 1m
R5 e 0 {unif(1k, 0.1)}
I6 0 f 1m
R6 f 0 {limit(1k, 100)}
.save V(a) V(b) V(c) V(d) V(e) V(f)
.op
"""


def _values(frame: pd.DataFrame, name: str) -> np.ndarray:
    return frame[frame["name"] == name]["value"].to_numpy()


def test_outside_mc_random_functions_take_their_nominal_value():
    op = mna.operating_point(mna.read_string(DRAWS))
    assert [op[f"V({n})"] for n in "abcdef"] == [1.0] * 6


def test_each_call_draws_on_its_own_and_a_parameter_once():
    tables = mna.monte_carlo(mna.read_string(DRAWS), 400, seed=5, workers=1)
    op = tables["op"]
    a, b, c, d, e, f = (_values(op, f"V({n})") for n in "abcdef")
    assert np.corrcoef(a, b)[0, 1] < 0.2 and not np.array_equal(a, b)
    np.testing.assert_array_equal(c, d)
    assert np.allclose(op[op["name"] == "V(c)"]["shared"], c * 1e3, rtol=1e-12)
    assert e.min() >= 0.9 and e.max() < 1.1 and e.std() > 0.05   # uniform over +-10 %
    assert set(np.round(f, 12)) == {0.9, 1.1}
    assert abs(a.std() - 0.1) < 4 * 0.1 / np.sqrt(2 * 399)


def test_sample_k_does_not_depend_on_how_many_samples_run():
    circuit = mna.read_string(DRAWS)
    few = mna.monte_carlo(circuit, 3, seed=9, workers=1)["op"]
    many = mna.monte_carlo(circuit, 8, seed=9, workers=1)["op"]
    pd.testing.assert_frame_equal(many[many["sample"] < 3], few, check_exact=True)


def test_a_step_runs_each_sample_at_each_point():
    netlist = DRAWS.replace(".op", ".param g=1\n.step param g list 1 2\n.op")
    op = mna.monte_carlo(mna.read_string(netlist), 3, seed=1, workers=2)["op"]
    assert list(op.columns[:3]) == ["sample", "g", "shared"]
    assert sorted(set(zip(op["g"], op["sample"]))) == [(g, k) for g in (1, 2) for k in range(3)]


def test_the_command_streams_tables_and_writes_the_summary(tmp_path, capsys):
    netlist = tmp_path / "rc.net"
    netlist.write_text(RC_LOWPASS.replace(f".mc {SAMPLES}", ".mc 30"))
    out = tmp_path / "out"
    assert main(["run", str(netlist), "-o", str(out), "--workers", "2"]) == 0
    assert "Monte Carlo: 30 samples, seed=2024" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["ac.csv", "mc_summary.csv", "meas.csv"]
    meas = pd.read_csv(out / "meas.csv")
    assert list(meas.columns) == ["sample", "name", "value", "unit"]
    assert meas["sample"].tolist() == list(range(30))
    summary = pd.read_csv(out / "mc_summary.csv")
    row = summary[summary["output"] == "f3"]
    assert row["mean"].item() == pytest.approx(meas["value"].mean(), rel=1e-12)
    assert row["samples"].item() == 30


@pytest.mark.parametrize("card, message, line", [
    (".mc 0", "number of samples must be a whole number of at least 1", 17),
    (".mc 2.5", "number of samples must be a whole number", 17),
    (".mc 10 seed=-1", "seed must be a whole number of at least 0", 17),
    (".mc 10 runs=3", "unknown parameter 'runs='", 17),
    (".mc 10\n.mc 20", r".mc is already asked for on line 17", 18),
])
def test_bad_mc_cards_are_located_errors(card, message, line):
    netlist = DRAWS.replace(".op", ".op\n" + card)
    with pytest.raises(mna.NetlistError, match=message) as caught:
        mna.read_string(netlist)
    assert caught.value.location.line == line


def test_a_random_call_cannot_read_time():
    with pytest.raises(mna.NetlistError, match="draws from parameter values") as caught:
        mna.read_string("t\nV1 a 0 1\nB1 b 0 V={agauss(time, 1, 1)}\nR1 b 0 1\n.op\n")
    assert caught.value.location.line == 3


RC_PLOTS = """rc plots
V1 in 0 PULSE(0 1 0 1u 1u 1 2) AC 1
R1 in out {agauss(1k, 100, 1)}
C1 out 0 1u
.options stepcontrol=fixed
.save V(out)
.tran 20u 2m
.ac dec 5 10 10k
.meas tran vend FIND V(out) AT=1m
.mc 40 seed=7
"""


def _run_plots(tmp_path, fmt: str, monkeypatch, text: str = RC_PLOTS) -> tuple[dict, object]:
    """`mna run --plot` of `text` into tmp_path/fmt, and the bands the plots drew."""
    import mna.plots
    from mna import tables

    drawn = {}
    plot_bands = mna.plots._plot_bands
    monkeypatch.setattr(mna.plots, "_plot_bands", lambda stem, x, bands, *rest: (
        drawn.__setitem__(stem, bands), plot_bands(stem, x, bands, *rest)))
    monkeypatch.setattr(tables, "CSV_BLOCK", 1000)   # several Parquet row groups
    netlist = tmp_path / "rc.net"
    netlist.write_text(text)
    out = tmp_path / fmt
    assert main(["run", "-q", str(netlist), "-o", str(out), "--format", fmt, "--plot",
                 "--workers", "1"]) == 0
    return drawn, out


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_plot_draws_histograms_and_bands_of_the_samples(tmp_path, monkeypatch, fmt):
    from matplotlib.image import imread

    from mna.tables import BAND

    drawn, out = _run_plots(tmp_path, fmt, monkeypatch)
    pngs = {"tran_band", "ac_band", "tran_hist", "ac_hist", "meas_hist"}
    assert {p.stem for p in out.glob("*.png")} == pngs
    for stem in pngs:
        assert imread(out / f"{stem}.png").shape[:2] > (300, 400)
    read = (lambda stem: pd.read_csv(out / f"{stem}.csv")
            ) if fmt == "csv" else (lambda stem: mna.read_parquet(out / f"{stem}.parquet"))
    for stem, x, value in (("tran", "time", lambda t: t["V(out)"]),
                           ("ac", "frequency", lambda t: np.abs(t["re(V(out))"]
                                                                + 1j * t["im(V(out))"]))):
        table = read(stem)
        per_sample = value(table).to_numpy().reshape(40, -1)   # every sample on one grid
        (band,) = drawn[stem]["V(out)"]
        np.testing.assert_array_equal(band.x, table[x].to_numpy()[:per_sample.shape[1]])
        np.testing.assert_array_equal(band.quantiles, np.quantile(per_sample, BAND, axis=0))


def test_samples_on_their_own_time_grids_are_banded_on_a_common_one(tmp_path, monkeypatch):
    from mna.tables import BAND, BAND_POINTS

    adaptive = (RC_PLOTS.replace(".options stepcontrol=fixed\n", "").replace(".mc 40", ".mc 20")
                .replace("PULSE(0 1 0 ", "PULSE(0 1 {aunif(0.5m, 0.2m)} "))   # breakpoints move
    drawn, out = _run_plots(tmp_path, "csv", monkeypatch, adaptive)
    table = pd.read_csv(out / "tran.csv")
    assert table.groupby("sample")["time"].apply(tuple).nunique() > 1
    (band,) = drawn["tran"]["V(out)"]
    assert len(band.x) == BAND_POINTS and band.x[-1] == table["time"].max()
    finals = table.groupby("sample")["V(out)"].last().to_numpy()   # each sample ends at tstop
    np.testing.assert_allclose(band.quantiles[:, -1], np.quantile(finals, BAND), rtol=1e-12)


def test_parquet_tables_of_a_run_equal_the_csv_ones_with_units(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    _, parquet = _run_plots(tmp_path, "parquet", monkeypatch)
    _, csv = _run_plots(tmp_path, "csv", monkeypatch)
    for stem in ("tran", "ac", "meas"):
        frame = mna.read_parquet(parquet / f"{stem}.parquet")
        expected = pd.read_csv(csv / f"{stem}.csv")
        pd.testing.assert_frame_equal(frame, expected, check_exact=True)
    assert mna.read_parquet(parquet / "tran.parquet").attrs["units"] == {
        "sample": "", "time": "s", "V(out)": "V"}
    assert pq.ParquetFile(parquet / "tran.parquet").metadata.num_row_groups == 4  # 10 samples each


FAILING = """sometimes singular: R1 of -1k cancels R2
.param r1=limit(0, 1k)
V1 a 0 1
R1 a b {r1}
R2 b 0 1k
.op
.mc 24 seed=3
"""


def test_a_failing_sample_is_reported_and_left_out(tmp_path, capsys):
    from mna.analysis.montecarlo import sample_parameters

    circuit = mna.read_string(FAILING)
    failing = [k for k in range(24) if sample_parameters(circuit, {}, 3, k)[1]["r1"] < 0]
    assert 0 < len(failing) < 24
    netlist = tmp_path / "failing.net"
    netlist.write_text(FAILING)
    out = tmp_path / "out"
    assert main(["run", str(netlist), "-o", str(out), "--workers", "2"]) == 0
    printed = capsys.readouterr()
    summary = f"Monte Carlo: 24 samples, seed=3, {len(failing)} runs failed and left out"
    assert summary in printed.out
    assert f"sample {failing[0]} of seed 3 failed and is left out: singular" in printed.err
    op = pd.read_csv(out / "op.csv")
    assert sorted(set(op["sample"])) == sorted(set(range(24)) - set(failing))
    failures = pd.read_csv(out / "mc_failures.csv")
    assert failures["sample"].tolist() == failing and (failures["seed"] == 3).all()
    assert failures["error"].str.contains("singular system").all()
    summary = pd.read_csv(out / "mc_summary.csv")
    assert (summary["samples"] == 24 - len(failing)).all()
    frames = mna.monte_carlo(circuit, workers=1)
    assert frames["mc_failures"]["sample"].tolist() == failing


def test_a_run_whose_every_sample_fails_is_an_error(tmp_path, capsys):
    netlist = tmp_path / "failing.net"
    netlist.write_text(FAILING.replace("limit(0, 1k)", "limit(-1k, 0)"))
    out = tmp_path / "out"
    assert main(["run", str(netlist), "-o", str(out), "--workers", "1"]) == 3
    assert "every one of the 24 samples failed; sample 0 of seed 3" in capsys.readouterr().err
    assert not out.exists() or not list(out.iterdir())


def test_a_format_that_cannot_stream_is_refused(tmp_path, capsys):
    netlist = tmp_path / "draws.net"
    netlist.write_text(DRAWS + ".mc 2\n")
    assert main(["run", str(netlist), "-o", str(tmp_path / "out"), "--format", "json"]) == 2
    assert "--format json cannot stream a .mc run" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="the dask extra is not installed")
def test_an_unreachable_scheduler_is_a_usage_error(tmp_path, monkeypatch, capsys):
    import mna.analysis.cluster as cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "0.5s")
    netlist = tmp_path / "mc.net"
    netlist.write_text("mc\nV1 in 0 1\nR1 in 0 {agauss(1k, 50, 1)}\n.mc 4 seed=1\n.op\n")
    assert main(["run", "-q", str(netlist), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="the dask extra is not installed")
def test_a_server_that_is_no_scheduler_is_a_usage_error_in_bounded_time(tmp_path, monkeypatch,
                                                                         capsys):
    """A server that accepts the connection and never answers (a web server waits for a
    request) held the Dask client for good: its handshake has no time limit."""
    import mna.analysis.cluster as cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "0.5s")
    netlist = tmp_path / "mc.net"
    netlist.write_text("mc\nV1 in 0 1\nR1 in 0 {agauss(1k, 50, 1)}\n.mc 4 seed=1\n.op\n")
    with socket.create_server(("127.0.0.1", 0)) as silent:
        command = ["run", "-q", str(netlist), "--scheduler",
                   f"tcp://127.0.0.1:{silent.getsockname()[1]}"]
        assert main(command) == 2
        assert "no Dask greeting within 0.5s" in capsys.readouterr().err

        async def from_a_running_loop():   # as in a notebook: the greeting needs its own
            return main(command)

        assert asyncio.run(from_a_running_loop()) == 2
        assert "no Dask greeting within 0.5s" in capsys.readouterr().err


@pytest.mark.parametrize("address", ["garbage", "tcp://host", "tcp://host:port", "://h:1"])
def test_a_scheduler_address_that_is_not_one_is_a_usage_error(address, tmp_path, capsys):
    netlist = tmp_path / "mc.net"
    netlist.write_text("mc\nV1 in 0 1\nR1 in 0 {agauss(1k, 50, 1)}\n.mc 4 seed=1\n.op\n")
    assert main(["run", "-q", str(netlist), "--scheduler", address]) == 2
    assert "is neither 'local' nor tcp://HOST:PORT" in capsys.readouterr().err


def test_no_samples_and_no_workers_are_refused(tmp_path, capsys):
    circuit = mna.read_string("mc\nV1 in 0 1\nR1 in 0 {agauss(1k, 50, 1)}\n.op\n")
    with pytest.raises(ValueError, match="at least one sample, got n=0"):
        mna.monte_carlo(circuit, 0)
    netlist = tmp_path / "mc.net"
    netlist.write_text("mc\nV1 in 0 1\nR1 in 0 {agauss(1k, 50, 1)}\n.mc 4 seed=1\n.op\n")
    assert main(["run", "-q", str(netlist), "--workers", "0"]) == 2
    assert "at least 1, got '0'" in capsys.readouterr().err


def test_the_tolerance_example_gives_the_corner_its_header_states():
    path = Path(__file__).resolve().parents[2] / "netlists" / "rc_tolerance.net"
    tables = mna.monte_carlo(mna.read(path))
    f3 = tables["meas"].query("name == 'f3'")["value"].to_numpy()
    assert len(f3) == 400 and np.isfinite(f3).all()
    f0, spread = 1 / (2 * np.pi * 1e3 * 1e-6), 50 / 1e3    # the header's propagation
    assert abs(f3.mean() - f0 * (1 + spread**2)) < 4 * f0 * spread / np.sqrt(400)
    assert abs(f3.std(ddof=1) - f0 * spread) < 4 * f0 * spread / np.sqrt(2 * 400)


def test_a_state_space_model_left_out_of_a_monte_carlo_run_is_warned_about(tmp_path, capsys):
    netlist = tmp_path / "mcss.net"
    netlist.write_text("t\nV1 a 0 1\nR1 a b {agauss(1,0.1,1)}\nC1 b 0 1\n.mc 3 seed=1\n"
                       ".ss in=V1 out=V(b)\n")
    assert main(["run", str(netlist), "-o", str(tmp_path / "out"), "--workers", "1"]) == 0
    assert "is not kept for each .mc sample" in capsys.readouterr().err
