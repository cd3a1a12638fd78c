"""Every element's stamp against a matrix derived by hand.

Unknowns are numbered nodes first (in order of first appearance), then the extra unknowns of
elements in element order; inputs (columns of B) in the order sources are stamped. Rows of
node equations read "sum of through variables leaving the node = injected", so
``G x + C x' = B u``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

import mna

EXACT = dict(rtol=1e-12, atol=1e-15)


def assembled(body: str) -> mna.DescriptorSystem:
    return mna.assemble(mna.read_string("stamp test\n" + body))


def dense(system):
    return system.G.toarray(), system.C.toarray(), system.B.toarray()


def check(system, unknowns, G, C, B, units=None):
    assert system.unknowns == tuple(unknowns)
    g, c, b = dense(system)
    np.testing.assert_allclose(g, np.array(G, float), **EXACT)
    np.testing.assert_allclose(c, np.array(C, float), **EXACT)
    np.testing.assert_allclose(b, np.array(B, float).reshape(b.shape), **EXACT)
    if units is not None:
        assert system.units == tuple(units)


# -- R, C, L: electrical ---------------------------------------------------------------------


def test_resistor_four_entry_pattern_and_R_keyword():
    s = assembled("R1 a b 4\nR2 b 0 R=2\nR3 a 0 1\n")
    check(s, ["V(a)", "V(b)"], [[1 / 4 + 1, -1 / 4], [-1 / 4, 1 / 4 + 1 / 2]],
          np.zeros((2, 2)), np.zeros((2, 0)), units=["V", "V"])


def test_capacitor_four_entry_pattern_in_C():
    s = assembled("C1 a b 2u\nR1 a 0 1\nR2 b 0 1\nC2 b 0 C=3u\n")
    check(s, ["V(a)", "V(b)"], [[1, 0], [0, 1]], [[2e-6, -2e-6], [-2e-6, 5e-6]], np.zeros((2, 0)))


def test_inductor_branch_unknown():
    # x = [V(a), V(b), I(L1)]; row I(L1): -(V(a) - V(b)) + L I' = 0
    s = assembled("L1 a b 10m\nR1 a 0 2\nR2 b 0 5\n")
    check(s, ["V(a)", "V(b)", "I(L1)"],
          [[0.5, 0, 1], [0, 0.2, -1], [-1, 1, 0]],
          [[0, 0, 0], [0, 0, 0], [0, 0, 0.01]], np.zeros((3, 0)), units=["V", "V", "A"])


def test_inductor_L_keyword_equals_bare_value():
    bare = dense(assembled("L1 a 0 3m\nR1 a 0 1\n"))
    keyword = dense(assembled("L1 a 0 L=3m\nR1 a 0 1\n"))
    for x, y in zip(bare, keyword, strict=True):
        np.testing.assert_array_equal(x, y)


# -- R, C, L: mechanical, fluid, thermal ------------------------------------------------------


def test_translational_damper_mass_spring():
    # m= places node v in the translational domain; b= is a conductance b, k= an inductance 1/k
    s = assembled("C1 v 0 m=2\nR1 v w b=3\nR2 w 0 b=5\nL1 v 0 k=200\n")
    check(s, ["V(v)", "V(w)", "I(L1)"],
          [[3, -3, 1], [-3, 8, 0], [-1, 0, 0]],
          [[2, 0, 0], [0, 0, 0], [0, 0, 1 / 200]], np.zeros((3, 0)),
          units=["m/s", "m/s", "N"])


def test_rotational_inertia_damper_spring():
    s = assembled("C1 w 0 J=0.5\nR1 w 0 b=0.1\nL1 w 0 k=20\n")
    check(s, ["V(w)", "I(L1)"], [[0.1, 1], [-1, 0]], [[0.5, 0], [0, 1 / 20]], np.zeros((2, 0)),
          units=["rad/s", "N*m"])


def test_rotational_domain_by_card_with_ambiguous_keywords():
    # b= and k= belong to two domains, so they need .domain (or a J= somewhere)
    s = assembled(".domain rotational w\nL1 w 0 k=50\nR1 w 0 b=4\n")
    check(s, ["V(w)", "I(L1)"], [[4, 1], [-1, 0]], [[0, 0], [0, 0.02]], np.zeros((2, 0)),
          units=["rad/s", "N*m"])


def test_fluid_resistance_capacitance_inertance():
    # I= places the nodes in the fluid domain; R= is P = R*Q, C= is a capacitance
    s = assembled("L1 p q I=1e7\nR1 q 0 R=2e8\nC1 p 0 C=1e-6\nR2 p 0 1e8\n")
    check(s, ["V(p)", "V(q)", "I(L1)"],
          [[1e-8, 0, 1], [0, 5e-9, -1], [-1, 1, 0]],
          [[1e-6, 0, 0], [0, 0, 0], [0, 0, 1e7]], np.zeros((3, 0)),
          units=["Pa", "Pa", "m^3/s"])


def test_thermal_resistance_capacitance_and_sources():
    s = assembled(".domain thermal t1\nR1 t1 t2 R=0.5\nC1 t1 0 C=1e3\nV1 t2 0 293.15\n"
                  "I1 0 t1 10\n")
    check(s, ["V(t1)", "V(t2)", "I(V1)"],
          [[2, -2, 0], [-2, 2, 1], [0, 1, 0]],
          [[1e3, 0, 0], [0, 0, 0], [0, 0, 0]],
          [[0, 1], [0, 0], [1, 0]], units=["K", "K", "W"])
    assert [i.name for i in s.inputs] == ["V1", "I1"]
    assert [i.unit for i in s.inputs] == ["K", "W"]
    assert [i.dc for i in s.inputs] == [293.15, 10.0]


@pytest.mark.parametrize(
    "body, message",
    [
        ("C1 v 0 m=2\nR1 v 0 R=3\n", r"r= is not a parameter of R in the translational domain"),
        ("L1 p 0 I=1\nR1 p 0 b=3\n", r"b= is not a parameter of R in the fluid domain"),
        ("C1 v 0 m=2\nL1 v 0 I=3\n", r"domain conflict"),
        ("L1 a 0 k=5\nR1 a 0 1\n", r"k= is not a parameter of L in the electrical domain"),
        ("R1 a 0 1 R=2\n", r"give one value"),
    ],
)
def test_keyword_of_another_domain_is_refused(body, message):
    with pytest.raises(mna.NetlistError, match=message):
        assembled(body)


# -- independent sources ------------------------------------------------------------------------


def test_across_source_between_two_nodes():
    # I(V1) leaves n+ into the source: +1 in row a, -1 in row b; row I(V1): V(a) - V(b) = u
    s = assembled("V1 a b DC 5 AC 2 90\nR1 a 0 1\nR2 b 0 4\n")
    check(s, ["V(a)", "V(b)", "I(V1)"],
          [[1, 0, 1], [0, 0.25, -1], [1, -1, 0]], np.zeros((3, 3)), [[0], [0], [1]])
    (signal,) = s.inputs
    assert signal.dc == 5.0
    assert abs(signal.ac - 2j) < 1e-12


def test_through_source_direction():
    # I1 a b 2: 2 flows a -> source -> b, so it leaves node a (-1) and enters node b (+1)
    s = assembled("I1 a b 2\nR1 a 0 1\nR2 b 0 1\n")
    check(s, ["V(a)", "V(b)"], [[1, 0], [0, 1]], np.zeros((2, 2)), [[-1], [1]])
    assert s.inputs[0].dc == 2.0


# -- controlled sources -------------------------------------------------------------------------


def test_vcvs_E():
    # row I(E1): V(c) - 3 (V(a) - V(b)) = 0
    s = assembled("E1 c 0 a b 3\nR1 a 0 1\nR2 b 0 1\nR3 c 0 1\n")
    check(s, ["V(c)", "V(a)", "V(b)", "I(E1)"],
          [[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [1, -3, 3, 0]],
          np.zeros((4, 4)), np.zeros((4, 0)))


def test_vccs_G():
    # 0.5 (V(a) - V(b)) flows c -> G1 -> d: leaves c, enters d
    s = assembled("G1 c d a b 0.5\nR1 a 0 1\nR2 b 0 1\nR3 c 0 1\nR4 d 0 1\n")
    check(s, ["V(c)", "V(d)", "V(a)", "V(b)"],
          [[1, 0, 0.5, -0.5], [0, 1, -0.5, 0.5], [0, 0, 1, 0], [0, 0, 0, 1]],
          np.zeros((4, 4)), np.zeros((4, 0)))


def test_cccs_F():
    # 4 I(V1) flows c -> F1 -> d
    s = assembled("V1 a 0 1\nR1 a 0 1\nF1 c d V1 4\nR3 c 0 1\nR4 d 0 1\n")
    check(s, ["V(a)", "V(c)", "V(d)", "I(V1)"],
          [[1, 0, 0, 1], [0, 1, 0, 4], [0, 0, 1, -4], [1, 0, 0, 0]],
          np.zeros((4, 4)), [[0], [0], [0], [1]])


def test_ccvs_H():
    # row I(H1): V(c) - V(d) - 7 I(V1) = 0
    s = assembled("V1 a 0 1\nR1 a 0 1\nH1 c d V1 7\nR3 c 0 1\nR4 d 0 1\n")
    check(s, ["V(a)", "V(c)", "V(d)", "I(V1)", "I(H1)"],
          [[1, 0, 0, 1, 0], [0, 1, 0, 0, 1], [0, 0, 1, 0, -1], [1, 0, 0, 0, 0],
           [0, 1, -1, -7, 0]],
          np.zeros((5, 5)), [[0], [0], [0], [1], [0]])


def test_controlled_source_needs_a_through_unknown():
    with pytest.raises(mna.NetlistError, match=r"F1: controlling element R1 has no through"):
        assembled("V1 a 0 1\nR1 a 0 1\nF1 c 0 R1 2\nR2 c 0 1\n")
    with pytest.raises(mna.NetlistError, match=r"'nope' is not in the circuit"):
        assembled("V1 a 0 1\nR1 a 0 1\nH1 c 0 nope 2\nR2 c 0 1\n")


# -- coupled inductors -------------------------------------------------------------------------


def test_mutual_inductance_K():
    # M = k sqrt(L1 L2) = 0.5 sqrt(2*8) = 2 in C at (I(L1), I(L2)) and (I(L2), I(L1))
    s = assembled("L1 a 0 2\nL2 b 0 8\nR1 a 0 1\nR2 b 0 1\nK1 L1 L2 0.5\n")
    check(s, ["V(a)", "V(b)", "I(L1)", "I(L2)"],
          [[1, 0, 1, 0], [0, 1, 0, 1], [-1, 0, 0, 0], [0, -1, 0, 0]],
          [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 2, 2], [0, 0, 2, 8]], np.zeros((4, 0)))


def test_mutual_of_springs_uses_analog_values():
    # springs k1 = 4, k2 = 16: analog L = 1/4, 1/16; M = 0.5 sqrt(1/64) = 1/16
    s = assembled(".domain translational a b\nL1 a 0 k=4\nL2 b 0 k=16\nR1 a 0 b=1\n"
                  "R2 b 0 b=1\nK1 L1 L2 0.5\n")
    c = s.C.toarray()
    np.testing.assert_allclose(c[2:, 2:], [[0.25, 1 / 16], [1 / 16, 1 / 16]], **EXACT)


@pytest.mark.parametrize("k", ["0", "1.5", "-2"])
def test_coupling_coefficient_range(k):
    with pytest.raises(mna.NetlistError, match=r"0 < \|k\| <= 1"):
        assembled(f"L1 a 0 2\nL2 b 0 8\nR1 a 0 1\nR2 b 0 1\nK1 L1 L2 {k}\n")


def test_coupling_needs_inductors():
    with pytest.raises(mna.NetlistError, match=r"'r1' is not an inductor"):
        assembled("L1 a 0 2\nR1 a 0 1\nK1 L1 R1 0.5\n")


# -- two-port couplers ---------------------------------------------------------------------------


def test_transformer_TF_between_electrical_and_rotational():
    # x = [V(e), V(w), I(TF1)]; through(b) = -n*I(TF1) enters w; row: V(e) - n V(w) = 0
    n = 0.05
    s = assembled(f"V1 e 0 24\nTF1 e 0 w 0 {n}\nC1 w 0 J=1e-4\nR1 w 0 b=2\n")
    check(s, ["V(e)", "V(w)", "I(V1)", "I(TF1)"],
          [[0, 0, 1, 1], [0, 2, 0, -n], [1, 0, 0, 0], [1, -n, 0, 0]],
          [[0, 0, 0, 0], [0, 1e-4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
          [[0], [0], [1], [0]], units=["V", "rad/s", "A", "A"])


def test_gyrator_GY_between_rotational_and_fluid():
    # x = [V(w), V(p), I(GY1), I(GY1:b)]; rows: V(w) - r I(b) = 0, V(p) + r I(a) = 0
    r = -5e5
    s = assembled(f"I1 0 w 10\nC1 w 0 J=0.01\nGY1 w 0 p 0 {r}\nR1 p 0 1e9\n.domain fluid p\n")
    check(s, ["V(w)", "V(p)", "I(GY1)", "I(GY1:b)"],
          [[0, 0, 1, 0], [0, 1e-9, 0, 1], [1, 0, 0, -r], [0, 1, r, 0]],
          [[0.01, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
          [[1], [0], [0], [0]], units=["rad/s", "Pa", "N*m", "m^3/s"])


def test_coupler_ratio_zero_is_refused():
    with pytest.raises(mna.NetlistError, match="ratio must be non-zero"):
        assembled("V1 a 0 1\nTF1 a 0 b 0 0\nR1 b 0 1\n")


def _port_solutions(system, name, ports, count, rng):
    """Random points satisfying a two-port's constraint rows; returns, per point, the across
    and through variables of ports a and b, with through(x) entering port x at its + node.

    `ports` = ((a+, a-), (b+, b-)) as unknown indices (None for ground). The element's own
    columns are its extra unknowns ``I(name...)``; its constraint rows are those unknowns'
    rows. The through variable entering a port's + node is the
    element's term in that node's KCL row: G[node, branches] @ x_branches.
    """
    g = system.G.toarray()
    columns = sorted({i for port in ports for i in port if i is not None})
    branches = [i for i, u in enumerate(system.unknowns) if u.startswith(f"I({name}")]
    used = columns + branches
    constraint = g[np.ix_(branches, used)]
    basis = scipy.linalg.null_space(constraint)
    assert basis.shape[1] == len(columns), "each constraint row fixes one variable"
    points = []
    for _ in range(count):
        x = np.zeros(system.size + 1)  # the last entry stands for ground, always 0
        x[used] = basis @ rng.normal(size=basis.shape[1])
        points.append([
            (x[plus if plus is not None else -1] - x[minus if minus is not None else -1],
             g[plus, branches] @ x[branches])
            for plus, minus in ports
        ])
    return points


@pytest.mark.parametrize("ratio", [0.05, -3.0, 2.5])
def test_transformer_equations_and_power_conservation(ratio):
    s = assembled(f"TF1 a1 a2 b1 b2 {ratio}\nR1 a1 0 1\nR2 a2 0 2\nR3 b1 0 3\nR4 b2 0 4\n")
    ports = ((0, 1), (2, 3))
    points = _port_solutions(s, "TF1", ports, 20, np.random.default_rng(1))
    for (va, ia), (vb, ib) in points:
        assert math.isclose(va, ratio * vb, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(ia, -ib / ratio, rel_tol=1e-9, abs_tol=1e-12)
        assert abs(va * ia + vb * ib) <= 1e-12 * (abs(va * ia) + 1)


@pytest.mark.parametrize("ratio", [-5e5, 0.3, 7.0])
def test_gyrator_equations_and_power_conservation(ratio):
    s = assembled(f"GY1 a1 a2 b1 b2 {ratio}\nR1 a1 0 1\nR2 a2 0 2\nR3 b1 0 3\nR4 b2 0 4\n")
    ports = ((0, 1), (2, 3))
    points = _port_solutions(s, "GY1", ports, 20, np.random.default_rng(2))
    for (va, ia), (vb, ib) in points:
        assert math.isclose(va, ratio * ib, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(ia, -vb / ratio, rel_tol=1e-9, abs_tol=1e-12)
        assert abs(va * ia + vb * ib) <= 1e-12 * (abs(va * ia) + 1)


def test_transformer_with_grounded_ports_conserves_power():
    s = assembled("V1 e 0 24\nTF1 e 0 w 0 0.05\nC1 w 0 J=1e-4\nR1 w 0 b=2\n")
    for (va, ia), (vb, ib) in _port_solutions(s, "TF1", ((0, None), (1, None)), 10,
                                               np.random.default_rng(3)):
        assert abs(va * ia + vb * ib) <= 1e-12 * (abs(va * ia) + 1)


def test_an_assembled_circuit_is_freed_by_reference_counting():
    """Nothing that assembly makes refers back to itself: a circuit and its elements go as
    soon as they are dropped, not at a later garbage collection (after a large transient,
    that collection took a tenth of a second at the end of `mna run`)."""
    import gc
    import weakref

    circuit = mna.read_string("freed\nV1 a 0 1\nR1 a b 1k\nC1 b 0 1u\nL1 b 0 1m\n.op\n")
    mna.run(circuit)
    element = weakref.ref(circuit.elements[1])
    enabled = gc.isenabled()
    gc.disable()
    try:
        del circuit
        assert element() is None
    finally:
        if enabled:
            gc.enable()


def test_plain_resistors_and_capacitors_stamped_as_arrays_match_their_own_stamps(monkeypatch):
    """A resistor or capacitor given by its number alone is stamped with the others of its
    class as arrays (after the others: sums in one place move by their rounding only); the
    noise analysis's assembly stamps every one by itself."""
    circuit = mna.read_string(
        "plain stamps\n.param r=3k\nV1 a 0 1\nR1 a b 1k\nR2 b 0 {r}\nR3 b c 2k tc1=1e-3\n"
        "C1 b 0 1p\nC2 c 0 2p IC=0.5\nR4 c 0 5k m=2\nR5 c d 4k\nC3 d 0 {2*r*1e-15}\n"
        "Rmech v 0 b=3\nCm v 0 m=2\nLk v 0 k=10\nI1 0 v 1\nC4 a d 3p\n.temp 50\n"
        ".save V(b) I(R1) I(C1) I(R3) I(C4)\n.op\n")
    plain = [e.name for e in circuit.elements if e.plain_value() is not None]
    assert plain == ["R1", "C1", "C2", "R5", "C4"]
    together = mna.assemble(circuit)
    with monkeypatch.context() as patch:
        patch.setattr("mna.elements.base.Element.plain_value", lambda self: None)
        alone = mna.assemble(circuit)
    assert not together.noise and mna.assemble(circuit, noise=True).noise
    for matrix in ("g", "c", "b", "p", "q", "r"):
        np.testing.assert_allclose(getattr(together, matrix).dense(),
                                   getattr(alone, matrix).dense(), rtol=1e-15, atol=0)


def test_a_branch_from_a_node_to_itself_stamps_nothing():
    """Its four entries would cancel, leaving their rounding in the node's sum (1e-8 of
    V(b) for a 1 uOhm resistor)."""
    body = "V1 a 0 1\nR1 a b 1k\nR3 b 0 1k tc1=1e-3\n"
    looped = mna.read_string("self-loops\n" + body + "R2 b B 1u\nC1 b b 1\nRp b b 1k tc1=1\n")
    plain = mna.read_string("no self-loops\n" + body)
    for matrix in ("g", "c"):
        np.testing.assert_array_equal(getattr(mna.assemble(looped), matrix).dense(),
                                      getattr(mna.assemble(plain), matrix).dense())
    assert mna.operating_point(looped)["V(b)"] == 0.5
