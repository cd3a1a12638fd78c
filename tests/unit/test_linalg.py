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
def test_the_transposed_system_solves_without_conjugation(backend):
    """The adjoint solve of noise analysis: ``A^T y = p`` (not ``A^H``), real and complex."""
    base = matrix()
    base.sort_indices()
    lu = linalg.SparseLU(4, base.indptr, base.indices, NAMES, backend)
    rhs = np.array([1.0, -2.0, 0.5, 3.0])
    for data in (base.data, base.data * (1 + 2j)):
        changed = sp.csc_matrix((data, base.indices, base.indptr))
        for right in (rhs, rhs * (1 - 1j)):
            solution = lu.factor(data).solve(right, transposed=True)
            assert np.abs(changed.T @ solution - right).max() < 1e-13


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


@pytest.fixture
def refactoring_small_matrices(monkeypatch):
    """Refactorisation from the smallest size (`REFACTOR_MIN` and `DENSE_MAX` are rules of
    cost)."""
    monkeypatch.setattr(linalg, "REFACTOR_MIN", 0)
    monkeypatch.setattr(linalg, "DENSE_MAX", -1)


@pytest.mark.usefixtures("refactoring_small_matrices")
@pytest.mark.parametrize("backend", [KLU, "superlu"])
def test_solving_once_per_matrix_matches_fresh_factors(backend):
    """Newton's iterations and AC frequencies solve one pattern's matrices in turn, real and
    complex: each solution matches that of fresh factors."""
    base = matrix()
    base.sort_indices()
    lu = linalg.SparseLU(4, base.indptr, base.indices, NAMES, backend)
    rng = np.random.default_rng(7)
    for data in (base.data, base.data * rng.uniform(0.5, 2.0, base.nnz),
                 base.data + 1j * rng.uniform(size=base.nnz), base.data * 3.0):
        for rhs in (rng.normal(size=4), rng.normal(size=4) + 1j * rng.normal(size=4)):
            fresh = lu.factor(data).solve(rhs)
            assert np.abs(lu.solve(data, rhs) - fresh).max() < 1e-13 * np.abs(fresh).max()


@REFACTORS
@pytest.mark.usefixtures("refactoring_small_matrices")
def test_a_pivot_order_whose_pivot_vanishes_is_not_kept():
    """[[1e-20, 1], [1, 1]] in the pivot order of [[1e6, 1], [1, 1]] would put 1e-20 on the
    diagonal of U: the matrix is factored afresh, and the solution stays exact."""
    lu = linalg.SparseLU(2, np.array([0, 2, 4]), np.array([0, 1, 0, 1]), ("V(a)", "V(b)"))
    solved = lu.solve(np.array([1e6, 1.0, 1.0, 1.0]), np.array([1.0, 0.0]))
    assert np.abs(np.array([[1e6, 1], [1, 1]]) @ solved - [1, 0]).max() < 1e-12
    solved = lu.solve(np.array([2e6, 1.0, 1.0, 3.0]), np.array([1.0, 2.0]))   # the order serves
    assert np.abs(np.array([[2e6, 1], [1, 3]]) @ solved - [1, 2]).max() < 1e-12
    hard = np.array([[1e-20, 1.0], [1.0, 1.0]])
    solved = lu.solve(hard.T.ravel(), np.array([1.0, 2.0]))
    assert np.abs(solved - np.linalg.solve(hard, [1, 2])).max() < 1e-14
    assert lu.factorizations == 3


