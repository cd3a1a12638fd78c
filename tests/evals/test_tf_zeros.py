"""Zeros and gains of the numeric transfer functions (`.ss ... tf`, `StateSpaceResult.zpk`):
from each channel's system pencil and its first non-zero Markov parameter. Checked against
the transfer function itself (``G(s) prod(s - p) / prod(s - z)`` must be the constant gain,
which also pins the number of zeros), against python-control's zeros and frequency response,
and against values derived by hand: no false zeros near 1e20 where G has none, and an exact
zero at s = 0 reported as exactly 0."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import mna
from mna.analysis.state_model import channel_zeros_and_gain

NETLISTS = Path(__file__).resolve().parents[2] / "netlists"
SS_NETLISTS = sorted(p.name for p in NETLISTS.glob("*.net") if ".ss " in p.read_text().lower())
# example netlists without a .ss card: the sources and outputs of one
EXTRA = {"ngspice_deck.net": (["v1", "i1"], ["V(g)", "V(hl)", "I(l1)", "V(mid)"])}

RLC = "series RLC\nV1 in 0 AC 1\nR1 in a 10\nL1 a out 40m\nC1 out 0 1u\n"
INLINE = {
    # 1/(LC) = 1/(40m * 1u) = 2.5e7; across L: s^2 LC / (s^2 LC + s RC + 1), a double zero at 0
    "series_rlc": RLC + ".ss in=V1 out=V(out),V(a,out),I(L1),V(a),V(in,a)\n",
    "rl_across_l": "RL\nV1 in 0 AC 1\nR1 in a 100\nL1 a 0 10m\n.ss in=V1 out=V(a),I(L1)\n",
    "series_c_into_r": "CR\nV1 in 0 AC 1\nC1 in a 1u\nR1 a 0 1k\n.ss in=V1 out=V(a),V(in,a)\n",
    "two_c_parallel": "two C\nV1 in 0 AC 1\nR1 in a 1k\nC1 a 0 1u\nC2 a 0 3u\n"
                      ".ss in=V1 out=V(a),I(C2)\n",
    "c_across_v": "C across V\nV1 in 0 AC 1\nC1 in 0 1u\nR1 in out 2k\nC2 out 0 5u\n"
                  ".ss in=V1 out=I(V1),V(out)\n",
    "two_l_series": "L cut-set\nI1 0 a AC 1\nL1 a b 2m\nL2 b c 3m\nR1 c 0 50\n"
                    ".ss in=I1 out=V(a),I(L2)\n",
    "c_only_node": "C-only node\nV1 in 0 AC 1\nR1 in a 1k\nC1 a b 1u\nC2 b 0 2u\n"
                   ".ss in=V1 out=V(b),V(a)\n",
    "c_loop": "C loop\nV1 in 0 AC 1\nC1 in a 1u\nC2 a 0 3u\nR1 a 0 1k\n.ss in=V1 out=V(a)\n",
    "rc_ladder": "RC ladder\nV1 n0 0 AC 1\n"
                 + "".join(f"R{k} n{k - 1} n{k} 1k\nC{k} n{k} 0 1n\n" for k in range(1, 6))
                 + ".ss in=V1 out=V(n5),V(n3),I(R1),I(C5)\n",
    "bridged_t": "bridged T notch\nV1 in 0 AC 1\nR1 in m 1k\nR2 m out 1k\nC1 in out 10n\n"
                 "C2 out 0 10n\nC3 m 0 40n\nRL out 0 100k\n.ss in=V1 out=V(out),V(m)\n",
}
SYSTEMS = ([f"netlist:{name}" for name in SS_NETLISTS + sorted(EXTRA)]
           + [f"inline:{name}" for name in INLINE])


def models(key: str) -> list:
    """The numeric models of one system: a netlist's .ss cards, or one extracted here."""
    kind, name = key.split(":")
    if kind == "inline":
        circuit = mna.read_string(INLINE[name])
    else:
        with warnings.catch_warnings():  # ngspice_deck.net: its .control block is skipped
            warnings.simplefilter("ignore")
            circuit = mna.read(NETLISTS / name)
        if name in EXTRA:
            return [mna.state_space(circuit, *EXTRA[name])]
    return [mna.perform(card, circuit) for card in circuit.analyses
            if card.card == ".ss" and not card.symbolic]


def channel(model, output: str, source: str | None = None) -> dict:
    return next(t for t in model.zpk()
                if t["output"] == output and (source is None or t["input"] == source))


def frequency_scale(item) -> float:
    """The system's: its largest pole, or zero, or 1."""
    return max(np.abs(item["poles"]).max(initial=0), np.abs(item["zeros"]).max(initial=0), 1.0)


