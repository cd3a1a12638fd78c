"""`mna.ordering.nested_dissection`: a permutation whose solves have short chains."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from mna.fast.ordering import nested_dissection


def chain(n: int) -> sp.csc_matrix:
    return sp.diags([[3.0] * n, [-1.0] * (n - 1), [-1.0] * (n - 1)], [0, 1, -1], format="csc")


def grid(side: int) -> sp.csc_matrix:
    line = chain(side) - sp.identity(side)
    return sp.csc_matrix(sp.kronsum(line, line))


def factor_in_order(matrix: sp.spmatrix, order: np.ndarray):
    permuted = sp.csc_matrix(matrix)[order][:, order]
    return spla.splu(permuted, permc_spec="NATURAL", diag_pivot_thresh=0.0)


def longest_chain(lower: sp.spmatrix) -> int:
    """The most unknowns a forward substitution with `lower` must find one after another."""
    lower = sp.csr_matrix(lower)
    depth = np.zeros(lower.shape[0], int)
    for row in range(lower.shape[0]):
        columns = lower.indices[lower.indptr[row]:lower.indptr[row + 1]]
        earlier = columns[columns < row]
        depth[row] = 1 + (depth[earlier].max() if len(earlier) else 0)
    return int(depth.max())


@pytest.mark.parametrize("matrix", [chain(1), chain(2), chain(100), grid(12),
                                    sp.block_diag([chain(5), sp.identity(3), grid(4)])],
                         ids=["one", "two", "chain", "grid", "disconnected"])
def test_it_is_a_permutation(matrix):
    order = nested_dissection(matrix)
    assert sorted(order.tolist()) == list(range(matrix.shape[0]))


def test_a_chain_is_solved_in_logarithmically_many_dependent_steps():
    n = 1023
    natural = longest_chain(factor_in_order(chain(n), np.arange(n)).L)
    dissected = longest_chain(factor_in_order(chain(n), nested_dissection(chain(n))).L)
    assert natural == n
    assert dissected <= 2 * np.log2(n + 1)


def test_a_grid_fills_in_about_as_much_as_with_a_minimum_degree_order():
    matrix = grid(30)
    dissected = factor_in_order(matrix, nested_dissection(matrix))
    minimum_degree = spla.splu(matrix, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0)
    assert dissected.L.nnz <= 1.3 * minimum_degree.L.nnz    # 1.2 measured
    rhs = np.arange(900.0)
    solution = np.empty(900)
    solution[nested_dissection(matrix)] = dissected.solve(rhs[nested_dissection(matrix)])
    assert np.abs(matrix @ solution - rhs).max() < 1e-13 * 8 * np.abs(solution).max()


def test_empty_and_one_by_one():
    assert nested_dissection(sp.csr_matrix((0, 0))).tolist() == []
    assert nested_dissection(sp.identity(1)).tolist() == [0]


def test_a_clique_stays_whole_and_a_star_is_cut_at_its_hub():
    clique = sp.csr_matrix(np.ones((400, 400)))
    assert nested_dissection(clique).tolist() == list(range(400))   # one sweep, no cut
    star = sp.lil_matrix(sp.identity(9))
    star[4, :] = 1.0                                # hub 4, one-sided: the pattern is symmetrised
    assert nested_dissection(star)[-1] == 4         # the hub last: no fill
    star = sp.csr_matrix(star)
    assert factor_in_order(star + star.T, nested_dissection(star)).L.nnz == 9 + 8


def test_a_lopsided_graph_is_cut_where_it_balances():
    # a path 0..39 with a clique of 21 on its end 39: a search from node 0 finds the clique at
    # level 40, so the middle level by distance, node 20, would leave sides of 20 and 39;
    # the balanced cut is node 29 or 30 (sides of ~30)
    matrix = sp.lil_matrix((60, 60))
    matrix[:40, :40] = chain(40)
    matrix[39:, 39:] = np.ones((21, 21))
    order = nested_dissection(matrix.tocsr(), leaf=30)
    assert order[-1] in (29, 30)                  # the first cut is eliminated last