def _sweep(lu: linalg.SparseLU, pattern: sp.csc_matrix, g, c, rng, kind: str) -> float:
    """The largest componentwise backward error over a sweep of ``g + j w c``, each matrix
    solved once by `lu.solve` (``once``), or by factors recycled from the last frequency's:
    its transpose after the matrix (``adjoint``, as a noise sweep), or ``g + w c`` for an
    imaginary right-hand side (``imaginary``: real factors solve its parts)."""
    worst, factors = 0.0, None
    for w in 10.0 ** np.linspace(-6, 6, 61):
        data = g + (w if kind == "imaginary" else 1j * w) * c
        matrix = sp.csc_matrix((data, pattern.indices, pattern.indptr))
        rhs = matrix @ rng.normal(size=pattern.shape[0])
        if kind == "once":
            x = lu.solve(data, rhs)
        else:
            factors = lu.factor(data, recycle=factors)
            if kind == "adjoint":
                factors.solve(rhs)
                matrix = matrix.T
                rhs = matrix @ rng.normal(size=pattern.shape[0])
            else:
                rhs = 1j * rhs
            x = factors.solve(rhs, transposed=kind == "adjoint")
        error = np.abs(matrix @ x - rhs) / (abs(matrix) @ np.abs(x) + np.abs(rhs))
        worst = max(worst, float(error.max()))
    return worst


@REFACTORS
@pytest.mark.usefixtures("refactoring_small_matrices")
@pytest.mark.parametrize("kind", ["once", "adjoint", "imaginary"])
def test_a_kept_pivot_order_is_checked_by_the_backward_error_of_each_solution(monkeypatch, kind):
    """Sweeps of random sparse matrices with entries over six decades: a pivot order kept
    from another frequency can have grown the factors while the ratio of its pivots stays
    sound; the first solution of each matrix and of its transpose (both parts of a complex
    right-hand side) is checked and such a matrix factored afresh, so every solution is
    backward stable (within twice the bound: fresh factors reach 1.2e-12 on a transpose).
    Without the check (its bound made infinite) some are ten or more times that."""
    rng = np.random.default_rng(1)
    sweeps = []
    for _ in range(40):
        n = int(rng.integers(3, 12))
        cycle = sp.csc_matrix((np.ones(n), (np.arange(n), (np.arange(n) + 1) % n)), shape=(n, n))
        pattern = (abs(sp.random(n, n, density=0.3, random_state=rng)) + cycle
                   + sp.identity(n)).tocsc()
        pattern.sort_indices()
        g, c = (rng.standard_normal(pattern.nnz) * 10.0 ** rng.uniform(-3, 3, pattern.nnz)
                for _ in range(2))
        sweeps.append((pattern, g, c))

    def worst() -> float:
        draws = np.random.default_rng(2)
        return max(_sweep(linalg.SparseLU(p.shape[0], p.indptr, p.indices, tuple(map(str, range(
            p.shape[0])))), p, g, c, draws, kind) for p, g, c in sweeps)

    assert worst() < 2 * linalg.BACKWARD_ERROR
    monkeypatch.setattr(linalg, "BACKWARD_ERROR", np.inf)
    assert worst() > 1e-11


@REFACTORS
@pytest.mark.usefixtures("refactoring_small_matrices")
def test_recycled_factors_solve_as_fresh_ones_and_are_spent(monkeypatch):
    """Factors recycled into the next matrix's (Newton's iterations, a noise sweep's
    frequencies) solve it, for several right-hand sides and transposed, as a dense solve
    does, with fewer fresh factorisations than matrices; the recycled factors refuse to
    solve or be recycled again, factors of another pattern are not recycled, and SuperLU's
    are simply replaced."""
    base = matrix()
    base.sort_indices()
    lu = linalg.SparseLU(4, base.indptr, base.indices, NAMES)
    fresh = []
    numeric = lu._numeric
    monkeypatch.setattr(lu, "_numeric", lambda data: fresh.append(1) or numeric(data))
    rng = np.random.default_rng(5)
    factors = None
    matrices = [base.data * rng.uniform(0.5, 2.0, base.nnz) for _ in range(6)]
    matrices += [m + 1j * rng.uniform(size=base.nnz) for m in matrices[:3]]
    for data in matrices:
        dense = sp.csc_matrix((data, base.indices, base.indptr)).toarray()
        spent, factors = factors, lu.factor(data, recycle=factors)
        for transposed in (True, False, True):
            rhs = rng.normal(size=4) + 1j * rng.normal(size=4)
            expected = np.linalg.solve(dense.T if transposed else dense, rhs)
            solved = factors.solve(rhs, transposed=transposed)
            assert np.abs(solved - expected).max() < 1e-13 * np.abs(expected).max()
        if spent is not None and spent.dtype is factors.dtype:
            with pytest.raises(RuntimeError, match="recycled"):
                spent.solve(np.ones(4))
            with pytest.raises(RuntimeError, match="recycled"):
                lu.factor(data, recycle=spent)
    assert len(fresh) < len(matrices)
    other = linalg.SparseLU(4, base.indptr, base.indices, NAMES)
    foreign = other.factor(base.data)
    lu.factor(base.data, recycle=foreign)
    assert np.abs(foreign.solve(base @ np.ones(4)) - 1).max() < 1e-14   # not spent
    superlu = linalg.SparseLU(4, base.indptr, base.indices, NAMES, "superlu")
    first = superlu.factor(base.data)
    second = superlu.factor(2 * base.data, recycle=first)
    assert np.abs(first.solve(np.ones(4)) - 2 * second.solve(np.ones(4))).max() < 1e-14


