"""The extracted model ``x' = A x + B u + E u'``, ``y = C x + D u + F u'``: evaluation, transfer
functions, conversion to scipy and python-control, and text, JSON and LaTeX forms."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from mna.errors import DescriptorIndexError
from mna.results import Result


class StateSpaceResult(Result):
    """A state-space model with labelled states, inputs and outputs (and units).

    ``x' = A x + B u + E u'``, ``y = C x + D u + F u'``; numpy arrays (A a scipy sparse matrix
    for a large sparse model), or sympy matrices when `symbolic`. `tf` holds the transfer
    functions when asked for: a sympy matrix ``G(s)`` (symbolic) or, per output and input,
    zeros, poles and gain (numeric).
    """

    kind = "ss"
    selects_outputs = False

    def __init__(self, states, state_units, inputs, input_units, outputs, output_units,
                 A, B, C, D, E, F, symbolic=False, title="", tf=None, defaults=None):
        self.states, self.state_units = tuple(states), tuple(state_units)
        self.inputs, self.input_units = tuple(inputs), tuple(input_units)
        self.outputs, self.output_units = tuple(outputs), tuple(output_units)
        self.A, self.B, self.C, self.D, self.E, self.F = A, B, C, D, E, F
        self.symbolic = symbolic
        self.title = title
        self.tf = tf
        self.defaults = defaults or {}

    # -- evaluation ------------------------------------------------------------------------
    def numeric(self, values: dict | None = None) -> StateSpaceResult:
        """The numeric model: the netlist's parameter values, or `values` (parameter names or
        sympy symbols → numbers) where given. A `DescriptorIndexError` where an entry has no
        value there: the symbolic model holds for generic values (K's k = 1 divides by
        1 - k^2), where the numeric reduction finds the states those values leave."""
        if not self.symbolic:
            return self
        import sympy

        given = {sympy.Symbol(k, real=True) if isinstance(k, str) else k: v
                 for k, v in (values or {}).items()}
        subs = {**self.defaults, **given}

        def convert(M):
            given, M = M, M.xreplace(subs)
            if M.has(sympy.zoo, sympy.oo, -sympy.oo, sympy.nan):
                at = ", ".join(f"{symbol} = {subs[symbol]:g}" for symbol in
                               sorted(given.free_symbols & subs.keys(), key=str))
                raise DescriptorIndexError(
                    f"the symbolic model divides by zero at {at}: it holds for generic "
                    "values, and these leave the system other states (reduce it numerically)")
            return np.array(M.evalf(), dtype=float).reshape(M.shape)

        return StateSpaceResult(self.states, self.state_units, self.inputs, self.input_units,
                                self.outputs, self.output_units,
                                *(convert(M) for M in self.matrices()), symbolic=False,
                                title=self.title)

    def matrices(self) -> tuple:
        return self.A, self.B, self.C, self.D, self.E, self.F

    def frequency_response(self, s) -> np.ndarray:
        """``H(s)`` (outputs × inputs) at each complex `s` (shape (len(s), p, m))."""
        model = self.numeric()
        A = model.A
        B, C, D, E, F = (_array(M) for M in model.matrices()[1:])
        s = np.atleast_1d(np.asarray(s, dtype=complex))
        result = np.empty((len(s), D.shape[0], D.shape[1]), dtype=complex)
        for k, sk in enumerate(s):
            H = D + sk * F
            if A.shape[0]:
                H = H + C @ _shifted_solve(A, sk, B + sk * E)
            result[k] = H
        return result

    def transfer_function(self):
        """``G(s) = C (sI - A)^-1 (B + s E) + D + s F`` as a sympy matrix (outputs × inputs),
        in the variable ``sympy.Symbol("s")``."""
        import sympy

        S = sympy.Symbol("s")
        A, B, C, D, E, F = (sympy.Matrix(M) if self.symbolic else
                            sympy.Matrix(_array(M).tolist()) for M in self.matrices())
        n = A.shape[0]
        H = D + S * F
        if n:
            H = H + C * (S * sympy.eye(n) - A).LUsolve(B + S * E)
        return H.applyfunc(lambda e: sympy.factor(sympy.cancel(sympy.together(e))))

    def zpk(self) -> list[dict]:
        """Per output and input: zeros, poles and gain of the numeric transfer function,
        ``G(s) = gain * prod(s - zeros) / prod(s - poles)``.

        The poles are the eigenvalues of A, all of them (a mode that a channel does not see is
        cancelled by a zero of that channel); the zeros and the gain are the channel's
        `channel_zeros_and_gain`: no zeros and gain 0 where G is identically zero, and a zero at
        s = 0 exactly 0.0."""
        A, B, C, D, E, F = (_array(M) for M in self.numeric().matrices())
        n = A.shape[0]
        poles = np.linalg.eigvals(A) if n else np.empty(0, dtype=complex)
        items = []
        for i in range(D.shape[0]):
            for j in range(D.shape[1]):
                zeros, gain = channel_zeros_and_gain(A, B[:, j], C[i], D[i, j], E[:, j],
                                                     F[i, j])
                items.append({"output": self.outputs[i], "input": self.inputs[j],
                              "zeros": zeros, "poles": poles, "gain": gain})
        return items

    def with_transfer_functions(self) -> StateSpaceResult:
        self.tf = self.transfer_function() if self.symbolic else self.zpk()
        return self

    # -- interop -----------------------------------------------------------------------------
    def _proper(self):
        """``(A, B + A E, C, D + C E)``: the same transfer function with states ``x - E u``."""
        A, B, C, D, E, F = (_array(M) for M in self.numeric().matrices())
        if np.any(F):
            raise ValueError("the model has a u' feedthrough (F != 0): its transfer function is "
                             "improper and has no (A, B, C, D) form")
        return A, B + A @ E, C, D + C @ E

    def to_scipy(self):
        """A `scipy.signal.StateSpace` (states shifted to ``x - E u`` when E != 0)."""
        import scipy.signal

        return scipy.signal.StateSpace(*self._proper())

    def to_control(self):
        """A python-control `StateSpace` with named signals (states ``x - E u`` when E != 0)."""
        import control

        A, B, C, D = self._proper()
        return control.ss(A, B, C, D, states=list(self.states), inputs=list(self.inputs),
                          outputs=list(self.outputs))

    # -- output ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Names, units, the matrices as nested lists (numbers, or sympy strings when
        symbolic) and the transfer functions when asked for."""
        data = self._header()
        for name, M in zip("ABCDEF", self.matrices()):
            data[name] = list(self._rows(M))
        if self.tf is not None:
            data["tf"] = self._tf_data()
        return data

    def to_json(self) -> str:
        """`to_dict` as JSON, a matrix row per line (a large model's A row by row)."""
        fields = [f"  {json.dumps(key)}: {json.dumps(value)}"
                  for key, value in self._header().items()]
        for name, M in zip("ABCDEF", self.matrices()):
            rows = ",\n    ".join(json.dumps(row) for row in self._rows(M))
            fields.append(f'  "{name}": [\n    {rows}\n  ]' if rows else f'  "{name}": []')
        if self.tf is not None:
            fields.append(f'  "tf": {json.dumps(self._tf_data())}')
        return "{\n" + ",\n".join(fields) + "\n}"

    def _rows(self, M):
        """The rows of M as lists, a block of rows at a time for a sparse matrix."""
        if self.symbolic:
            for i in range(M.shape[0]):
                yield [str(M[i, j]) for j in range(M.shape[1])]
            return
        for start in range(0, M.shape[0], ROW_BLOCK):
            yield from _array(M[start:start + ROW_BLOCK]).tolist()

    def _header(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "symbolic": self.symbolic,
            "states": list(self.states),
            "state_units": list(self.state_units),
            "inputs": list(self.inputs),
            "input_units": list(self.input_units),
            "outputs": list(self.outputs),
            "output_units": list(self.output_units),
        }

    def _tf_data(self) -> list:
        if self.symbolic:
            return list(self._rows(self.tf))
        return [{"output": t["output"], "input": t["input"], "gain": t["gain"],
                 "zeros": [[float(z.real), float(z.imag)] for z in t["zeros"]],
                 "poles": [[float(p.real), float(p.imag)] for p in t["poles"]]}
                for t in self.tf]

    def table(self) -> dict[str, np.ndarray]:
        """One row per matrix entry (of a sparse matrix, per stored one): ``matrix, row, col,
        value``."""
        entries = [(name, i, j, value) for name, M in zip("ABCDEF", self.matrices())
                   for i, j, value in _entries(M)]
        return {column: np.array([entry[k] for entry in entries])
                for k, column in enumerate(("matrix", "row", "col", "value"))}

    def to_latex(self) -> str:
        """The model as LaTeX: vectors of names and the six matrices."""
        import sympy

        def tex(M):
            if self.symbolic:
                return sympy.latex(sympy.Matrix(M))
            return sympy.latex(sympy.Matrix(_array(M).tolist()).applyfunc(
                lambda v: sympy.Float(v, 6) if v != int(v) else sympy.Integer(int(v))))

        def vector(names):
            entries = " \\\\ ".join(_latex_name(n) for n in names)
            return f"\\begin{{bmatrix}} {entries} \\end{{bmatrix}}" if names else "[\\,]"

        x, u, y = vector(self.states), vector(self.inputs), vector(self.outputs)
        lines = [
            f"x = {x},\\quad u = {u},\\quad y = {y}",
            f"\\dot{{x}} = {tex(self.A)} x + {tex(self.B)} u + {tex(self.E)} \\dot{{u}}",
            f"y = {tex(self.C)} x + {tex(self.D)} u + {tex(self.F)} \\dot{{u}}",
        ]
        if self.tf is not None and self.symbolic:
            lines.append(f"G(s) = {sympy.latex(self.tf)}")
        return "\n".join(f"$$ {line} $$" for line in lines) + "\n"

    def to_text(self) -> str:
        def block(name, M, rows, cols):
            if M.shape[0] == 0 or M.shape[1] == 0:
                return f"{name} = [] ({M.shape[0]}x{M.shape[1]})"
            if hasattr(M, "toarray"):
                lines = [f"{name} (sparse {M.shape[0]}x{M.shape[1]}, {M.nnz} non-zero entries):"]
                lines += [f"  {rows[i]}, {cols[j]}: {value:.6g}" for i, j, value in _entries(M)]
                return "\n".join(lines)
            if self.symbolic:
                body = [", ".join(str(M[i, j]) for j in range(M.shape[1]))
                        for i in range(M.shape[0])]
            else:
                body = ["  ".join(f"{M[i, j]: .6g}" for j in range(M.shape[1]))
                        for i in range(M.shape[0])]
            width = max(len(r) for r in rows) if rows else 0
            lines = [f"{name} ({', '.join(cols)}):"]
            lines += [f"  {r:<{width}}  [{b}]" for r, b in zip(rows, body, strict=False)]
            return "\n".join(lines)

        head = [f"State-space model{': ' + self.title if self.title else ''}",
                "  x' = A x + B u + E u',  y = C x + D u + F u'",
                f"  states  x: {_labelled(self.states, self.state_units) or '(none)'}",
                f"  inputs  u: {_labelled(self.inputs, self.input_units) or '(none)'}",
                f"  outputs y: {_labelled(self.outputs, self.output_units) or '(none)'}"]
        parts = [
            block("A", self.A, self.states, self.states),
            block("B", self.B, self.states, self.inputs),
            block("C", self.C, self.outputs, self.states),
            block("D", self.D, self.outputs, self.inputs),
        ]
        for name, M, rows in (("E", self.E, self.states), ("F", self.F, self.outputs)):
            if not _is_zero_matrix(M, self.symbolic):
                parts.append(block(name, M, rows, self.inputs))
            else:
                parts.append(f"{name} = 0")
        if self.tf is not None:
            parts.append(self._tf_text())
        return "\n".join(head + parts) + "\n"

    def _tf_text(self) -> str:
        lines = ["Transfer functions:"]
        if self.symbolic:
            for i, out in enumerate(self.outputs):
                for j, inp in enumerate(self.inputs):
                    lines.append(f"  {out}/{inp} = {self.tf[i, j]}")
        else:
            for t in self.tf:
                lines.append(f"  {t['output']}/{t['input']}: gain {t['gain']:.6g}, "
                             f"zeros {_complex_list(t['zeros'])}, "
                             f"poles {_complex_list(t['poles'])}")
        return "\n".join(lines)

    def summary(self) -> str:
        states = ", ".join(self.states) or "none"
        text = (f"SS: {len(self.states)} state(s) ({states}); inputs {', '.join(self.inputs)}; "
                f"outputs {', '.join(self.outputs)}")
        if not self.symbolic and len(self.states) and len(self.states) <= 12:
            poles = np.linalg.eigvals(_array(self.A))
            text += f"; eigenvalues {_complex_list(poles)}"
        return text


