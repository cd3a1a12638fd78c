"""Operating points of multi-domain systems against values derived by hand in each test.

Conventions (NETLIST.md): the through variable of an element flows n+ -> element -> n-;
``I(Vname)`` is positive when it flows into the source's n+ node; TF: across(a) = n across(b),
through(a) = -through(b)/n; GY: across(a) = r through(b), through(a) = -across(b)/r, where
through(x) enters port x at its + node.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import mna

NETLISTS = Path(__file__).resolve().parents[2] / "netlists"
RTOL = 1e-9


def op(text: str) -> mna.OperatingPointResult:
    return mna.operating_point(mna.read_string(text))


def parameters(circuit: mna.Circuit) -> dict[str, float]:
    """The circuit's top-level parameters as numbers (they are kept in dependency order)."""
    values: dict[str, float] = {}
    for name, value in circuit.parameters.items():
        values[name] = value if isinstance(value, float) else value.evaluate(values)
    return values


def close(got: float, expected: float, atol: float = 1e-12) -> bool:
    return abs(got - expected) <= RTOL * abs(expected) + atol


# -- DC motor ------------------------------------------------------------------------------------

MOTOR = """DC motor {title}
.param Vsup={V} Rarm={R} Ke={Ke} bm={b}
Vs vin 0 {{Vsup}}
Ra vin n1 {{Rarm}}
La n1 ea 1m
TFm ea 0 rotor 0 {{Ke}}
CJm rotor 0 J=1e-4
Rbm rotor 0 b={{bm}}
{extra}
.save V(ea) V(rotor) I(La) I(Vs) I(TFm) I(Rbm) {saves}
.op
"""


def test_dc_motor_at_stall():
    V, R, Ke, b = 12.0, 0.5, 0.02, 1e-3
    result = op(MOTOR.format(title="at stall", V=V, R=R, Ke=Ke, b=b,
                             extra="Vclamp rotor 0 0", saves="I(Vclamp)"))
    stall_current = V / R  # no back-EMF at zero speed
    stall_torque = Ke * stall_current  # Kt = Ke in SI units
    assert close(result["V(rotor)"], 0.0)
    assert close(result["V(ea)"], 0.0)
    assert close(result["I(La)"], stall_current)
    assert close(result["I(Vs)"], -stall_current)
    assert close(result["I(TFm)"], stall_current)  # enters TFm at ea (a+)
    # the whole stall torque flows from rotor into the clamp's + node: positive
    assert close(result["I(Vclamp)"], stall_torque)
    assert close(result["I(Rbm)"], 0.0)


def test_dc_motor_running_free_against_its_friction():
    V, R, Ke, b = 12.0, 0.5, 0.02, 1e-3
    result = op(MOTOR.format(title="free", V=V, R=R, Ke=Ke, b=b, extra="", saves=""))
    # Ke (V - Ke w)/R = b w
    w = Ke * V / (R * b + Ke**2)
    i = (V - Ke * w) / R
    assert close(result["V(rotor)"], w)
    assert close(result["V(ea)"], Ke * w)
    assert close(result["I(La)"], i)
    assert close(result["I(Rbm)"], b * w)
    # power: V i = R i^2 + b w^2
    assert close(V * i, R * i**2 + b * w**2)


def test_dc_motor_stall_example_from_its_parameters(read_netlist):
    circuit = read_netlist(NETLISTS / "dc_motor_stall.net", saves=["I(Vclamp)", "I(La)", "I(TFm)"])
    p = parameters(circuit)
    result = mna.operating_point(circuit)
    current = p["vsup"] / p["rarm"]
    assert close(result["I(La)"], current)
    assert close(result["I(TFm)"], current)
    assert close(result["I(Vclamp)"], current / p["kv"])


def test_dc_motor_example_from_its_parameters(read_netlist):
    circuit = read_netlist(NETLISTS / "dc_motor.net", saves=["V(rotor)", "V(load)", "I(La)"])
    p = parameters(circuit)
    ke = 1 / p["kv"]
    w = ke * p["vsup"] / (p["rarm"] * (p["bm"] + p["bl"]) + ke**2)
    result = mna.operating_point(circuit)
    assert close(result["V(rotor)"], w)
    assert close(result["V(load)"], w)
    assert close(result["I(La)"], (p["vsup"] - ke * w) / p["rarm"])


def test_gear_train_reverses_and_scales_speed():
    # gear: ratio -r2/r1 between motor shaft (a) and output shaft (b): w_a = -(r2/r1) w_b
    r1, r2, speed, b = 0.02, 0.06, 300.0, 0.5
    result = op(f"gear\nVw wa 0 {speed}\nTFg wa 0 wb 0 {-r2 / r1}\nCJ wb 0 J=1\n"
                f"Rb wb 0 b={b}\n.domain rotational wa\n.save V(wb) I(Vw) I(Rb)\n")
    wb = -speed * r1 / r2
    assert close(result["V(wb)"], wb)
    assert close(result["I(Rb)"], b * wb)
    # the source delivers the load's power: -I(Vw) * speed = b wb^2
    assert close(-result["I(Vw)"] * speed, b * wb**2)


