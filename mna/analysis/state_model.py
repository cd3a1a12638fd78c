"""The extracted model ``x' = A x + B u + E u'``, ``y = C x + D u + F u'``: evaluation, transfer
functions, conversion to scipy and python-control, and text, JSON and LaTeX forms."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from mna.results import Result


class StateSpaceResult(Result):
    """A state-space model with labelled states, inputs and outputs (and units).

    ``x' = A x + B u + E u'``, ``y = C x + D u + F u'``; numpy arrays, or sympy matrices when
    `symbolic`. `tf` holds the transfer functions when asked for: a sympy matrix ``G(s)``
    (symbolic) or, per output and input, zeros, poles and gain (numeric).
    """

    kind = "ss"

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
        sympy symbols → numbers) where given."""
        if not self.symbolic:
            return self
        import sympy

        given = {sympy.Symbol(k, real=True) if isinstance(k, str) else k: v
                 for k, v in (values or {}).items()}
        subs = {**self.defaults, **given}

        def convert(M):
            return np.array(M.xreplace(subs).evalf(), dtype=float).reshape(M.shape)

        return StateSpaceResult(self.states, self.state_units, self.inputs, self.input_units,
                                self.outputs, self.output_units,
                                *(convert(M) for M in self.matrices()), symbolic=False,
                                title=self.title)

    def matrices(self) -> tuple:
        return self.A, self.B, self.C, self.D, self.E, self.F

    def frequency_response(self, s) -> np.ndarray:
        """``H(s)`` (outputs × inputs) at each complex `s` (shape (len(s), p, m))."""
        A, B, C, D, E, F = (np.asarray(M, dtype=float) for M in self.numeric().matrices())
        s = np.atleast_1d(np.asarray(s, dtype=complex))
        n = A.shape[0]
        result = np.empty((len(s), D.shape[0], D.shape[1]), dtype=complex)
        for k, sk in enumerate(s):
            H = D + sk * F
            if n:
                H = H + C @ np.linalg.solve(sk * np.eye(n) - A, B + sk * E)
            result[k] = H
        return result

    def transfer_function(self):
        """``G(s) = C (sI - A)^-1 (B + s E) + D + s F`` as a sympy matrix (outputs × inputs),
        in the variable ``sympy.Symbol("s")``."""
        import sympy

        S = sympy.Symbol("s")
        A, B, C, D, E, F = (sympy.Matrix(M) if self.symbolic else
                            sympy.Matrix(np.asarray(M, float).tolist()) for M in self.matrices())
        n = A.shape[0]
        H = D + S * F
        if n:
            H = H + C * (S * sympy.eye(n) - A).LUsolve(B + S * E)
        return H.applyfunc(lambda e: sympy.factor(sympy.cancel(sympy.together(e))))

    def zpk(self) -> list[dict]:
        """Per output and input: zeros, poles and gain of the numeric transfer function."""
        A, B, C, D, E, F = (np.asarray(M, dtype=float) for M in self.numeric().matrices())
        n = A.shape[0]
        poles = np.linalg.eigvals(A) if n else np.empty(0)
        den = np.real(np.poly(poles)) if n else np.array([1.0])
        items = []
        for i in range(D.shape[0]):
            for j in range(D.shape[1]):
                num = _numerator(A, B[:, j], C[i], D[i, j], E[:, j], F[i, j])
                num = np.trim_zeros(num, "f") if np.any(num) else np.array([0.0])
                gain = float(num[0] / den[0]) if np.any(num) else 0.0
                zeros = np.roots(num) if len(num) > 1 else np.empty(0)
                items.append({"output": self.outputs[i], "input": self.inputs[j],
                              "zeros": zeros, "poles": poles, "gain": gain})
        return items

    def with_transfer_functions(self) -> StateSpaceResult:
        self.tf = self.transfer_function() if self.symbolic else self.zpk()
        return self

    # -- interop -----------------------------------------------------------------------------
    def _proper(self):
        """``(A, B + A E, C, D + C E)``: the same transfer function with states ``x - E u``."""
        A, B, C, D, E, F = (np.asarray(M, dtype=float) for M in self.numeric().matrices())
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
        def cell(value):
            if self.symbolic:
                return str(value)
            return float(value)

        def nested(M):
            rows, cols = M.shape
            return [[cell(M[i, j]) for j in range(cols)] for i in range(rows)]

        data: dict[str, Any] = {
            "title": self.title,
            "symbolic": self.symbolic,
            "states": list(self.states),
            "state_units": list(self.state_units),
            "inputs": list(self.inputs),
            "input_units": list(self.input_units),
            "outputs": list(self.outputs),
            "output_units": list(self.output_units),
        }
        for name, M in zip("ABCDEF", self.matrices(), strict=False):
            data[name] = nested(M)
        if self.tf is not None:
            if self.symbolic:
                data["tf"] = nested(self.tf)
            else:
                data["tf"] = [
                    {"output": t["output"], "input": t["input"], "gain": t["gain"],
                     "zeros": [[float(z.real), float(z.imag)] for z in t["zeros"]],
                     "poles": [[float(p.real), float(p.imag)] for p in t["poles"]]}
                    for t in self.tf
                ]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def table(self) -> dict[str, np.ndarray]:
        """One row per matrix entry: ``matrix, row, col, value``."""
        entries = [(name, i, j, M[i, j]) for name, M in zip("ABCDEF", self.matrices(), strict=False)
                   for i in range(M.shape[0]) for j in range(M.shape[1])]
        return {column: np.array([entry[k] for entry in entries])
                for k, column in enumerate(("matrix", "row", "col", "value"))}

    def to_latex(self) -> str:
        """The model as LaTeX: vectors of names and the six matrices."""
        import sympy

        def tex(M):
            if self.symbolic:
                return sympy.latex(sympy.Matrix(M))
            return sympy.latex(sympy.Matrix(np.asarray(M, float).tolist()).applyfunc(
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
            poles = np.linalg.eigvals(np.asarray(self.A, float))
            text += f"; eigenvalues {_complex_list(poles)}"
        return text


def _numerator(A, b, c, d, e, f) -> np.ndarray:
    """Numerator of ``c (sI-A)^-1 (b + s e) + d + s f`` over ``det(sI - A)``."""
    n = A.shape[0]
    bp = b + A @ e
    dp = d + c @ e
    den = np.real(np.poly(A)) if n else np.array([1.0])
    if n:
        import scipy.signal

        num, _ = scipy.signal.ss2tf(A, bp[:, None], c[None, :], np.array([[dp]]))
        num = np.real(num[0])
    else:
        num = np.array([dp])
    num = np.polyadd(num, np.polymul([f, 0.0], den)) if f else num
    return np.asarray(num, float)


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