# A Markov parameter (a coefficient of G(s) at s -> infinity) is zero when it is below this
# fraction of the sum of the magnitudes it is summed from, |c| |A|^(k-1) |b|: forming it
# rounds off a few k n eps of that sum (and the model's entries, cleaned at 1e-14 of their
# matrix, carry about as much), while a physical one this small would be a cancellation of ten
# digits. The bound is unchanged by a scaling of the states, so the units do not matter.
MARKOV_TOL = 1e-10
# A channel has a zero exactly at s = 0 when the constant part M of its pencil M - s N is
# within this fraction of the system's scale of a singular matrix (a singular value at most
# ZERO_TOL times the Frobenius norm of the balanced [[A, b + A e], [c, d + c e]]): a zero below
# about 1e-10 of the system's frequency scale, where round-off leaves an exact zero. Rank
# decisions rather than a threshold on the computed zeros, so that a multiple zero at 0
# (spread by round-off into a cluster of size eps^(1/multiplicity)) is found whole.
ZERO_TOL = 1e-10
ROW_BLOCK = 256   # rows of a sparse matrix made dense at a time for output


def channel_zeros_and_gain(A, b, c, d, e, f) -> tuple[np.ndarray, float]:
    """Zeros and gain of ``G(s) = c (sI - A)^-1 (b + s e) + d + s f`` (one input, one output),
    ``G(s) = gain * prod(s - zeros) / det(sI - A)``.

    Gain: the first non-zero Markov parameter, the coefficients of G at s -> infinity: of s, f;
    of 1, d + c e; of s^-k (k >= 1), c A^(k-1) (b + A e) (zero by `MARKOV_TOL`). Its power of
    1/s is the relative degree r (-1 when f != 0), and G has n - r zeros. When f, d + c e and
    the first n others are zero, G is identically zero: no zeros and gain 0.

    Zeros: the finite eigenvalues of the system pencil
    ``[[A - sI, b + s e], [c, d + s f]]``, or, after a constant column operation (states
    shifted by ``e u``), ``M - s N`` with ``M = [[A, b + A e], [c, d + c e]]`` and
    ``N = [[I, 0], [0, -f]]``; its determinant is ``(-1)^n det(sI - A) G(s)``, so its
    eigenvalues are all the numerator's roots, zeros that cancel a pole included (the invariant
    zeros). Its r + 1 infinite eigenvalues form one Jordan block, which round-off splits into
    eigenvalues of size eps^(-1/(r + 1)) that no threshold on their beta tells from finite
    ones (np.roots of scipy's ss2tf numerator turned the same round-off into zeros near 1e20);
    so they are deflated, by orthogonal transformations, as many as r says: r times the
    reduction of SISO zeros (compress b onto the last state, which the input then sets freely:
    the zeros of (A, b, c, 0) are those of (A11, a12, c1, c2)), then the last row of the pencil.
    Then the zeros at s = 0 are deflated by rank decisions (`ZERO_TOL`) and reported as exact
    0.0, and the rest are the generalised eigenvalues of what is left, whose N is non-singular.
    The pencil is balanced first (a diagonal similarity in powers of two).
    """
    import scipy.linalg

    n = A.shape[0]
    bp, dp = b + A @ e, d + c @ e
    if abs(dp) <= MARKOV_TOL * (abs(d) + np.abs(c) @ np.abs(e)):
        dp = 0.0
    if f:
        r, gain = -1, float(f)
    elif dp:
        r, gain = 0, float(dp)
    else:
        r, gain = _first_markov(A, bp, np.abs(b) + np.abs(A) @ np.abs(e), c)
        if r is None:
            return np.empty(0, dtype=complex), 0.0
    M = np.zeros((n + 1, n + 1))
    M[:n, :n], M[:n, n], M[n, :n], M[n, n] = A, bp, c, dp
    if f:  # the last row over -f: N = I
        M[n] /= -f
    if n:
        _, (scale, _) = scipy.linalg.matrix_balance(M, permute=False, separate=True)
        M = M / scale[:, None] * scale[None, :]
    scale = np.linalg.norm(M)  # the system's (Frobenius): the deflations are orthogonal
    if f:
        M, N = M, np.eye(n + 1)
    else:
        A_, b_, c_, d_ = M[:n, :n], M[:n, n], M[n, :n], M[n, n]
        for _ in range(r):  # deflate r infinite eigenvalues
            u = _reflector(b_)
            if u is not None:  # A <- H A H, c <- c H with H b = beta e_last
                A_ -= np.outer(2 * u, u @ A_)
                A_ -= np.outer(A_ @ u, 2 * u)
                c_ -= 2 * (c_ @ u) * u
            A_, b_, c_, d_ = A_[:-1, :-1], A_[:-1, -1], c_[:-1], c_[-1]
        k = A_.shape[0]
        M = np.zeros((k + 1, k + 1))
        M[:k, :k], M[:k, k], M[k, :k], M[k, k] = A_, b_, c_, d_
        u = _reflector(M[k])  # and the last: the last row of (M - s N) H is (0, ..., 0, gamma)
        H = np.eye(k + 1) - 2 * np.outer(u, u) if u is not None else np.eye(k + 1)
        M, N = (M @ H)[:k, :k], H[:k, :k]
    M, N, at_zero = _deflate_zero_eigenvalues(M, N, ZERO_TOL * scale)
    finite = scipy.linalg.eigvals(M, N) if M.size else np.empty(0, dtype=complex)
    zeros = np.concatenate([np.zeros(at_zero, dtype=complex), finite.astype(complex)])
    return zeros, gain