def test_the_componentwise_backward_error_of_a_solution():
    lu = linalg.SparseLU(2, np.array([0, 2, 4]), np.array([0, 1, 0, 1]), ("V(a)", "V(b)"))
    data = np.array([2.0, 1.0, 1.0, 3.0])       # [[2, 1], [1, 3]]
    x, rhs = np.array([1.0, 1.0]), np.array([3.0, 4.5])
    # residuals (0, -0.5) against |A||x| + |b| = (6, 8.5)
    assert abs(lu.backward_error(data, x, rhs) - 0.5 / 8.5) < 1e-15
    assert lu.backward_error(data, np.array([np.nan, 1.0]), rhs) == np.inf
    # a subnormal equation's round-off is no error: its scale counts as SUBNORMAL_SCALE
    tiny = np.array([1.0, 1e-310])
    assert lu.backward_error(np.array([1.0, 0.0, 0.0, 1.0]), tiny, tiny + [0, 5e-324]) < 1e-30


@pytest.mark.parametrize("backend", [KLU, "superlu"])
def test_a_small_matrix_solved_once_is_solved_dense_as_exactly(backend, monkeypatch):
    """Up to `DENSE_MAX` unknowns `solve` takes LAPACK's LU: the residual is round-off for real
    and complex matrices and right-hand sides, and the sparse factors are never made."""
    base = matrix()
    base.sort_indices()
    lu = linalg.SparseLU(4, base.indptr, base.indices, NAMES, backend)
    monkeypatch.setattr(lu, "factor", lambda data: pytest.fail("factored sparse"))
    rng = np.random.default_rng(11)
    for data in (base.data, base.data + 1j * rng.uniform(size=base.nnz)):
        changed = sp.csc_matrix((data, base.indices, base.indptr))
        for rhs in (rng.normal(size=4), rng.normal(size=4) + 1j * rng.normal(size=4)):
            assert np.abs(changed @ lu.solve(data, rhs) - rhs).max() < 1e-13
    assert lu.factorizations == 4


def test_a_small_singular_or_infinite_matrix_is_refused_by_the_dense_solve():
    """A singular matrix (V(b) and V(c) float together) names its unknowns as the sparse
    factors do; one with an infinite entry is refused (LAPACK would return a finite solution
    of it)."""
    singular = sp.csc_matrix(np.array([[2.0, 0.0, 0.0, 1.0],
                                       [0.0, 1.0, -1.0, 0.0],
                                       [0.0, -1.0, 1.0, 0.0],
                                       [1.0, 0.0, 0.0, 0.0]]))
    singular.sort_indices()
    lu = linalg.SparseLU(4, singular.indptr, singular.indices, NAMES)
    with pytest.raises(SingularSystemError) as info:
        lu.solve(singular.data, np.ones(4))
    assert set(info.value.unknowns) == {"V(b)", "V(c)"}
    lu = linalg.SparseLU(2, np.array([0, 2, 4]), np.array([0, 1, 0, 1]), ("V(a)", "V(b)"))
    with pytest.raises(SingularSystemError, match="not finite"):
        lu.solve(np.array([np.inf, 1.0, 1.0, 1.0]), np.ones(2))
