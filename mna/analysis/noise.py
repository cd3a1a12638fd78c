"""``.noise V(out[,ref]) SRC dec|oct|lin n fstart fstop [pts_per_summary]``: SPICE's
small-signal noise analysis.

About the operating point, every noise source is a through variable between two
unknowns with a spectral density ``white + flicker / f^exponent`` (A²/Hz, N²/Hz, ...): the
thermal noise ``4 k T g`` of each resistor and series resistance, and the devices' own
(`Device.noise`: a junction's shot and flicker noise, a transistor's collector and base
shot noise, a switch's resistance). The thermal noise holds in every domain whose across
times through variable is a power (the fluctuation-dissipation theorem: a damper ``b``
pushes with a force of density ``4 k T b``, a pipe's resistance passes a flow of ``4 k T /
R``); the thermal domain's elements are noiseless here.

At each frequency one factorisation of ``G + j w C`` serves two solves: with the input
source at unity, the gain to the output; and, with the transposed matrix, the adjoint
``y = (G + j w C)^-T p`` of the output row `p`, whose difference across a source's nodes
is that source's transfer to the output. The output noise is the sum of ``|y_a - y_b|² S``;
the input noise that divided by the squared gain.

The totals integrate each source's density as ngspice does: as a power law of frequency
between neighbouring points, with the gain of the upper point for the input noise. Each
`*_total` column holds the integral from `fstart` to its row's frequency (so its last row
is ngspice's total), as the root of the integrated power.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from mna.analysis.equations import Equations
from mna.analysis.op import dc_solution, guess
from mna.assembly import assemble
from mna.diagnostics import check_dc_topology
from mna.domains import Domain, across_unit
from mna.elements.diode import BOLTZMANN, temperatures
from mna.errors import NetlistError, SingularSystemError
from mna.netlist.requests import check_count
from mna.results import TableResult

INTEGRATION_SLOPE = 1e-10   # ngspice's: a log-log slope below it integrates as flat
SMALLEST_GAIN = 1e-20       # ngspice's: the squared gain that refers noise to the input
SMALLEST_LOG = 1e-38        # ngspice's: what is taken for 0 before a logarithm
THERMAL_UNIT = across_unit(Domain.THERMAL)


@dataclasses.dataclass(frozen=True)
class Sources:
    """The noise currents of a circuit: between unknowns `a` and `b` (-1: the reference),
    of density ``white + flicker / f^exponent`` (one entry per source)."""

    names: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    white: np.ndarray
    flicker: np.ndarray
    exponent: np.ndarray


def noise_analysis(request, circuit) -> NoiseResult:
    """``.noise``: the output and input noise spectra and their running integrals."""
    check_dc_topology(circuit)
    source = circuit.source(request.source, request.location)
    system = assemble(circuit, outputs=(request.output,), noise=True)
    equations = Equations(system, circuit.options)
    x = dc_solution(equations, system.dc_inputs(), guess(circuit, system))
    sources = noise_sources(circuit, system, equations, x, request.location)
    if any(element.has_small_signal_values() for element in circuit.elements):
        equations = Equations(assemble(circuit, outputs=(request.output,),
                                       small_signal=True), circuit.options)
    g, c = ((equations.g_data, equations.c_data) if system.is_linear
            else equations.linearized(x))
    names = [signal.name for signal in system.inputs]
    unit = np.zeros(len(names), complex)
    unit[names.index(source.name)] = 1.0
    drive = system.b.product(unit)
    direct = system.r.product(unit)[0]
    row = system.p.dense()[0]   # the output as a combination of the unknowns
    f = frequencies(request.sweep, request.points, request.start, request.stop,
                    circuit.options.reltol)
    total = np.empty(len(f))          # the output's density at each frequency
    power = np.zeros(len(f))          # its integral over the interval up to each frequency
    gain_squared = np.empty(len(f))
    shares = None
    if request.shares:   # a column per source: as many values as a table of that many rows
        check_count(len(sources.names) * len(f), ".noise (each source's share at each "
                    "frequency)", circuit, request.location)
        shares = np.empty((len(sources.names), len(f)))
    previous = factors = None
    for k, fk in enumerate(f):
        jw = 2j * np.pi * fk
        try:
            factors = equations.factor(g + jw * c, recycle=factors)
            gain_squared[k] = abs(system.p.product(factors.solve(drive))[0] + direct) ** 2
            adjoint = factors.solve(row, transposed=True)
        except SingularSystemError as error:
            raise SingularSystemError(f"at f = {fk:g} Hz: {error}", error.unknowns) from None
        adjoint = np.append(adjoint, 0.0)   # [-1]: the reference
        transfer = np.abs(adjoint[sources.a] - adjoint[sources.b]) ** 2
        with np.errstate(divide="ignore"):   # a flicker noise at 0 Hz is infinite
            flicker = np.divide(sources.flicker, fk**sources.exponent,
                                out=np.zeros(len(transfer)), where=sources.flicker != 0)
        density = transfer * (sources.white + flicker)
        total[k] = density.sum()
        if previous is not None:
            power[k] = interval_power(f[k - 1], fk, previous, density).sum()
        previous = density
        if shares is not None:
            shares[:, k] = density
    to_input = 1 / np.maximum(gain_squared, SMALLEST_GAIN)
    columns = {"frequency": f,
               "onoise_spectrum": np.sqrt(total),
               "inoise_spectrum": np.sqrt(total * to_input),
               "onoise_total": np.sqrt(np.cumsum(power)),
               "inoise_total": np.sqrt(np.cumsum(power * to_input))}
    out_unit, in_unit = system.output_units[0], system.inputs[names.index(source.name)].unit
    units = {"frequency": "Hz", "onoise_spectrum": f"{out_unit}/sqrt(Hz)",
             "inoise_spectrum": f"{in_unit}/sqrt(Hz)", "onoise_total": out_unit,
             "inoise_total": in_unit}
    if shares is not None:
        for name, share in zip(sources.names, shares):
            columns[f"onoise_{name}"] = np.sqrt(share)
            units[f"onoise_{name}"] = f"{out_unit}/sqrt(Hz)"
    return NoiseResult("noise", columns, units, independent="frequency")


def noise_sources(circuit, system, equations: Equations, x: np.ndarray,
                  location) -> Sources:
    """Every noise source at the operating point `x` (between unknowns of the domains that
    carry power); a device kind with no noise model is refused."""
    temperature, _ = temperatures(circuit)
    names, a, b, white, flicker, exponent = [], [], [], [], [], []
    at = np.append(x, 0.0)   # [-1]: the reference
    for resistor in system.noise:
        names.append(resistor.name)
        a.append(resistor.a)
        b.append(resistor.b)
        white.append(4 * BOLTZMANN * temperature * resistor.conductance)
        flicker.append(0.0)
        exponent.append(1.0)
        if resistor.kf:
            current = resistor.conductance * (at[resistor.a] - at[resistor.b])
            names.append(resistor.flicker_name)
            a.append(resistor.a)
            b.append(resistor.b)
            white.append(0.0)
            flicker.append(resistor.copies * resistor.kf / resistor.area * abs(
                current / resistor.copies) ** resistor.af)
            exponent.append(resistor.ef)
    for device in system.devices:
        currents = device.noise(equations.terminal_values(x, device), temperature)
        if currents is None:
            raise NetlistError(f".noise: mna has no noise model of {device.names[0]} (nor of "
                               f"its kind, {type(device).__name__})", location)
        for current in currents:
            names += [f"{name}_{current.name}" if current.name else name
                      for name in device.names]
            a += list(device.terminals[:, current.a])
            b += list(device.terminals[:, current.b])
            white += list(current.white)
            flicker += list(current.flicker)
            exponent += list(np.broadcast_to(current.exponent, len(device.names)))
    a, b = np.array(a, dtype=int), np.array(b, dtype=int)
    white, flicker, exponent = np.array(white), np.array(flicker), np.array(exponent)
    powered = np.array([_powered(system, i) and _powered(system, j) for i, j in zip(a, b)],
                       bool)
    kept = powered & ((a >= 0) | (b >= 0)) & ((white != 0) | (flicker != 0))
    return Sources(tuple(n for n, keep in zip(names, kept) if keep), a[kept], b[kept],
                   white[kept], flicker[kept], exponent[kept])


def _powered(system, unknown: int) -> bool:
    """Whether `unknown` is the reference or an across variable whose product with its
    through variable is a power (every domain but the thermal one)."""
    return unknown < 0 or system.units[unknown] != THERMAL_UNIT


def frequencies(kind: str, points: int, start: float, stop: float,
                reltol: float) -> np.ndarray:
    """The frequencies of ngspice's noise analysis: from `start`, each the last times
    ``10^(1/points)`` (``dec``) or ``2^(1/points)`` (``oct``), or plus the step of `points`
    in all (``lin``), while within `stop` (and a tolerance past it).

    >>> frequencies("dec", 1, 1.0, 1000.0, 1e-3).round(9).tolist()
    [1.0, 10.0, 100.0, 1000.0]
    """
    if kind == "lin":
        if points == 1:
            return np.array([start])
        step = (stop - start) / (points - 1)
        tolerance = step * reltol
    else:
        step = np.exp(np.log(10.0 if kind == "dec" else 2.0) / points)
        tolerance = step * stop * reltol
    found, f = [], start
    while f <= stop + tolerance:
        found.append(f)
        f = f * step if kind != "lin" else f + step
    return np.array(found)


def interval_power(f0: float, f1: float, n0: np.ndarray, n1: np.ndarray) -> np.ndarray:
    """The integral of each source's density from `f0` to `f1`, given its values `n0` and
    `n1` there, as ngspice's ``Nintegrate`` takes it: the power law ``n ~ f^s`` through the
    two ends, ``(n1 f1 - n0 f0) / (s + 1)`` (flat where the slope is below
    `INTEGRATION_SLOPE`, ``n1 f1 ln(f1/f0)`` where ``s = -1``); infinite where an end is
    (flicker noise at 0 Hz). Written without powers of f, which overflow on a resonance's
    steep flank."""
    f0, f1 = max(f0, SMALLEST_LOG), max(f1, SMALLEST_LOG)
    low, high = np.maximum(n0, SMALLEST_LOG), np.maximum(n1, SMALLEST_LOG)
    span = np.log(f1) - np.log(f0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slope = (np.log(high) - np.log(low)) / span
        power = slope + 1
        curved = np.where(np.abs(power) < INTEGRATION_SLOPE, high * f1 * span,
                          (high * f1 - low * f0) / power)
        pieces = np.where(np.abs(slope) < INTEGRATION_SLOPE, n1 * (f1 - f0), curved)
    return np.where(np.isinf(n0) | np.isinf(n1), np.inf, pieces)


class NoiseResult(TableResult):
    """The noise spectra and their running integrals, one row per frequency."""

    selects_outputs = False

    def summary(self) -> str:
        f = self.columns["frequency"]
        return (f"NOISE: {len(f)} points from {f[0]:g} to {f[-1]:g} Hz; total output noise "
                f"{self.columns['onoise_total'][-1]:.6g} {self.units['onoise_total']}, "
                f"referred to the input {self.columns['inoise_total'][-1]:.6g} "
                f"{self.units['inoise_total']}")
