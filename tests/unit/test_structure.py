"""The data flows one way: no module of `mna` imports a module of a later stage (text, cards,
circuit, descriptor system, analyses, results, command line), not even inside a function;
imports only for type checking are not run and do not count."""

from __future__ import annotations

import ast
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mna"

# the stages in order; a module may import from its own stage and the ones before
STAGES = [
    ("mna.errors", "mna.progress", "mna.collector", "mna.units", "mna.domains",
     "mna.netlist.model"),
    ("mna.expr",),
    ("mna.netlist.lexer", "mna.netlist.parser", "mna.netlist.fields"),
    ("mna.waveforms", "mna.elements", "mna.elements.*"),
    ("mna.circuit", "mna.diagnostics", "mna.netlist.requests"),
    ("mna.netlist", "mna.netlist.elaborate"),
    ("mna.system", "mna.assembly"),
    ("mna.fast", "mna.fast.*", "mna.linalg"),
    ("mna.results",),
    ("mna.analysis", "mna.analysis.*"),
    ("mna.writers", "mna.plots", "mna.tables"),
    ("mna", "mna.cli", "mna.__main__"),
]


def stage(module: str) -> int:
    for number, patterns in enumerate(STAGES):
        if any(fnmatch(module, pattern) for pattern in patterns):
            return number
    raise AssertionError(f"{module} belongs to no stage: add it to STAGES")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> list[tuple[str, int]]:
    """The mna modules `path` imports at run time (anywhere in it), with their lines."""
    tree = ast.parse(path.read_text())
    typing_only = {id(node) for block in ast.walk(tree)
                   if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
                   for statement in block.body for node in ast.walk(statement)}
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.module, node.lineno)]
            found += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
    return [(name, line) for name, line in found if is_module(name)]


def is_module(name: str) -> bool:
    """Whether `name` is a module of mna (not a name imported from one)."""
    if name != "mna" and not name.startswith("mna."):
        return False
    path = PACKAGE.parent / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def test_a_later_import_is_found(tmp_path):
    """The check itself: a function's import of the command line from the expressions."""
    assert stage("mna.cli") > stage("mna.expr")
    assert is_module("mna.analysis.transient") and not is_module("mna.netlist.fields.GROUND")


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_module_imports_a_later_stage(path):
    importer = module_name(path)
    later = [f"line {line}: {name}" for name, line in imported(path)
             if stage(name) > stage(importer)]
    assert not later, f"{importer} imports a later stage: {later}"


def test_reading_a_netlist_loads_no_analysis():
    code = ("import mna.netlist.elaborate, sys\n"
            "print([m for m in sys.modules if m.startswith('mna.analysis.')])")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "[]"
