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
                                                   reason="no KLU library"))


@pytest.mark.parametrize("backend", [KLU, "superlu"])
def test_each_backend_solves_to_round_off(backend):
    rhs = np.array([0.0, 1.0, -2.0, 5.0])
    factors = linalg.factor(matrix(), NAMES, backend)
    assert np.abs(matrix() @ factors.solve(rhs) - rhs).max() < 1e-13
    assert np.abs(matrix() @ factors.solve_in_place(rhs.copy()) - rhs).max() < 1e-13


def test_klu_falls_back_to_superlu_without_a_klu_library(monkeypatch):
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


REFACTORS = pytest.mark.skipif(not (linalg.klu_available() and linalg.klu.library().refactors),
                               reason="no KLU library with klu_refactor")


@pytest.mark.parametrize("backend", [KLU, "superlu"])
def test_refactored_factors_solve_each_new_matrix_as_fresh_ones_do(backend):
    """Newton's iterations and AC frequencies refactor one pattern's matrices in turn, real
    and complex; each solution matches that of fresh factors."""
    base = matrix()
    base.sort_indices()
    lu = linalg.SparseLU(4, base.indptr, base.indices, NAMES, backend)
    rng = np.random.default_rng(7)
    for data in (base.data, base.data * rng.uniform(0.5, 2.0, base.nnz),
                 base.data + 1j * rng.uniform(size=base.nnz), base.data * 3.0):
        rhs = rng.normal(size=4)
        fresh = lu.factor(data).solve(rhs)
        refactored = lu.refactor(data).solve(rhs)
        assert np.abs(refactored - fresh).max() < 1e-13 * np.abs(fresh).max()


@REFACTORS
def test_refactoring_keeps_the_pivot_order_only_while_its_pivots_stay_sound():
    """[[1, 1], [1, 1e-20]] in the order [[1e6, 1], [1, 1]] was factored in pivots would
    put 1e-20 on the diagonal of U: the refactorisation is refused and the factors are
    made afresh, so the solution stays exact."""
    lu = linalg.SparseLU(2, np.array([0, 2, 4]), np.array([0, 1, 0, 1]), ("V(a)", "V(b)"))
    first = lu.refactor(np.array([1e6, 1.0, 1.0, 1.0]))
    assert np.allclose(first.solve(np.array([1.0, 0.0])) @ [[1e6, 1], [1, 1]], [1, 0],
                       rtol=0, atol=1e-12)
    kept = lu.refactor(np.array([2e6, 1.0, 1.0, 3.0]))     # the same pivots serve
    solved = kept.solve(np.array([1.0, 2.0]))
    assert np.abs(np.array([[2e6, 1], [1, 3]]) @ solved - [1, 2]).max() < 1e-12
    hard = np.array([[1e-20, 1.0], [1.0, 1.0]])            # needs the other pivot
    solved = lu.refactor(hard.T.ravel()).solve(np.array([1.0, 2.0]))
    assert np.abs(hard @ solved - [1, 2]).max() < 1e-14
    assert np.abs(solved - np.linalg.solve(hard, [1, 2])).max() < 1e-14


@REFACTORS
def test_factors_that_were_refactored_for_another_matrix_refuse_to_solve():
    base = matrix()
    base.sort_indices()
    lu = linalg.SparseLU(4, base.indptr, base.indices, NAMES)
    old = lu.refactor(base.data)
    new = lu.refactor(base.data * 2.0)
    with pytest.raises(RuntimeError, match="refactored"):
        old.solve(np.ones(4))
    assert np.abs((base * 2.0) @ new.solve(np.ones(4)) - 1.0).max() < 1e-13
    fresh = lu.factor(base.data)      # fresh factors are the caller's to keep
    lu.refactor(base.data * 4.0)
    assert np.abs(base @ fresh.solve(np.ones(4)) - 1.0).max() < 1e-13