def test_rack_and_pinion_and_lever():
    # rack (translational, port a) driven by a pinion (rotational, port b): v = r w
    r, w, b = 0.05, 40.0, 200.0
    result = op(f"rack\nVw pin 0 {w}\nTFr rack 0 pin 0 {r}\nCm rack 0 m=3\nRb rack 0 b={b}\n"
                ".domain rotational pin\n.save V(rack) I(Vw)\n")
    v = r * w
    assert close(result["V(rack)"], v)
    # the pinion source supplies the torque r*F = r*b*v out of its + node
    assert close(result["I(Vw)"], -r * b * v)
    # lever ratio -l1/l2: the force source pushes on arm a, arm b holds a damper
    l1, l2, F, b2 = 0.3, 0.1, 60.0, 15.0
    result = op(f"lever\nIf 0 ya {F}\nTFl ya 0 yb 0 {-l1 / l2}\nCm yb 0 m=1\nRb yb 0 b={b2}\n"
                ".domain translational ya\n.save V(ya) V(yb) I(TFl)\n")
    # through(a) = F (all of F enters TFl at ya), through(b) = -n F leaves yb into TFl,
    # KCL at yb: -n F + b2 v_b = 0
    n = -l1 / l2
    vb = n * F / b2
    assert close(result["V(yb)"], vb)
    assert close(result["V(ya)"], n * vb)
    assert close(F * result["V(ya)"], b2 * vb**2)


# -- hydraulic pump and ram -----------------------------------------------------------------------


def test_pump_driven_by_a_torque_against_a_pipe():
    Tm, b, D, Rpipe, Rret = 10.0, 0.02, 1.5e-6, 4e9, 6e9
    result = op(f"""pump against a pipe
Imotor 0 shaft {Tm}
CJp shaft 0 J=0.01
Rbear shaft 0 b={b}
GYpump shaft 0 pout 0 {-1 / D}
Rpipe pout tank {Rpipe}
Rret tank 0 {Rret}
Ctank tank 0 1e-12
.domain fluid pout tank
.save V(shaft) V(pout) V(tank) I(Rpipe) I(GYpump)
""")
    # torque balance Tm = b w + D P, P = Q (Rpipe + Rret), Q = D w
    w = Tm / (b + D**2 * (Rpipe + Rret))
    Q = D * w
    assert close(result["V(shaft)"], w)
    assert close(result["V(pout)"], Q * (Rpipe + Rret), atol=1e-6)
    assert close(result["V(tank)"], Q * Rret, atol=1e-6)
    assert close(result["I(Rpipe)"], Q)
    assert close(result["I(GYpump)"], D * Q * (Rpipe + Rret))  # torque absorbed by the pump
    # power: mechanical power in = hydraulic power out
    assert close(result["V(shaft)"] * result["I(GYpump)"], Q**2 * (Rpipe + Rret), atol=1e-9)


def test_pump_at_constant_speed_against_a_pipe():
    w, D, R = 100.0, 2e-6, 5e9
    result = op(f"pump at speed\nVw shaft 0 {w}\nGYp shaft 0 p 0 {-1 / D}\nRpipe p 0 {R}\n"
                ".domain rotational shaft\n.domain fluid p\n.save V(p) I(Rpipe) I(Vw)\n")
    Q = D * w
    assert close(result["I(Rpipe)"], Q)
    assert close(result["V(p)"], Q * R, atol=1e-6)
    # the speed source supplies the pump torque D*P out of its + node (SPICE sign: negative)
    assert close(result["I(Vw)"], -D * Q * R)
    units = dict(zip(result.names, result.units, strict=True))
    assert units == {"V(p)": "Pa", "I(Rpipe)": "m^3/s", "I(Vw)": "N*m"}


def test_hydraulic_ram_pushes_a_damper():
    P, A, b = 2e6, 1e-3, 4e4
    result = op(f"ram\nVp p 0 {P}\nGYram p 0 rod 0 {-1 / A}\nCm rod 0 m=10\nRb rod 0 b={b}\n"
                ".domain fluid p\n.save V(rod) I(Vp) I(Rb)\n")
    v = A * P / b  # force A P balanced by the damper b v
    assert close(result["V(rod)"], v)
    assert close(result["I(Rb)"], A * P)
    assert close(result["I(Vp)"], -A * v)  # the ram draws Q = A v out of the source


