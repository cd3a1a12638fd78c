"""`factor`: the one place that factorises a sparse matrix; a failure names unknowns at fault."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from mna.errors import SingularSystemError

DENSE_DIAGNOSIS_LIMIT = 3000


class Factorization:
    """LU factors of a square sparse matrix; `solve` takes a vector or a matrix of columns."""

    def __init__(self, matrix: sp.spmatrix, names: tuple[str, ...]):
        self.names = names
        self.matrix = sp.csc_matrix(matrix)
        try:
            self._lu = spla.splu(self.matrix)
        except RuntimeError:
            raise _singular(self.matrix, names) from None

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        dtype = np.result_type(self.matrix.dtype, rhs.dtype)
        if np.issubdtype(dtype, np.complexfloating) and not np.iscomplexobj(self.matrix):
            return self._lu.solve(rhs.real) + 1j * self._lu.solve(rhs.imag)
        solution = self._lu.solve(rhs)
        if not np.all(np.isfinite(solution)):
            raise _singular(self.matrix, self.names)
        return solution


def factor(matrix: sp.spmatrix, names: tuple[str, ...]) -> Factorization:
    """Factorise `matrix`, whose columns are the unknowns `names`.

    >>> import scipy.sparse as sp
    >>> factor(sp.identity(2, format="csc"), ("V(a)", "V(b)")).solve(np.ones(2))
    array([1., 1.])
    """
    if matrix.shape[0] == 0:
        return _Empty(names)
    return Factorization(matrix, names)


class _Empty(Factorization):
    def __init__(self, names):
        self.names = names

    def solve(self, rhs):
        return np.zeros_like(rhs)


def _singular(matrix: sp.spmatrix, names: tuple[str, ...]) -> SingularSystemError:
    """Name the unknowns that a null vector of `matrix` moves most."""
    if matrix.shape[0] > DENSE_DIAGNOSIS_LIMIT:
        return SingularSystemError("singular system (too large to name the unknowns at fault)")
    _, singular_values, vh = scipy.linalg.svd(matrix.toarray())
    null = np.abs(vh[-1])
    culprits = tuple(names[i] for i in np.flatnonzero(null > 0.1 * null.max()))
    return SingularSystemError(
        "singular system: the unknowns " + ", ".join(culprits) + " are not determined "
        f"(smallest singular value {singular_values[-1]:.3g})",
        culprits,
    )
