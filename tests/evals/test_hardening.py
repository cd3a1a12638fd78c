"""Hostile and careless input: every case ends in a located error, a warning or a clean exit
status, in bounded time and memory, with nothing half-written and no silent wrong answer."""

from __future__ import annotations

import errno
import logging
import os
import re
import stat
import subprocess
import sys

import pytest

import mna
import mna.tables
import mna.writers
from mna.cli import main
from mna.errors import NetlistError


def error_of(text: str) -> NetlistError:
    with pytest.raises(NetlistError) as info:
        mna.run(mna.read_string(text, "bad.net"))
    return info.value


def place(error: NetlistError) -> tuple[int, int]:
    return error.location.line, error.location.column


# -- silent wrong answers --------------------------------------------------------------------

def test_a_parameter_outranks_a_constant_of_the_same_name():
    op = mna.operating_point(mna.read_string(
        "t\n.param e=5 pi=3\nV1 a 0 {e}\nV2 b 0 {pi}\nR1 a 0 1\nR2 b 0 1\n"))
    assert (op["V(a)"], op["V(b)"]) == (5.0, 3.0)
    op = mna.operating_point(mna.read_string("t\nV1 a 0 {e}\nR1 a 0 1\n"))
    assert op["V(a)"] == pytest.approx(2.718281828459045, rel=1e-15)


def test_letters_after_a_scale_suffix_that_are_no_unit_are_warned_about(caplog):
    with caplog.at_level(logging.WARNING, logger="mna"):
        circuit = mna.read_string("t\nI1 0 a 1\nCm a 0 m=10kg\nR1 a 0 b=2\n", "mass.net")
    assert circuit.elements_by_key["cm"].value == 10_000.0     # SPICE's reading, kept
    assert "mass.net:3:10: '10kg' reads as 10000" in caplog.text and "'g'" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mna"):
        mna.read_string("t\nV1 a 0 5V\nC1 a 0 10uF\nR1 a 0 4.7kOhm\nL1 a b 1mH\nR2 b 0 1\n")
    assert not caplog.text


# -- hangs and memory ------------------------------------------------------------------------

@pytest.mark.parametrize("value, column", [("{10**10**10}", 11), ("{9**9**9}", 10),
                                           ("{pow(1749990,1749990)}", 9)])
def test_numbers_that_would_grow_without_bound_overflow_at_their_place(value, column):
    error = error_of(f"t\nV1 a 0 1\nR1 a 0 {value}\n")
    assert "overflows" in error.message and place(error) == (3, column)


