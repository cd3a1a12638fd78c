"""`factor`: the one place that factorises a sparse matrix; a failure names unknowns at fault."""

from __future__ import annotations

import contextlib
import functools
import os
import sys

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

    def solve_in_place(self, rhs: np.ndarray) -> np.ndarray:
        """The solution for one real right-hand side, fast: no finiteness check, and `rhs`
        itself is overwritten when the backend can (KLU); use the returned array."""
        return self._lu.solve(rhs)


class KluFactorization(Factorization):
    """The same interface on SuiteSparse KLU (the ``pyklu`` package)."""

    def __init__(self, matrix: sp.spmatrix, names: tuple[str, ...]):
        import PyKLU

        self.names = names
        self.matrix = sp.csc_matrix(matrix, dtype=float)
        self.matrix.sort_indices()
        self._lu = PyKLU.Klu(self.matrix)
        # KLU reports a singular matrix only by printing from C: check one solve instead,
        # with that printing silenced.
        probe = np.linspace(1.0, 2.0, self.matrix.shape[0])
        with _c_stdout_silenced():
            solution = self._lu.solve(probe)
        residual = self.matrix @ solution - probe
        scale = abs(self.matrix).max() * np.abs(solution).max() + 1.0
        if not np.all(np.isfinite(solution)) or np.abs(residual).max() > 1e-8 * scale:
            raise _singular(self.matrix, names)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        if np.iscomplexobj(rhs):
            return self._lu.solve(np.ascontiguousarray(rhs.real)) + 1j * self._lu.solve(
                np.ascontiguousarray(rhs.imag))
        solution = self._lu.solve(np.asarray(rhs, dtype=float))
        if not np.all(np.isfinite(solution)):
            raise _singular(self.matrix, self.names)
        return solution

    def solve_in_place(self, rhs: np.ndarray) -> np.ndarray:
        return self._lu.solve(rhs, copy=False)


@contextlib.contextmanager
def _c_stdout_silenced():
    """Send what C code writes to file descriptor 1 to /dev/null for the duration."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


@functools.cache
def klu_available() -> bool:
    """Whether KLU (the ``klu`` extra: ``pip install -e '.[klu]'``) is importable; asked once."""
    try:
        import PyKLU  # noqa: F401
    except ImportError:
        return False
    return True


SOLVERS = ("klu", "superlu")


def solver_in_use(solver: str) -> str:
    """The solver that `factor` uses for a real matrix when asked for `solver`: KLU needs the
    ``pyklu`` package, and SuperLU stands in without it."""
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    return "klu" if solver == "klu" and klu_available() else "superlu"


def factor(matrix: sp.spmatrix, names: tuple[str, ...], solver: str) -> Factorization:
    """Factorise `matrix`, whose columns are the unknowns `names`, with `solver` (the
    ``.options solver``): ``"klu"`` (SuiteSparse KLU through ``pyklu``) or ``"superlu"``
    (scipy). Complex matrices always go to SuperLU.

    >>> import scipy.sparse as sp
    >>> factor(sp.identity(2, format="csc"), ("V(a)", "V(b)"), "superlu").solve(np.ones(2))
    array([1., 1.])
    """
    if matrix.shape[0] == 0:
        return _Empty(names)
    if solver_in_use(solver) == "klu" and not np.iscomplexobj(matrix.data):
        try:
            return KluFactorization(matrix, names)
        except SingularSystemError:
            pass  # SuperLU below names the unknowns at fault in the same way
    return Factorization(matrix, names)


def factor_if_regular(matrix: sp.spmatrix, names: tuple[str, ...],
                      pivot_ratio: float = 1e-11) -> Factorization | None:
    """SuperLU factors of `matrix`, or None when it is singular or nearly so (a pivot below
    `pivot_ratio` times the largest): for callers that then take another way, so the
    singular case is not diagnosed. Always SuperLU, whatever ``.options solver`` says: the
    test reads the pivots, which KLU does not expose."""
    try:
        lu = spla.splu(sp.csc_matrix(matrix))
    except RuntimeError:
        return None
    diagonal = np.abs(lu.U.diagonal())
    if diagonal.size and diagonal.min() <= pivot_ratio * diagonal.max():
        return None
    factors = Factorization.__new__(Factorization)
    factors.names, factors.matrix, factors._lu = names, sp.csc_matrix(matrix), lu
    return factors


class _Empty(Factorization):
    def __init__(self, names):
        self.names = names

    def solve(self, rhs):
        return np.zeros_like(rhs)

    def solve_in_place(self, rhs):
        return rhs


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
