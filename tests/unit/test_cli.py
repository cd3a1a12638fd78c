"""The command line: exit statuses 0/1/2/3, result files, nothing half-written on failure."""

from __future__ import annotations

import gc
import re
import subprocess
import sys

import pandas as pd
import pytest

from mna.cli import main

DIVIDER = """divider with a sweep
V1 in 0 DC 10
R1 in out 1k
R2 out 0 4k
.op
.dc V1 0 10 2.5
"""

# .op succeeds (g = 0.5), then the .dc sweep hits g = 1, where E1 forces V(b) = V(b):
# a singular system; the run must fail as a whole and write nothing.
FAILS_LATER = """fails at a sweep point
.param g=0.5
V1 a 0 1
R1 a b 1k
E1 b 0 b 0 {g}
.op
.dc param g 0 1 0.5
"""


def status(argv: list[str]) -> int:
    """main's exit status, whether it returns it or (argparse) raises SystemExit."""
    try:
        return main(argv)
    except SystemExit as exit_:
        return exit_.code


@pytest.fixture
def divider(tmp_path):
    path = tmp_path / "divider.net"
    path.write_text(DIVIDER)
    return path


def test_run_writes_op_and_dc_csv(divider, tmp_path, capsys):
    out = tmp_path / "out"
    assert status(["run", str(divider), "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["dc.csv", "op.csv"]
    op = pd.read_csv(out / "op.csv")
    assert list(op.columns) == ["name", "value", "unit"]
    rows = {r.name: (r.value, r.unit) for r in op.itertuples()}
    assert rows["V(out)"][0] == pytest.approx(8.0, rel=1e-12)
    assert rows["V(out)"][1] == "V"
    assert rows["I(V1)"] == (pytest.approx(-2e-3, rel=1e-12), "A")
    dc = pd.read_csv(out / "dc.csv")
    assert dc.columns[0] == "V1"
    assert list(dc["V1"]) == pytest.approx([0, 2.5, 5, 7.5, 10], abs=1e-12)
    assert list(dc["V(out)"]) == pytest.approx([0, 2, 4, 6, 8], rel=1e-12, abs=1e-12)
    printed = capsys.readouterr().out
    assert "V(out)" in printed and " V" in printed  # a summary with units


def test_run_writes_parquet(divider, tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "pq"
    assert status(["run", str(divider), "-o", str(out), "--format", "parquet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["dc.parquet", "op.parquet"]
    op = pd.read_parquet(out / "op.parquet")
    assert list(op.columns) == ["name", "value", "unit"]
    dc = pd.read_parquet(out / "dc.parquet")
    assert dc.columns[0] == "V1"
    assert dc["V(out)"].iloc[-1] == pytest.approx(8.0, rel=1e-12)


def test_run_without_output_directory_writes_nothing(divider, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert status(["run", str(divider)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["divider.net"]
    assert "Operating point" in capsys.readouterr().out


def test_check_reads_without_analysing(divider, capsys):
    assert status(["check", str(divider)]) == 0
    assert "3 elements, 2 nodes (electrical), 2 analyses" in capsys.readouterr().out


def test_check_warns_when_the_title_looks_like_an_element(tmp_path, capsys):
    path = tmp_path / "untitled.net"
    path.write_text("R1 a 0 1k\nV1 a 0 1\nR2 a 0 1\n")
    assert status(["check", str(path)]) == 0  # the CLI logs to stderr
    assert "the first line is the title" in capsys.readouterr().err


@pytest.mark.parametrize("title", ["DC motor driving a load", "DC motor held at 0 rad/s",
                                   "RC ladder of 1000 sections", "Low-pass filter 1"])
def test_check_does_not_warn_about_a_title_that_is_no_element_line(tmp_path, capsys, title):
    path = tmp_path / "titled.net"
    path.write_text(f"{title}\nV1 a 0 1\nR2 a 0 1\n")
    assert status(["check", str(path)]) == 0
    assert "title" not in capsys.readouterr().err


def test_main_leaves_the_collector_as_it_found_it(divider, tmp_path):
    """Reading pauses the collector and restores it: a caller in the same process (these
    tests) keeps its collector."""
    enabled = gc.isenabled()
    assert status(["run", str(divider), "-o", str(tmp_path / "out")]) == 0
    assert status(["run", str(tmp_path / "nothing.net")]) == 1
    assert gc.get_freeze_count() == 0
    assert gc.isenabled() == enabled


def test_the_mna_process_exits_with_mains_status(divider, tmp_path):
    """``python -m mna`` (as the console script) exits with main's status."""
    out = tmp_path / "out"
    ran = subprocess.run([sys.executable, "-m", "mna", "run", str(divider), "-o", str(out)],
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert sorted(p.name for p in out.iterdir()) == ["dc.csv", "op.csv"]
    failed = subprocess.run([sys.executable, "-m", "mna", "run", str(tmp_path / "none.net")],
                            capture_output=True, text=True)
    assert failed.returncode == 1
    assert "none.net" in failed.stderr


def test_bad_netlist_exits_1_with_location_and_caret(tmp_path, capsys):
    path = tmp_path / "bad.net"
    path.write_text("bad\nV1 a 0 1\nR1 a 0 1x2\n.op\n")
    out = tmp_path / "out"
    assert status(["run", str(path), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:3:8: error: bad number '1x2'" in err
    assert "    R1 a 0 1x2\n           ^" in err
    assert not out.exists()
    assert status(["check", str(path)]) == 1


def test_topology_error_exits_1(tmp_path, capsys):
    path = tmp_path / "loop.net"
    path.write_text("loop\nV1 a 0 1\nV2 a 0 2\n.op\n")
    assert status(["run", str(path)]) == 1
    assert "loop of across sources" in capsys.readouterr().err


def test_missing_file_exits_1(tmp_path, capsys):
    assert status(["run", str(tmp_path / "nothing.net")]) == 1
    assert "nothing.net" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [[], ["frobnicate"], ["run"], ["run", "x.net", "--format", "xlsx"], ["run", "x.net", "--plot"],
     ["check"], ["run", "x.net", "--bogus"]],
)
def test_bad_command_line_exits_2(argv, capsys):
    assert status(argv) == 2


def test_failing_analysis_exits_3_and_leaves_no_files(tmp_path, capsys):
    path = tmp_path / "later.net"
    path.write_text(FAILS_LATER)
    out = tmp_path / "out"
    assert status(["run", str(path), "-o", str(out)]) == 3
    err = capsys.readouterr().err
    assert "singular" in err.lower()
    assert "V(b)" in err or "I(E1)" in err  # names the unknowns at fault
    leftovers = sorted(p.name for p in out.rglob("*")) if out.exists() else []
    assert leftovers == []


def test_failed_write_leaves_nothing_half_written(divider, tmp_path, monkeypatch):
    import mna.writers

    out = tmp_path / "out"
    original = mna.writers.WRITERS["csv"]

    def broken(result, temporary):  # the second file fails while being written
        if result.kind == "dc":
            temporary.write_text("half")
            raise ZeroDivisionError("disk full")
        original.write(result, temporary)

    monkeypatch.setitem(mna.writers.WRITERS, "csv", mna.writers.Writer("csv", broken))
    assert status(["run", str(divider), "-o", str(out / "a" / "b")]) == 4   # an internal error
    assert not out.exists()   # nor the folders it made
    out.mkdir()
    (out / "mine.txt").write_text("kept")
    assert status(["run", str(divider), "-o", str(out)]) == 4
    assert [p.name for p in out.iterdir()] == ["mine.txt"]   # a folder given is kept


def test_failing_sweep_names_the_sweep_point(tmp_path, capsys):
    path = tmp_path / "later.net"
    path.write_text(FAILS_LATER)
    assert status(["run", str(path)]) == 3
    assert re.search(r"\bg\s*=\s*1\b", capsys.readouterr().err)


def test_run_writes_the_noise_and_tf_tables_and_plots(tmp_path, capsys):
    path = tmp_path / "noise.net"
    path.write_text("divider noise\nV1 in 0 DC 0 AC 1\nR1 in out 1k\nR2 out 0 1k\n"
                    ".noise V(out) V1 dec 1 1 100\n.tf V(out) V1\n")
    out = tmp_path / "out"
    assert status(["run", str(path), "-o", str(out), "--plot"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["noise.csv", "noise.png", "tf.csv"]
    noise = pd.read_csv(out / "noise.csv")
    assert list(noise.columns) == ["frequency", "onoise_spectrum", "inoise_spectrum",
                                   "onoise_total", "inoise_total"]
    assert noise["inoise_spectrum"].iloc[0] == pytest.approx(
        2 * noise["onoise_spectrum"].iloc[0], rel=1e-12)
    tf = pd.read_csv(out / "tf.csv")
    assert list(tf["name"]) == ["transfer_function", "V1#input_impedance",
                                "output_impedance_at_V(out)"]
    printed = capsys.readouterr().out
    assert "total output noise" in printed and "Transfer function information" in printed