def test_an_include_of_a_device_is_refused(tmp_path):
    (tmp_path / "top.net").write_text("top\nV1 a 0 1\n.include /dev/zero\nR1 a 0 1\n")
    with pytest.raises(NetlistError, match="cannot include /dev/zero: not a regular file") as info:
        mna.read(tmp_path / "top.net")
    assert place(info.value) == (3, 10)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_refused_before_it_is_opened(tmp_path):
    # opening a FIFO blocks until something writes to it: the run would hang
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "top.net").write_text("top\nV1 a 0 1\n.include pipe\nR1 a 0 1\n")
    for netlist, message in (("top.net", "top.net:3:10: error: cannot include pipe: not a "
                                         "regular file"),
                             ("pipe", "cannot read netlist pipe: not a regular file")):
        # in a process of its own: were the pipe opened, the test would hang, not fail
        run = subprocess.run([sys.executable, "-m", "mna", "check", netlist], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 1 and message in run.stderr


@pytest.mark.parametrize("card, what", [
    (".tran 1n 1", ".tran asks for 1e+09 points"),
    (".tran {1e-20} 1m", ".tran asks for 1e+17 points"),
    (".ac lin 1e9 1 10", ".ac asks for 1e+09 points"),
    (".dc V1 0 1 1e-12", ".dc asks for 1e+12 points"),
    (".step param r 1 2 1e-12\n.op", ".step asks for 1e+12 points"),
    (".mc 1e12\n.op", ".mc asks for 1e+12 points"),
    (".mc 1e7\n.step param r list 1 2\n.op", ".mc at every .step point asks for 2e+07 points"),
    (".dc V1 0 1 1e-6\n.step param r 1 20 1",   # each point's table within maxpoints
     ".dc asks for 1e+06 points at each of 20 .step points (2e+07 in all)"),
])
def test_too_many_points_are_refused_before_anything_is_made(card, what):
    error = error_of(f"t\n.param r=1\nV1 a 0 1 AC 1\nR1 a 0 {{r}}\n{card}\n")
    assert what in error.message and "maxpoints=10000000" in error.message
    assert error.location.line == 5


@pytest.mark.parametrize("card", [".tran 1e-300 1e-299", ".tran 1n 1m 0 1e-31"])
def test_times_below_physical_resolution_are_refused(card):
    error = error_of(f"t\nV1 a 0 1\nR1 a 0 1\nC1 a 0 1\n{card}\n")
    assert "times below 1e-30 s are not resolved" in error.message and place(error) == (5, 1)


def test_maxpoints_can_be_raised():
    circuit = mna.read_string("t\nV1 a 0 1\nR1 a 0 1\n.options maxpoints=20\n.dc V1 0 1 0.1\n")
    assert len(mna.run(circuit)[0]["V1"]) == 11
    error = error_of("t\nV1 a 0 1\nR1 a 0 1\n.options maxpoints=5\n.dc V1 0 1 0.1\n")
    assert ".dc asks for 11 points" in error.message


# -- tracebacks that are now located errors --------------------------------------------------

@pytest.mark.parametrize("value, message, column", [
    ("{1/0}", "division by zero: 1 / 0", 12), ("{ln(0)}", r"ln\(0\) is not a real", 11),
    ("{sqrt(-1)}", r"sqrt\(-1\) is not a real", 11), ("{asin(2)}", r"asin\(2\) is not a real", 11),
    ("{0.0/0.0}", "division by zero", 14),
])
def test_parameters_that_are_no_finite_real_number(value, message, column):
    error = error_of(f"t\n.param x={value}\nV1 a 0 {{x}}\nR1 a 0 1\n")
    assert error.location.line == 2 and error.location.column == column
    with pytest.raises(NetlistError, match=message):
        raise error


def test_an_analysis_value_that_is_no_real_number():
    error = error_of("t\nV1 a 0 1\nR1 a 0 1\n.tran {1 < log10(-1)} 1m\n")
    assert r"log10(-1) is not a real number" in error.message and place(error) == (4, 12)


def test_deep_nesting_is_an_error_not_a_recursion():
    error = error_of("t\nV1 a 0 {" + "(" * 300 + "1" + ")" * 300 + "}\nR1 a 0 1\n")
    assert "nested more than 100 levels" in error.message and error.location.line == 2


def test_func_calls_that_double_at_each_level_are_an_error_not_a_memory_bomb():
    # each .func call copies its arguments: 2**30 copies of x took minutes and gigabytes
    doubling = "".join(f".func f{k}(x)={{f{k - 1}(x)+f{k - 1}(x)}}\n" for k in range(1, 31))
    error = error_of(f"t\n.func f0(x)={{x}}\n{doubling}V1 a 0 {{f30(1)}}\nR1 a 0 1\n.op\n")
    assert "grows beyond 100000 operations with f15() expanded" in error.message
    assert error.location.line == 18
    nested = "f(" * 40 + "V(a)" + ")" * 40
    error = error_of(f"t\n.func f(x)={{x+x}}\nV1 a 0 1\nB1 0 b I={{{nested}}}\nR2 b 0 1\n.op\n")
    assert "grows beyond" in error.message and error.location.line == 4


def test_a_byte_that_is_not_utf8_is_read_as_latin1(tmp_path, caplog):
    path = tmp_path / "latin.net"
    path.write_bytes("caf\xe9 deck\n* r\xe9sistance\nV1 a 0 1\nR1 a 0 2\n.op\n".encode("latin-1"))
    with caplog.at_level(logging.WARNING, logger="mna"):
        circuit = mna.read(path)
    assert circuit.title == "café deck"
    assert f"{path}:1:4: not UTF-8 (byte 0xe9)" in caplog.text
    assert mna.operating_point(circuit)["I(V1)"] == -0.5


@pytest.mark.parametrize("value, message, column", [
    ("1e-310", "inverse finite", 1), ("1e999", "the number '1e999' is not finite", 8)])
def test_values_beyond_floating_point(value, message, column):
    error = error_of(f"t\nV1 a 0 1\nR1 a 0 {value}\n")
    assert message in error.message and place(error) == (3, column)


# -- the command line --------------------------------------------------------------------------

DECK = "divider\nV1 a 0 2\nR1 a b 1k\nR2 b 0 1k\n.op\n.ss in=V1 out=V(b)\n"


@pytest.fixture
def deck(tmp_path):
    path = tmp_path / "deck.net"
    path.write_text(DECK)
    return path


def test_output_into_an_existing_file_or_an_uncreatable_folder_is_a_usage_error(deck, tmp_path,
                                                                                capsys):
    (tmp_path / "file").write_text("x")
    assert main(["run", str(deck), "-o", str(tmp_path / "file")]) == 2
    assert "not a directory" in capsys.readouterr().err
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who may write anywhere")
        assert main(["run", str(deck), "-o", str(locked / "out")]) == 2
        assert "cannot create files" in capsys.readouterr().err
    finally:
        locked.chmod(stat.S_IRWXU)


def test_a_closed_pipe_ends_the_output_quietly(deck):
    shell = f"{sys.executable} -m mna ss {deck} | head -1"
    ran = subprocess.run(shell, shell=True, capture_output=True, text=True)
    assert ran.stdout.startswith("State-space model")
    assert "Traceback" not in ran.stderr and "BrokenPipe" not in ran.stderr


def test_an_internal_error_exits_4_in_one_line_and_shows_the_traceback_under_v(
        deck, monkeypatch, capsys):
    def broken(*args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(mna, "run", broken)
    assert main(["run", str(deck)]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err and "RuntimeError: a bug" in err
    assert main(["run", "-v", str(deck)]) == 4
    assert "Traceback" in capsys.readouterr().err


def test_quiet_prints_nothing_but_errors(deck, tmp_path, capsys):
    assert main(["run", "-q", str(deck), "-o", str(tmp_path / "out")]) == 0
    assert capsys.readouterr() == ("", "")


def test_version_and_plain_help(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("mna ")
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "mna run FILE" in text and "``" not in text


def test_format_without_output_is_a_usage_error(deck, capsys):
    assert main(["run", str(deck), "--format", "parquet"]) == 2
    assert "--format needs -o DIR" in capsys.readouterr().err


def test_files_are_made_with_the_umask(deck, tmp_path):
    previous = os.umask(0o022)
    try:
        assert main(["run", "-q", str(deck), "-o", str(tmp_path / "out")]) == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "out" / "op.csv").stat().st_mode) == 0o644


def test_parquet_keeps_the_units(deck, tmp_path):
    pytest.importorskip("pyarrow")
    assert main(["run", "-q", str(deck), "-o", str(tmp_path), "--format", "parquet"]) == 0
    frame = mna.read_parquet(tmp_path / "op.parquet")
    assert frame.attrs["units"]["V(b)"] == "V" and frame.attrs["units"]["I(V1)"] == "A"


def test_an_include_from_elsewhere_reads_and_a_foreign_file_is_never_shown(tmp_path, capsys):
    elsewhere = tmp_path / "lib"
    elsewhere.mkdir()
    (elsewhere / "part.inc").write_text("R2 b 0 1k\n")
    secret = elsewhere / "secret"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "top.net").write_text("top\nV1 a 0 2\nR1 a b 1k\n.include ../lib/part.inc\n.op\n")
    assert mna.operating_point(mna.read(folder / "top.net"))["V(b)"] == 1.0
    (folder / "bad.net").write_text(f"bad\nV1 a 0 2\n.include {secret}\n.op\n")
    assert main(["check", str(folder / "bad.net")]) == 1
    err = capsys.readouterr().err
    assert f"{secret}:1:" in err and "error: not a netlist line" in err
    assert "root" not in err.replace(str(tmp_path), "")


@pytest.mark.parametrize("expression, message, column", [
    ("(-8)**(1/3)*V(a)", "-8 ^ 0.333333 is not a real number", 15),
    ("9**9**9*V(a)", "9 ^ 3.8742e+08 overflows", 12),
    ("sqrt(-1)+V(a)", "sqrt(-1) is not a real number", 11),
])
def test_constants_in_behavioural_sources_are_computed_as_everywhere(expression, message,
                                                                     column):
    error = error_of(f"t\nV1 a 0 1\nR1 a 0 1\nB1 0 a I={{{expression}}}\n.op\n")
    assert message in error.message and place(error) == (4, column)


def test_an_element_with_every_terminal_on_the_reference_is_harmless():
    (op,) = mna.run(mna.read_string("t\nB1 0 0 I={V(0)+1}\n.op\n"))
    assert op.names == ()


@pytest.mark.parametrize("cards", [".op", ".dc param a 0 2 1", ".step param a list 1 0\n.op"])
def test_a_resistance_that_a_parameter_makes_zero_is_an_error_at_the_resistor(
        cards, tmp_path, capsys):
    netlist = tmp_path / "zero.net"
    netlist.write_text(f"t\n.param a=0\nV1 x 0 1\nR1 x 0 {{a}}\n{cards}\n.end\n")
    assert main(["run", str(netlist), "--workers", "2"]) == 1
    message = capsys.readouterr().err
    # located at the resistor, also when a worker process met it
    assert message.startswith(f"{netlist}:4:1: error: R1: the resistance is 0")


@pytest.mark.parametrize("text, message, column", [
    ("t\n.subckt s p p\nR1 p 0 1\n.ends\nV1 a 0 1\nX1 a b s\nR2 b 0 1\n.op\n",
     "port 'p' is listed twice", 13),
    ("t\n.func f(x,x)={x}\nV1 a 0 {f(1,2)}\nR1 a 0 1\n.op\n", "an argument is named twice", 1),
    ("t\n.param time=5\nV1 a 0 {time}\nR1 a 0 1\n.op\n", "'time' is reserved", 8),
    ("t\n.if (1)\nR1 a 0 1\n.else\nR1 a 0 2\n.else\n.endif\nV1 a 0 1\n.op\n",
     ".else after the .else", 1),
    ("t\n.if (0)\nR1 a 0 1\n.else\nR1 a 0 2\n.elseif (1)\n.endif\nV1 a 0 1\n.op\n",
     ".elseif after the .else", 1),
    ("t\nV1 a 0 PULSE(0 1 0 1n 1n 1 2) SIN(0 1 1k)\nR1 a 0 1\n.tran 1m 10m\n",
     "a second waveform", 31),
    ("t\nV1 a 0 PULSE(0 1 0 1n 1n -1 2)\nR1 a 0 1\n.tran 1m 10m\n",
     "PULSE times must not be negative: pw = -1", 8),
    ("t\nV1 a 0 1\nR1 a 0 1k\n.op\n.lib parts.lib\nR2 a 0 1k\n.end\n",
     ".lib NAME opens a library section, and no .endl closes it", 1),
    ("t\n.param p=1k\nV1 a 0 1\nR1 a 0 {p}\n.step param p list 1k 2k\n"
     ".step param p list 3k 4k\n.op\n", "'p' is swept twice", 13),
    ("t\n.param p=1k\nV1 a 0 1\nR1 a 0 {p}\n.step param p list 5 6\n"
     ".dc param p 1k 2k 1k\n", "'p' is swept twice", 11),
    ("t\nV1 a 0 1\nR1 a 0 1k\n.dc V1 0 1 0.5 V1 0 2 1\n", "'V1' is swept twice", 16),
    ("t\nV1 a 0 1\nR1 a 0 1k\n.options reltol 1e-3\n.op\n",
     "option 'reltol' needs a value: reltol=value", 10),
    ("t\nV1 a 0 1\nR1 a 0 r=1k r=2k\n.op\n", "r= is given twice", 13),
])
def test_what_would_be_silently_dropped_or_merged_is_refused(text, message, column):
    # each ran before: the second port floated, the second argument or waveform or the
    # .else branch was dropped, {time} read 0 at the operating point, the lines after an
    # unclosed .lib section were skipped, a variable's later sweep replaced its earlier one
    error = error_of(text)
    assert message in error.message and error.location.column == column


@pytest.mark.parametrize(("cards", "message", "line"), [
    (".tran 1u 2u\n.four 1k V(a)\n", ".four: the transient is shorter than a period", 5),
    (".op\n.four 1k V(a)\n", ".four: the netlist has no .tran analysis", 5),
    (".op\n.meas ac x max V(a)\n.mc 20 seed=1\n", ".meas x: the netlist has no .ac", 5),
])
def test_measurements_of_what_is_not_there_are_located(cards, message, line):
    # .four's error had no place; a .meas of a missing analysis failed every .mc sample
    # (exit 3) instead of the netlist
    error = error_of(f"t\nV1 a 0 1\nR1 a 0 1k\n{cards}")
    assert message in error.message and error.location.line == line


def test_sources_whose_corners_exceed_maxpoints_are_refused_before_they_are_made():
    error = error_of("t\nV1 a 0 PULSE(0 1 0 1f 1f 1f 3f)\nR1 a b 1\nC1 b 0 1\n.tran 1 1\n")
    assert "corners of the sources' waveforms" in error.message and place(error) == (5, 1)


def test_a_sine_that_grows_beyond_floats_ends_the_run_with_an_error():
    with pytest.raises(mna.SingularSystemError, match="grows without bound"):
        mna.run(mna.read_string("t\nV1 a 0 SIN(0 1 1k 0 -1e6)\nR1 a 0 1\n.tran 1m 10m\n"))


TWO = "two\nV1 a 0 PULSE(0 1 0 1n 1n 1 2)\nR1 a b 1k\nC1 b 0 1u\n.op\n.tran 10u 1m\n"


@pytest.mark.parametrize("cards", ["", ".mc 2 seed=1\n"])
def test_a_write_that_fails_leaves_no_file_of_the_run(cards, tmp_path, monkeypatch, capsys):
    netlist = tmp_path / "two.net"
    netlist.write_text(TWO + cards)
    written, streamed = mna.writers.write_csv, mna.tables._Stream._flush

    def full_disk(path):
        if "tran" in path.name:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(mna.writers, "write_csv", lambda columns, path: (
        full_disk(path), written(columns, path)))
    monkeypatch.setattr(mna.tables._Stream, "_flush", lambda stream: (
        full_disk(stream.path), streamed(stream)))
    out = tmp_path / "out"
    assert main(["run", str(netlist), "-o", str(out), "-q", "--workers", "1"]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert not out.exists()    # neither op.csv nor a part of tran.csv, nor the folder made


def test_a_folder_in_the_way_of_a_result_leaves_no_file_of_the_run(tmp_path, capsys):
    netlist = tmp_path / "two.net"
    netlist.write_text(TWO)
    out = tmp_path / "out"
    (out / "tran.csv").mkdir(parents=True)
    assert main(["run", str(netlist), "-o", str(out), "-q"]) == 2
    assert "cannot write tran.csv into" in (err := capsys.readouterr().err)
    assert "a folder of that name is in the way" in err
    assert [path.name for path in out.iterdir()] == ["tran.csv"]


def test_an_error_that_is_no_file_s_is_not_called_a_write(tmp_path, monkeypatch, capsys):
    # a pool's or a connection's OSError has no file name: it is no output problem
    netlist = tmp_path / "two.net"
    netlist.write_text(TWO)
    monkeypatch.setattr(mna.writers, "write_csv", lambda columns, path: (_ for _ in ()).throw(
        ConnectionRefusedError(111, "Connection refused")))
    assert main(["run", str(netlist), "-o", str(tmp_path / "out"), "-q"]) == 4
    assert "cannot write" not in capsys.readouterr().err


def test_subcircuits_that_multiply_are_stopped_at_an_element_count(monkeypatch):
    import mna.netlist.elaborate as elaborate

    monkeypatch.setattr(elaborate, "MAX_ELEMENTS", 1000)   # 2 million in earnest
    levels = "".join(f".subckt s{k} a\nX1 a s{k + 1}\nX2 a s{k + 1}\n.ends\n" for k in range(30))
    error = error_of(f"t\n{levels}.subckt s30 a\nR1 a 0 1\n.ends\nV1 a 0 1\nX1 a s0\n.op\n")
    assert "would make some 1.074e+09 elements, more than 1000" in error.message
    flat = "".join(f"R{k} a 0 1\n" for k in range(1001))   # counted as they are read
    assert "more than 1000 elements" in error_of(f"t\nV1 a 0 1\n{flat}.op\n").message


def test_subcircuits_that_multiply_are_refused_before_they_are_expanded(monkeypatch):
    """Forty levels of two instances each make 2^40 resistors: counted before the top
    instance expands, they are refused at once (the element cap was reached after 59 s and
    2.7 GB). The count goes through local subcircuits: 99 instances of ten resistors stay
    within a cap of 1000, 101 do not."""
    import mna.netlist.elaborate as elaborate

    levels = "".join(f".subckt s{k} a b\nX1 a m s{k + 1}\nX2 m b s{k + 1}\n.ends\n"
                     for k in range(40))
    error = error_of(f"t\n{levels}.subckt s40 a b\nR1 a b 1\n.ends\nV1 a 0 1\nX1 a 0 s0\n.op\n")
    assert "X1 would make some 1.1e+12 elements, more than 2000000" in error.message
    monkeypatch.setattr(elaborate, "MAX_ELEMENTS", 1000)
    ten = "".join(f"R{k} a 0 1k\n" for k in range(10))
    for count, refused in ((99, False), (101, True)):
        body = "".join(f"X{k} a inner\n" for k in range(count))
        text = (f"t\n.subckt outer a\n.subckt inner a\n{ten}.ends\n{body}.ends\nV1 a 0 1\n"
                "X1 a outer\n.op\n")
        if refused:
            assert f"would make some {10 * count}" in error_of(text).message
        else:
            assert len(mna.read_string(text).elements) == 10 * count + 1


def test_a_long_chain_of_subcircuits_is_refused_by_the_nesting_limit():
    # counting the elements it would make recursed 1200 deep: RecursionError
    chain = "".join(f".subckt s{k} a\nX1 a s{k + 1}\n.ends\n" for k in range(1200))
    error = error_of(f"t\n{chain}.subckt s1200 a\nR1 a 0 1\n.ends\nV1 a 0 1\nX1 a s0\n.op\n")
    assert "nested more than 50 levels deep" in error.message


def test_mc_samples_are_not_counted_as_held_tables(tmp_path):
    """.mc streams each sample's tables to disk: 20 samples of a 101-point .dc run under
    maxpoints=1000 (counted with the samples, it was refused)."""
    netlist = tmp_path / "mc.net"
    netlist.write_text("t\nV1 a 0 1\nR1 a b {agauss(1k,50,1)}\nR2 b 0 1k\n"
                       ".options maxpoints=1000\n.dc V1 0 1 0.01\n.mc 20 seed=1\n")
    assert main(["run", str(netlist), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert len((tmp_path / "out" / "dc.csv").read_text().splitlines()) == 1 + 2020


def test_nesting_beyond_the_limit_says_so():
    chain = "".join(f".subckt s{k} a\nX1 a s{k + 1}\n.ends\n" for k in range(60))
    error = error_of(f"t\n{chain}.subckt s60 a\nR1 a 0 1\n.ends\nV1 a 0 1\nX1 a s0\n.op\n")
    assert "nested more than 50 levels deep" in error.message


@pytest.mark.parametrize("text, message", [
    ("t\nI1 0 x 1\nCm x 0 m=2\nD1 x 0 dm\n.model dm D\n.op\n",
     "a diode is electrical, but node x is in the translational domain"),
    ("t\nI1 0 w 1\nCj w 0 J=1\nQ1 w w 0 qn\n.model qn NPN\n.op\n",
     "a bipolar transistor is electrical, but node w is in the rotational domain"),
    ("t\nV1 a 0 1\nL1 a 0 1m\nK1 L1 L1 0.5\n.op\n", "couples 'l1' with itself"),
    ("t\nI1 0 x 1\nLk x 0 k=100\nCm x 0 m=1\nI2 0 p 1\nLf p 0 I=1\nCf p 0 C=1\nK1 Lk Lf 0.5\n"
     ".tran 1m 10m\n", "couples a translational element with a fluid one"),
])
def test_elements_outside_the_domain_where_they_mean_something_are_refused(text, message):
    # each ran before: a diode's exponential law between velocities, L(1 + 2k) for a
    # self-coupling, a mutual inductance between a spring and a fluid inertance
    assert message in error_of(text).message


def test_json_output_holds_no_nan(tmp_path):
    # JSON has no NaN: a .meas that found nothing is null (bare NaN broke JSON.parse)
    import json

    netlist = tmp_path / "m.net"
    netlist.write_text("t\nV1 a 0 SIN(0 1 1k)\nR1 a 0 1\n.tran 10u 1m\n"
                       ".meas tran never WHEN V(a)=5\n.meas tran peak MAX V(a)\n")
    assert main(["run", str(netlist), "-o", str(tmp_path / "out"), "--format", "json",
                 "-q"]) == 0
    text = (tmp_path / "out" / "meas.json").read_text()
    values = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    assert values["columns"]["value"][0] is None
    assert values["columns"]["value"][1] == pytest.approx(1.0, abs=1e-3)


def test_a_solution_beyond_floats_is_not_called_singular():
    # 1e308 A into 10 Ohm: the matrix is as regular as can be, the answer overflows
    with pytest.raises(mna.SingularSystemError, match="beyond the floating-point range"):
        mna.run(mna.read_string("t\nI1 0 a 1e308\nR1 a 0 10\n.op\n"))


@pytest.mark.parametrize("element", ["D1 b 0 dm 0", "D1 b 0 dm -1", "D1 b 0 dm {a}",
                                     "Q1 b b 0 qn {a}"])
def test_a_device_area_that_is_not_positive_is_an_error_at_the_device(element):
    # area 0 ran to a result with overflow warnings; -1 failed to converge, unlocated
    error = error_of(f"t\n.param a=0\nV1 a 0 1\nR1 a b 1\n{element}\n.model dm D\n"
                     ".model qn NPN\n.op\n")
    assert "area must be positive" in error.message and place(error) == (5, 1)


def test_the_rows_of_a_stepped_run_are_counted_against_maxpoints():
    # each point's table within maxpoints, their stack in memory not
    text = ("t\n.param p=1\nV1 a 0 PULSE(0 1 0 1n 1n 1 2)\nR1 a b {p}\nC1 b 0 1\n"
            ".step param p 1 10 1\n.options maxpoints=100 stepcontrol=fixed workers=1\n"
            ".tran 1 20\n.op\n")
    error = error_of(text)   # each point's 20 (fixed steps) at every one of the 10
    assert ".tran asks for 20 points at each of 10 .step points (200 in all)" in error.message
    assert place(error) == (8, 1)
    error = error_of(text.replace("maxpoints=100", "maxpoints=215"))   # 21 + 3 rows each
    assert ".step (the rows of all its tables) asks for 240 points" in error.message
    assert place(error) == (6, 13)
    assert mna.run(mna.read_string(text.replace("maxpoints=100", "maxpoints=240")))


@pytest.mark.parametrize("line, message, column", [
    ("C1 b 0 1u tc2=1 temp=1e200", "C1: its temperature factor 1 \\+ tc1 dT \\+ tc2 dT\\^2 is inf",
     1),
    ("R1 b 0 1k tce=1 temp=1e5", "R1: its temperature factor 1.01\\^.tce dT. overflows", 1),
    ("L1 b 0 1m scale=0", "L1: the value is 0 at its temperature, scaled", 1),
    ("L1 b 0 1m tc1=-0.01 temp=127", "L1: the value is 0 at its temperature, scaled", 1),
    ("C1 b 0 1u cap=2u", "C1: give one value .a bare analog value or one of c=, cap=, "
                         "capacitance=, j=, m=.", 11),
])
def test_a_temperature_factor_or_scale_that_ruins_a_value_is_refused_at_its_line(
        line, message, column):
    """The temperature factor overflowed (OverflowError, an internal error), and an
    inductance made 0 by scale= or the factor ran as a short (found by a fuzz)."""
    error = error_of(f"t\nV1 a 0 DC 1 AC 1\nR0 a b 1k\n{line}\n.op\n")
    assert re.search(message, error.message), error.message
    assert place(error) == (4, column)


def test_a_coupling_of_inductances_of_two_signs_is_refused():
    error = error_of("t\nV1 a 0 AC 1\nR1 a b 1\nL1 b 0 1m\nL2 c 0 1m scale=-1\nR2 c 0 1\n"
                     "K1 L1 L2 0.5\n.op\n")
    assert "K1: couples L1 and L2, whose values at their temperature, scaled, are not of one " \
           "sign" in error.message
    assert place(error) == (7, 1)


def test_temp_beside_dtemp_warns_that_dtemp_is_ignored(caplog):
    with caplog.at_level("WARNING", logger="mna"):
        op = mna.operating_point(mna.read_string(
            "t\nI1 0 a 1\nR1 a 0 1k tc1=0.01 temp=50 dtemp=10\n"))
    assert "R1: temp= gives its temperature; dtemp= is ignored" in caplog.text
    assert op["V(a)"] == pytest.approx(1e3 * (1 + 0.01 * 23), rel=1e-12)
