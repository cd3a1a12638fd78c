"""The fixed-step loop's two ways of taking a step agree: a small linear system's dense
propagator and the sparse solve per step give the same waveforms to round-off; its
in-place mat-vecs are ``matrix @ x``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mna
import mna.analysis.stepping as stepping

# algebraic unknowns (the voltage source's current), two storage elements, two input kinds
DECK = """rlc with a pulse and a sine
V1 in 0 PULSE(0 1 1u 2u 2u 20u 50u)
I1 0 mid SIN(0 1m 30k)
R1 in mid 50
L1 mid out 1m
C1 out 0 100n
R2 out 0 1k
.options method={method}
.tran 0.5u 200u
"""

NORTON = """norton rc (C invertible, for forward Euler)
I1 0 n SIN(0 1 2)
R1 n 0 1
C1 n 0 1
R2 n m 2
C2 m 0 0.5
.options method=fe
.tran 0.01 3
"""


def waveforms(text: str, dense_limit: int, monkeypatch) -> np.ndarray:
    monkeypatch.setattr(stepping, "DENSE_STEP_LIMIT", dense_limit)
    return mna.run(mna.read_string(text))[0].to_dataframe().to_numpy()


@pytest.mark.parametrize("text", [DECK.format(method=m) for m in ("be", "trap", "gear2")]
                         + [NORTON], ids=["be", "trap", "gear2", "fe"])
def test_dense_propagator_equals_a_solve_per_step(text, monkeypatch):
    sparse = waveforms(text, 0, monkeypatch)
    dense = waveforms(text, 10**6, monkeypatch)
    assert sparse.shape == dense.shape and len(sparse) > 300
    scale = np.abs(sparse).max(axis=0)
    assert np.all(scale > 0)
    assert np.all(np.abs(dense - sparse) <= 1e-11 * scale)   # each column to its own size


@pytest.mark.parametrize("matrix", [sp.diags([1.0, 0.0, -2.5, 4.0]),
                                    sp.diags([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0]], [0, 1]),
                                    sp.csr_matrix((4, 4)),
                                    sp.csr_matrix(np.arange(12.0).reshape(3, 4))],
                         ids=["diagonal", "bidiagonal", "empty", "wide"])
def test_matvec_adds_and_assigns_the_product(matrix):
    matvec = stepping.MatVec(matrix)
    x = np.array([1.0, -2.0, 3.0, 0.5])
    out = np.full(matrix.shape[0], 7.0)
    matvec(x, out)
    assert np.allclose(out, 7.0 + matrix @ x, rtol=0, atol=1e-15)
    matvec.assign(x, out)
    assert np.allclose(out, matrix @ x, rtol=0, atol=1e-15)
