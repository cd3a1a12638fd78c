"""Singular DC systems are named by graph search; solvable ones get their correct values.

A node reached only through A-type elements must get its correct DC value or a diagnosis
that names it, never a silently wrong number.
"""

from __future__ import annotations

import pytest

import mna
from mna.errors import SingularSystemError, TopologyError


def op(body: str) -> mna.OperatingPointResult:
    return mna.operating_point(mna.read_string("diagnostics test\n" + body))


@pytest.mark.parametrize(
    "body, named",
    [
        # capacitive divider: V(b) has no DC value
        ("V1 a 0 1\nC1 a b 1u\nC2 b 0 1u\n.op\n", ["b", "C1", "C2"]),
        # b is only the control input of E1 besides C1: E1 draws nothing from it
        ("V1 a 0 1\nC1 a b 1u\nE1 c 0 b 0 2\nR1 c 0 1\n", ["b", "C1"]),
        # a mass (open at DC) and the shaft spring to another mass: both float at DC
        ("I1 0 x 1\nCm x 0 m=1\nLk x y k=5\nCm2 y 0 m=2\n", ["x, y", "I1"]),
        # a G output node with only a capacitor: a cut-set of a through source at DC
        ("V1 a 0 1\nR1 a 0 1\nG1 0 b a 0 1m\nC1 b 0 1u\n", ["b", "G1", "C1"]),
        # an F output into a fluid tank alone
        ("V1 a 0 1\nR1 a 0 1\nF1 0 p V1 2\nCt p 0 1e-9\n.domain fluid p\n", ["p", "F1"]),
    ],
)
def test_no_dc_value_is_diagnosed_by_name(body, named):
    with pytest.raises(TopologyError) as info:
        op(body)
    for name in named:
        assert name in info.value.message
    assert info.value.location is not None


@pytest.mark.parametrize(
    "body, output, expected",
    [
        # through a capacitor and a resistor: the resistor decides
        ("V1 a 0 5\nC1 a b 1u\nR1 b 0 1k\n", "V(b)", 0.0),
        # an inductor alone carries the source current
        ("I1 0 a 2\nL1 a 0 1m\n", "I(L1)", 2.0),
        # a transformer port with only a capacitor on it: no through, V(y) = V(x)/n
        ("V1 a 0 1\nR1 a x 1\nTF1 x 0 y 0 2\nC1 y 0 1u\n", "V(y)", 0.5),
        # a gyrator port with only a capacitor: through(b) = 0 makes V(x) = 0,
        # so through(a) = 1 A and V(y) = -r * through(a)
        ("V1 a 0 1\nR1 a x 1\nGY1 x 0 y 0 2\nC1 y 0 1u\n", "V(y)", -2.0),
        ("V1 a 0 1\nR1 a x 1\nGY1 x 0 y 0 2\nC1 y 0 1u\n", "V(x)", 0.0),
        # a mass on a spring to a velocity source: the spring is a short
        ("Vr r 0 0.3\nLk r x k=100\nCm x 0 m=2\n", "V(x)", 0.3),
    ],
)
def test_nodes_reached_through_storage_get_their_dc_value(body, output, expected):
    assert op(body + f".save {output}\n")[output] == pytest.approx(expected, abs=1e-12)


def test_algebraic_singularity_names_the_unknowns():
    # E1 forces V(b) = V(b): no topological fault, the matrix is singular
    with pytest.raises(SingularSystemError) as info:
        op("V1 a 0 1\nR1 a b 1k\nE1 b 0 b 0 1\n")
    assert "V(b)" in str(info.value)
    assert "V(b)" in info.value.unknowns


def test_parallel_across_sources_through_a_coupler_are_still_a_loop():
    # V1 and V2 fix the same across variable only through TF1's equations: singular
    with pytest.raises(mna.MnaError) as info:
        op("V1 a 0 2\nTF1 a 0 b 0 2\nV2 b 0 1\n")
    text = str(info.value)
    assert any(name in text for name in ("V1", "V2", "TF1", "V(a)", "V(b)", "I(")), text
