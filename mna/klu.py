"""SuiteSparse KLU through its C API (ctypes), so that a factorisation can take a given
ordering: ``pyklu``'s class factors with KLU's own (AMD), and on a long chain of unknowns AMD
makes every unknown of a solve wait for the one before it (see `mna.ordering`).

The library is the KLU that the ``pyklu`` package (the ``klu`` extra) carries in its
extension module, whose C functions are exported, or else the system's ``libklu``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import importlib.util
import weakref
from pathlib import Path

import numpy as np
import scipy.sparse as sp

KLU_OK = 0   # Common.status: anything else is a failure here
NO_SCALING = 0   # Common.scale: `Klu` scales the matrix itself
_STATUS = {1: "singular", -2: "out of memory", -3: "invalid input", -4: "too large"}


class Common(ctypes.Structure):
    """``klu_common`` as klu.h declares it (unchanged since KLU 1.0): parameters, then
    statistics; `klu_defaults` fills it in."""

    _fields_ = [
        ("tol", ctypes.c_double), ("memgrow", ctypes.c_double),
        ("initmem_amd", ctypes.c_double), ("initmem", ctypes.c_double),
        ("maxwork", ctypes.c_double),
        ("btf", ctypes.c_int), ("ordering", ctypes.c_int), ("scale", ctypes.c_int),
        ("user_order", ctypes.c_void_p), ("user_data", ctypes.c_void_p),
        ("halt_if_singular", ctypes.c_int),
        ("status", ctypes.c_int), ("nrealloc", ctypes.c_int),
        ("structural_rank", ctypes.c_int32), ("numerical_rank", ctypes.c_int32),
        ("singular_col", ctypes.c_int32), ("noffdiag", ctypes.c_int32),
        ("flops", ctypes.c_double), ("rcond", ctypes.c_double), ("condest", ctypes.c_double),
        ("rgrowth", ctypes.c_double), ("work", ctypes.c_double),
        ("memusage", ctypes.c_size_t), ("mempeak", ctypes.c_size_t),
        ("_reserved", ctypes.c_byte * 256),   # room should a later KLU append fields
    ]


def _candidates():
    """Where KLU may be: ``pyklu``'s extension module first (finding it is a directory
    listing; `ctypes.util.find_library` runs ``ldconfig``), then the system's library."""
    spec = importlib.util.find_spec("PyKLU")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        yield from sorted(str(path) for path in Path(folder).glob("_klu*.so"))
    found = ctypes.util.find_library("klu")
    if found:
        yield found


