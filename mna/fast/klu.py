"""SuiteSparse KLU through its C API (ctypes): the symbolic analysis of a sparsity pattern
is made once, and each numeric factorisation of a matrix with that pattern reuses it; real
and complex matrices alike, with KLU's own ordering or a given one. Where the library has
``klu_refactor``, factors can be remade for new values in the pivot order they have, which
skips the search for pivots (`Numeric.refactor`).

The library is the KLU that the ``nbklu`` or ``pyklu`` package carries in its extension
module (whose C functions are exported), or else the system's ``libklu``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import importlib.util
import weakref
from pathlib import Path

import numpy as np

KLU_OK = 0   # Common.status: anything else is a failure here
# a column's pivot stays on the diagonal while it is at least this fraction of the column's
# largest entry (KLU's default, 0.001, let an LC ladder with controlled sources solve with a
# backward error of 3e-3 at some AC frequencies; 0.1 brings it to round-off)
PIVOT_TOLERANCE = 0.1
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
    """Where KLU may be: ``nbklu``'s extension module (which has ``klu_refactor``), then
    ``pyklu``'s, then the system's library."""
    for package, pattern in (("nbklu", "_ext*"), ("PyKLU", "_klu*")):
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            yield from sorted(str(path) for path in Path(folder).glob(pattern)
                              if path.suffix in (".so", ".pyd", ".dylib"))
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
        "klu_z_factor": (p, [p, p, p, p, common]),
        "klu_z_solve": (i, [p, p, i, i, p, common]),
        "klu_tsolve": (i, [p, p, i, i, p, common]),
        "klu_z_tsolve": (i, [p, p, i, i, p, i, common]),   # conj_solve before common
        "klu_free_symbolic": (i, [ctypes.POINTER(p), common]),
        "klu_free_numeric": (i, [ctypes.POINTER(p), common]),
        "klu_z_free_numeric": (i, [ctypes.POINTER(p), common]),
    }
    optional = {   # the pivots' reciprocal condition, and refactorisation (which it guards)
        "klu_rcond": (i, [p, p, common]),
        "klu_z_rcond": (i, [p, p, common]),
        "klu_refactor": (i, [p, p, p, p, p, common]),
        "klu_z_refactor": (i, [p, p, p, p, p, common]),
    }
    for name, (restype, argtypes) in [*signatures.items(), *optional.items()]:
        if name in signatures or hasattr(lib, name):
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes
    lib.rconds = hasattr(lib, "klu_rcond") and hasattr(lib, "klu_z_rcond")
    lib.refactors = lib.rconds and hasattr(lib, "klu_refactor") and hasattr(lib, "klu_z_refactor")


class SingularMatrix(ArithmeticError):
    """KLU found the matrix singular (or could not factor it)."""


class Symbolic:
    """KLU's analysis of the pattern ``(indptr, indices)`` of a square CSC matrix of size
    `size` (row indices sorted in each column): its block triangular form and ordering,
    KLU's own (AMD) or `order` (a permutation of the unknowns, the k-th eliminated first)."""

    def __init__(self, size: int, indptr: np.ndarray, indices: np.ndarray,
                 order: np.ndarray | None = None):
        self.lib = lib = library()
        if lib is None:
            raise ImportError("KLU is not available (pip install nbklu)")
        # KLU trusts its arguments: what would make it read or write out of bounds is refused
        if len(indptr) != size + 1 or indptr[-1] != len(indices) or len(indices) >= 2**31:
            raise ValueError("not the pattern of a square CSC matrix of under 2**31 entries")
        if order is not None and not np.array_equal(np.sort(order), np.arange(size)):
            raise ValueError(f"the order is not a permutation of 0..{size - 1}")
        self.size = size
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int32)
        self.indices = np.ascontiguousarray(indices, dtype=np.int32)
        self.common = Common()
        lib.klu_defaults(self.common)
        if order is None:
            handle = lib.klu_analyze(size, self.indptr.ctypes.data, self.indices.ctypes.data,
                                     self.common)
        else:
            order = np.ascontiguousarray(order, dtype=np.int32)
            handle = lib.klu_analyze_given(size, self.indptr.ctypes.data,
                                           self.indices.ctypes.data, order.ctypes.data,
                                           order.ctypes.data, self.common)
        if not handle:
            raise SingularMatrix(_STATUS.get(self.common.status, "analysis failed"))
        self.handle = ctypes.c_void_p(handle)
        weakref.finalize(self, lib.klu_free_symbolic, ctypes.byref(self.handle), self.common)


