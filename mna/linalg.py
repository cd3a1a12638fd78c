"""The one place that factorises sparse matrices; a failure names the unknowns at fault.

A `SparseLU` belongs to one sparsity pattern (CSC, row indices sorted in each column): its
symbolic analysis (the ordering) is made once, and every matrix with that pattern (each
Newton iteration, each AC frequency, each time-step size) is only factored numerically.
The analyses of the last few patterns are kept in the process (`ANALYSES`), so that the
points of a ``.step`` or ``.mc`` run share them: an analysis depends on the pattern and the
order alone, so sharing one changes no number. The backend is KLU (`mna.fast.klu`) where
the ``nbklu`` or ``pyklu`` package or a system ``libklu`` is found, else scipy's SuperLU;
a small matrix solved once goes to LAPACK's dense LU (numpy). Callers never know which ran.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Literal

import numpy as np

from mna.errors import SingularSystemError
from mna.fast import klu

log = logging.getLogger(__name__)

DENSE_DIAGNOSIS_LIMIT = 3000
DISSECTION_MIN = 1000     # unknowns: below, a nested dissection order does not pay
DISSECTION_FILL = 2.0     # it may fill in this many times AMD's entries (a ladder's: 1.5)
SOLVERS = ("klu", "superlu")
ANALYSES = 8              # symbolic analyses kept per process: the patterns of a few analyses
# a refactorisation in the last pivot order is tried while the smallest pivot over the
# largest stays above this fraction of that ratio at the last fresh factorisation, and kept
# while its solutions' componentwise backward error stays within BACKWARD_ERROR
REFACTOR_RCOND_DROP = 1e-3
BACKWARD_ERROR = 1e-12
REFACTOR_MIN = 100   # unknowns: below, a fresh factorisation costs no more than that check
DENSE_MAX = 64       # unknowns: up to here a matrix solved once is solved dense (LAPACK's LU)
SUBNORMAL_SCALE = np.finfo(float).tiny / np.finfo(float).eps   # about 1e-292

Order = Literal["amd", "dissection"]
# KLU's analyses by (order, size, indptr, indices), least recently used first
_analyses: OrderedDict[tuple, klu.Symbolic] = OrderedDict()
_analyses_lock = threading.Lock()

Use = Literal["once", "many"]


def klu_available() -> bool:
    """Whether KLU is there: the ``nbklu`` or ``pyklu`` package, or a system ``libklu``."""
    return klu.library() is not None


def solver_in_use(solver: str) -> str:
    """The backend that serves ``.options solver=`` `solver`: SuperLU stands in for a
    missing KLU."""
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    if solver == "klu" and not klu_available():
        log.info("KLU is not available (pip install nbklu): solving with SuperLU")
        return "superlu"
    return solver


class Factors:
    """The LU factors of one matrix; `solve` takes a vector or a matrix of columns."""

    def __init__(self, solve_in_place, dtype, names: tuple[str, ...], check):
        self._solve_in_place = solve_in_place
        self.dtype = dtype
        self.names = names
        self._check = check

    def solve(self, rhs: np.ndarray, transposed: bool = False) -> np.ndarray:
        """The solution for `rhs` in a new array, of the transposed matrix (not conjugated)
        with `transposed`; a real matrix's factors solve a complex right-hand side's parts
        as the columns of one real one."""
        if np.iscomplexobj(rhs) and self.dtype is float:
            columns = rhs.reshape(len(rhs), -1)
            parts = self.solve(np.hstack([columns.real, columns.imag]), transposed)
            half = columns.shape[1]
            return (parts[:, :half] + 1j * parts[:, half:]).reshape(rhs.shape)
        solution = self.solve_in_place(np.array(rhs, dtype=self.dtype, order="F"), transposed)
        if not np.isfinite(solution).all():
            raise self._check()
        return solution

    def solve_in_place(self, rhs: np.ndarray, transposed: bool = False) -> np.ndarray:
        """Overwrite `rhs` (of the factors' dtype, Fortran-ordered) with the solution where
        the backend can, and return the solution; no finiteness check."""
        return self._solve_in_place(rhs, transposed)


class _KluFactors(Factors):
    """KLU's factors of the matrix `data` of `lu`'s pattern. Factors remade in another
    matrix's pivot order (not `fresh`) check the backward error of their first solution of
    each kind, of the matrix and of its transpose, and are made afresh where it fails;
    factors recycled into another matrix's are spent."""

    def __init__(self, lu: SparseLU, numeric: klu.Numeric, data: np.ndarray, fresh: bool):
        super().__init__(None, numeric.dtype, lu.names, lambda: lu._singular(data))
        self.lu, self.complex = lu, numeric.complex
        self._klu, self._data = numeric, data
        self._unchecked = set() if fresh else {False, True}   # by `transposed`

    def spend(self) -> klu.Numeric:
        """The factors' KLU object, to be remade for another matrix (these are done)."""
        if self._klu is None:
            raise RuntimeError("these factors were recycled already")
        numeric, self._klu = self._klu, None
        return numeric

    def solve_in_place(self, rhs: np.ndarray, transposed: bool = False) -> np.ndarray:
        if self._klu is None:
            raise RuntimeError("these factors were recycled for another matrix")
        if transposed not in self._unchecked:
            return self._klu.solve_in_place(rhs, transposed)
        given = rhs.copy()
        solution = self._klu.solve_in_place(rhs, transposed)
        columns = zip(solution.reshape(len(given), -1).T, given.reshape(len(given), -1).T)
        if any(self.lu.backward_error(self._data, x, b, transposed) > BACKWARD_ERROR
               for x, b in columns):
            self._klu, self._unchecked = self.lu._numeric(self._data), set()
            rhs[...] = given
            solution = self._klu.solve_in_place(rhs, transposed)
        self._unchecked.discard(transposed)
        return solution


class SparseLU:
    """Factorisations of the square matrices of size `size` with the CSC pattern
    ``(indptr, indices)`` and unknowns `names`.

    `use` says whether factors will serve many solves (a transient's steps): then, from
    `DISSECTION_MIN` unknowns, a nested dissection order (`mna.fast.ordering`) replaces
    KLU's own where it fills in at most `DISSECTION_FILL` times as much (``ordering=auto``);
    ``ordering=amd`` or ``dissection`` decides outright.
    """

    def __init__(self, size: int, indptr: np.ndarray, indices: np.ndarray,
                 names: tuple[str, ...], solver: str = "klu", ordering: str = "auto",
                 use: Use = "once"):
        self.size = size
        self.indptr = np.asarray(indptr)
        self.indices = np.asarray(indices)
        self.names = names
        self.backend = solver_in_use(solver)
        self._ordering = ordering
        self._use = use
        self._symbolic: klu.Symbolic | None = None
        self._last: Factors | None = None   # the factors of `solve`'s last matrix
        self._columns: np.ndarray | None = None        # each entry's column
        self.factorizations = 0

    def factor(self, data: np.ndarray, recycle: Factors | None = None) -> Factors:
        """The factors of the matrix with entries `data` (real or complex, in the pattern's
        order); `SingularSystemError` names the unknowns a singular one leaves free.

        `recycle`: factors made here that the caller is done with. Where KLU has
        ``klu_refactor``, they are remade for `data` (and spent) in their pivot order while
        its pivots stay sound (`REFACTOR_RCOND_DROP`), which skips the search for pivots;
        the componentwise backward error of the first solution of the matrix and of its
        transpose is checked, and beyond `BACKWARD_ERROR` the order no longer serves and
        the matrix is factored afresh."""
        self.factorizations += 1
        if self.size == 0:
            return Factors(lambda rhs, transposed=False: rhs, float, self.names, lambda: None)
        if self.backend == "klu":
            if (isinstance(recycle, _KluFactors) and recycle.lu is self
                    and self.size >= REFACTOR_MIN and klu.library().refactors
                    and recycle.complex == np.iscomplexobj(data)):
                numeric = recycle.spend()
                if numeric.refactor(data, REFACTOR_RCOND_DROP):
                    return _KluFactors(self, numeric, data, fresh=False)
            return _KluFactors(self, self._numeric(data), data, fresh=True)
        import scipy.sparse as sp
        import scipy.sparse.linalg as spla

        matrix = sp.csc_matrix((data, self.indices, self.indptr), shape=(self.size,) * 2)
        try:
            lu = spla.splu(matrix)
        except RuntimeError:
            raise self._singular(data) from None
        return Factors(_superlu_solve(lu), complex if np.iscomplexobj(data) else float,
                       self.names, lambda: self._singular(data))

    def solve(self, data: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """The solution for `rhs` of the matrix with entries `data`, for callers that solve
        once with each matrix (Newton's iterations, the frequencies of an AC sweep): each
        matrix's factors recycle the last one's (`factor`), so every solution made in an
        old pivot order has its backward error checked. Up to `DENSE_MAX` unknowns,
        whatever the backend, LAPACK's dense LU (partial pivoting) solves: a sparse
        factorisation's set-up costs more there than the work."""
        if self.size <= DENSE_MAX:
            return self._dense_solve(data, rhs)
        last, self._last = self._last, None
        factors = self.factor(data, recycle=last)
        solution = factors.solve(rhs)
        self._last = factors
        return solution

    def _dense_solve(self, data: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """LAPACK's solution (which, unlike KLU's, can be finite for a matrix that is not)."""
        self.factorizations += 1
        matrix = np.zeros((self.size, self.size), dtype=np.result_type(data, float))
        matrix[self.indices, self._entry_columns()] = data
        try:
            solution = np.linalg.solve(matrix, rhs)
        except np.linalg.LinAlgError:
            raise self._singular(data) from None
        if not (np.isfinite(solution).all() and np.isfinite(data).all()):
            raise self._singular(data)
        return solution

    def _entry_columns(self) -> np.ndarray:
        """Each entry's column (the pattern's ``indptr`` expanded)."""
        if self._columns is None:
            self._columns = np.repeat(np.arange(self.size), np.diff(self.indptr))
        return self._columns

    def backward_error(self, data: np.ndarray, x: np.ndarray, rhs: np.ndarray,
                       transposed: bool = False) -> float:
        """``max |rhs - A x| / (|A| |x| + |rhs|)`` over the equations (Oettli and Prager's
        componentwise backward error; infinite for a solution that is not finite), of the
        transposed matrix with `transposed`. A scale in the subnormal range counts as
        `SUBNORMAL_SCALE`: there a residual of round-off is no error (the far end of a long
        ladder decays to such values)."""
        rows, columns = self.indices, self._entry_columns()
        if transposed:
            rows, columns = columns, rows
        with np.errstate(over="ignore", invalid="ignore"):
            terms = data * x[columns]
            residual = np.abs(rhs - _row_sums(rows, terms, self.size))
            scale = np.bincount(rows, np.abs(terms), self.size) + np.abs(rhs)
        if not np.isfinite(residual).all():
            return np.inf
        return float(np.max(residual / np.maximum(scale, SUBNORMAL_SCALE), initial=0.0))

    def _numeric(self, data: np.ndarray) -> klu.Numeric:
        try:
            return klu.Numeric(self._analysis(data), data)
        except klu.SingularMatrix:
            raise self._singular(data) from None

    def _analysis(self, data: np.ndarray) -> klu.Symbolic:
        if self._symbolic is None:
            self._symbolic = analysis(self.size, self.indptr, self.indices,
                                      "dissection" if self._dissects(data) else "amd")
        return self._symbolic

    def _dissects(self, data: np.ndarray) -> bool:
        """Whether to eliminate in a nested dissection order, by the ``ordering`` option
        (``auto`` weighs the fill-in of both orders on this matrix)."""
        wanted = self._ordering
        if wanted == "amd" or (wanted == "auto" and (self._use == "once"
                                                     or self.size < DISSECTION_MIN)):
            return False
        if wanted == "auto":
            own = klu.Numeric(analysis(self.size, self.indptr, self.indices, "amd"), data)
            given = klu.Numeric(analysis(self.size, self.indptr, self.indices, "dissection"),
                                data)
            if given.nonzeros > DISSECTION_FILL * own.nonzeros:
                return False
        log.debug("factoring %d unknowns in a nested dissection order", self.size)
        return True

    def _singular(self, data: np.ndarray) -> SingularSystemError:
        """Name the unknowns that a null vector of the matrix moves most."""
        if self.size > DENSE_DIAGNOSIS_LIMIT:
            return SingularSystemError("singular system (too large to name the unknowns at "
                                       "fault)")
        dense = np.zeros((self.size, self.size), dtype=np.result_type(data, float))
        np.add.at(dense, (self.indices, self._entry_columns()), data)
        if not np.isfinite(dense).all():
            return SingularSystemError("the matrix holds a value that is not finite")
        _, singular_values, vh = np.linalg.svd(dense)
        if singular_values[-1] > 1e-12 * singular_values[0]:   # regular: the values are huge
            return SingularSystemError(
                "the solution is beyond the floating-point range (the matrix is regular, of "
                f"condition {singular_values[0] / singular_values[-1]:.3g}: are the sources "
                "or element values that large?)")
        null = np.abs(vh[-1])
        culprits = tuple(self.names[i] for i in np.flatnonzero(null > 0.1 * null.max()))
        return SingularSystemError(
            "singular system: the unknowns " + ", ".join(culprits) + " are not determined "
            f"(smallest singular value {singular_values[-1]:.3g})", culprits)


def _row_sums(rows: np.ndarray, terms: np.ndarray, size: int) -> np.ndarray:
    """``terms`` summed by row, real or complex (numpy alone: importing scipy.sparse for a
    product would cost a run more than the product)."""
    if np.iscomplexobj(terms):
        return np.bincount(rows, terms.real, size) + 1j * np.bincount(rows, terms.imag, size)
    return np.bincount(rows, terms, size)


def analysis(size: int, indptr: np.ndarray, indices: np.ndarray, order: Order) -> klu.Symbolic:
    """KLU's analysis of the pattern in `order` (``amd``: KLU's own; ``dissection``: a nested
    dissection), made once per pattern and order among the last `ANALYSES` used here."""
    key = (order, size, np.asarray(indptr, np.int64).tobytes(),
           np.asarray(indices, np.int64).tobytes())
    with _analyses_lock:
        symbolic = _analyses.get(key)
        if symbolic is not None:
            _analyses.move_to_end(key)
            return symbolic
    given = None
    if order == "dissection":
        import scipy.sparse as sp

        from mna.fast.ordering import nested_dissection

        given = nested_dissection(sp.csc_matrix((np.ones(len(indices)), indices, indptr),
                                                shape=(size, size)))
    symbolic = klu.Symbolic(size, indptr, indices, given)
    with _analyses_lock:
        _analyses[key] = symbolic
        while len(_analyses) > ANALYSES:
            _analyses.popitem(last=False)
    return symbolic


def factor(matrix, names: tuple[str, ...], solver: str = "klu") -> Factors:
    """The factors of one scipy sparse `matrix` whose columns are the unknowns `names`.

    >>> import scipy.sparse as sp
    >>> factor(sp.identity(2, format="csc"), ("V(a)", "V(b)")).solve(np.ones(2))
    array([1., 1.])
    """
    import scipy.sparse as sp

    matrix = sp.csc_matrix(matrix)
    matrix.sum_duplicates()
    matrix.sort_indices()
    return SparseLU(matrix.shape[0], matrix.indptr, matrix.indices, names,
                    solver).factor(matrix.data)


def factor_if_regular(matrix, names: tuple[str, ...],
                      pivot_ratio: float = 1e-11) -> Factors | None:
    """SuperLU factors of `matrix`, or None when it is singular or nearly so (a pivot below
    `pivot_ratio` times the largest): for callers that then take another way, so the
    singular case is not diagnosed. SuperLU, whatever ``.options solver`` says: the test
    reads the pivots, which KLU does not expose."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    try:
        lu = spla.splu(sp.csc_matrix(matrix))
    except RuntimeError:
        return None
    diagonal = np.abs(lu.U.diagonal())
    if diagonal.size and diagonal.min() <= pivot_ratio * diagonal.max():
        return None
    return Factors(_superlu_solve(lu), float, names,
                   lambda: SingularSystemError("singular system"))


def _superlu_solve(lu):
    """SuperLU's solve in the form `Factors` calls: ``(rhs, transposed)``."""
    return lambda rhs, transposed=False: lu.solve(rhs, trans="T" if transposed else "N")
