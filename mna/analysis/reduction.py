"""Descriptor system → state space with physical states: ``x' = A x + B u + E u'``,
``y = C x + D u + F u'``.

The candidates for states are the across variables of A-type elements and the through
variables of T-type elements (functionals ``s_i = S_i z`` of the unknowns). They are taken
greedily in normal-tree order (A-type in netlist order, then T-type in reverse netlist order,
so that the T-type elements that a normal tree would take first are the ones left out), a
candidate being kept when the equations together with the states already kept do not fix it.
The equations are the first derivative array of ``G z + C z' = B u``::

    [G C 0] [z  ]   [B u ]
    [0 G C] [z' ] = [B u']          (z'' are free unknowns: nothing needs u'')
            [z'']

so that the hidden constraints of loops of A-type elements and across sources, and of cut-sets
of T-type elements and through sources, are seen (also through TF and GY couplers). With the
states ``S_sel z = s`` appended, every wanted quantity (``s' = S_sel z'`` and the outputs
``P z + Q z'``) must lie in the row space of the stacked matrix; its coefficients on the right
hand side give ``A B E`` and ``C D F``. Nothing is pseudo-inverted: a quantity that the
equations do not fix is an error (`DescriptorIndexError`).

Two implementations share these definitions:

* `reduce_dense`: the derivative array above, dense; decisions (ranks) are taken in floating
  point on equilibrated matrices, and the coefficients are computed either in floating point or
  exactly over the field of rational functions of the parameters (symbolic mode, with the
  decisions taken at generic parameter values).
* `reduce_sparse`: for numeric systems of index at most one (no such loops or cut-sets), in
  the coordinates of the column and row spaces of ``C`` (found block by block) the algebraic
  unknowns follow from one sparse LU; only matrices of the size of the state vector are dense.
  It declines (returns None) when the algebraic block is singular, and the dense path decides.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

from mna.errors import DescriptorIndexError, SingularSystemError
from mna.linalg import factor_if_regular

if TYPE_CHECKING:
    import sympy

log = logging.getLogger(__name__)

RANK_TOL = 1e-9
DENSE_LIMIT = 1500
SPARSE_STATES = 100     # a model of this many states or more keeps A sparse ...
SPARSE_DENSITY = 0.1    # ... when at most this fraction of its entries are non-zero
SOLVE_BLOCK = 256       # right-hand sides solved at a time for a sparse result


@dataclass(frozen=True)
class Candidate:
    """A physical variable that may be a state: ``value = row · z`` (row: {index: coefficient})."""

    name: str
    unit: str
    element: str
    kind: str  # "A" (across of an A-type element) or "T" (through of a T-type element)
    row: dict


@dataclass(frozen=True)
class Reduced:
    """The matrices of ``x' = A x + B u + E u'``, ``y = C x + D u + F u'`` and the kept states."""

    states: tuple[int, ...]  # indices into the candidate list, in state order
    A: Any
    B: Any
    C: Any
    D: Any
    E: Any
    F: Any


def preference_order(candidates: list[Candidate]) -> list[int]:
    """A-type candidates in netlist order, then T-type ones in reverse netlist order."""
    across = [i for i, c in enumerate(candidates) if c.kind == "A"]
    through = [i for i, c in enumerate(candidates) if c.kind == "T"]
    return across + through[::-1]


def state_order(selected: list[int], candidates: list[Candidate]) -> tuple[int, ...]:
    """Kept states as reported: A-type first, then T-type, each in netlist order."""
    return tuple(sorted(selected, key=lambda i: (candidates[i].kind != "A", i)))


def _dense(matrix) -> np.ndarray:
    if sp.issparse(matrix):
        return matrix.toarray().astype(float)
    return np.asarray(matrix, dtype=float)


def _candidate_matrix(candidates: list[Candidate], n: int, order=None, symbolic=False):
    order = range(len(candidates)) if order is None else order
    if symbolic:
        import sympy

        S = sympy.zeros(len(order), n)
    else:
        S = np.zeros((len(order), n))
    for r, i in enumerate(order):
        for col, value in candidates[i].row.items():
            S[r, col] += value
    return S