def sample_points(item) -> np.ndarray:
    """Complex s away from every pole and zero, of three magnitudes (a wrong number of zeros
    shows as a factor s that differs between them)."""
    scale = frequency_scale(item)
    return scale * np.array([0.7 * np.exp(2.5j), 2.0 * np.exp(2.0j), 5.0 * np.exp(1.0j)])


def zpk_value(item, s):
    return item["gain"] * np.prod(s - item["zeros"]) / np.prod(s - item["poles"])


def nearest_distance(zeros, reference, floor) -> float:
    """The largest relative distance from a zero of one set to the nearest of the other (both
    ways), relative to the reference zero's magnitude or `floor`, whichever is larger."""
    worst = 0.0
    for z in zeros:
        k = np.argmin(np.abs(reference - z))
        worst = max(worst, abs(reference[k] - z) / max(abs(reference[k]), floor))
    for z in reference:
        k = np.argmin(np.abs(zeros - z))
        worst = max(worst, abs(zeros[k] - z) / max(abs(z), floor))
    return worst


# -- the circuit and exact zeros at s = 0 -----------------------------------------------

def test_series_rlc_across_c_has_no_zeros_and_gain_one_over_lc():
    """``V(out)/V1 = (1/LC) / (s^2 + s R/L + 1/LC)``: no finite zeros (ss2tf and np.roots gave
    a zero at 5.5e19 and a gain of -4.5e-13)."""
    (model,) = models("inline:series_rlc")
    item = channel(model, "V(out)")
    assert item["zeros"].size == 0
    assert item["gain"] == pytest.approx(1 / (40e-3 * 1e-6), rel=1e-9)
    assert np.sort_complex(item["poles"]) == pytest.approx(
        np.sort_complex(np.roots([1, 10 / 40e-3, 2.5e7])), rel=1e-12)
    text = model.with_transfer_functions().to_text()
    assert "V(out)/V1: gain 2.5e+07, zeros [], poles" in text
    data = model.to_dict()["tf"][0]
    assert data["output"] == "V(out)" and data["zeros"] == []
    assert data["gain"] == pytest.approx(2.5e7, rel=1e-9)


@pytest.mark.parametrize("key,output,zeros,gain", [
    ("inline:series_rlc", "V(a,out)", 2, 1.0),         # across L: s^2 / (s^2 + sR/L + 1/LC)
    ("inline:series_rlc", "I(L1)", 1, 25.0),           # s/L / (...)
    ("inline:series_rlc", "V(in,a)", 1, 250.0),        # across R: s R/L / (...)
    ("inline:rl_across_l", "V(a)", 1, 1.0),            # s / (s + R/L)
    ("inline:series_c_into_r", "V(a)", 1, 1.0),        # s / (s + 1/RC)
    ("inline:two_c_parallel", "I(C2)", 1, 0.75e-3),    # s C2 / (1 + sR(C1 + C2))
    ("inline:c_loop", "V(a)", 1, 0.25),                # C1 s / ((C1 + C2) s + 1/R)
    ("netlist:translational_msd.net", "V(x)", 1, 0.5),  # s/m / (s^2 + s b/m + k/m)
])
def test_an_exact_zero_at_the_origin_is_exactly_zero(key, output, zeros, gain):
    (model,) = models(key)
    item = channel(model, output)
    assert item["zeros"].size == zeros
    assert np.all(item["zeros"].real == 0.0) and np.all(item["zeros"].imag == 0.0)
    assert item["gain"] == pytest.approx(gain, rel=1e-9)
    model.with_transfer_functions()
    line = next(line for line in model.to_text().splitlines()
                if line.strip().startswith(f"{output}/"))
    assert f"zeros [{', '.join(['0'] * zeros)}]" in line
    entry = next(t for t in model.to_dict()["tf"] if t["output"] == output)
    assert entry["zeros"] == [[0.0, 0.0]] * zeros


def test_improper_channel_of_a_capacitor_across_the_source():
    """``I(V1) = -(s C1 + (1 - v)/R)``, ``v = 1/(1 + s R C2)``: F = -C1, so the gain is -C1
    and the zeros are 0 and -(C1 + C2)/(R C1 C2) = -600."""
    (model,) = models("inline:c_across_v")
    item = channel(model, "I(V1)")
    assert item["gain"] == pytest.approx(-1e-6, rel=1e-12)
    zeros = np.sort_complex(item["zeros"])
    assert zeros[1] == 0.0 and zeros[0] == pytest.approx(-600.0, rel=1e-12)


