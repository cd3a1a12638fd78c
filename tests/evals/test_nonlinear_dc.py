"""Nonlinear operating points and sweeps against independent solutions."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq

import mna
from mna.analysis.equations import Equations
from mna.analysis.newton import Newton
from mna.cli import main
from mna.elements.diode import BOLTZMANN_OVER_CHARGE, NOMINAL_TEMPERATURE

THERMAL_VOLTAGE = BOLTZMANN_OVER_CHARGE * NOMINAL_TEMPERATURE


def shockley_current(source: float, resistance: float, saturation: float, emission: float,
                     gmin: float = 1e-12) -> float:
    """Current of a source in series with a resistance and a Shockley diode (with SPICE's
    gmin conductance across the junction)."""
    vte = emission * THERMAL_VOLTAGE

    def diode(vd: float) -> float:
        return saturation * math.expm1(vd / vte) + gmin * vd

    vd = brentq(lambda v: source - v - resistance * diode(v), 0.0, source, xtol=1e-15, rtol=1e-15)
    return diode(vd)


def test_diode_iv_sweep_matches_shockley_equation():
    circuit = mna.read_string(
        "diode I-V\n"
        "V1 in 0 0\n"
        "R1 in a 100\n"
        "D1 a 0 dmod 2\n"
        ".model dmod D(IS=2e-14 N=1.8 RS=5)\n"
        ".options reltol=1e-9\n"
        ".dc V1 0.5 5 0.5\n"
    )
    (sweep,) = mna.run(circuit)
    currents = -sweep["I(V1)"]
    for source, current in zip(sweep["V1"], currents):
        # area 2 doubles IS and halves RS: 100 + 5/2 ohm in series with the junction
        expected = shockley_current(source, 102.5, 4e-14, 1.8)
        assert abs(current - expected) <= 1e-9 * expected + 1e-15  # reltol, and abstol/1000


def test_newton_stops_where_the_junction_current_has_settled():
    """At the default tolerances Newton stops only once the diode's current at the new point
    is where the last load predicts it (SPICE's device test): a sweep started on and off the
    knee stays within 1e-6 of the exact current, which it misses without that test."""
    worst = 0.0
    for start in (0.3, 0.31, 0.33, 0.37):
        circuit = mna.read_string("diode I-V\nV1 in 0 0\nR1 in a 100\nD1 a 0 dmod 2\n"
                                  ".model dmod D(IS=2e-14 N=1.8 RS=5)\n"
                                  f".dc V1 {start} 5 0.05\n")
        (sweep,) = mna.run(circuit)
        for source, current in zip(sweep["V1"], -sweep["I(V1)"]):
            expected = shockley_current(source, 102.5, 4e-14, 1.8)
            worst = max(worst, abs(current - expected) / expected)
    assert worst < 1e-6


def test_a_sweep_stays_on_the_branch_it_started_on():
    """A negative conductance of 59 mS across a diode has a knee above the junction's
    critical voltage (0.7533 V with no current). Each point of the sweep starts from the
    last one's solution; limiting its junction against 0 V (as from nothing) evaluated the
    diode near 0.09 V, and the first Newton step fell to the negative branch, -0.017 V at
    the second point (the differential sweep's deck 5343; ngspice limits against the last
    point and stays on the knee, as mna now does). Each point must solve the knee's
    equation ``IS (exp(V/vt) - 1) + gmin V = 59 mS V + I1`` on its branch."""
    (frame,) = mna.run(mna.read_string(
        "knee\nG1 0 a a 0 60m\nR1 a 0 1k\nI1 0 a DC 0\nD1 a 0 dmod\n.model dmod D(IS=1e-14)\n"
        ".dc I1 0 10m 1m\n"))
    for current, voltage in zip(frame["I1"], frame["V(a)"]):
        knee = brentq(lambda v, i=current: 1e-14 * math.expm1(v / THERMAL_VOLTAGE) + 1e-12 * v
                      - 0.059 * v - i, 0.7, 0.8, xtol=1e-15)
        assert voltage == pytest.approx(knee, abs=1e-6)   # vntol


@pytest.mark.parametrize("area", ["3", "area=3", "{a}", "area={a}"])
def test_diode_area_scales_the_saturation_current_written_either_way(area):
    # ngspice 39 reads only area=; SPICE's positional area is read too
    op = mna.operating_point(mna.read_string(
        f"area\n.param a=3\nV1 in 0 1\nR1 in k 1k\nD1 k 0 dmod {area}\n"
        ".model dmod D(IS=1e-14)\n"))
    assert -op["I(V1)"] == pytest.approx(shockley_current(1.0, 1e3, 3e-14, 1.0), rel=1e-6)


def test_diode_reverse_bias_current_is_the_saturation_current():
    circuit = mna.read_string("reverse\nV1 0 a 10\nR1 a k 1k\nD1 k 0 dmod\n"
                              ".model dmod D(IS=1e-12)\n")
    op = mna.operating_point(circuit)
    # SPICE's reverse region: -IS (1 + (3 vte / (e vd))^3) - gmin vd with vd ~ -10 V
    vd = op["V(k)"]
    vte = THERMAL_VOLTAGE
    expected = -1e-12 * (1 + (3 * vte / (math.e * vd)) ** 3) + 1e-12 * vd
    assert op["I(V1)"] == pytest.approx(expected, rel=1e-9, abs=0)


def test_joule_heated_rod_steady_state_is_the_discrete_poisson_solution():
    """A current through N resistors heats N thermal nodes (B sources couple the domains);
    both rod ends are held at ambient through the same thermal resistance as between nodes."""
    sections, current, resistance, thermal, ambient = 6, 2.0, 3.0, 0.5, 300.0
    lines = ["heated rod", f".param Re={resistance}", f"I1 0 e0 {current}"]
    for k in range(sections):
        end = f"e{k + 1}" if k < sections - 1 else "0"
        lines.append(f"R{k} e{k} {end} {{Re}}")
        lines.append(f"B{k} 0 t{k} I={{V(e{k},{end})^2/Re}}")
        lines.append(f"C{k} t{k} 0 C=100")
    lines.append(".domain thermal " + " ".join(f"t{k}" for k in range(sections)) + " amb")
    lines.append(f"Vamb amb 0 {ambient}")
    nodes = ["amb", *(f"t{k}" for k in range(sections)), "amb"]
    for k in range(sections + 1):
        lines.append(f"Rt{k} {nodes[k]} {nodes[k + 1]} R={thermal}")
    op = mna.operating_point(mna.read_string("\n".join(lines) + "\n"))
    power = current**2 * resistance
    for k in range(1, sections + 1):
        expected = ambient + power * thermal * k * (sections + 1 - k) / 2
        assert op[f"V(t{k - 1})"] == pytest.approx(expected, rel=1e-10)
    units = dict(zip(op.names, op.units))
    assert units["V(t0)"] == "K" and units["V(e0)"] == "V"


@pytest.mark.parametrize(("nodeset", "expected"), [("", 0.0), (".nodeset V(b)=0.5\n", 1.0)])
def test_a_comparison_with_a_solution_on_either_side_starts_as_at_rest(nodeset, expected):
    """V(a) = (V(b) > 0.2 ? 1 : 0) with V(b) = V(a)/2 holds at 0 V and at 1 V. A solution from
    nothing took every comparison as true and settled at 1 V; ngspice's first iteration sees
    the comparison at 0 V, false, and settles at 0 V, as mna now does (the differential
    sweep's deck 6024, 5.8e5 tolerances off). A starting point (.nodeset) picks the other."""
    (op,) = mna.run(mna.read_string(
        f"two\nB1 a 0 V={{V(b) > 0.2 ? 1 : 0}}\nR1 a b 1k\nR2 b 0 1k\n{nodeset}.op\n"))
    values = dict(zip(op.names, op.values))
    assert values["V(a)"] == expected and values["V(b)"] == expected / 2


def test_behavioural_jacobian_matches_finite_differences():
    circuit = mna.read_string(
        "jacobian\n.param g=3\nV1 a 0 1\nR1 a b 2\nR2 b 0 5\n"
        "B1 b 0 I={g*sin(V(b))*V(a,b) + I(V1)^2}\nB2 c 0 V={exp(V(b)/2)*I(R1)}\nR3 c 0 1\n"
    )
    system = mna.assemble(circuit)
    newton = Newton(Equations(system, circuit.options))
    rng = np.random.default_rng(1)
    x = rng.normal(size=system.size)
    zero = np.zeros(system.size)
    _, data, _, _ = newton.evaluate(x, zero, 0.0, 0.0)
    eq = newton.equations
    jacobian = sp.csc_matrix((data, eq.indices, eq.indptr), shape=(system.size,) * 2).toarray()
    step = 1e-7
    for column in range(system.size):
        shift = np.zeros(system.size)
        shift[column] = step
        plus = newton.residual(x + shift, zero)
        minus = newton.residual(x - shift, zero)
        np.testing.assert_allclose(jacobian[:, column], (plus - minus) / (2 * step),
                                   rtol=1e-6, atol=1e-6)


def test_an_infinite_slope_where_the_value_is_finite_counts_as_none():
    """sqrt(abs(V(in))) at V(in) = 0 is 0, with a slope of 1/0: the float evaluation failed
    and took the value with it, so the operating point and every transient from a SIN's 0 V
    failed to converge (ngspice's guarded division runs them). min, max and nint beside it
    are evaluated as the float evaluation does."""
    text = ("sqrt\nV1 in 0 {}\nR1 in 0 1k\nB1 e 0 V={{sqrt(abs(V(in))) + max(V(in)-0.5, 0) "
            "+ min(V(in)+0.5, 0) + nint(V(in)*0.6)}}\nRe e 0 1k\n.save V(in) V(e)\n")

    def closed(v):   # numpy's max and min are the largest entry along an axis: not these
        return (np.sqrt(np.abs(v)) + np.maximum(v - 0.5, 0) + np.minimum(v + 0.5, 0)
                + np.rint(v * 0.6))

    (dc,) = mna.run(mna.read_string(text.format(0) + ".dc V1 -1 1 0.5\n"))
    assert np.array_equal(dc["V(e)"], closed(dc["V(in)"]))
    (tran,) = mna.run(mna.read_string(text.format("SIN(0 1 1k)") + ".tran 10u 2m\n"))
    frame = tran.to_dataframe()
    assert np.max(np.abs(frame["V(e)"] - closed(frame["V(in)"]))) < 1e-15


@pytest.mark.parametrize("expression", ["nint(1/V(a))", "nint(sqrt(V(a)-1))", "(V(a)-1)^0.3"])
def test_a_value_that_is_not_finite_where_the_float_evaluation_fails_is_newtons_failure(
        expression):
    # each was an internal error (OverflowError, ValueError, TypeError of a complex power)
    with pytest.raises(mna.ConvergenceError, match="the residual is not finite"):
        mna.run(mna.read_string(f"t\nV1 a 0 0\nR1 a 0 1k\nB1 b 0 V={{{expression}}}\n"
                                "Rb b 0 1k\n.op\n"))


def test_continuation_converges_and_the_log_names_the_aid(caplog):
    circuit = mna.read_string(
        "cold start\nV1 in 0 100\nR1 in a 1\nB1 a 0 I={1e-14*(exp(V(a)/0.025)-1)}\n"
        ".options reltol=1e-9\n"
    )
    with caplog.at_level(logging.INFO, logger="mna"):
        op = mna.operating_point(circuit)
    assert "source stepping converged" in caplog.text
    va = op["V(a)"]
    # KCL at a, solved independently
    assert (100 - va) / 1 == pytest.approx(1e-14 * math.expm1(va / 0.025), rel=1e-9)


def test_no_solution_gives_convergence_error_exit_3_and_no_files(tmp_path, capsys):
    netlist = tmp_path / "nosolution.net"
    netlist.write_text("no real solution\nR1 a 0 1\nB1 a 0 I={1+V(a)^2}\n.op\n")
    with pytest.raises(mna.ConvergenceError,
                       match=r"V\(a\) equation.*gmin stepping.*source stepping"):
        mna.run(mna.read(netlist))
    out = tmp_path / "out"
    assert main(["run", str(netlist), "-o", str(out)]) == 3
    assert "no convergence at t=0" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("nodeset, expected", [("", 1.0), (".nodeset V(a)=3.2\n", 3.0)])
def test_nodeset_chooses_the_solution_newton_starts_from(nodeset, expected):
    """I = (V-1)(V-3) has two operating points; Newton from 0 finds V = 1, from 3.2 finds 3."""
    circuit = mna.read_string("two solutions\nB1 a 0 I={(V(a)-1)*(V(a)-3)}\nR1 a 0 1e12\n"
                              + nodeset + ".options reltol=1e-9\n")
    va = mna.operating_point(circuit)["V(a)"]
    # KCL: (V-1)(V-3) + V/R = 0 moves each root by about V/R / |2V - 4| ~ 1e-12
    assert va == pytest.approx(expected, abs=1e-9)
