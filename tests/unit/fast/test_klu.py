"""`mna.fast.klu`: the ctypes binding of KLU's C API (skipped without a KLU library)."""

import numpy as np
import pytest
import scipy.sparse as sp

from mna.fast import klu

pytestmark = pytest.mark.skipif(klu.library() is None,
                                reason="no KLU library (nbklu, pyklu, or a system libklu)")


def ladder(n: int) -> sp.csc_matrix:
    return sp.diags([[3.0] * n, [-1.0] * (n - 1), [-1.0] * (n - 1)], [0, 1, -1], format="csc")


def analysed(matrix: sp.csc_matrix, order=None) -> klu.Symbolic:
    matrix = sp.csc_matrix(matrix)
    matrix.sort_indices()
    return klu.Symbolic(matrix.shape[0], matrix.indptr, matrix.indices, order)


def test_klu_defaults_fills_the_common_struct_as_documented():
    """The ctypes `Common` must mirror klu.h's layout, or every field after a wrong one
    reads garbage: klu_defaults' documented values check it."""
    common = klu.Common()
    klu.library().klu_defaults(common)
    assert (common.tol, common.memgrow, common.initmem_amd, common.initmem) == (
        0.001, 1.2, 1.2, 10.0)
    assert (common.btf, common.ordering, common.scale, common.halt_if_singular) == (1, 0, 2, 1)
    assert (common.status, common.structural_rank, common.noffdiag) == (0, -1, -1)
    assert (common.flops, common.rcond, common.condest, common.rgrowth) == (-1, -1, -1, -1)


@pytest.mark.parametrize("order", [None, [4, 0, 2, 1, 3], [0, 1, 2, 3, 4]])
def test_solves_vectors_and_columns_with_any_order(order):
    matrix = ladder(5).tolil()
    matrix[0, 4] = 2.0            # unsymmetric, and a zero diagonal to pivot around
    matrix[2, 2] = 0.0
    matrix = sp.csc_matrix(matrix)
    matrix.sort_indices()
    factors = klu.Numeric(analysed(matrix, order), matrix.data)
    rhs = np.arange(1.0, 6.0)
    solved = factors.solve_in_place(rhs.copy())
    assert np.abs(matrix @ solved - rhs).max() < 1e-14
    columns = np.asfortranarray(np.random.default_rng(1).normal(size=(5, 3)))
    solved = factors.solve_in_place(columns.copy(order="F"))
    assert np.abs(matrix @ solved - columns).max() < 1e-14


def test_one_analysis_serves_every_matrix_of_its_pattern():
    """The symbolic analysis is made once; each numeric factorisation on it solves its own
    matrix, real or complex (AC frequencies)."""
    base = ladder(6)
    symbolic = analysed(base)
    rng = np.random.default_rng(2)
    for _ in range(3):
        data = base.data * rng.uniform(0.5, 2.0, size=base.nnz)
        matrix = sp.csc_matrix((data, base.indices, base.indptr))
        rhs = rng.normal(size=6)
        assert np.abs(matrix @ klu.Numeric(symbolic, data).solve_in_place(rhs.copy())
                      - rhs).max() < 1e-13
    data = base.data + 1j * rng.uniform(size=base.nnz)
    matrix = sp.csc_matrix((data, base.indices, base.indptr))
    rhs = rng.normal(size=6) + 1j * rng.normal(size=6)
    factors = klu.Numeric(symbolic, data)
    assert factors.complex
    assert np.abs(matrix @ factors.solve_in_place(rhs.copy()) - rhs).max() < 1e-13


def test_counts_the_nonzeros_of_its_factors():
    # a tridiagonal matrix factors without fill: L and U each hold n + (n - 1) entries
    assert klu.Numeric(analysed(ladder(7)), ladder(7).data).nonzeros == 2 * (7 + 6)
    # eliminating the middle of a chain of three first joins its ends: one fill-in each
    assert klu.Numeric(analysed(ladder(3), [1, 0, 2]), ladder(3).data).nonzeros == 2 * (3 + 2 + 1)


def test_a_singular_matrix_is_refused():
    matrix = ladder(4).tolil()
    matrix[:, 3] = 0.0
    matrix = sp.csc_matrix(matrix)
    matrix.eliminate_zeros()
    with pytest.raises(klu.SingularMatrix):
        klu.Numeric(analysed(matrix), matrix.data)


def test_what_would_make_klu_step_out_of_bounds_is_refused():
    matrix = ladder(5)
    with pytest.raises(ValueError, match="square"):
        klu.Symbolic(4, matrix.indptr, matrix.indices)
    for order in ([0, 1, 2], [0, 1, 2, 3, 3], [0, 1, 2, 3, 5]):
        with pytest.raises(ValueError, match="permutation"):
            analysed(matrix, order)
    factors = klu.Numeric(analysed(matrix), matrix.data)
    for rhs in (np.ones(4), np.ones(5, dtype=np.float32), np.ones(10)[::2], np.ones((5, 2)),
                np.ones(5, dtype=complex)):
        with pytest.raises(ValueError, match="in place"):
            factors.solve_in_place(rhs)