def test_hydraulic_pump_example_from_its_parameters(read_netlist):
    circuit = read_netlist(NETLISTS / "hydraulic_pump.net", saves=["V(shaft)", "V(tank)"])
    p = parameters(circuit)
    w = p["tm"] / (p["bbear"] + p["d"] ** 2 * (p["rline"] + p["rorif"]))
    result = mna.operating_point(circuit)
    assert close(result["V(shaft)"], w)
    assert close(result["V(tank)"], p["d"] * w * p["rorif"], atol=1e-6)


# -- heated wall ---------------------------------------------------------------------------------


def test_heated_wall_layers_in_series():
    q, Tamb, R = 800.0, 288.15, (0.03, 0.12, 0.005)
    result = op(f"""wall
.domain thermal in
Iheat 0 in {q}
Rbrick in mid {R[0]}
Rins mid out {R[1]}
Rconv out amb {R[2]}
Vamb amb 0 {Tamb}
Cin in 0 1e6
Cmid mid 0 1e6
Cout out 0 1e4
.save V(in) V(mid) V(out) I(Rins) I(Vamb) I(Iheat)
""")
    assert close(result["V(out)"], Tamb + q * R[2])
    assert close(result["V(mid)"], Tamb + q * (R[2] + R[1]))
    assert close(result["V(in)"], Tamb + q * sum(R))
    assert close(result["I(Rins)"], q)
    assert close(result["I(Vamb)"], q)  # q flows into Vamb's + node
    assert close(result["I(Iheat)"], q)
    assert set(result.units) == {"K", "W"}


def test_heater_inside_a_wall_between_two_ambients():
    q, Ti, To, R1, R2 = 300.0, 293.15, 263.15, 0.05, 0.2
    result = op(f".domain thermal h\nIq 0 h {q}\nRi h ti {R1}\nRo h to {R2}\nVi ti 0 {Ti}\n"
                f"Vo to 0 {To}\nC1 h 0 5e5\n.save V(h) I(Ri) I(Ro)\n")
    Th = (Ti / R1 + To / R2 + q) / (1 / R1 + 1 / R2)
    assert close(result["V(h)"], Th)
    assert close(result["I(Ri)"] + result["I(Ro)"], q)
    assert close(result["I(Ro)"], (Th - To) / R2)


def test_thermal_wall_example_from_its_parameters(read_netlist):
    circuit = read_netlist(NETLISTS / "thermal_wall.net", saves=["V(in)", "V(mid)", "V(out)"])
    p = parameters(circuit)
    r_brick = p["l1"] / (p["k1"] * p["a"])
    r_ins = p["l2"] / (p["k2"] * p["a"])
    r_conv = 1 / (p["h"] * p["a"])
    result = mna.operating_point(circuit)
    assert close(result["V(out)"], p["tamb"] + p["q"] * r_conv)
    assert close(result["V(mid)"], p["tamb"] + p["q"] * (r_conv + r_ins))
    assert close(result["V(in)"], p["tamb"] + p["q"] * (r_conv + r_ins + r_brick))


# -- mechanical ---------------------------------------------------------------------------------


def test_quarter_car_springs_carry_the_weights(read_netlist):
    circuit = read_netlist(NETLISTS / "quarter_car.net", saves=["I(Lsusp)", "I(Ltyre)", "V(body)"])
    p = parameters(circuit)
    result = mna.operating_point(circuit)
    assert close(result["I(Lsusp)"], p["ms"] * p["grav"])
    assert close(result["I(Ltyre)"], (p["ms"] + p["mu"]) * p["grav"])
    assert close(result["V(body)"], 0.0)


def test_two_inertias_on_a_shaft():
    T, b1, b2, k = 3.0, 0.05, 0.25, 40.0
    result = op(f"shaft\nIt 0 w1 {T}\nCJ1 w1 0 J=0.1\nRb1 w1 0 b={b1}\nLs w1 w2 k={k}\n"
                f"CJ2 w2 0 J=0.2\nRb2 w2 0 b={b2}\n.save V(w1) V(w2) I(Ls)\n")
    w = T / (b1 + b2)
    assert close(result["V(w1)"], w)
    assert close(result["V(w2)"], w)
    assert close(result["I(Ls)"], b2 * w)


@pytest.mark.parametrize("Fdrive, k", [(10.0, 200.0), (-3.0, 7.0)])
def test_spring_holds_a_pushed_mass(Fdrive, k):
    result = op(f"msd\nIp 0 x {Fdrive}\nCm x 0 m=2\nLk x 0 k={k}\nRb x 0 b=4\n"
                ".save V(x) I(Lk) I(Rb)\n")
    assert close(result["V(x)"], 0.0)
    assert close(result["I(Lk)"], Fdrive)
    assert math.isclose(result["I(Rb)"], 0.0, abs_tol=1e-12)