def _first_markov(A, bp, bound, c) -> tuple[int | None, float]:
    """The first ``k`` in 1..n with ``c A^(k-1) bp`` not zero, and its value (``(None, 0.0)``:
    none). ``bound = |b| + |A| |e|`` (>= |bp|: what bp is summed from), so that
    ``|c| |A|^(k-1) bound`` is what the parameter is summed from.

    ``A^(k-1) bp`` and ``|A|^(k-1) bound`` are carried as mantissas and a power of two per
    state, each row of a product scaled by its largest term: along a long chain (the far end of
    an RC ladder) their entries span more than a float's exponent range, and under one common
    scale the entries that reach the output would underflow to zero."""
    n = A.shape[0]
    rows, cols = np.nonzero(A)
    entries = A[rows, cols]
    w, exponent = np.frexp(np.asarray(bound, dtype=float))
    exponent = exponent.astype(np.int64)
    v = np.ldexp(bp, -exponent)
    for k in range(1, n + 1):
        value, limit, top = _scaled_dot(c, v, w, exponent)
        if abs(value) > MARKOV_TOL * limit:
            with np.errstate(over="ignore"):
                return k, float(np.ldexp(value, top))
        live = w[cols] != 0
        if not np.any(live):  # A^k bp = 0: every further one is zero too
            break
        r, j, a = rows[live], cols[live], entries[live]
        terms = np.abs(a) * w[j]
        term_exponent = exponent[j] + np.frexp(terms)[1]
        row_top = np.zeros(n, dtype=np.int64)
        row_top[r] = np.iinfo(np.int64).min
        np.maximum.at(row_top, r, term_exponent)
        shift = exponent[j] - row_top[r]
        w = np.bincount(r, np.ldexp(terms, shift), minlength=n)
        v = np.bincount(r, np.ldexp(a * v[j], shift), minlength=n)
        w, renormal = np.frexp(w)
        exponent = row_top + renormal
        v = np.ldexp(v, -renormal)
    return None, 0.0


