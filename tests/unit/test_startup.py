"""Start-up stays light: sympy and pandas load only when a netlist or a result needs them
(importing each takes a third of a second, most of a small run's wall time); expressions are
evaluated without sympy, and CSV files are written without pandas."""

import subprocess
import sys

PLAIN = "rc\nV1 in 0 PULSE(0 1 0 1u 1u 1 2)\nR1 in out 1k\nC1 out 0 1n\n.tran 1u 10u\n.op\n"
REPORT = "\nimport sys\nprint(' '.join(m for m in ('sympy', 'pandas') if m in sys.modules))"


def modules_loaded(code: str) -> set[str]:
    output = subprocess.run([sys.executable, "-c", code + REPORT], capture_output=True,
                            text=True, check=True).stdout
    return set(output.splitlines()[-1].split())  # the last line: after what the code printed


def test_a_plain_netlist_runs_without_sympy_or_pandas():
    assert modules_loaded(f"import mna\nmna.run(mna.read_string({PLAIN!r}))") == set()


def test_writing_csv_files_needs_no_pandas(tmp_path):
    netlist = tmp_path / "rc.net"
    netlist.write_text(PLAIN)
    code = f"from mna.cli import main\nmain(['run', {str(netlist)!r}, '-o', {str(tmp_path)!r}])"
    assert modules_loaded(code) == set()
    assert sorted(p.name for p in tmp_path.glob("*.csv")) == ["op.csv", "tran.csv"]


def test_expressions_need_no_sympy():
    netlist = PLAIN.replace("1k", "{2*r}").replace("rc\n", "rc\n.param r=500\n")
    assert modules_loaded(f"import mna\nmna.run(mna.read_string({netlist!r}))") == set()


def test_behavioural_sources_and_tables_load_them_when_needed():
    netlist = PLAIN + "B1 b 0 I={V(out)**2}\nR2 b 0 1\n"
    code = f"import mna\nresults = mna.run(mna.read_string({netlist!r}))\nresults[0].to_dataframe()"
    assert modules_loaded(code) == {"sympy", "pandas"}
