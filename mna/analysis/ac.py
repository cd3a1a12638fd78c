"""``.ac dec|oct|lin n fstart fstop``: the small-signal frequency response.

At each frequency ``(G + j w C) X = B U`` is solved with one sparse LU, ``U`` being the sources'
AC phasors; the outputs are ``Y = (P + j w Q) X + R U``. A nonlinear circuit is first
linearised about its operating point.

>>> import mna
>>> c = mna.read_string("rc\\nV1 in 0 AC 1\\nR1 in out 1k\\nC1 out 0 1u\\n.ac lin 2 0 1k\\n")
>>> table = mna.run(c)[0]
>>> float(abs(table["V(out)"][0]))
1.0
"""

from __future__ import annotations

import math

import numpy as np

from mna.analysis.equations import Equations
from mna.analysis.op import dc_solution, guess
from mna.assembly import assemble
from mna.errors import NetlistError, SingularSystemError
from mna.netlist.requests import frequency_count
from mna.progress import progress
from mna.results import TableResult


def frequencies(kind: str, points: int, start: float, stop: float,
                reltol: float) -> np.ndarray:
    """The analysis frequencies as ngspice 39 lays them out: ``lin``, `points` in all; ``oct``,
    `points` per octave from `start` up to `stop` (or ``stop * reltol * 2**(1/points)`` past
    it); ``dec``, as many steps as whole ``1/points`` decades fit between `start` and
    `stop`, spread evenly so that the last one lands on `stop`.

    >>> frequencies("dec", 2, 1.0, 100.0, 1e-3).round(3).tolist()
    [1.0, 3.162, 10.0, 31.623, 100.0]
    >>> frequencies("dec", 1, 1.0, 500.0, 1e-3).round(3).tolist()
    [1.0, 22.361, 500.0]
    >>> frequencies("oct", 1, 100.0, 799.9, 1e-3).tolist()
    [100.0, 200.0, 400.0, 800.0]
    """
    if kind == "lin":
        return np.linspace(start, stop, points) if points > 1 else np.array([start])
    base = 10.0 if kind == "dec" else 2.0
    count = frequency_count(kind, points, start, stop, reltol)
    if kind == "dec" and 1 < count < math.inf:
        return np.geomspace(start, stop, int(count))
    exponents = np.arange(count) / points
    with np.errstate(over="ignore"):
        f = start * base ** exponents
    if np.all(np.isfinite(f)):
        return f
    return np.exp(np.log(start) + exponents * np.log(base))   # a span beyond the float range


def ac_sweep(request, circuit) -> TableResult:
    """``.ac``: the outputs' phasors at every frequency of the sweep."""
    f = frequencies(request.sweep, request.points, request.start, request.stop,
                    circuit.options.reltol)
    system = assemble(circuit)
    u = system.ac_inputs()
    if not np.any(u):
        raise NetlistError(".ac: no source has an AC value (write e.g. 'V1 in 0 AC 1')",
                           request.location)
    equations = Equations(system, circuit.options)
    x = None if system.is_linear else dc_solution(equations, system.dc_inputs(),
                                                  guess(circuit, system))
    if any(element.has_small_signal_values() for element in circuit.elements):
        equations = Equations(assemble(circuit, small_signal=True), circuit.options)
    g, c = (equations.g_data, equations.c_data) if x is None else equations.linearized(x)
    outputs = ac_response(equations, g, c, f, u)
    columns = {"frequency": f}
    units = {"frequency": "Hz"}
    for name, unit, row in zip(system.outputs, system.output_units, outputs, strict=True):
        columns[name] = row
        units[name] = unit
    return TableResult("ac", columns, units, independent="frequency")


def ac_response(equations: Equations, g: np.ndarray, c: np.ndarray, f: np.ndarray,
                u: np.ndarray) -> np.ndarray:
    """Outputs (one row each) at frequencies `f` for input phasors `u`: ``G + j w C`` (data
    `g`, `c` on the equations' pattern) factored numerically at each frequency, its
    ordering analysed once and its pivot order kept while it serves."""
    system = equations.system
    rhs = system.b.product(u.astype(complex))
    direct = system.r.product(u.astype(complex))
    result = np.empty((len(system.outputs), len(f)), dtype=complex)
    with progress(len(f), "ac", "freq") as bar:
        for k, fk in enumerate(f):
            jw = 2j * np.pi * fk
            with np.errstate(over="ignore", invalid="ignore"):
                matrix = g + jw * c
                try:
                    if not np.all(np.isfinite(matrix)):
                        raise SingularSystemError("G + jwC overflows")
                    x = equations.solve(matrix, rhs)
                    result[:, k] = system.p.product(x) + jw * system.q.product(x) + direct
                    if not np.all(np.isfinite(result[:, k])):
                        raise SingularSystemError("the outputs overflow")
                except SingularSystemError as error:
                    raise SingularSystemError(f"at f = {fk:g} Hz: {error}",
                                              error.unknowns) from None
            bar.update()
    return result
