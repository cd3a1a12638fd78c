"""`linalg.factor`: both backends solve, KLU is optional, a singular matrix names its unknowns."""

import time

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
    assert type(linalg.factor(matrix(), NAMES, "klu")) is linalg.Factorization


def test_an_unknown_solver_is_refused():
    with pytest.raises(ValueError, match="unknown solver 'KLU'"):
        linalg.factor(matrix(), NAMES, "KLU")


@pytest.mark.parametrize("backend", [KLU, "superlu"])
def test_a_singular_matrix_names_the_unknowns_at_fault(backend):
    singular = matrix().tolil()
    singular[:, 2] = singular[:, 1] * -1.0   # V(c) moves with V(b): the pair is undetermined
    with pytest.raises(SingularSystemError) as info:
        linalg.factor(singular.tocsc(), NAMES, backend)
    assert set(info.value.unknowns) == {"V(b)", "V(c)"}


@pytest.mark.skipif(not linalg.klu_available(), reason="no KLU library")
def test_a_given_order_solves_the_same_and_is_refused_when_it_fills_in_far_more():
    n = 50
    arrow = sp.lil_matrix(sp.identity(n) * 4.0)
    arrow[0, 1:] = arrow[1:, 0] = 1.0        # a hub: KLU eliminates it last, without fill
    arrow = arrow.tocsc()
    rhs = np.arange(1.0, n + 1)
    names = tuple(f"V({k})" for k in range(n))
    hub_first = np.arange(n)                  # fills in completely: n^2 entries
    forced = linalg.factor(arrow, names, "klu", order=hub_first)
    assert forced.order is hub_first and forced.nonzeros > n * n
    assert np.abs(arrow @ forced.solve(rhs) - rhs).max() < 1e-13
    chosen = linalg.factor_in_faster_order(arrow, names, "klu", hub_first)
    assert chosen.order is None and chosen.nonzeros < 4 * n
    hub_last = np.r_[1:n, 0]                  # as good as KLU's own: either may be kept
    chosen = linalg.factor_in_faster_order(arrow, names, "klu", hub_last)
    assert chosen.order is None or chosen.order is hub_last
    assert np.abs(arrow @ chosen.solve(rhs) - rhs).max() < 1e-13


@pytest.mark.skipif(not linalg.klu_available(), reason="no KLU library")
def test_klu_own_order_serves_when_the_given_one_fails():
    matrix = sp.csc_matrix(np.array([[0.0, 1.0], [1.0, 1.0]]))   # no pivot on the diagonal
    names = ("V(a)", "I(V1)")

    def refused(self, matrix, names, order=None):
        if order is not None:
            raise SingularSystemError("refused in the given order")
        original(self, matrix, names)

    original = linalg.KluFactorization.__init__
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(linalg.KluFactorization, "__init__", refused)
        for factors in (linalg.factor(matrix, names, "klu", order=np.array([1, 0])),
                        linalg.factor_in_faster_order(matrix, names, "klu", np.array([1, 0]))):
            assert factors.order is None
            assert np.allclose(matrix @ factors.solve(np.array([1.0, 2.0])), [1.0, 2.0])


class _Timed:
    """A stand-in for factors whose solve takes `seconds`."""

    def __init__(self, seconds: float):
        self.seconds, self.matrix = seconds, sp.identity(3)

    def solve_in_place(self, rhs):
        time.sleep(self.seconds)
        return rhs


def test_the_order_with_faster_solves_is_kept():
    slow, fast = _Timed(2e-3), _Timed(0.0)
    assert linalg.faster_solves(slow, fast) is fast
    assert linalg.faster_solves(fast, slow) is fast
    # within the margin the factors' own order stays
    assert linalg.faster_solves(fast, _Timed(0.0), margin=0.0) is fast