def _scaled_dot(c, v, w, exponent) -> tuple[float, float, int]:
    """``c . (v 2^exponent)`` and ``|c| . (w 2^exponent)``, both over ``2^top``, and top."""
    live = (c != 0) & (w != 0)
    if not np.any(live):
        return 0.0, 0.0, 0
    terms = np.abs(c[live]) * w[live]
    top = int((exponent[live] + np.frexp(terms)[1]).max())
    shift = exponent[live] - top
    return (float(np.sum(np.ldexp(c[live] * v[live], shift))),
            float(np.sum(np.ldexp(terms, shift))), top)


def _reflector(x) -> np.ndarray | None:
    """Unit u with ``(I - 2 u u^T) x`` a multiple of the last unit vector (None: x = 0)."""
    norm = np.linalg.norm(x)
    if norm == 0:
        return None
    u = np.array(x, dtype=float)
    u[-1] += np.copysign(norm, u[-1])
    return u / np.linalg.norm(u)


def _deflate_zero_eigenvalues(M, N, tol) -> tuple[np.ndarray, np.ndarray, int]:
    """Remove the eigenvalues s = 0 of the regular pencil ``M - s N``: while M has singular
    values <= `tol` (it is that close to a singular M), set them to 0, rotate their rows to the
    bottom (SVD) and bring the same rows of N onto their last columns (RQ); those rows then hold
    only zero eigenvalues. Returns the rest of the pencil and how many were removed."""
    import scipy.linalg

    count = 0
    while M.shape[0]:
        if not np.sum(scipy.linalg.svdvals(M) <= tol):
            break
        U, sigma, Vt = scipy.linalg.svd(M)
        null = int(np.sum(sigma <= tol))
        keep = M.shape[0] - null
        N = U.T @ N @ Vt.T
        _, Q = scipy.linalg.rq(N[keep:])  # N[keep:] Q^T = [0, R]
        M = (np.diag(np.where(np.arange(len(sigma)) < keep, sigma, 0.0)) @ Q.T)[:keep, :keep]
        N = (N @ Q.T)[:keep, :keep]
        count += null
    return M, N, count


