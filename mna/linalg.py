"""`factor`: the one place that factorises a sparse matrix; a failure names unknowns at fault."""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from mna import klu
from mna.errors import SingularSystemError

DENSE_DIAGNOSIS_LIMIT = 3000
ORDER_FILL_MARGIN = 2.0   # a given order's fill may be this times KLU's own (a ladder's: 1.5)


class Factorization:
    """LU factors of a square sparse matrix; `solve` takes a vector or a matrix of columns.
    `order` is the elimination order given to the backend (None: the backend's own)."""

    order: np.ndarray | None = None

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
    """The same interface on SuiteSparse KLU (`mna.klu`), with KLU's ordering or `order`."""

    def __init__(self, matrix: sp.spmatrix, names: tuple[str, ...],
                 order: np.ndarray | None = None):
        self.names = names
        self.order = order
        self.matrix = sp.csc_matrix(matrix, dtype=float)
        try:
            self._lu = klu.Klu(self.matrix, order)
        except klu.SingularMatrix:
            raise _singular(self.matrix, names) from None
        self.nonzeros = self._lu.nonzeros

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        if np.iscomplexobj(rhs):
            return self._lu.solve(rhs.real) + 1j * self._lu.solve(rhs.imag)
        solution = self._lu.solve(rhs)
        if not np.all(np.isfinite(solution)):
            raise _singular(self.matrix, self.names)
        return solution

    def solve_in_place(self, rhs: np.ndarray) -> np.ndarray:
        return self._lu.solve_in_place(rhs)


def klu_available() -> bool:
    """Whether KLU is there: the ``klu`` extra (``pip install -e '.[klu]'``) or a system
    ``libklu``."""
    return klu.library() is not None


SOLVERS = ("klu", "superlu")


def solver_in_use(solver: str) -> str:
    """The solver that `factor` uses for a real matrix when asked for `solver`: KLU needs the
    ``pyklu`` package, and SuperLU stands in without it."""
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    return "klu" if solver == "klu" and klu_available() else "superlu"


def factor(matrix: sp.spmatrix, names: tuple[str, ...], solver: str,
           order: np.ndarray | None = None) -> Factorization:
    """Factorise `matrix`, whose columns are the unknowns `names`, with `solver` (the
    ``.options solver``): ``"klu"`` (SuiteSparse KLU, `mna.klu`) or ``"superlu"`` (scipy).
    Complex matrices always go to SuperLU. `order` is an elimination order for KLU
    (`factor_in_faster_order` chooses one); KLU's own serves if the matrix fails in it.

    >>> import scipy.sparse as sp
    >>> factor(sp.identity(2, format="csc"), ("V(a)", "V(b)"), "superlu").solve(np.ones(2))
    array([1., 1.])
    """
    if matrix.shape[0] == 0:
        return _Empty(names)
    if solver_in_use(solver) == "klu" and not np.iscomplexobj(matrix.data):
        for attempt in ((order, None) if order is not None else (None,)):
            try:
                return KluFactorization(matrix, names, attempt)
            except SingularSystemError:
                pass  # SuperLU below names the unknowns at fault in the same way
    return Factorization(matrix, names)


def factor_in_faster_order(matrix: sp.spmatrix, names: tuple[str, ...], solver: str,
                           order: np.ndarray) -> Factorization:
    """`factor`, for factors that many solves will use, in `order` (a nested dissection,
    `mna.ordering`) or in KLU's own, whichever solves faster (`faster_solves`); `order` is
    refused outright when it fills in far more (`ORDER_FILL_MARGIN`). The result's `order`
    says which was kept; both give the same solutions to round-off."""
    own = factor(matrix, names, solver)
    if not isinstance(own, KluFactorization):
        return own
    try:
        given = KluFactorization(matrix, names, order)
    except SingularSystemError:
        return own
    if given.nonzeros > ORDER_FILL_MARGIN * own.nonzeros:
        return own
    return faster_solves(own, given)


def faster_solves(own: Factorization, given: Factorization, repeats: int = 5,
                  margin: float = 0.9) -> Factorization:
    """`given` if its solves take under `margin` times `own`'s (best of `repeats` each,
    interleaved), else `own`. Timed because which order is faster depends on the machine
    as much as on the count of operations: a solve along a chain waits on latency."""
    rhs = np.ones(own.matrix.shape[0])
    best = [float("inf"), float("inf")]
    for _ in range(repeats):
        for k, factors in enumerate((own, given)):
            start = time.perf_counter()
            factors.solve_in_place(rhs)
            best[k] = min(best[k], time.perf_counter() - start)
            rhs.fill(1.0)
    return given if best[1] < margin * best[0] else own


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
