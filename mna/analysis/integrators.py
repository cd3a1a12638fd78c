"""Linear multistep integrators as coefficient tables, and the per-step linear solve.

Every method is written in one form for the descriptor system ``G x + C x' = B u``
(``C x' = f``, ``f = B u - G x``)::

    sum_j alpha_j C x_{n-j} = h sum_j beta_j f_{n-j}         j = 0 .. k

so one step solves

    (alpha_0 C / h + beta_0 G) x_n = beta_0 B u_n + sum_{j>=1} (-alpha_j C / h - beta_j G) x_{n-j}
                                                 + beta_j B u_{n-j}

Dividing by ``beta_0`` (implicit methods), the matrix is ``gamma C + G`` with
``gamma = alpha_0 / (beta_0 h)``: factorisations are cached by `gamma`, so a linear system is
factored once per step size (and step ratio, for Gear-2), not once per step.

>>> METHODS["trap"].alpha, METHODS["trap"].beta
((1.0, -1.0), (0.5, 0.5))
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from mna.linalg import Factorization, factor, factor_in_faster_order, solver_in_use
from mna.ordering import nested_dissection

DISSECTION_MIN = 1000   # unknowns: from here a nested dissection order pays (measured)
_UNDECIDED = object()


@dataclass(frozen=True)
class LinearMultistep:
    """One linear multistep method: its coefficients for equal steps and its error constant.

    `alpha` and `beta` run from the new point ``x_n`` (index 0) back to ``x_{n-k}``;
    `error_constant` is ``C_{p+1}`` in ``LTE = C_{p+1} h^{p+1} x^{(p+1)}``; `starter` names
    the method that takes the first step and the first step after a breakpoint in the
    adaptive loops (and, for a multistep method, the steps until there is enough history;
    fixed steps restart with `stepping.restart_plans`). Backward Euler starts the
    trapezoidal rule as SPICE does: a trapezoidal step keeps half of the previous point's
    algebraic unknowns (``x_n = z - x_{n-1}``), so an inconsistent start or a corner of an
    input would ring, undamped, in them ever after.
    """

    name: str
    alpha: tuple[float, ...]
    beta: tuple[float, ...]
    order: int
    error_constant: float
    starter: str | None = None

    @property
    def steps(self) -> int:
        """``k``: how many past points a step uses."""
        return len(self.alpha) - 1

    @property
    def explicit(self) -> bool:
        return self.beta[0] == 0.0

    def coefficients(self, ratio: float = 1.0) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """``(alpha, beta)`` for a step `ratio` = ``h_n / h_{n-1}`` times the previous one.

        One-step methods do not depend on the ratio.
        """
        return self.alpha, self.beta


@dataclass(frozen=True)
class VariableBDF2(LinearMultistep):
    """Gear-2 (BDF2) with coefficients that follow the step ratio ``w = h_n / h_{n-1}``.

    ``(1+2w)/(1+w) x_n - (1+w) x_{n-1} + w^2/(1+w) x_{n-2} = h_n f_n``, scaled so that
    ``alpha_0 = 1``; ``w = 1`` gives ``(1, -4/3, 1/3)`` and ``beta_0 = 2/3``.

    >>> METHODS["gear2"].coefficients(1.0)
    ((1.0, -1.3333333333333333, 0.3333333333333333), (0.6666666666666666, 0.0, 0.0))
    """

    def coefficients(self, ratio: float = 1.0):
        w = float(ratio)
        scale = 1.0 + 2.0 * w
        return (1.0, -((1.0 + w) ** 2) / scale, w * w / scale), ((1.0 + w) / scale, 0.0, 0.0)


METHODS: dict[str, LinearMultistep] = {
    "fe": LinearMultistep("forward Euler", (1.0, -1.0), (0.0, 1.0), 1, 0.5),
    "be": LinearMultistep("backward Euler", (1.0, -1.0), (1.0, 0.0), 1, -0.5),
    "trap": LinearMultistep("trapezoidal", (1.0, -1.0), (0.5, 0.5), 2, -1.0 / 12.0,
                            starter="be"),
    "gear2": VariableBDF2("Gear-2 (BDF2)", (1.0, -4.0 / 3.0, 1.0 / 3.0), (2.0 / 3.0, 0.0, 0.0),
                          2, -2.0 / 9.0, starter="be"),
}


def method(name: str) -> LinearMultistep:
    """The method called `name` (``fe``, ``be``, ``trap``, ``gear2``)."""
    return METHODS[name.lower()]


# -- the step matrices ------------------------------------------------------------------------

def step_gamma(alpha0: float, beta0: float, h: float) -> float:
    """The ``gamma`` of ``gamma C + G`` (implicit), or ``1/h`` of the explicit matrix ``C/h``."""
    return alpha0 / (beta0 * h) if beta0 else 1.0 / h


def history_matrices(C: sp.csr_matrix, G: sp.csr_matrix, alpha, beta, h: float) -> list:
    """``(-alpha_j C/h - beta_j G) / scale`` for j = 1..k, in CSR, with ``scale = beta_0``
    (implicit) or ``alpha_0/h`` (explicit), so that the new point's matrix is ``gamma C + G``
    (implicit) or ``C`` (explicit)."""
    scale = beta[0] if beta[0] else alpha[0] / h
    matrices = []
    for a, b in zip(alpha[1:], beta[1:], strict=True):
        terms = []
        if a:
            terms.append(C * (-a / (h * scale)))
        if b:
            terms.append(G * (-b / scale))
        matrix = sum(terms[1:], terms[0]) if terms else sp.csr_matrix(C.shape)
        matrices.append(sp.csr_matrix(matrix))
    return matrices


class StepSolver(Protocol):
    """Solves one time step: the matrix is given by `gamma`, the right-hand side by `rhs`.

    The linear engine calls ``solver(gamma, rhs, time)`` once per step and uses the array it
    returns as ``x_n`` (it may be `rhs` itself, solved in place). A nonlinear engine plugs in
    a Newton iteration here, with the same call.
    """

    def __call__(self, gamma: float, rhs: np.ndarray, time: float) -> np.ndarray: ...


class LinearStepSolver:
    """Factorisations of ``gamma C + G`` (or of ``C`` for an explicit method), cached by
    `gamma`: a fixed step factors once (and once more for its restarts); an adaptive run
    factors once per step size in use.

    Many solves will use each of these factors, so from `DISSECTION_MIN` unknowns on the
    first factorisation times a nested dissection order (`mna.ordering`) against KLU's own,
    and the one kept serves every later step size (one timing; the same round-off).

    `factorizations` counts the factorisations made (the benchmark and tests read it).
    """

    def __init__(self, C, G, names: tuple[str, ...], solver: str, explicit: bool = False,
                 capacity: int = 32):
        self.C = sp.csc_matrix(C)
        self.G = sp.csc_matrix(G)
        self.names = names
        self.explicit = explicit
        self.capacity = capacity
        self.solver = solver
        self.factorizations = 0
        self._cache: OrderedDict[float, Factorization] = OrderedDict()
        self._last_gamma: float | None = None
        self._solve_last = None   # the last factors' solve_in_place, bound once
        self._order = _UNDECIDED   # the elimination order for KLU, chosen on first use

    def factor_for(self, gamma: float) -> Factorization:
        key = float(f"{gamma:.12g}")
        found = self._cache.get(key)
        if found is not None:
            self._cache.move_to_end(key)
            return found
        matrix = self.C if self.explicit else self.C * gamma + self.G
        if self._order is _UNDECIDED:
            found = (factor_in_faster_order(matrix, self.names, self.solver, order)
                     if (order := self._dissection()) is not None
                     else factor(matrix, self.names, self.solver))
            self._order = found.order
        else:
            found = factor(matrix, self.names, self.solver, self._order)
        self.factorizations += 1
        self._cache[key] = found
        if len(self._cache) > self.capacity:
            self._cache.popitem(last=False)
        return found

    def _dissection(self) -> np.ndarray | None:
        if len(self.names) < DISSECTION_MIN or solver_in_use(self.solver) != "klu":
            return None
        return nested_dissection(abs(self.C) + abs(self.G))

    def __call__(self, gamma: float, rhs: np.ndarray, time: float) -> np.ndarray:
        if gamma != self._last_gamma:   # a fixed step asks for the same matrix every time
            self._last_gamma, self._solve_last = gamma, self.factor_for(gamma).solve_in_place
        return self._solve_last(rhs)


# -- local truncation error -------------------------------------------------------------------

def divided_difference(times: np.ndarray, points: list[np.ndarray]) -> np.ndarray:
    """The highest divided difference ``x[t_0, ..., t_m]`` of the points (oldest first)."""
    table = [p.copy() for p in points]
    m = len(points) - 1
    for level in range(1, m + 1):
        for i in range(m - level + 1):
            table[i] = (table[i + 1] - table[i]) / (times[i + level] - times[i])
    return table[0]


def truncation_error(scheme: LinearMultistep, h: float, times: np.ndarray,
                     points: list[np.ndarray]) -> np.ndarray:
    """Estimated local truncation error of the step that produced ``points[-1]``:
    ``C_{p+1} h^{p+1} x^{(p+1)}`` with the derivative from a divided difference of the last
    ``p + 2`` points (``x^{(m)} ~ m! x[t_0..t_m]``)."""
    p = scheme.order
    derivative = divided_difference(times, points) * float(np.prod(np.arange(1, p + 2)))
    return abs(scheme.error_constant) * h ** (p + 1) * derivative


# -- step control shared by the linear and the Newton engines ---------------------------------

TRUNCATION_TOLERANCE = 7.0  # SPICE's trtol: the error estimate may exceed the tolerance so much
START_FRACTION = 1.0 / 64.0  # the first step, and the first after a source's corner, of hmax
MIN_FRACTION = 1e-12  # below hmax times this a step is too small


def method_at(scheme: LinearMultistep, since_restart: int) -> LinearMultistep:
    """The method of the next step: the starter for the first step after a restart and until
    enough points follow it."""
    if since_restart >= max(1, scheme.steps - 1) or not scheme.starter:
        return scheme
    return method(scheme.starter)


def error_ratio(scheme: LinearMultistep, h: float, times: list[float], xs: list[np.ndarray],
                x: np.ndarray, t: float, reltol: float, absolute: np.ndarray,
                differential: np.ndarray) -> float:
    """The new point's truncation error over its tolerance, ``trtol (reltol |x| + abstol)``
    on the differential unknowns (> 1 rejects the step)."""
    p = scheme.order
    points = [*xs[-(p + 1):], x]
    stamps = np.array([*times[-(p + 1):], t])
    lte = truncation_error(scheme, h, stamps, [q[differential] for q in points])
    scale = (reltol * np.maximum(np.abs(x), np.abs(xs[-1])) + absolute)[differential]
    return float(np.max(np.abs(lte) / (TRUNCATION_TOLERANCE * scale), initial=0.0))


def shrink_factor(ratio: float, order: int) -> float:
    """How much shorter to retry a rejected step."""
    return max(0.1, min(0.5, 0.9 * ratio ** (-1.0 / (order + 1))))


def grow_factor(ratio: float, order: int) -> float:
    """How much longer the next step may be after an accepted one."""
    return 2.0 if ratio == 0.0 else max(0.25, min(2.0, 0.9 * ratio ** (-1.0 / (order + 1))))
