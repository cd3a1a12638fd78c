"""Electrical decks written for ngspice give ngspice's operating point in mna.

ngspice runs the deck (tests/ngspice.py strips its .control block); mna reads the same text,
skipping the .control block with a warning. Every node voltage and branch current that both
report must agree (names compared lower-case, as ngspice lower-cases them).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

import mna

NETLISTS = Path(__file__).resolve().parents[2] / "netlists"
RTOL = 1e-6  # ngspice prints op values with 6+ significant digits and converges to reltol
ATOL = 1e-9

pytestmark = [
    pytest.mark.ngspice,
    pytest.mark.skipif(shutil.which("ngspice") is None, reason="ngspice is not installed"),
]

# Subcircuits with internal nodes, nested instances, params: defaults and overrides, and every
# linear controlled source with either polarity; no analysis but .op.
HIERARCHY_DECK = """hierarchy, params and controlled sources
.param vin=5 rload={2*rbase} rbase=1k
.subckt stage in out params: r1=1k r2=2k
ra in mid {r1}
rb mid out {r2}
rc out 0 {r1+r2}
.ends
.subckt double in out
xs1 in m stage r1=500
xs2 m out stage
.ends
V1 top 0 {vin}
X1 top o1 double
X2 o1 o2 stage r2={rload}
E1 e 0 o2 X1.m -3
Re e 0 2k
G1 g 0 X1.xs1.mid 0 -2m
Rg g 0 1k
Vs g gs 0
Rs gs 0 1k
F1 0 f Vs 0.5
Rf f 0 3k
H1 h 0 Vs -250
Rh h 0 1k
I1 h f 1m
.op
"""


def compare(text: str, ngspice, caplog) -> set[str]:
    reference = ngspice.run(text)["op"].data.iloc[0]
    with caplog.at_level(logging.WARNING):
        result = mna.operating_point(mna.read_string(text))
    ours = {name.lower(): value for name, value in zip(result.names, result.values, strict=True)}
    theirs = {name.lower(): float(value) for name, value in reference.items()}
    common = set(ours) & set(theirs)
    failures = [
        f"{name}: mna {ours[name]!r}, ngspice {theirs[name]!r}"
        for name in sorted(common)
        if abs(ours[name] - theirs[name]) > RTOL * abs(theirs[name]) + ATOL
    ]
    assert not failures, "\n".join(failures)
    return common


def test_ngspice_deck_op_equals_ngspice(ngspice, caplog):
    text = (NETLISTS / "ngspice_deck.net").read_text()
    common = compare(text, ngspice, caplog)
    # every node and every V, E, H, L branch current of the deck was compared
    assert {"v(in)", "v(a)", "v(b)", "v(x)", "v(f)", "v(h)", "v(hl)", "v(mid)", "v(g)"} <= common
    assert {"i(v1)", "i(vam)", "i(e1)", "i(h1)", "i(l1)"} <= common
    assert any(".control" in r.getMessage() for r in caplog.records)


def test_vendor_style_deck_op_equals_ngspice(ngspice, caplog):
    text = (NETLISTS / "vendor_style.net").read_text()
    common = compare(text, ngspice, caplog)
    assert {"v(in)", "v(out)", "v(out2)", "v(t)", "i(v1)", "i(b1)"} <= common


def test_ported_deck_op_equals_ngspice(ngspice, caplog):
    text = (NETLISTS / "ported_deck.net").read_text()
    common = compare(text, ngspice, caplog)
    assert {"v(a)", "v(b)", "v(c)", "v(d)", "v(p)", "i(v1)"} <= common


def test_hierarchical_deck_op_equals_ngspice(ngspice, caplog):
    common = compare(HIERARCHY_DECK, ngspice, caplog)
    # internal nodes of nested instances are named alike: X1.xs1.mid
    assert {"v(x1.m)", "v(x1.xs1.mid)", "v(x2.mid)", "v(e)", "v(g)", "v(f)", "v(h)"} <= common
    assert {"i(v1)", "i(vs)", "i(e1)", "i(h1)"} <= common
