"""The corpus of SPICE decks (tests/corpus) against ngspice 39: every deck must match (see
tests/corpus/run.py for what is compared and the tolerances)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.ngspice

RUNNER = Path(__file__).resolve().parent.parent / "corpus" / "run.py"


def _runner():
    spec = importlib.util.spec_from_file_location("mna_tests_corpus_run", RUNNER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module     # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_corpus_has_decks_of_every_kind():
    run = _runner()
    decks = run.decks()
    assert len(decks) >= 35
    text = "\n".join(path.read_text().lower() for path in decks)
    for construct in ("\nq", "\nm", "\nd", "\ns", "\nw", "poly(", ".func", ".global", ".lib ",
                      ".if", ".temp", "tc1=", ".meas", ".pz", ".step", ".print", ".op",
                      ".dc", ".ac", ".tran"):
        assert construct in text, construct


def test_every_deck_matches_ngspice(ngspice):
    run = _runner()
    outcomes = [run.check_deck(path) for path in run.decks()]
    failed = [o for o in outcomes if o.status != "match"]
    assert not failed, run.report(outcomes)