@functools.cache
def library() -> ctypes.CDLL | None:
    """KLU's shared library with the functions used here declared, or None without one."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            _declare(lib)
        except (OSError, AttributeError):
            continue
        return lib
    return None


def _declare(lib: ctypes.CDLL) -> None:
    p, i, common = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(Common)
    signatures = {
        "klu_defaults": (i, [common]),
        "klu_analyze": (p, [i, p, p, common]),
        "klu_analyze_given": (p, [i, p, p, p, p, common]),
        "klu_factor": (p, [p, p, p, p, common]),
        "klu_solve": (i, [p, p, i, i, p, common]),
        "klu_free_symbolic": (i, [ctypes.POINTER(p), common]),
        "klu_free_numeric": (i, [ctypes.POINTER(p), common]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes


class SingularMatrix(ArithmeticError):
    """KLU found the matrix singular (or could not factor it)."""


class Klu:
    """KLU factors of a real square sparse matrix, with KLU's ordering or a given one.

    `order` is a permutation of the unknowns applied to rows and columns alike (unknown
    ``order[k]`` is eliminated k-th, as far as KLU's block triangular form and its partial
    pivoting keep it); without it KLU orders by AMD on its block triangular form.
    `nonzeros` counts the entries of the diagonal blocks' L and U.

    The rows are scaled by their largest entry, as KLU does by default, but here, once:
    KLU would divide every right-hand side by the scales, a division per unknown, where a
    product with their reciprocals costs less (the 1e4 ladder's solve: 81 -> 74 us).
    Pivoting sees the same scaled matrix either way.
    """

    def __init__(self, matrix: sp.spmatrix, order: np.ndarray | None = None):
        lib = library()
        if lib is None:
            raise ImportError("KLU is not available (pip install -e '.[klu]')")
        matrix = sp.csc_matrix(matrix, dtype=float)
        matrix.sort_indices()
        self.size = matrix.shape[0]
        # KLU trusts its arguments: what would make it read or write out of bounds is refused
        if matrix.shape[1] != self.size or matrix.nnz >= 2**31:
            raise ValueError(f"KLU takes a square matrix of under 2**31 entries, not "
                             f"{matrix.shape} with {matrix.nnz}")
        if order is not None and not np.array_equal(np.sort(order), np.arange(self.size)):
            raise ValueError(f"the order is not a permutation of 0..{self.size - 1}")
        self._common = Common()
        lib.klu_defaults(self._common)
        self._common.scale = NO_SCALING
        largest = abs(matrix).max(axis=1).toarray().ravel()
        self._row_scale = np.reciprocal(largest, out=np.ones_like(largest), where=largest > 0)
        # KLU copies what it needs: these arrays may go once the matrix is factored
        indptr = np.ascontiguousarray(matrix.indptr, dtype=np.int32)
        indices = np.ascontiguousarray(matrix.indices, dtype=np.int32)
        data = matrix.data * self._row_scale[matrix.indices]
        if order is None:
            symbolic = lib.klu_analyze(self.size, indptr.ctypes.data, indices.ctypes.data,
                                       self._common)
        else:
            order = np.ascontiguousarray(order, dtype=np.int32)
            symbolic = lib.klu_analyze_given(self.size, indptr.ctypes.data, indices.ctypes.data,
                                             order.ctypes.data, order.ctypes.data, self._common)
        numeric = lib.klu_factor(indptr.ctypes.data, indices.ctypes.data, data.ctypes.data,
                                 symbolic, self._common) if symbolic else None
        self._handles = (ctypes.c_void_p(symbolic), ctypes.c_void_p(numeric))
        weakref.finalize(self, _free, lib, self._common, *self._handles)
        if not numeric or self._common.status != KLU_OK:
            raise SingularMatrix(_STATUS.get(self._common.status, "failed") +
                                 f" (KLU status {self._common.status})")
        lnz, unz = ctypes.cast(numeric, ctypes.POINTER(ctypes.c_int32 * 4)).contents[2:]
        self.nonzeros = lnz + unz     # klu_numeric begins n, nblocks, lnz, unz
        self._solve = functools.partial(lib.klu_solve, symbolic, numeric, self.size)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """The solution for `rhs` (a vector, or a matrix of columns), in a new array."""
        solution = np.array(rhs, dtype=float, order="F")
        return self.solve_in_place(solution)

    def solve_in_place(self, rhs: np.ndarray) -> np.ndarray:
        """Overwrite `rhs` (float64; a vector, or a Fortran-ordered matrix of columns) with
        the solution, and return it."""
        if (rhs.dtype != np.float64 or rhs.shape[0] != self.size or rhs.ndim > 2
                or not rhs.flags.f_contiguous):
            raise ValueError(f"KLU solves in place a float64 vector of {self.size} or a "
                             f"Fortran-ordered matrix of {self.size} rows, not {rhs.dtype} "
                             f"{rhs.shape}")
        columns = 1 if rhs.ndim == 1 else rhs.shape[1]
        np.multiply(rhs, self._row_scale if rhs.ndim == 1 else self._row_scale[:, None],
                    out=rhs)
        self._solve(columns, rhs.ctypes.data, self._common)
        return rhs


def _free(lib: ctypes.CDLL, common: Common, symbolic: ctypes.c_void_p,
          numeric: ctypes.c_void_p) -> None:
    if numeric:
        lib.klu_free_numeric(ctypes.byref(numeric), common)
    if symbolic:
        lib.klu_free_symbolic(ctypes.byref(symbolic), common)
