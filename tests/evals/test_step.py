"""``.step param``: every analysis repeated, tables stacked under the stepped parameters."""

from __future__ import annotations

import numpy as np
import pytest

import mna
from mna.cli import main

DIVIDER = """stepped divider
.param Rtop=1k
V1 a 0 10
R1 a b {Rtop}
R2 b 0 1k
.step param Rtop list 1k 3k 9k
.op
.dc V1 0 10 5
"""


def test_step_repeats_op_and_dc_with_leading_parameter_columns():
    op, dc = mna.run(mna.read_string(DIVIDER))
    table = op.to_dataframe()
    assert list(table.columns[:2]) == ["Rtop", "name"]
    vb = table[table["name"] == "V(b)"]
    np.testing.assert_allclose(vb["Rtop"], [1e3, 3e3, 9e3])
    np.testing.assert_allclose(vb["value"], [10 * 1e3 / (r + 1e3) for r in (1e3, 3e3, 9e3)],
                               rtol=1e-12)
    sweep = dc.to_dataframe()
    assert list(sweep.columns[:2]) == ["Rtop", "V1"]
    last = sweep[sweep["Rtop"] == 9e3]
    np.testing.assert_allclose(last["V(b)"], last["V1"] * 0.1, rtol=1e-12)


def test_nested_steps_cover_every_combination(tmp_path):
    netlist = tmp_path / "nested.net"
    netlist.write_text(DIVIDER.replace(".dc V1 0 10 5\n", ".step param g 1 2 1\n.param g=0\n"))
    assert main(["run", str(netlist), "-o", str(tmp_path / "out")]) == 0
    table = (tmp_path / "out" / "op.csv").read_text().splitlines()
    assert table[0] == "Rtop,g,name,value,unit"
    assert len(table) == 1 + 3 * 2 * 3


def test_step_of_an_undefined_parameter_is_a_located_error():
    with pytest.raises(mna.NetlistError, match="undefined parameter 'nope'") as error:
        mna.run(mna.read_string("t\nV1 a 0 1\nR1 a 0 1\n.step param nope 1 2 1\n.op\n"))
    assert error.value.location.line == 4


def test_points_share_symbolic_analyses_and_the_numbers_do_not_change(monkeypatch):
    """A 1,200-unknown ladder transient: a nested dissection order, analysed once for every
    point when kept, at every point when not; the tables are the same to the bit."""
    from mna import linalg
    from mna.fast import klu

    if not linalg.klu_available():
        pytest.skip("no KLU library")
    lines = ["ladder", ".param rs=50", "V1 in 0 PULSE(0 1 0 10n 10n 1 2)", "R0 in n0 {rs}"]
    lines += [f"R{k} n{k - 1} n{k} 100\nC{k} n{k} 0 1p" for k in range(1, 1200)]
    lines += [".options stepcontrol=fixed", ".save V(n10)", ".tran 1n 20n",
              ".step param rs list 50 60 70"]
    circuit = mna.read_string("\n".join(lines) + "\n")
    made = []
    monkeypatch.setattr(klu, "Symbolic", lambda *args, made_by=klu.Symbolic: (
        made.append(args[3] is not None), made_by(*args))[1])
    tables = {}
    for kept in (0, linalg.ANALYSES):
        monkeypatch.setattr(linalg, "_analyses", type(linalg._analyses)())
        monkeypatch.setattr(linalg, "ANALYSES", kept)
        made.clear()
        (tables[kept],) = mna.run(circuit, workers=1)
        assert made.count(True) == (1 if kept else 6)   # not kept: 2 a point (weigh, use)
    np.testing.assert_array_equal(tables[0].to_dataframe(), tables[linalg.ANALYSES].to_dataframe())
