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
    hub_first = linalg.factor(arrow, names, "klu", order=np.arange(n))   # fills in completely
    assert hub_first.nonzeros == linalg.KluFactorization(arrow, names).nonzeros
    assert np.abs(arrow @ hub_first.solve(rhs) - rhs).max() < 1e-13
    tail = np.r_[1:n, 0]
    assert np.abs(arrow @ linalg.factor(arrow, names, "klu", order=tail).solve(rhs) - rhs
                  ).max() < 1e-13


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