# --------------------------------------------------------------------------------------------
# dense: the derivative array
# --------------------------------------------------------------------------------------------

def _equilibrate(M) -> tuple[np.ndarray, np.ndarray]:
    """Row and column scales (powers of two) that bring every nonzero row and column of M to
    max-norm about 1 (Ruiz's iteration); M dense or sparse."""
    A = abs(sp.csr_matrix(M)) if sp.issparse(M) else sp.csr_matrix(np.abs(M))
    rows, cols = np.ones(A.shape[0]), np.ones(A.shape[1])
    for _ in range(30 if A.nnz else 0):
        scaled = sp.diags(rows) @ A @ sp.diags(cols)
        r = np.asarray(scaled.max(axis=1).todense()).ravel()
        c = np.asarray(scaled.max(axis=0).todense()).ravel()
        if np.all(np.abs(r[r > 0] - 1) < 0.5) and np.all(np.abs(c[c > 0] - 1) < 0.5):
            break
        rows = rows / np.sqrt(np.where(r > 0, r, 1))
        cols = cols / np.sqrt(np.where(c > 0, c, 1))
    return 2.0 ** np.round(np.log2(rows)), 2.0 ** np.round(np.log2(cols))


def _rank(M: np.ndarray) -> int:
    if M.size == 0:
        return 0
    values = scipy.linalg.svdvals(M)
    return int(np.sum(values > RANK_TOL * max(values[0], 1e-300))) if values.size else 0


def finite_eigenvalue_count(G: np.ndarray, C: np.ndarray) -> int:
    """How many finite generalised eigenvalues the pencil ``G + s C`` has (deg det(G + sC))."""
    n = G.shape[0]
    if n == 0:
        return 0
    # QZ on the equilibrated pencil (one scale per equation and per unknown, shared by G and
    # C), in the time scale where G and C weigh alike; eigenvalues with beta = 0 are the
    # infinite ones.
    r, c = _equilibrate(np.abs(G) + np.abs(C))
    Gs, Cs = G * r[:, None] * c[None, :], C * r[:, None] * c[None, :]
    Cs = Cs * _time_scale(Gs, Cs)
    alpha, beta = scipy.linalg.eigvals(Gs, -Cs, homogeneous_eigvals=True)
    scale = np.abs(alpha) + np.abs(beta)
    return int(np.sum(np.abs(beta) > 1e-8 * np.where(scale > 0, scale, 1)))


def _time_scale(G: np.ndarray, C: np.ndarray) -> float:
    """The factor sigma of a time tau = sigma t in which ``G z + sigma C dz/dtau`` weighs
    both terms alike (a 1 kOhm, 1 uH circuit's pole at -1e9 rad/s is -1 there): the rank
    decisions, relative to the largest value, then see the storage (else its pole looks
    infinite, and its state bound by the equations)."""
    r, c = _equilibrate(np.abs(G) + np.abs(C))
    weights = (np.linalg.norm(G * r[:, None] * c[None, :]),
               np.linalg.norm(C * r[:, None] * c[None, :]))
    return weights[0] / weights[1] if all(weights) else 1.0


def _constraints(M0: np.ndarray, n: int) -> np.ndarray:
    """Rows K with ``K x = 0`` for every x that the equations M0 (z, z', z'') = 0 allow: the
    algebraic equations and the hidden constraints (x', x'' eliminated by a left null space)."""
    tail = M0[:, n:]
    if tail.size == 0:
        return M0[:, :n]
    u, values, _ = scipy.linalg.svd(tail)
    rank = int(np.sum(values > RANK_TOL * values[0])) if values.size and values[0] > 0 else 0
    Y = u[:, rank:]
    return Y.T @ M0[:, :n]