def _labelled(names, units) -> str:
    return ", ".join(f"{n} [{u}]" if u else n for n, u in zip(names, units, strict=False))


def _complex_list(values) -> str:
    items = []
    for v in values:
        v = complex(v)
        items.append(f"{v.real:.6g}" if abs(v.imag) <= 1e-12 * max(1, abs(v)) else
                     f"{v.real:.6g}{v.imag:+.6g}j")
    return "[" + ", ".join(items) + "]"


def _latex_name(name: str) -> str:
    return "\\mathrm{" + name.replace("_", "\\_").replace("#", "\\#") + "}"


def _is_zero_matrix(M, symbolic: bool) -> bool:
    if not symbolic:
        return not np.any(np.asarray(M))
    import sympy

    return all(sympy.simplify(e) == 0 for e in M)


def _array(M) -> np.ndarray:
    """A numeric matrix as a dense array (a model's A may be a scipy sparse matrix)."""
    return M.toarray() if hasattr(M, "toarray") else np.asarray(M, dtype=float)


def _entries(M):
    """``(row, col, value)`` of every entry of a dense matrix, of every stored one of a sparse
    one, in row order."""
    if hasattr(M, "tocoo"):
        coo = M.tocoo()
        order = np.lexsort((coo.col, coo.row))
        return zip(coo.row[order].tolist(), coo.col[order].tolist(), coo.data[order].tolist())
    return ((i, j, M[i, j]) for i in range(M.shape[0]) for j in range(M.shape[1]))


def _shifted_solve(A, s: complex, rhs: np.ndarray) -> np.ndarray:
    """``(s I - A)^-1 rhs``, by a sparse LU when A is sparse."""
    n = A.shape[0]
    if hasattr(A, "toarray"):
        import scipy.sparse as sp
        import scipy.sparse.linalg as spla

        shifted = sp.csc_matrix(s * sp.identity(n, format="csc") - A)
        return spla.splu(shifted).solve(np.asarray(rhs, dtype=complex))
    return np.linalg.solve(s * np.eye(n) - A, rhs)