class Numeric:
    """The LU factors of the matrix with values `data` (float64 or complex128, in the order
    of the pattern's entries) on the pattern that `symbolic` analysed. The factors have a
    ``klu_common`` of their own: one analysis may serve factors made in several threads."""

    def __init__(self, symbolic: Symbolic, data: np.ndarray):
        lib = symbolic.lib
        self.symbolic = symbolic
        self.common = common = Common()
        lib.klu_defaults(common)
        # where the pivots' condition can be read, a singular matrix is factored to the end
        # and refused by it (halted half-way, KLU 2.3 returns factors it already freed);
        # elsewhere KLU halts and says so in its status
        common.halt_if_singular = not lib.rconds
        common.tol = PIVOT_TOLERANCE
        self.complex = np.iscomplexobj(data)
        data = np.ascontiguousarray(data, dtype=complex if self.complex else float)
        factor = lib.klu_z_factor if self.complex else lib.klu_factor
        handle = factor(symbolic.indptr.ctypes.data, symbolic.indices.ctypes.data,
                        data.ctypes.data, symbolic.handle, common)
        self.handle = ctypes.c_void_p(handle)
        free = lib.klu_z_free_numeric if self.complex else lib.klu_free_numeric
        if handle:
            weakref.finalize(self, free, ctypes.byref(self.handle), common)
        self.rcond = self._rcond() if handle and lib.rconds else None
        if not handle or common.status != KLU_OK or self.rcond == 0.0:
            reason = "singular" if self.rcond == 0.0 else _STATUS.get(common.status, "failed")
            raise SingularMatrix(f"{reason} (KLU status {common.status})")
        lnz, unz = ctypes.cast(handle, ctypes.POINTER(ctypes.c_int32 * 4)).contents[2:]
        self.nonzeros = lnz + unz     # klu_numeric begins n, nblocks, lnz, unz
        self._solve = functools.partial(lib.klu_z_solve if self.complex else lib.klu_solve,
                                        symbolic.handle, self.handle, symbolic.size)
        self._tsolve = functools.partial(lib.klu_z_tsolve if self.complex else lib.klu_tsolve,
                                         symbolic.handle, self.handle, symbolic.size)

    @property
    def dtype(self) -> type:
        return complex if self.complex else float

    def refactor(self, data: np.ndarray, rcond_drop: float) -> bool:
        """Remake the factors for the values `data` (of the same dtype) in the pivot order
        they have; whether that order may serve: False when a pivot vanished or the pivots'
        reciprocal condition fell below `rcond_drop` times that of the fresh factorisation
        (the factors are then of no use, and a fresh one must be made). The caller checks
        the solutions: pivots of a sound ratio can still have grown the factors."""
        lib = self.symbolic.lib
        data = np.ascontiguousarray(data, dtype=self.dtype)
        refactor = lib.klu_z_refactor if self.complex else lib.klu_refactor
        done = refactor(self.symbolic.indptr.ctypes.data, self.symbolic.indices.ctypes.data,
                        data.ctypes.data, self.symbolic.handle, self.handle, self.common)
        return bool(done) and self.common.status == KLU_OK and (
            self._rcond() >= rcond_drop * self.rcond)

    def _rcond(self) -> float:
        """The smallest pivot's magnitude over the largest's (0 for a vanished pivot: KLU
        factors a singular matrix to the end, and this is how it shows)."""
        rcond = self.symbolic.lib.klu_z_rcond if self.complex else self.symbolic.lib.klu_rcond
        rcond(self.symbolic.handle, self.handle, self.common)
        return self.common.rcond if np.isfinite(self.common.rcond) else 0.0

    def solve_in_place(self, rhs: np.ndarray, transposed: bool = False) -> np.ndarray:
        """Overwrite `rhs` (a vector, or a Fortran-ordered matrix of columns, of the factors'
        dtype) with the solution of the matrix's system, or with `transposed` of its
        transpose's (not conjugated), and return it."""
        dtype = complex if self.complex else float
        if (rhs.dtype != dtype or rhs.shape[0] != self.symbolic.size or rhs.ndim > 2
                or not rhs.flags.f_contiguous):
            raise ValueError(f"KLU solves in place a {np.dtype(dtype)} vector of "
                             f"{self.symbolic.size} or a Fortran-ordered matrix of that many "
                             f"rows, not {rhs.dtype} {rhs.shape}")
        columns = 1 if rhs.ndim == 1 else rhs.shape[1]
        if not transposed:
            self._solve(columns, rhs.ctypes.data, self.common)
        elif self.complex:
            self._tsolve(columns, rhs.ctypes.data, 0, self.common)
        else:
            self._tsolve(columns, rhs.ctypes.data, self.common)
        return rhs
