"""How one time step's equations ``gamma Q(x) + G x + f(x, t) = rhs`` are solved: the
strategies that the step controller (`controller.run_steps`) is given.

* `LinearSteps`: a linear system, ``gamma C + G`` factored once per step size and kept; it
  asks the controller for steps of a few sizes (``hmax`` halved k times), so that a run
  factors a handful of times.
* `ModalSteps`: a system whose devices are affine while their modes hold (switches,
  Coulomb friction, contacts): one Newton step from the last point solves a step exactly,
  and its factors are kept by the Jacobian's values, so that between events a run factors as
  seldom as a linear one.
* `NewtonSteps`: Newton's method on the pattern fixed once (`Equations`).
* `SemiImplicitSteps`: MTT's linearly implicit steps, one linearised solve per step with the
  Jacobian of every step (``linearise=step``) or of t = 0 (``linearise=once``).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from mna.analysis.equations import Equations
from mna.analysis.newton import Newton, NewtonFailure
from mna.errors import SingularSystemError
from mna.linalg import Factors

CACHE = 32   # factorisations kept (by step size, or by the Jacobian's values)


class _Steps:
    """What every strategy shares: the equations, their charges and currents, and the
    devices' switching functions and modes."""

    def __init__(self, equations: Equations):
        self.equations = equations
        self.unknowns = equations.unknowns
        self.stores = equations.stores

    def step_size(self, h: float) -> float:
        return h

    def charges(self, x, time):
        return self.equations.charges(x, time)

    def currents(self, x, time):
        return self.equations.currents(x, time)

    def switching(self, x, time):
        return self.equations.switching(x, time)

    def modes(self):
        return self.equations.modes()

    def switching_owners(self):
        return self.equations.switching_owners()

    def switch(self, x, time, crossed):
        self.equations.switch(x, time, crossed)


class LinearSteps(_Steps):
    """Steps of a linear system, each one solve with factors kept by `gamma`."""

    def __init__(self, equations: Equations, hmax: float):
        super().__init__(equations)
        self.hmax = hmax
        self._factors: OrderedDict[float, Factors] = OrderedDict()
        self._made_for: dict[float, float] = {}   # the gamma of the factors kept by each key
        self.factorizations = 0

    def step_size(self, h: float) -> float:
        """The largest ``hmax / 2**k`` not above `h`."""
        if h >= self.hmax:
            return self.hmax
        return self.hmax * 2.0 ** -math.ceil(math.log2(self.hmax / h) - 1e-12)

    def _factored(self, key, data: Callable[[], np.ndarray]) -> Factors:
        """The factors kept under `key`, else those of the matrix `data()` (then kept)."""
        found = self._factors.get(key)
        if found is None:
            found = self._factors[key] = self.equations.factor(data())
            self.factorizations += 1
            if len(self._factors) > CACHE:
                evicted, _ = self._factors.popitem(last=False)
                self._made_for.pop(evicted, None)
        else:
            self._factors.move_to_end(key)
        return found

    def _system(self, gamma: float) -> tuple[Factors, float]:
        """The factors of ``gamma C + G`` (``C`` for an infinite `gamma`), or of the first
        `gamma` equal to it in 12 digits (steps landing on breakpoints of one period differ
        in their last digits), and the `gamma` they were made for."""
        key = float(f"{gamma:.12g}")
        eq = self.equations

        def matrix():
            self._made_for[key] = gamma
            return eq.c_data.copy() if math.isinf(gamma) else eq.g_data + gamma * eq.c_data
        return self._factored(key, matrix), self._made_for[key]

    def step(self, gamma, rhs, predict, previous, time):
        """The solution with the kept factors, refined once where they were made for a
        `gamma` that differs in its last digits (else what nothing drains would drift)."""
        factors, made_for = self._system(gamma)
        x = factors.solve_in_place(rhs)
        if made_for != gamma:   # (made_for C + G) x = rhs, so (gamma C + G) x = rhs - r
            eq = self.equations
            x += factors.solve_in_place((made_for - gamma) * eq.product(eq.c_data, x))
        return x

    def explicit_step(self, charge, time):
        return self._system(math.inf)[0].solve(charge)


class ModalSteps(LinearSteps):
    """Steps of a system that is linear while its devices' modes hold: one Newton step
    from the last point, with factors kept by the Jacobian's values."""

    def __init__(self, equations: Equations, hmax: float):
        super().__init__(equations, hmax)
        self.newton = Newton(equations)

    def step(self, gamma, rhs, predict, previous, time):
        residual, jacobian, _, _ = self.newton.evaluate(previous, rhs, gamma, time)
        try:
            step = self._factored(jacobian.tobytes(), lambda: jacobian).solve(residual)
        except SingularSystemError as error:
            raise NewtonFailure(previous, residual, 1, str(error), singular=True) from None
        return previous - step

    def explicit_step(self, charge, time):
        raise NotImplementedError("an explicit method cannot solve nonlinear charges")


class NewtonSteps(_Steps):
    """Steps of a nonlinear system by Newton's method (at most `iterations` per step)."""

    def __init__(self, equations: Equations, iterations: int):
        super().__init__(equations)
        self.newton = Newton(equations)
        self.iterations = iterations

    def step(self, gamma, rhs, predict, previous, time):
        return self.newton.solve(rhs, predict(), gamma=gamma, time=time,
                                 limit=self.iterations, settled=previous)

    def explicit_step(self, charge, time):
        raise NotImplementedError("an explicit method cannot solve nonlinear charges")


class SemiImplicitSteps(NewtonSteps):
    """One linearised solve per step, from the predicted point: the Jacobian there
    (``once=False``) or the first step's, factored once (``once=True``)."""

    def __init__(self, equations: Equations, once: bool):
        super().__init__(equations, iterations=1)
        self.once = once
        self._frozen: tuple[float, Factors] | None = None

    def step(self, gamma, rhs, predict, previous, time):
        guess = predict()
        if not self.once:
            return self.newton.solve(rhs, guess, gamma=gamma, time=time, iterations=1)
        if self._frozen is None or self._frozen[0] != gamma:
            self._frozen = (gamma, self.equations.factor(self.newton.jacobian(guess, gamma,
                                                                             time)))
        residual = self.newton.residual(guess, rhs, gamma, time)
        return guess - self._frozen[1].solve(residual)
