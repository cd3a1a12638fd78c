"""Linear multistep integrators as coefficient tables, and their truncation error.

Every method is written in one form for ``G x + f(x, t) + d/dt Q(x) = B u`` with the charges
``Q = C x + q(x)`` and their rate ``Q' = F = B u - G x - f``::

    sum_j alpha_j Q_{n-j} = h sum_j beta_j F_{n-j}         j = 0 .. k

so one step solves, with ``gamma = alpha_0 / (beta_0 h)``,

    gamma Q(x_n) + G x_n + f(x_n, t_n) = B u_n + sum_{j>=1} (beta_j F_{n-j} - alpha_j Q_{n-j} / h)
                                                               / beta_0

and ``F_n = gamma Q_n - history``: a linear system's matrix is ``gamma C + G``, one per
step size. Forward Euler (``beta_0 = 0``) has no such form and is refused where it would need
one.

>>> METHODS["trap"].alpha, METHODS["trap"].beta
((1.0, -1.0), (0.5, 0.5))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LinearMultistep:
    """One linear multistep method: its coefficients for equal steps and its error constant.

    `alpha` and `beta` run from the new point ``x_n`` (index 0) back to ``x_{n-k}``;
    `error_constant` is ``C_{p+1}`` in ``LTE = C_{p+1} h^{p+1} x^{(p+1)}``; `starter` names
    the method that takes the first steps of a run and after each breakpoint (and, for a
    multistep method, the steps until there is enough history). Backward Euler starts the
    trapezoidal rule as SPICE does: a trapezoidal step keeps half of the previous point's
    algebraic unknowns, so an inconsistent start or a corner of an input would ring,
    undamped, in them ever after.
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


# -- local truncation error -------------------------------------------------------------------

def divided_difference(times: list[float], points: list[np.ndarray],
                       rate: np.ndarray | None = None) -> np.ndarray:
    """The highest divided difference ``x[t_0, ..., t_m]`` of the points (oldest first), by
    the table of lower differences, each level made in place over the one before (the
    differences are taken before they are scaled, so a common offset cancels exactly).
    With `rate`, the first two points are one (``t_0 = t_1``) and `rate` is the derivative
    there (Hermite's confluent difference ``x[t_0, t_0] = x'(t_0)``)."""
    table = [np.array(p, dtype=float) for p in points]
    m = len(points) - 1
    for level in range(1, m + 1):
        for i in range(m - level + 1):
            if level == 1 and i == 0 and rate is not None:
                table[0] = np.array(rate, dtype=float)
                continue
            np.subtract(table[i + 1], table[i], out=table[i])
            table[i] /= times[i + level] - times[i]
    return table[0]


def truncation_step(scheme: LinearMultistep, times: list[float], charges: list[np.ndarray],
                    flows: list[np.ndarray], tolerances, stores: np.ndarray,
                    starting: bool = False) -> float:
    """The step the truncation error allows after the newest point, as ngspice estimates it.

    The error of a step of order p in the charges ``Q`` is taken as the error constant times
    their divided difference of order p + 1 over the last p + 2 points, and per unit of time
    (a current) it must stay within ``trtol`` times the tolerance of each charge: ``abstol +
    reltol max|Q'|`` or ``reltol max(|Q|, chgtol) / h``, whichever is larger.
    `tolerances` is ``(reltol, abstol, chgtol, trtol)``; `charges` and `flows` (``Q'``) run
    oldest first; `stores` marks the equations that hold a charge (no other is estimated).
    A run's first step (`starting`: two points, the first with the rates of a consistent
    start) is estimated with the first point taken twice, its rate the derivative there.
    The estimate runs over whole vectors in place and leaves the others out at the end, so a
    step costs a few passes over the unknowns and no copies of the history.
    """
    tolerance, error = _tolerance_and_error(scheme, times, charges, flows, tolerances,
                                            starting)
    tolerance /= error
    allowed = tolerances[3] * float(np.min(tolerance, initial=np.inf, where=stores))
    return allowed ** (1.0 / scheme.order)


def truncation_limit(scheme: LinearMultistep, times: list[float], charges: list[np.ndarray],
                     flows: list[np.ndarray], tolerances, stores: np.ndarray,
                     starting: bool = False) -> tuple[int, float]:
    """The equation whose error limits `truncation_step` most (for messages), and its
    tolerance per unit of time."""
    tolerance, error = _tolerance_and_error(scheme, times, charges, flows, tolerances,
                                            starting)
    worst = int(np.argmin(np.where(stores, tolerance / error, np.inf)))
    return worst, float(tolerance[worst])


def _tolerance_and_error(scheme: LinearMultistep, times, charges, flows, tolerances,
                         starting: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each equation's tolerance per unit of time and its error estimate (see
    `truncation_step`), in new arrays."""
    reltol, abstol, chgtol, _ = tolerances
    p = scheme.order
    h = times[-1] - times[-2]
    if starting:
        error = divided_difference([times[0], *times], [charges[0], *charges], flows[0])
    else:
        error = divided_difference(times[-(p + 2):], charges[-(p + 2):])
    np.abs(error, out=error)
    error *= abs(scheme.error_constant)
    np.maximum(error, abstol, out=error)
    tolerance = np.maximum(np.abs(flows[-1]), np.abs(flows[-2]), dtype=float)
    tolerance *= reltol
    tolerance += abstol
    charge = np.maximum(np.abs(charges[-1]), np.abs(charges[-2]), dtype=float)
    np.maximum(charge, chgtol, out=charge)
    charge *= reltol / h
    np.maximum(tolerance, charge, out=tolerance)
    return tolerance, error