def _select(K: np.ndarray, S: np.ndarray, order: list[int]) -> list[int]:
    """Candidates (rows of S, tried in `order`) that the constraints K and the candidates kept
    before them leave free: Gram-Schmidt against an orthonormal basis of K's row space."""
    basis: list[np.ndarray] = []
    if K.size:
        _, values, vh = scipy.linalg.svd(K, full_matrices=False)
        keep = values > RANK_TOL * max(values[0], 1e-300) if values.size else values > 0
        basis = list(vh[keep])
    selected = []
    for i in order:
        f = S[i]
        norm = np.linalg.norm(f)
        if norm == 0:
            continue
        residual = f / norm
        if basis:
            Bm = np.array(basis)
            for _ in range(2):  # twice, for orthogonality
                residual = residual - Bm.T @ (Bm @ residual)
        size = np.linalg.norm(residual)
        if size > 1e-7:
            basis.append(residual / size)
            selected.append(i)
    return selected


def _basis_indices(M: np.ndarray, rank: int) -> np.ndarray:
    """`rank` independent rows of M (QR with column pivoting of M^T)."""
    if rank == 0:
        return np.empty(0, int)
    _, _, pivots = scipy.linalg.qr(M.T, mode="economic", pivoting=True)
    return np.sort(pivots[:rank])


def reduce_dense(
    G, C, B, P, Q, R,
    candidates: list[Candidate],
    unknowns: tuple[str, ...],
    input_names: tuple[str, ...],
    symbolic: bool = False,
    generic: dict | None = None,
) -> Reduced:
    """The state-space model by the derivative array (see the module docstring).

    With `symbolic`, G ... R are sympy matrices and `generic` maps their symbols to generic
    numbers, at which the rank decisions are taken; the coefficients are then exact.
    """
    if symbolic:
        W_exact = _left_null_exact(C)
        numeric = [_numeric(m, generic) for m in (G, C, B, P, Q, R, W_exact)]
        Gn, Cn, Bn, Pn, Qn, Rn, Wn = numeric
    else:
        Gn, Cn, Bn, Pn, Qn, Rn = (_dense(m) for m in (G, C, B, P, Q, R))
        Wn = _left_null(Cn)
    # in the time tau = sigma t (`_time_scale`): C and Q times sigma; a numeric model's
    # coefficients are brought back to t below, the exact ones are of G ... R themselves
    sigma = _time_scale(Gn, Cn)
    Cn, Qn = Cn * sigma, Qn * sigma
    n, k = Gn.shape[0], Wn.shape[1]
    # The derivative array with z'' eliminated: [G C; 0 W^T G] (z, z') = (B u, W^T B u').
    M1 = np.block([[Gn, Cn], [np.zeros((k, n)), Wn.T @ Gn]])
    rows, cols = _equilibrate(M1)
    M1s = M1 * rows[:, None] * cols[None, :]
    S = _candidate_matrix(candidates, n)
    K, Sc, order = _constraints(M1s, n), S * cols[None, :n], preference_order(candidates)
    states = state_order(_select(K, Sc, order), candidates)
    r = len(states)
    expected = finite_eigenvalue_count(Gn, Cn)
    if r != expected:
        names = ", ".join(candidates[i].name for i in states) or "none"
        raise DescriptorIndexError(
            f"the storage elements give {r} independent states ({names}) but the system has "
            f"{expected} finite natural frequencies: it has no state-space form with physical "
            "states (a higher-index descriptor system)")
    exact = (G, C, B, P, Q, R, W_exact) if symbolic else None
    try:
        reduced = _reduced(Gn, Bn, Pn, Qn, Wn, M1, S, candidates, states, input_names, exact)
    except _FreeDerivative as free:
        # the states are free, but one's derivative needs the second derivative array (a
        # T-type element whose through variable a controlled source sets from a capacitor's
        # current): trade it for a candidate left out, as another netlist order would
        for trial in _exchanges(K, Sc, order, states, states[free.state], candidates):
            try:
                reduced = _reduced(Gn, Bn, Pn, Qn, Wn, M1, S, candidates, trial, input_names,
                                   exact)
                break
            except _FreeDerivative:
                continue
        else:
            raise DescriptorIndexError(str(free)) from None
    if symbolic:
        return reduced
    # dx/dt = sigma dx/dtau, u' = sigma du/dtau
    return dataclasses.replace(reduced, A=reduced.A * sigma, B=reduced.B * sigma,
                               F=reduced.F / sigma)


