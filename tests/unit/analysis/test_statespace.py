"""Unit tests of the .ss card and the reduction's building blocks."""

from __future__ import annotations

import numpy as np
import pytest

import mna
from mna.analysis.reduction import Candidate, preference_order, reduce_sparse, state_order


def test_card_reads_inputs_outputs_and_flags():
    circuit = mna.read_string("t\nV1 a 0 1\nR1 a b 1\nC1 b 0 1\n.ss in=V1 out=V(b),I(R1) tf\n")
    (card,) = circuit.analyses
    assert card.inputs == ("V1",) and card.tf and not card.symbolic
    assert [o.kind for o in card.outputs] == ["V", "I"]


@pytest.mark.parametrize("line,match", [
    (".ss in=V(a) out=V(b)", "in= takes source names"),
    (".ss in=V1 out=R1", "out= takes"),
    (".ss in=V1 out=V(b) fast", "unexpected field"),
    (".ss in=V1 out=V(b) x=1", "unknown parameter"),
])
def test_bad_cards_are_netlist_errors(line, match):
    with pytest.raises(mna.NetlistError, match=match) as error:
        mna.read_string(f"t\nV1 a 0 1\nR1 a b 1\nC1 b 0 1\n{line}\n")
    assert error.value.location.line == 5


def test_unknown_source_is_reported_where_the_card_stands():
    with pytest.raises(mna.NetlistError, match="'R1' is not an independent source") as error:
        mna.read_string("t\nV1 a 0 1\nR1 a b 1\nC1 b 0 1\n.ss in=R1 out=V(b)\n")
    assert error.value.location.line == 5


def test_preference_order_is_a_normal_tree_order():
    cands = [Candidate("I(L1)", "A", "L1", "T", {}), Candidate("V(a)", "V", "C1", "A", {}),
             Candidate("I(L2)", "A", "L2", "T", {}), Candidate("V(b)", "V", "C2", "A", {})]
    assert preference_order(cands) == [1, 3, 2, 0]
    assert state_order([2, 3, 0], cands) == (3, 0, 2)


def test_sparse_reduction_of_one_rc_by_hand():
    # unknowns V(a), V(b), I(V1): V1 a 0, R a b, C b 0
    R, C = 2.0, 0.5
    G = np.array([[1 / R, -1 / R, 1.0], [-1 / R, 1 / R, 0.0], [1.0, 0.0, 0.0]])
    Cm = np.diag([0.0, C, 0.0])
    B = np.array([[0.0], [0.0], [1.0]])
    P = np.array([[0.0, 1.0, 0.0]])
    Q = np.zeros((1, 3))
    R_ = np.zeros((1, 1))
    model = reduce_sparse(G, Cm, B, P, Q, R_, [Candidate("V(b)", "V", "C1", "A", {1: 1.0})])
    assert model.A[0, 0] == pytest.approx(-1 / (R * C))
    assert model.B[0, 0] == pytest.approx(1 / (R * C))
    assert model.C[0, 0] == pytest.approx(1.0) and model.D[0, 0] == 0


def test_sparse_reduction_declines_a_capacitor_across_a_source():
    G = np.array([[0.0, 1.0], [1.0, 0.0]])
    Cm = np.diag([1.0, 0.0])
    B = np.array([[0.0], [1.0]])
    empty = np.zeros((0, 2))
    model = reduce_sparse(G, Cm, B, empty, empty, np.zeros((0, 1)),
                          [Candidate("V(a)", "V", "C1", "A", {0: 1.0})])
    assert model is None