def test_a_channel_that_is_identically_zero_has_no_zeros_and_gain_zero():
    """ngspice_deck.net: i1 drives only node g, which nothing else senses."""
    (model,) = models("netlist:ngspice_deck.net")
    for output in ("V(hl)", "I(l1)", "V(mid)"):
        item = channel(model, output, "i1")
        assert item["gain"] == 0.0 and item["zeros"].size == 0
        assert np.all(model.frequency_response(sample_points(item))[:, model.outputs.index(
            output), 1] == 0)
    zeros, gain = channel_zeros_and_gain(np.diag([-1.0, -2.0]), np.array([1.0, 0.0]),
                                         np.array([0.0, 1.0]), 0.0, np.zeros(2), 0.0)
    assert gain == 0.0 and zeros.size == 0


def test_a_long_chain_keeps_its_markov_parameter_out_of_underflow():
    """``x_k' = -1000 x_k + x_(k-1)`` for 150 states, input into the first, output the last:
    ``G = 1/(s + 1000)^150``, whose only non-zero Markov parameter c A^149 b = 1 sits 1e450 below
    |c| |A|^149 |b|'s largest entries: no zeros, gain 1 (not an identically zero channel)."""
    n = 150
    A = -1000.0 * np.eye(n) + np.eye(n, k=-1)
    b, c = np.eye(n)[0], np.eye(n)[-1]
    zeros, gain = channel_zeros_and_gain(A, b, c, 0.0, np.zeros(n), 0.0)
    assert zeros.size == 0 and gain == 1.0
    zeros, gain = channel_zeros_and_gain(A, b, c + 1e-3 * np.eye(n)[-2], 0.0, np.zeros(n), 0.0)
    assert gain == pytest.approx(1e-3, rel=1e-12)
    assert zeros == pytest.approx([-2000.0], rel=1e-12)  # G = (1e-3 (s + 1000) + 1)/...


def test_relative_degree_and_gain_from_the_first_markov_parameter():
    """An RC ladder of five sections: V(n5) has relative degree 5 and gain (1/RC)^5 = 1e30;
    V(n3) relative degree 3 (two zeros), gain (1/RC)^3; I(R1) relative degree 0 (gain 1/R)."""
    (model,) = models("inline:rc_ladder")
    assert channel(model, "V(n5)")["zeros"].size == 0
    assert channel(model, "V(n5)")["gain"] == pytest.approx(1e30, rel=1e-9)
    assert channel(model, "V(n3)")["zeros"].size == 2
    assert channel(model, "V(n3)")["gain"] == pytest.approx(1e18, rel=1e-9)
    assert channel(model, "I(R1)")["zeros"].size == 5
    assert channel(model, "I(R1)")["gain"] == pytest.approx(1e-3, rel=1e-9)


# -- every example: against G(s) and python-control ----------------------------------------

@pytest.mark.parametrize("key", SYSTEMS)
def test_zeros_and_gain_reproduce_the_transfer_function(key):
    """``gain prod(s - z) / prod(s - p)`` is ``G(s)`` at points of three magnitudes, so the
    number of zeros is right too; no zero is infinite or huge."""
    for model in models(key):
        for item in model.zpk():
            i, j = model.outputs.index(item["output"]), model.inputs.index(item["input"])
            zeros = item["zeros"]
            assert np.all(np.isfinite(zeros))
            assert np.all(np.abs(zeros) < 1e6 * frequency_scale({**item, "zeros": []}))
            s = sample_points(item)
            G = model.frequency_response(s)[:, i, j]
            if item["gain"] == 0:
                assert np.all(G == 0) and zeros.size == 0
                continue
            want = np.array([zpk_value(item, point) for point in s])
            assert np.abs(G - want).max() <= 1e-9 * np.abs(G).max(), item


@pytest.mark.parametrize("key", SYSTEMS)
def test_zeros_and_gain_match_python_control(key):
    """Each SISO channel of ``control.ss(A, B + A E, C, D + C E)`` (F = 0): the same zeros
    (nearest neighbours, 1e-6 relative, near 0 relative to 1e-6 of the system's frequency
    scale), and the zpk form reproduces python-control's own frequency response."""
    control = pytest.importorskip("control")
    for model in models(key):
        if np.any(model.F):
            continue  # improper: no (A, B, C, D) form; checked against G(s) above
        plant = model.to_control()
        for item in model.zpk():
            i, j = model.outputs.index(item["output"]), model.inputs.index(item["input"])
            if item["gain"] == 0:  # identically zero: the pencil is singular
                continue
            reference = np.asarray(control.zeros(plant[i, j]), dtype=complex)
            zeros = item["zeros"]
            assert len(zeros) == len(reference), (item, reference)
            floor = 1e-6 * frequency_scale(item)
            assert nearest_distance(zeros, reference, floor) <= 1e-6, (item, reference)
            for s in sample_points(item):
                G = complex(plant[i, j](s))
                assert zpk_value(item, s) == pytest.approx(G, rel=1e-9, abs=0)
