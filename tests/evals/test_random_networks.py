"""Random nonlinear networks of the thermal, fluid and translational domains (radiation,
convection, orifices, cubic springs, smooth friction, with linear storage, dissipators,
inertances and stiffnesses, fixed potentials and sinusoidal sources) against
`scipy.integrate.solve_ivp` of the same laws (Radau at rtol 1e-11), at every accepted point.

Each network is drawn from its seed and written twice, as a netlist and as the rates
``C dV/dt = sum of inflows`` plus an internal state per spring or inertance, so a wrong stamp,
sign, law or step shows as a difference. They found the unchecked first step (a node cooling
by radiation at 3000 K/s was 7 K off after it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import mna

SIGMA = 5.670374419e-8
SEEDS = range(12)


@dataclass
class Network:
    """What a seed draws: nodes with their storage and start, fixed potentials, elements
    (``flow(v_a, v_b, state)`` from a to b, with an internal state of `rates` where given)
    and sinusoidal sources into nodes."""

    domain: str
    storage: str
    nodes: dict[str, tuple[float, float]] = field(default_factory=dict)   # capacity, start
    fixed: dict[str, float] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    elements: list[tuple] = field(default_factory=list)   # a, b, flow, start, rates
    sources: list[tuple[str, float, float, float]] = field(default_factory=list)
    tstop: float = 1.0


class Draw:
    """Values of six significant digits (the netlist's text is the network)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def uniform(self, low: float, high: float) -> float:
        return float(f"{self.rng.uniform(low, high):.6g}")

    def log(self, low: float, high: float) -> float:
        return float(f"{10 ** self.rng.uniform(math.log10(low), math.log10(high)):.6g}")

    def pick(self, choices):
        return choices[int(self.rng.integers(len(choices)))]

    def links(self, net: Network) -> range:
        """Indices of the elements to draw: at least one per node, some more."""
        return range(len(net.nodes) + int(self.rng.integers(0, len(net.nodes) + 2)))

    def pair(self, net: Network, fixed: bool = True) -> tuple[str, str]:
        ends = [*net.nodes, *(net.fixed if fixed else ())]
        a = self.pick(list(net.nodes))
        b = self.pick([*(n for n in ends if n != a), "0"])
        return (a, b) if self.rng.random() < 0.5 else (b, a)


def thermal(draw: Draw) -> Network:
    net = Network("thermal", "C")
    for k in range(int(draw.rng.integers(1, 5))):
        net.nodes[f"t{k}"] = (draw.log(1, 100), draw.uniform(250, 900))
    if draw.rng.random() < 0.6:
        net.fixed["amb"] = draw.uniform(200, 400)
    for k in draw.links(net):
        a, b = draw.pair(net)
        kind = draw.pick(["R", "radiation", "convection"])
        if kind == "R":
            resistor(net, k, a, b, draw.log(0.1, 10))
        elif kind == "radiation":
            eps, area = draw.uniform(0.1, 1), draw.log(0.01, 1)
            net.lines += [f"R{k} {a} {b} rad{k}", f".model rad{k} radiation(eps={eps} area={area})"]
            g = SIGMA * eps * area
            net.elements.append((a, b, lambda va, vb, s, g=g: g * (va**4 - vb**4)))
        else:
            h, area, n = draw.log(1, 50), draw.log(0.01, 1), draw.pick([0.0, 0.25, 0.333333])
            net.lines += [f"R{k} {a} {b} conv{k}",
                          f".model conv{k} convection(h={h} area={area} n={n})"]
            net.elements.append((a, b, lambda va, vb, s, g=h * area, n=n:
                                 g * (va - vb) * abs(va - vb) ** n))
    sources(draw, net, level=(-200, 500), amplitude=(0, 500), frequency=(1e-3, 0.1))
    net.tstop = draw.log(10, 300)
    return net


def fluid(draw: Draw) -> Network:
    net = Network("fluid", "C")
    for k in range(int(draw.rng.integers(1, 4))):
        net.nodes[f"p{k}"] = (draw.log(1e-10, 1e-8), draw.uniform(0, 3e5))
    if draw.rng.random() < 0.7:
        net.fixed["supply"] = draw.uniform(0, 4e5)
    for k in draw.links(net):
        a, b = draw.pair(net)
        kind = draw.pick(["R", "orifice", "I"])
        if kind == "R":
            resistor(net, k, a, b, draw.log(1e8, 1e11))
        elif kind == "orifice":
            cd, area, rho, dpl = (draw.uniform(0.5, 0.9), draw.log(1e-7, 1e-5),
                                  draw.uniform(800, 1200), draw.log(10, 1e4))
            net.lines += [f"R{k} {a} {b} or{k}",
                          f".model or{k} orifice(cd={cd} area={area} rho={rho} dpl={dpl})"]
            g = cd * area * math.sqrt(2 / rho)   # the laminar blend of the orifice's docs
            net.elements.append((a, b, lambda va, vb, s, g=g, dpl=dpl:
                                 g * (va - vb) / ((va - vb) ** 2 + dpl**2) ** 0.25))
        else:
            inertance = draw.log(1e7, 1e9)
            net.lines.append(f"L{k} {a} {b} I={inertance} IC=0")
            net.elements.append((a, b, lambda va, vb, s: s[0], [0.0],
                                 lambda va, vb, s, i=inertance: [(va - vb) / i]))
    sources(draw, net, level=(0, 0), amplitude=(1e-6, 1e-4), frequency=(0.1, 10))
    net.tstop = draw.log(0.1, 1)
    return net


def translational(draw: Draw) -> Network:
    net = Network("translational", "m")
    for k in range(int(draw.rng.integers(1, 4))):
        net.nodes[f"m{k}"] = (draw.log(0.1, 10), draw.uniform(-2, 2))
    for k in draw.links(net):
        a, b = draw.pair(net, fixed=False)
        kind = draw.pick(["k", "b", "spring", "friction"])
        if kind == "k":
            stiffness = draw.log(1, 1000)
            net.lines.append(f"L{k} {a} {b} k={stiffness} IC=0")
            net.elements.append((a, b, lambda va, vb, s: s[0], [0.0],
                                 lambda va, vb, s, k=stiffness: [k * (va - vb)]))
        elif kind == "b":
            damping = draw.log(0.01, 10)
            net.lines.append(f"R{k} {a} {b} b={damping}")
            net.elements.append((a, b, lambda va, vb, s, d=damping: d * (va - vb)))
        elif kind == "spring":
            stiffness, cubic, x0 = draw.log(1, 1000), draw.log(1, 1e4), draw.uniform(-0.1, 0.1)
            net.lines += [f"L{k} {a} {b} sp{k}", f".model sp{k} spring(k={stiffness} "
                          f"k3={cubic} x0={x0})"]
            net.elements.append((a, b, lambda va, vb, s, k=stiffness, k3=cubic:
                                 k * s[0] + k3 * s[0] ** 3, [x0], lambda va, vb, s: [va - vb]))
        else:
            fc = draw.uniform(0.1, 2)
            fs = float(f"{fc + draw.uniform(0, 1):.6g}")
            vs, viscous, vreg = draw.log(0.01, 1), draw.uniform(0, 1), draw.log(0.02, 0.2)
            net.lines += [f"R{k} {a} {b} fr{k}", f".model fr{k} friction(fc={fc} fs={fs} "
                          f"vs={vs} b={viscous} stick=0 vreg={vreg})"]
            net.elements.append((a, b, lambda va, vb, s, fc=fc, fs=fs, vs=vs, d=viscous,
                                 vreg=vreg: math.tanh((va - vb) / vreg)
                                 * (fc + (fs - fc) * math.exp(-(((va - vb) / vs) ** 2)))
                                 + d * (va - vb)))
    sources(draw, net, level=(-1, 1), amplitude=(0, 5), frequency=(0.1, 5))
    net.tstop = draw.log(0.5, 2)
    return net


def resistor(net: Network, k: int, a: str, b: str, resistance: float) -> None:
    net.lines.append(f"R{k} {a} {b} R={resistance}")
    net.elements.append((a, b, lambda va, vb, s: (va - vb) / resistance))


def sources(draw: Draw, net: Network, level, amplitude, frequency) -> None:
    for k in range(int(draw.rng.integers(0, 3))):
        node = draw.pick(list(net.nodes))
        dc, amp, f = draw.uniform(*level), draw.uniform(*amplitude), draw.log(*frequency)
        net.lines.append(f"I{k} 0 {node} SIN({dc} {amp} {f})")
        net.sources.append((node, dc, amp, f))


def netlist(net: Network) -> str:
    lines = [f"random {net.domain} network",
             f".domain {net.domain} {' '.join([*net.nodes, *net.fixed])}",
             *(f"V{name} {name} 0 {value}" for name, value in net.fixed.items()), *net.lines,
             *(f"C{name} {name} 0 {net.storage}={c} IC={v0}" for name, (c, v0) in
               net.nodes.items()),
             ".options reltol=1e-9 abstol=1e-15 chgtol=1e-20",
             f".save {' '.join(f'V({name})' for name in net.nodes)}",
             f".tran {net.tstop / 200:.6g} {net.tstop:.6g} uic"]
    return "\n".join(lines) + "\n"


def reference(net: Network, times: np.ndarray) -> np.ndarray:
    """The potentials of the nodes at `times` by solve_ivp."""
    index = {name: k for k, name in enumerate(net.nodes)}
    capacity = np.array([c for c, _ in net.nodes.values()])
    start, offsets = [v0 for _, v0 in net.nodes.values()], []
    for element in net.elements:
        offsets.append(len(start))
        start += element[3] if len(element) > 3 else []

    def potential(y, name):
        return y[index[name]] if name in index else net.fixed.get(name, 0.0)

    def rates(t, y):
        d, inflow = np.zeros(len(y)), np.zeros(len(index))
        for element, offset in zip(net.elements, offsets, strict=True):
            a, b, flow = element[:3]
            va, vb = potential(y, a), potential(y, b)
            state = y[offset:offset + len(element[3])] if len(element) > 3 else ()
            f = flow(va, vb, state)
            if a in index:
                inflow[index[a]] -= f
            if b in index:
                inflow[index[b]] += f
            if len(element) > 3:
                d[offset:offset + len(state)] = element[4](va, vb, state)
        for node, dc, amp, f in net.sources:
            inflow[index[node]] += dc + amp * math.sin(2 * math.pi * f * t)
        d[:len(index)] = inflow / capacity
        return d

    scale = max(1.0, *(abs(v) for v in start))
    solution = solve_ivp(rates, (0, times[-1]), start, method="Radau", rtol=1e-11,
                         atol=1e-12 * scale, t_eval=times)
    assert solution.success, solution.message
    return solution.y[:len(index)].T


@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_network_follows_solve_ivp(seed):
    net = (thermal, fluid, translational)[seed % 3](Draw(seed))
    (result,) = mna.run(mna.read_string(netlist(net)))
    frame = result.to_dataframe()
    expected = reference(net, frame.index.to_numpy())
    for k, name in enumerate(net.nodes):
        got = frame[f"V({name})"].to_numpy()
        span = max(np.ptp(expected[:, k]), 1e-3 * np.max(np.abs(expected[:, k])))
        assert np.max(np.abs(got - expected[:, k])) < 1e-4 * span, name
