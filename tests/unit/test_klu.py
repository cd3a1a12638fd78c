"""`mna.klu`: the ctypes binding of KLU's C API (skipped without a KLU library)."""

import numpy as np
import pytest
import scipy.sparse as sp

from mna import klu

pytestmark = pytest.mark.skipif(klu.library() is None,
                                reason="no KLU library (the klu extra, or a system libklu)")


def ladder(n: int) -> sp.csc_matrix:
    return sp.diags([[3.0] * n, [-1.0] * (n - 1), [-1.0] * (n - 1)], [0, 1, -1], format="csc")


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
    matrix = matrix.tocsc()
    factors = klu.Klu(matrix, order)
    rhs = np.arange(1.0, 6.0)
    assert np.abs(matrix @ factors.solve(rhs) - rhs).max() < 1e-14
    columns = np.random.default_rng(1).normal(size=(5, 3))
    assert np.abs(matrix @ factors.solve(columns) - columns).max() < 1e-14
    in_place = rhs.copy()
    assert factors.solve_in_place(in_place) is in_place
    assert np.abs(matrix @ in_place - rhs).max() < 1e-14


def test_counts_the_nonzeros_of_its_factors():
    # a tridiagonal matrix factors without fill: L and U each hold n + (n - 1) entries
    assert klu.Klu(ladder(7)).nonzeros == 2 * (7 + 6)
    # eliminating the middle of a chain of three first joins its ends: one fill-in each
    assert klu.Klu(ladder(3), [1, 0, 2]).nonzeros == 2 * (3 + 2 + 1)


def test_a_singular_matrix_is_refused():
    matrix = ladder(4).tolil()
    matrix[:, 3] = 0.0
    with pytest.raises(klu.SingularMatrix):
        klu.Klu(matrix.tocsc())


def test_what_would_make_klu_step_out_of_bounds_is_refused():
    with pytest.raises(ValueError, match="square"):
        klu.Klu(sp.csc_matrix(np.ones((3, 2))))
    for order in ([0, 1, 2], [0, 1, 2, 3, 3], [0, 1, 2, 3, 5]):
        with pytest.raises(ValueError, match="permutation"):
            klu.Klu(ladder(5), order)
    factors = klu.Klu(ladder(5))
    for rhs in (np.ones(4), np.ones(5, dtype=np.float32), np.ones(10)[::2], np.ones((5, 2))):
        with pytest.raises(ValueError, match="in place"):
            factors.solve_in_place(rhs)


def test_rows_are_scaled_before_pivoting():
    """Scaling rows by powers of two (exact) must not change the factors or the solution by
    a single bit: pivoting sees rows scaled by their largest entry, as KLU's default does.
    Without that, a row a million times larger than its neighbours wins every pivot."""
    rng = np.random.default_rng(3)
    n = 60
    matrix = (sp.random(n, n, density=0.1, random_state=rng) + sp.eye(n) * 0.01).tocsc()
    rhs = rng.normal(size=n)
    scale = 2.0 ** rng.integers(-30, 31, size=n)
    plain = klu.Klu(matrix).solve(rhs)
    scaled = klu.Klu(sp.diags(scale) @ matrix).solve(scale * rhs)
    assert np.abs(matrix @ plain - rhs).max() < 1e-9 * np.abs(rhs).max()
    assert np.array_equal(plain, scaled)
    columns = klu.Klu(sp.diags(scale) @ matrix).solve(np.column_stack([scale * rhs] * 2))
    assert np.array_equal(columns, np.column_stack([plain] * 2))
