"""Shared test helpers: where the example netlists live, reading them with extra outputs, and
the ngspice runner (tests/ngspice.py) as a fixture."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import mna

ROOT = Path(__file__).resolve().parent.parent
NETLISTS = ROOT / "netlists"
DATA = Path(__file__).resolve().parent / "data"


def with_saves(text: str, outputs: list[str]) -> str:
    """`text` with a ``.save`` card for `outputs` put before its ``.end`` (if any)."""
    if not outputs:
        return text
    save = ".save " + " ".join(outputs)
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if index > 0 and line.strip().lower() == ".end":
            return "\n".join([*lines[:index], save, *lines[index:]]) + "\n"
    return text.rstrip("\n") + "\n" + save + "\n"


@pytest.fixture
def read_netlist():
    """Read a file of netlists/ (or any path), optionally with a ``.save`` of `saves`."""

    def read(path: str | Path, saves: list[str] | None = None) -> mna.Circuit:
        path = Path(path)
        if not path.is_absolute() and not path.exists():
            path = NETLISTS / path
        text = with_saves(path.read_text(), saves or [])
        return mna.read_string(text, str(path))

    return read


def _load_ngspice():
    path = ROOT / "tests" / "ngspice.py"
    spec = importlib.util.spec_from_file_location("mna_tests_ngspice", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def ngspice():
    """tests/ngspice.py (``available()``, ``run(text)``); skips when ngspice is missing."""
    module = _load_ngspice()
    if not module.available():
        pytest.skip("ngspice is not installed")
    return module
