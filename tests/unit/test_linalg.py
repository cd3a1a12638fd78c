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


@pytest.mark.parametrize("backend", ["klu", "superlu"])
def test_each_backend_solves_to_round_off(backend):
    rhs = np.array([0.0, 1.0, -2.0, 5.0])
    factors = linalg.factor(matrix(), NAMES, backend)
    assert np.abs(matrix() @ factors.solve(rhs) - rhs).max() < 1e-13
    assert np.abs(matrix() @ factors.solve_in_place(rhs.copy()) - rhs).max() < 1e-13


def test_klu_falls_back_to_superlu_without_pyklu(monkeypatch):
    monkeypatch.setattr(linalg, "klu_available", lambda: False)
    factors = linalg.factor(matrix(), NAMES, "klu")
    assert type(factors) is linalg.Factorization


@pytest.mark.parametrize("backend", ["klu", "superlu"])
def test_a_singular_matrix_names_the_unknowns_at_fault(backend):
    singular = matrix().tolil()
    singular[:, 2] = singular[:, 1] * -1.0   # V(c) moves with V(b): the pair is undetermined
    with pytest.raises(SingularSystemError) as info:
        linalg.factor(singular.tocsc(), NAMES, backend)
    assert set(info.value.unknowns) == {"V(b)", "V(c)"}
