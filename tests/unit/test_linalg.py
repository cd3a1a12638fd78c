"""`linalg.factor`: both backends solve, KLU is optional, a singular matrix names its unknowns."""

import numpy as np
import pytest
import scipy.sparse as sp

from mna import linalg
from mna.errors import SingularSystemError

NAMES = ("V(a)", "V(b)", "V(c)", "I(V1)")


def matrix() -> sp.csc_matrix:
    """A small MNA matrix with a zero diagonal (a voltage source row), so pivoting matters."""
    return sp.csc_matrix(np.array([[2.0, -1.0, 0.0, 1.0],
                                   [-1.0, 3.0, -2.0, 0.0],
                                   [0.0, -2.0, 2.5, 0.0],
                                   [1.0, 0.0, 0.0, 0.0]]))


KLU = pytest.param("klu", marks=pytest.mark.skipif(not linalg.klu_available(),
                                                   reason="pyklu (the klu extra) is not installed"))


@pytest.mark.parametrize("backend", [KLU, "superlu"])
def test_each_backend_solves_to_round_off(backend):
    rhs = np.array([0.0, 1.0, -2.0, 5.0])
    factors = linalg.factor(matrix(), NAMES, backend)
    assert np.abs(matrix() @ factors.solve(rhs) - rhs).max() < 1e-13
    assert np.abs(matrix() @ factors.solve_in_place(rhs.copy()) - rhs).max() < 1e-13


def test_klu_falls_back_to_superlu_without_pyklu(monkeypatch):
    monkeypatch.setattr(linalg, "klu_available", lambda: False)
    assert linalg.solver_in_use("klu") == "superlu"
    rhs = np.array([0.0, 1.0, -2.0, 5.0])
    assert np.abs(matrix() @ linalg.factor(matrix(), NAMES, "klu").solve(rhs) - rhs).max() < 1e-13


def test_an_unknown_solver_is_refused():
    with pytest.raises(ValueError, match="unknown solver 'KLU'"):
        linalg.factor(matrix(), NAMES, "KLU")


@pytest.mark.parametrize("backend", [KLU, "superlu"])
def test_one_pattern_factors_many_matrices_and_complex_ones(backend):
    base = matrix()
    base.sort_indices()
    lu = linalg.SparseLU(4, base.indptr, base.indices, NAMES, backend)
    rng = np.random.default_rng(5)
    for data in (base.data * 2.0, base.data + 1j * rng.uniform(size=base.nnz)):
        changed = sp.csc_matrix((data, base.indices, base.indptr))
        rhs = rng.normal(size=4)
        assert np.abs(changed @ lu.factor(data).solve(rhs) - rhs).max() < 1e-13
    assert lu.factorizations == 2


@pytest.mark.parametrize("backend", [KLU, "superlu"])
def test_a_singular_matrix_names_the_unknowns_at_fault(backend):
    singular = matrix().tolil()
    singular[:, 2] = singular[:, 1] * -1.0   # V(c) moves with V(b): the pair is undetermined
    with pytest.raises(SingularSystemError) as info:
        linalg.factor(singular.tocsc(), NAMES, backend)
    assert set(info.value.unknowns) == {"V(b)", "V(c)"}


@pytest.mark.skipif(not linalg.klu_available(), reason="no KLU library")
@pytest.mark.parametrize("ordering", ["auto", "amd", "dissection"])
def test_every_ordering_solves_the_same(ordering):
    n = 1200   # a ladder, long enough for ordering=auto to weigh a nested dissection
    ladder = sp.diags([[3.0] * n, [-1.0] * (n - 1), [-1.0] * (n - 1)], [0, 1, -1], format="csc")
    names = tuple(f"V({k})" for k in range(n))
    rhs = np.sin(np.arange(n))
    for use in ("once", "many"):
        lu = linalg.SparseLU(n, ladder.indptr, ladder.indices, names, "klu", ordering, use)
        assert np.abs(ladder @ lu.factor(ladder.data).solve(rhs) - rhs).max() < 1e-12


@pytest.mark.skipif(not linalg.klu_available(), reason="no KLU library")
def test_an_analysis_is_made_once_per_pattern_and_order_and_few_are_kept(monkeypatch):
    monkeypatch.setattr(linalg, "_analyses", type(linalg._analyses)())
    n = 1200
    ladder = sp.diags([[3.0] * n, [-1.0] * (n - 1), [-1.0] * (n - 1)], [0, 1, -1], format="csc")
    names = tuple(f"V({k})" for k in range(n))

    def analysed(ordering: str, pattern=ladder):
        lu = linalg.SparseLU(n, pattern.indptr, pattern.indices, names, "klu", ordering, "many")
        lu.factor(pattern.data)
        return lu._symbolic

    first = analysed("dissection")
    assert analysed("dissection") is first and analysed("auto") is first
    assert analysed("amd") is not first
    widened = sp.csc_matrix(ladder + sp.diags([[-0.5] * (n - 2)], [2]))
    widened.sort_indices()
    assert analysed("dissection", widened) is not first
    for size in range(2, 2 + linalg.ANALYSES):    # other patterns push the first ones out
        linalg.analysis(size, np.arange(size + 1), np.arange(size), "amd")
    assert len(linalg._analyses) == linalg.ANALYSES
    assert analysed("dissection") is not first