class _FreeDerivative(DescriptorIndexError):
    """The derivative of the chosen state number `state` is not fixed."""

    def __init__(self, message: str, state: int):
        super().__init__(message)
        self.state = state


def _exchanges(K, S, order: list[int], states: tuple[int, ...], out: int,
               candidates: list[Candidate]):
    """The choices of states with `out` traded for one candidate left out (in `order`) that
    the constraints `K` and the other states leave free."""
    others = [i for i in states if i != out]
    for i in order:
        if i not in states and len(_select(K, S, [*others, i])) == len(states):
            yield state_order([*others, i], candidates)


def _reduced(Gn, Bn, Pn, Qn, Wn, M1, S, candidates: list[Candidate], states: tuple[int, ...],
             input_names: tuple[str, ...], exact: tuple | None) -> Reduced:
    """The model with `states`: every wanted quantity from the rows of the derivative array
    `M1` and the states (`exact`: G ... W as sympy matrices, for exact coefficients)."""
    n, m, r, k = Gn.shape[0], Bn.shape[1], len(states), Wn.shape[1]
    Ssel = S[list(states)]
    Mn = np.vstack([M1, np.hstack([Ssel, np.zeros((r, n))])])
    zeros = np.zeros
    rhs = np.block([
        [zeros((n, r)), Bn, zeros((n, m))],
        [zeros((k, r)), zeros((k, m)), Wn.T @ Bn],
        [np.eye(r), zeros((r, m)), zeros((r, m))],
    ])
    wanted = np.block([[zeros((r, n)), Ssel], [Pn, Qn]])
    rows, cols = _equilibrate(Mn)
    Ms = Mn * rows[:, None] * cols[None, :]
    rhs_s = rhs * rows[:, None]
    wanted_s = wanted * cols[None, :]
    rank = _rank(Ms)
    Ib = _basis_indices(Ms, rank)
    J = _basis_indices(Ms[Ib].T, rank)
    MIJ = Ms[np.ix_(Ib, J)]
    # Every row of M must be a combination of the basis rows with the same right-hand side,
    # or some inputs (or states) cannot be chosen freely.
    other = np.setdiff1d(np.arange(Ms.shape[0]), Ib)
    if other.size and rank:
        mu = np.linalg.solve(MIJ.T, Ms[np.ix_(other, J)].T).T
        clash = np.abs(mu @ rhs_s[Ib] - rhs_s[other])
        bad = clash.max(axis=0) > 1e-7 * (1 + np.abs(rhs_s).max())
        if bad[:r].any():
            raise DescriptorIndexError(
                "the states chosen are not independent at these values: the circuit's time "
                "scales lie too far apart for the reduction's floating-point rank decisions")
        if bad[r:].any():
            which = sorted({input_names[j % m] for j in np.flatnonzero(bad[r:])})
            raise DescriptorIndexError(
                f"the inputs {', '.join(which)} cannot be set independently (a loop of across "
                "sources or a cut-set of through sources, possibly through couplers)")
    # Every wanted functional must lie in the row space (else the equations leave it free).
    if rank:
        lam = np.linalg.solve(MIJ.T, wanted_s[:, J].T).T
        miss = np.abs(lam @ Ms[Ib] - wanted_s).max(axis=1)
    else:
        lam = np.zeros((wanted_s.shape[0], 0))
        miss = np.abs(wanted_s).max(axis=1) if wanted_s.size else np.zeros(wanted_s.shape[0])
    scale = np.abs(wanted_s).max(axis=1) if wanted_s.size else np.zeros(0)
    for j in np.flatnonzero(miss > 1e-7 * np.where(scale > 0, scale, 1)):
        what = (f"the derivative of state {candidates[states[j]].name}" if j < r
                else f"output {j - r + 1}")
        message = (f"{what} is not fixed by the states and inputs (it needs a higher "
                   "derivative of an input, or the system is singular)")
        raise _FreeDerivative(message, j) if j < r else DescriptorIndexError(message)
    if exact is not None:
        coefficients = _exact(*exact, candidates, states, Ib, J)
    else:
        coefficients = lam @ rhs_s[Ib] if rank else np.zeros((wanted.shape[0], rhs.shape[1]))
        if coefficients.size:
            small = np.abs(coefficients) < 1e-14 * max(1.0, np.abs(coefficients).max())
            coefficients[small] = 0.0
    return _split(coefficients, r, m, states)


