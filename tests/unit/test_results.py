"""Result files: the CSV writer matches pandas' ``to_csv`` cell for cell, without pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mna
from mna.results import TableResult, split_complex
from mna.writers import write_results

DECK = """rlc with every analysis
.param r=100
V1 in 0 PULSE(0 1 0 1u 1u 5u 20u) AC 1
R1 in mid {r}
L1 mid out 1m
C1 out 0 10n
.op
.dc V1 0 1 0.25
.ac dec 3 1k 1meg
.tran 1u 30u
"""


def pandas_csv(result) -> str:
    """The reference: the same columns written by pandas."""
    return pd.DataFrame(split_complex(result.table())).to_csv(index=False)


@pytest.mark.parametrize("deck", [DECK, DECK + ".step param r list 50 100 200\n"],
                         ids=["plain", "stepped"])
def test_every_analysis_writes_what_pandas_would(deck, tmp_path):
    results = mna.run(mna.read_string(deck))
    paths = write_results(results, tmp_path)
    assert [p.name for p in paths] == ["op.csv", "dc.csv", "ac.csv", "tran.csv"]
    for result, path in zip(results, paths, strict=True):
        assert path.read_text() == pandas_csv(result), path.name
    ac = pd.read_csv(tmp_path / "ac.csv")
    assert {"re(V(out))", "im(V(out))"} <= set(ac.columns)


def test_awkward_floats_and_missing_values(tmp_path):
    values = np.array([0.1 + 0.2, 1e16, -0.0, 1e-300, np.nan, 123456789.0, -np.inf])
    result = TableResult("dc", {"x": np.arange(len(values), dtype=float), "y": values},
                         {"x": "", "y": "V"}, independent="x")
    (path,) = write_results([result], tmp_path)
    assert path.read_text() == pandas_csv(result)
    read = pd.read_csv(path)["y"].to_numpy()
    assert np.array_equal(read, values, equal_nan=True)  # round-trips exactly


def test_stepped_state_space_is_a_table_of_matrix_entries(tmp_path):
    deck = "rc\n.param r=100\nV1 in 0 1\nR1 in out {r}\nC1 out 0 1n\n.ss in=V1 out=V(out)\n"
    (result,) = mna.run(mna.read_string(deck + ".step param r list 100 200\n"))
    (path,) = write_results([result], tmp_path)
    assert path.read_text() == pandas_csv(result)
    table = pd.read_csv(path)
    a = table[(table["matrix"] == "A")].set_index("r")["value"]
    assert a.to_dict() == pytest.approx({100.0: -1e7, 200.0: -5e6}, rel=1e-12)