def _left_null(C: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the left null space of C (after equilibration)."""
    n = C.shape[0]
    if n == 0:
        return np.zeros((0, 0))
    rows, cols = _equilibrate(C)
    u, values, _ = scipy.linalg.svd(C * rows[:, None] * cols[None, :])
    rank = int(np.sum(values > RANK_TOL * values[0])) if values.size and values[0] > 0 else 0
    return u[:, rank:] * rows[:, None]  # w^T (D C) = 0  ->  (D w)^T C = 0


def _left_null_exact(C) -> sympy.Matrix:
    import sympy
    from sympy.polys.matrices import DomainMatrix

    n = C.shape[0]
    if n == 0:
        return sympy.zeros(0, 0)
    null = DomainMatrix.from_Matrix(sympy.Matrix(C).T).to_field().nullspace()
    vectors = null.to_Matrix()  # rows are basis vectors
    return vectors.T if vectors.shape[0] else sympy.zeros(n, 0)


def _split(coefficients, r: int, m: int, states) -> Reduced:
    top, bottom = coefficients[:r, :], coefficients[r:, :]
    return Reduced(
        states=tuple(states),
        A=top[:, :r], B=top[:, r:r + m], E=top[:, r + m:],
        C=bottom[:, :r], D=bottom[:, r:r + m], F=bottom[:, r + m:],
    )


def _numeric(matrix, generic: dict) -> np.ndarray:
    import sympy

    matrix = sympy.Matrix(matrix)
    if matrix.shape[0] == 0 or matrix.shape[1] == 0:
        return np.zeros(matrix.shape)
    return np.array(matrix.xreplace(generic).evalf(), dtype=float)


def _exact(G, C, B, P, Q, R, W, candidates, states, Ib, J):
    """``wanted_J · M_IJ^-1 · rhs_I`` over the field of rational functions of the parameters."""
    import sympy
    from sympy.polys.matrices import DomainMatrix

    G, C, B, P, Q = (sympy.Matrix(M) for M in (G, C, B, P, Q))
    n, m, _p, r, k = G.shape[0], B.shape[1], P.shape[0], len(states), W.shape[1]
    Ssel = _candidate_matrix(candidates, n, states, symbolic=True)
    WG, WB = W.T * G, W.T * B
    M = sympy.Matrix.vstack(
        sympy.Matrix.hstack(G, C),
        sympy.Matrix.hstack(sympy.zeros(k, n), WG),
        sympy.Matrix.hstack(Ssel, sympy.zeros(r, n)),
    )
    rhs = sympy.Matrix.vstack(
        sympy.Matrix.hstack(sympy.zeros(n, r), B, sympy.zeros(n, m)),
        sympy.Matrix.hstack(sympy.zeros(k, r), sympy.zeros(k, m), WB),
        sympy.Matrix.hstack(sympy.eye(r), sympy.zeros(r, m), sympy.zeros(r, m)),
    )
    wanted = sympy.Matrix.vstack(
        sympy.Matrix.hstack(sympy.zeros(r, n), Ssel),
        sympy.Matrix.hstack(P, Q),
    )
    Ib, J = [int(i) for i in Ib], [int(j) for j in J]
    if not Ib or rhs.shape[1] == 0 or wanted.shape[0] == 0:
        return sympy.zeros(wanted.shape[0], rhs.shape[1])
    big = sympy.Matrix.hstack(M.extract(Ib, J), rhs.extract(Ib, list(range(rhs.shape[1]))))
    domain_matrix = DomainMatrix.from_Matrix(big).to_field()
    X = domain_matrix[:, :len(J)].lu_solve(domain_matrix[:, len(J):]).to_Matrix()
    result = wanted.extract(list(range(wanted.shape[0])), J) * X
    return result.applyfunc(lambda e: sympy.factor(sympy.cancel(e)))


# --------------------------------------------------------------------------------------------
# sparse: index one, in the coordinates of C's row and column spaces
# --------------------------------------------------------------------------------------------

def _c_spaces(C: sp.csc_matrix):
    """Orthonormal, block-sparse bases of C's row space (Z), left null space (W), column
    space (Rg) and null space (N), with C = Z diag(sigma) Rg^T, found per connected block
    (a block of one entry, a grounded capacitor's, needs no SVD)."""
    n = C.shape[0]
    C = sp.csr_matrix(C)
    C.eliminate_zeros()
    coo = C.tocoo()
    graph = sp.coo_matrix((np.ones(coo.nnz), (coo.row, n + coo.col)), shape=(2 * n, 2 * n))
    count, labels = csgraph.connected_components(graph, directed=False)
    row_labels, col_labels = labels[:n], labels[n:]
    rows_of, local_row = _grouped(row_labels, count)
    cols_of, local_col = _grouped(col_labels, count)
    entries_of, _ = _grouped(row_labels[coo.row], count)
    bases: dict[str, list] = {"Z": [], "W": [], "R": [], "N": []}   # (indices, vector)
    sigma = []
    for label in range(count):
        rws, cls = rows_of(label), cols_of(label)
        entries = entries_of(label)
        if not len(entries):
            continue
        if len(rws) == len(cls) == 1:
            value = coo.data[entries].sum()
            u, s, vh = np.ones((1, 1)), np.abs([value]), np.sign([[value]])
        else:
            block = np.zeros((len(rws), len(cls)))
            np.add.at(block, (local_row[coo.row[entries]], local_col[coo.col[entries]]),
                      coo.data[entries])
            u, s, vh = scipy.linalg.svd(block)
        k = int(np.sum(s > RANK_TOL * s[0])) if s.size else 0
        sigma += s[:k].tolist()
        bases["Z"] += [(rws, u[:, j]) for j in range(k)]
        bases["R"] += [(cls, vh[j]) for j in range(k)]
        bases["W"] += [(rws, u[:, j]) for j in range(k, len(rws))]
        bases["N"] += [(cls, vh[j]) for j in range(k, len(cls))]
    touched_rows = np.zeros(n, bool)
    touched_rows[coo.row] = True
    touched_cols = np.zeros(n, bool)
    touched_cols[coo.col] = True
    bases["W"] += [(np.array([i]), np.ones(1)) for i in np.flatnonzero(~touched_rows)]
    bases["N"] += [(np.array([i]), np.ones(1)) for i in np.flatnonzero(~touched_cols)]

    def assemble_basis(vectors):
        if not vectors:
            return sp.csc_matrix((n, 0))
        r = np.concatenate([idx for idx, _ in vectors])
        c = np.repeat(np.arange(len(vectors)), [len(idx) for idx, _ in vectors])
        v = np.concatenate([vec for _, vec in vectors])
        return sp.csc_matrix((v, (r, c)), shape=(n, len(vectors)))

    return (*(assemble_basis(bases[name]) for name in "ZWRN"), np.array(sigma))


def _grouped(labels: np.ndarray, count: int):
    """``members(label)``, the indices with that label (ascending), and each index's position
    among its label's members."""
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(count + 1))
    position = np.empty(len(labels), dtype=np.int64)
    position[order] = np.arange(len(labels)) - bounds[labels[order]]
    return (lambda label: order[bounds[label]:bounds[label + 1]]), position


def reduce_sparse(G, C, B, P, Q, R, candidates: list[Candidate],
                  dense: bool = False) -> Reduced | None:
    """The model of an index-one numeric system with sparse LU; None when the algebraic block
    is singular (loops of A-type elements and across sources and the like). A is a sparse
    matrix when it is (`SPARSE_STATES`, `SPARSE_DENSITY`) unless `dense` is asked for."""
    G, C, B = sp.csc_matrix(G), sp.csc_matrix(C), sp.csc_matrix(B)
    P, Q, R = sp.csr_matrix(P), sp.csr_matrix(Q), _dense(R)
    n, m = B.shape
    # Scale equations and unknowns (x = Dc x~): the model in s, u and y does not change.
    dr, dc = _equilibrate(abs(G) + abs(C))
    Dr, Dc = sp.diags(dr), sp.diags(dc)
    G, C, B = sp.csc_matrix(Dr @ G @ Dc), sp.csc_matrix(Dr @ C @ Dc), sp.csc_matrix(Dr @ B)
    P, Q = sp.csr_matrix(P @ Dc), sp.csr_matrix(Q @ Dc)
    scale = Dc.diagonal()
    candidates = [Candidate(c.name, c.unit, c.element, c.kind,
                            {j: v * scale[j] for j, v in c.row.items()}) for c in candidates]
    Zb, Wb, Rb, Nb, sigma = _c_spaces(C)
    nd, k = Zb.shape[1], Wb.shape[1]
    G12, G11 = sp.csr_matrix(Zb.T @ G @ Nb), sp.csr_matrix(Zb.T @ G @ Rb)
    B1, B2 = (Zb.T @ B).toarray(), (Wb.T @ B).toarray()
    H21, H2u = sp.csr_matrix((k, nd)), np.zeros((k, m))    # xa = H2u u - H21 xd
    if k:
        factors = factor_if_regular(Wb.T @ G @ Nb, tuple(f"algebraic unknown {i}"
                                                         for i in range(k)))
        if factors is None:
            return None
        try:
            H21 = _solved(factors, sp.csc_matrix(Wb.T @ G @ Rb))
            H2u = factors.solve(B2) if m else H2u
        except SingularSystemError:
            return None
    Ad = sp.csr_matrix(sp.diags(-1 / sigma) @ (G11 - G12 @ H21))    # xd' = Ad xd + Bd u
    Bd = (B1 - G12 @ H2u) / sigma[:, None]
    Xs, Xu = sp.csr_matrix(Rb - Nb @ H21), Nb @ H2u              # x = Xs xd + Xu u
    S = _candidate_rows(candidates, n)
    Ts, Tu = sp.csr_matrix(S @ Xs), np.asarray(S @ Xu)
    states = _independent(Ts, candidates)
    if states is None:
        return None
    T, Tu = Ts[list(states)], Tu[list(states)]                # s = T xd + Tu u
    transposed = factor_if_regular(T.T, tuple(candidates[i].name for i in states)) if nd else None
    if nd and transposed is None:
        return None

    def times_inverse(M):   # M T^-1, through T^-T M^T
        if not nd:
            return sp.csr_matrix((M.shape[0], 0)) if sp.issparse(M) else np.zeros((len(M), 0))
        return (_solved(transposed, sp.csc_matrix(M.T)) if sp.issparse(M)
                else transposed.solve(np.asarray(M).T)).T

    # s' = T xd' + Tu u' = T Ad T^-1 (s - Tu u) + T Bd u + Tu u'
    A = _cleaned(sp.csr_matrix(times_inverse(sp.csr_matrix(T @ Ad))))
    Bs = T @ Bd - A @ Tu
    # y = P (Xs xd + Xu u) + Q (Xs xd' + Xu u') + R u
    QX = sp.csr_matrix(Q @ Xs)
    Cs = np.asarray(times_inverse((P @ Xs + QX @ Ad).toarray()))
    Ds = np.asarray(P @ Xu) + QX @ Bd + R - Cs @ Tu
    Fs = np.asarray(Q @ Xu)
    if dense or nd < SPARSE_STATES or A.nnz > SPARSE_DENSITY * nd * nd:
        A = A.toarray()
    return Reduced(states, A, *(_cleaned(np.asarray(a, float)) for a in (Bs, Cs, Ds, Tu, Fs)))


def _solved(factors, M: sp.csc_matrix) -> sp.csr_matrix:
    """``factors^-1 M`` for a sparse M, solved for its non-zero columns a block at a time."""
    columns = np.flatnonzero(np.diff(M.indptr))
    parts = []
    for start in range(0, len(columns), SOLVE_BLOCK):
        block = columns[start:start + SOLVE_BLOCK]
        solution = sp.coo_matrix(factors.solve(M[:, block].toarray()))
        parts.append(sp.coo_matrix((solution.data, (solution.row, block[solution.col])),
                                   shape=(M.shape[0], M.shape[1])))
    return sp.csr_matrix(sum(parts) if parts else sp.csr_matrix((M.shape[0], M.shape[1])))


def _cleaned(M):
    """M with the entries below 1e-14 of its largest (round-off of cancellations) zeroed."""
    values = M.data if sp.issparse(M) else M
    if values.size:
        values[np.abs(values) < 1e-14 * max(1.0, np.abs(values).max())] = 0.0
    if sp.issparse(M):
        M.eliminate_zeros()
    return M


def _candidate_rows(candidates: list[Candidate], n: int) -> sp.csr_matrix:
    """The candidates' functionals as the rows of a sparse matrix."""
    rows = [i for i, c in enumerate(candidates) for _ in c.row]
    cols = [j for c in candidates for j in c.row]
    values = [v for c in candidates for v in c.row.values()]
    return sp.csr_matrix((values, (rows, cols)), shape=(len(candidates), n))


def _independent(Ts: sp.csr_matrix, candidates: list[Candidate]) -> tuple[int, ...] | None:
    """The states among the candidates (``s = Ts xd + ...``): all of them when there are as
    many as differential unknowns and they are independent (a sparse LU decides), else those
    the greedy choice keeps (dense, up to `DENSE_LIMIT`); None when they do not fix xd."""
    count, nd = Ts.shape
    if count == nd and (nd == 0 or factor_if_regular(Ts, ()) is not None):
        return state_order(list(range(count)), candidates)
    if nd > DENSE_LIMIT:
        return None
    selected = _select_columns(Ts.toarray(), preference_order(candidates))
    return state_order(selected, candidates) if len(selected) == nd else None


def _select_columns(T: np.ndarray, order: list[int]) -> list[int]:
    """Rows of T (tried in `order`) independent of the rows kept before them.

    Block Gram-Schmidt: an unpivoted QR of the remaining normalised rows (projected off the
    kept ones) is exact up to its first tiny diagonal entry, the first dependent row; keep the
    rows before it, drop it, and go on with the rest. One BLAS-3 factorisation per dependent
    row instead of a vector loop."""
    width = T.shape[1]
    pending = [i for i in order if np.any(T[i])]
    basis = np.zeros((width, 0))
    selected: list[int] = []
    while pending and len(selected) < width:
        V = T[pending].T
        V = V / np.linalg.norm(V, axis=0)[None, :]
        for _ in range(2):
            V = V - basis @ (basis.T @ V)
        q, r = scipy.linalg.qr(V, mode="economic")
        diagonal = np.abs(np.diagonal(r))
        small = np.flatnonzero(diagonal <= 1e-7)
        take = int(small[0]) if small.size else min(len(diagonal), width - len(selected))
        selected += pending[:take]
        basis = np.hstack([basis, q[:, :take]])
        pending = pending[take + 1:] if small.size else []
    return selected
