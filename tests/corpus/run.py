"""Run every deck of the corpus in mna and in ngspice 39 and compare the results.

    python tests/corpus/run.py [DECK ...]      (default: every *.cir here)

Each analysis of mna is paired with ngspice's plot of the same kind (the k-th ``.ac`` with
the k-th AC plot) and every output both report is compared: operating points and DC sweeps
within 1e-6 of each value, AC responses within 1e-6 of each value (each with a small absolute
floor), transients within 1e-3 of each signal's range (plus 1 uV or 1 nA) at ngspice's time
points (mna's table interpolated linearly onto them), poles and zeros within 1e-6 of their
magnitude. An output that
mna computes from probes (``.print tran V(a)-V(b) {V(b)+0.2}``) is computed from ngspice's
vectors the same way (ngspice 39 prints such columns only sometimes); ``.meas`` values come
from ngspice's printed output, as its raw file has none. ngspice has no ``.step``: each step
point runs as its own deck with the stepped parameters set by ``.param``.

One line per deck (match, mismatch with the worst error, mna refused with its message,
ngspice failed), then the counts; the exit status is 0 when every deck matches.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import mna

CORPUS = Path(__file__).resolve().parent
RTOL = 1e-6                     # op, dc, ac, pz: of each value
VOLT_FLOOR, AMP_FLOOR = 1e-9, 1e-12
TRAN_FRACTION = 1e-3            # tran: of each signal's range
TRAN_VOLT_FLOOR, TRAN_AMP_FLOOR = 1e-6, 1e-9    # SPICE's vntol, and a nanoampere
MEAS_TRAN_RTOL = 1e-3           # a transient's measurement reads between time points
PLOT_KINDS = {"operating point": "op", "dc transfer characteristic": "dc",
              "ac analysis": "ac", "transient analysis": "tran",
              "pole-zero analysis": "pz"}
_PATH_CARD = re.compile(r"^([ \t]*\.(?:include|inc|lib)[ \t]+)(['\"]?)([^'\"\s]+)\2",
                        re.IGNORECASE | re.MULTILINE)
_STEP_CARD = re.compile(r"^[ \t]*\.step\b.*$", re.IGNORECASE | re.MULTILINE)
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_MEASURED = re.compile(rf"^(\w+)\s*=\s*({_NUMBER})", re.MULTILINE)


def _ngspice_module():
    """tests/ngspice.py, loaded by path (tests is not a package)."""
    path = CORPUS.parent / "ngspice.py"
    spec = importlib.util.spec_from_file_location("mna_tests_ngspice", path)
    module = sys.modules.get(spec.name)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module     # dataclasses look their module up there
        spec.loader.exec_module(module)
    return module


ngspice = _ngspice_module()


class Mismatch(Exception):
    """An output differs by more than its tolerance."""


@dataclass
class Outcome:
    """One deck's verdict: ``match``, ``mismatch``, ``refused`` (by mna), ``ngspice failed``
    or ``mna error`` (an exception that is no located netlist or analysis error)."""

    deck: str
    status: str
    detail: str = ""
    worst: float = 0.0
    seconds: float = 0.0


def decks(folder: Path = CORPUS) -> list[Path]:
    return sorted(folder.glob("*.cir"))


def ngspice_text(path: Path, parameters: dict[str, float] | None = None) -> str:
    """The deck as ngspice runs it from a scratch folder: included and library paths made
    absolute, ``.step`` removed and the step point's parameters set."""
    text = path.read_text()

    def absolute(match: re.Match) -> str:
        target = Path(match[3])
        if not target.is_absolute():
            target = path.parent / target
        return f"{match[1]}{match[2]}{target}{match[2]}"

    text = _PATH_CARD.sub(absolute, text)
    if parameters is not None:
        text = _STEP_CARD.sub("", text)
        text += "".join(f"\n.param {name}={value!r}" for name, value in parameters.items())
    return text.rstrip("\n") + "\n"


def step_points(circuit) -> list[dict[str, float]] | None:
    """The parameter values of each ``.step`` point, first card outermost (mna's order)."""
    if not circuit.steps:
        return None
    points: list[dict[str, float]] = [{}]
    for step in circuit.steps:
        points = [{**point, step.label: value} for point in points for value in step.values()]
    return points


def _floor(name: str) -> float:
    return AMP_FLOOR if name.upper().startswith("I(") else VOLT_FLOOR


def _key(name: str) -> str:
    return re.sub(r"\s+", "", name).lower()


def _check_close(name: str, mine: np.ndarray, theirs: np.ndarray, where: str) -> float:
    """Pointwise within RTOL of the value plus the floor; the largest difference as a
    fraction of that tolerance."""
    used = np.abs(mine - theirs) / (RTOL * np.abs(theirs) + _floor(name))
    if used.size and used.max() > 1:
        k = int(np.argmax(used))
        raise Mismatch(f"{where} {name}[{k}]: mna {mine[k]:.9g}, ngspice {theirs[k]:.9g}")
    return float(used.max()) if used.size else 0.0


def compare_op(ours, plot) -> float:
    theirs = plot.data.iloc[0]
    values = {_key(n): v for n, v in zip(ours.names, ours.values)}
    common = [n for n in theirs.index if _key(n) in values]
    if not common:
        raise Mismatch("op: no output in common with ngspice")
    return max(_check_close(n, np.array([values[_key(n)]]), np.array([theirs[n]]), "op")
               for n in common)


def compare_table(ours, plot, kind: str) -> float:
    """A DC sweep or an AC response, point by point, and its independent variable."""
    columns = {_key(n): np.asarray(v) for n, v in ours.columns.items()}
    scale = plot.data.iloc[:, 0].to_numpy().real
    mine_scale = np.asarray(ours.columns[ours.independent]).real
    if len(mine_scale) != len(scale) or not np.allclose(mine_scale, scale, rtol=1e-9,
                                                         atol=1e-15):
        raise Mismatch(f"{kind}: the sweep differs ({len(mine_scale)} points, ngspice "
                       f"{len(scale)})")
    return max(_check_close(name, columns[_key(name)], theirs, kind)
               for name, theirs in _reference_columns(ours, plot))


def _tran_used(name: str, time: np.ndarray, mine: np.ndarray, their_time: np.ndarray,
               theirs: np.ndarray) -> float:
    """The largest difference on ngspice's points as a fraction of the tolerance: 1e-3 of
    the signal's range (of a thousandth of its size for a near-constant one) plus SPICE's
    absolute tolerance, below which neither simulator resolves a signal."""
    interpolated = np.interp(their_time, time, mine.real)
    span = max(float(np.ptp(theirs)), 1e-3 * float(np.max(np.abs(theirs))))
    floor = TRAN_AMP_FLOOR if name.upper().startswith("I(") else TRAN_VOLT_FLOOR
    return float(np.max(np.abs(interpolated - theirs))) / (TRAN_FRACTION * span + floor)


def compare_tran(ours, plot) -> float:
    columns = {_key(n): np.asarray(v) for n, v in ours.columns.items()}
    time = columns["time"]
    their_time = plot.data["time"].to_numpy()
    if abs(time[-1] - their_time[-1]) > 1e-9 * their_time[-1]:
        raise Mismatch(f"tran: ends at {time[-1]:g}, ngspice at {their_time[-1]:g}")
    worst = 0.0
    for name, theirs in _reference_columns(ours, plot):
        used = _tran_used(name, time, columns[_key(name)], their_time, theirs)
        worst = max(worst, used)
        if used > 1:
            raise Mismatch(f"tran {name}: {used * TRAN_FRACTION:.2g} of its range")
    return worst


def compare_pz(ours, plot) -> float:
    """Poles and zeros as two multisets: each of ngspice's paired with the nearest of mna's
    not yet paired."""
    worst = 0.0
    theirs = {"pole": [], "zero": []}
    for name in plot.data.columns:
        kind = "pole" if "pole" in name.lower() else "zero"
        theirs[kind].append(complex(plot.data[name].iloc[0]))
    for kind in ("pole", "zero"):
        mine = [complex(r, i) for k, r, i in zip(ours.columns["kind"], ours.columns["re"],
                                                 ours.columns["im"]) if k == kind]
        if len(mine) != len(theirs[kind]):
            raise Mismatch(f"pz: {len(mine)} {kind}s, ngspice {len(theirs[kind])}")
        for b in theirs[kind]:
            a = mine.pop(int(np.argmin([abs(a - b) for a in mine])))
            error = abs(a - b) / max(abs(b), 1e-12)
            worst = max(worst, error / RTOL)
            if error > RTOL:
                raise Mismatch(f"pz {kind}: mna {a:.9g}, ngspice {b:.9g}")
    return worst


def compare_meas(ours, measured: dict[str, float], kinds: dict[str, str]) -> float:
    worst = 0.0
    for name, value in zip(ours.names, ours.values):
        if name.lower() not in measured:
            raise Mismatch(f"meas {name}: ngspice printed no value")
        theirs = measured[name.lower()]
        tolerance = MEAS_TRAN_RTOL if kinds.get(name.lower()) == "tran" else RTOL
        error = abs(value - theirs) / max(abs(theirs), 1e-12)
        worst = max(worst, error / tolerance)
        if error > tolerance:
            raise Mismatch(f"meas {name}: mna {value:.9g}, ngspice {theirs:.9g}")
    return worst


def _meas_kinds(path: Path) -> dict[str, str]:
    """The analysis each ``.meas`` reads, by its name."""
    kinds = {}
    for line in path.read_text().splitlines():
        words = line.split()
        if len(words) > 2 and words[0].lower() in (".meas", ".measure"):
            kinds[words[2].lower()] = words[1].lower()
    return kinds


def parse_measured(text: str) -> dict[str, float]:
    """ngspice's printed ``.meas`` values by lower-cased name."""
    return {m[1].lower(): float(m[2]) for m in _MEASURED.finditer(text)}


_PROBE = re.compile(r"\b([vi])\(\s*([^(),\s]+)\s*(?:,\s*([^(),\s]+)\s*)?\)", re.IGNORECASE)
_ARITHMETIC = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load,
               ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub, ast.UAdd)


def derived(name: str, data) -> np.ndarray | None:
    """An output such as ``V(a)-V(b)``, ``V(a,b)``, ``{V(b)+0.2}`` or ``I(V1)*2`` computed
    from ngspice's vectors in `data` (arithmetic of probes and numbers only; None for
    anything else or a probe ngspice lacks)."""
    columns = {_key(c): c for c in data.columns}
    probes: list[np.ndarray] = []

    def probe(match: re.Match) -> str:
        kind, first, second = match[1].upper(), match[2], match[3]
        names = [f"{kind}({first})"] + ([f"{kind}({second})"] if second else [])
        if any(_key(n) not in columns for n in names):
            raise KeyError(names)
        values = data[columns[_key(names[0])]].to_numpy()
        if second:
            values = values - data[columns[_key(names[1])]].to_numpy()
        probes.append(values)
        return f"p{len(probes) - 1}"

    try:
        text = _PROBE.sub(probe, name.strip().removeprefix("{").removesuffix("}"))
        tree = ast.parse(text, mode="eval")
    except (KeyError, SyntaxError):
        return None
    if not probes or not all(isinstance(node, _ARITHMETIC) for node in ast.walk(tree)):
        return None

    def value(node):
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return probes[int(node.id[1:])]
        if isinstance(node, ast.UnaryOp):
            return -value(node.operand) if isinstance(node.op, ast.USub) else value(node.operand)
        left, right = value(node.left), value(node.right)
        return {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
                ast.Div: np.divide}[type(node.op)](left, right)

    return np.asarray(value(tree))


def _reference_columns(ours, plot) -> list[tuple[str, np.ndarray]]:
    """ngspice's values of each output of `ours` it has, or can compute from its vectors;
    an output it can neither find nor compute is a mismatch."""
    columns = {_key(c): c for c in plot.data.columns}
    pairs = []
    for name in list(ours.columns)[list(ours.columns).index(ours.independent) + 1:]:
        if _key(name) in columns:
            pairs.append((name, plot.data[columns[_key(name)]].to_numpy()))
        elif (values := derived(name, plot.data)) is not None:
            pairs.append((name, values))
        elif re.search(r"[-+*/,{]", name):
            raise Mismatch(f"{name}: not computable from ngspice's vectors")
    if not pairs:
        raise Mismatch(f"{ours.kind}: no output in common with ngspice")
    return pairs


def compare_run(path: Path, results: list, reference, printed_text: str | None) -> float:
    """mna's results of one run against one ngspice run."""
    measured = parse_measured(printed_text) if printed_text else {}
    plots: dict[str, list] = {}
    for plot in reference.plots:
        plots.setdefault(PLOT_KINDS.get(plot.name.lower(), plot.name.lower()), []).append(plot)
    seen: dict[str, int] = {}
    worst = 0.0
    for result in results:
        kind = result.kind
        if kind == "meas":
            worst = max(worst, compare_meas(result, measured, _meas_kinds(path)))
            continue
        index = seen[kind] = seen.get(kind, -1) + 1
        if index >= len(plots.get(kind, [])):
            raise Mismatch(f"{kind}: ngspice wrote no such plot")
        plot = plots[kind][index]
        if kind == "op":
            worst = max(worst, compare_op(result, plot))
        elif kind in ("dc", "ac"):
            worst = max(worst, compare_table(result, plot, kind))
        elif kind == "tran":
            worst = max(worst, compare_tran(result, plot))
        elif kind == "pz":
            worst = max(worst, compare_pz(result, plot))
        else:
            raise Mismatch(f"{kind}: no comparison for this analysis")
    return worst


def _needs_printout(path: Path) -> bool:
    text = path.read_text().lower()
    return bool(re.search(r"^[ \t]*\.(meas|measure)\b", text, re.MULTILINE))


def check_deck(path: Path) -> Outcome:
    """Run `path` in mna and ngspice and compare them."""
    start = time.perf_counter()
    outcome = Outcome(path.name, "match")
    try:
        circuit = mna.read(path)
        results = mna.run(circuit)
    except mna.MnaError as error:
        outcome.status, outcome.detail = "refused", str(error).splitlines()[0]
    except Exception as error:      # a bug: reported, never hidden
        outcome.status, outcome.detail = "mna error", f"{type(error).__name__}: {error}"
    if outcome.status == "match":
        points = step_points(circuit)
        runs = ([(results, None)] if points is None else
                [([r.results[k] for r in results], point) for k, point in enumerate(points)])
        try:
            for run_results, point in runs:
                text = ngspice_text(path, point)
                reference = ngspice.run(text, timeout=120)
                printed = ngspice.printout(text, timeout=120) if _needs_printout(path) else None
                outcome.worst = max(outcome.worst,
                                    compare_run(path, run_results, reference, printed))
        except ngspice.NgspiceError as error:
            outcome.status = "ngspice failed"
            outcome.detail = str(error).splitlines()[0]
        except Mismatch as error:
            outcome.status, outcome.detail = "mismatch", str(error)
            if point is not None:
                outcome.detail += f" at {point}"
    outcome.seconds = time.perf_counter() - start
    return outcome


def report(outcomes: list[Outcome]) -> str:
    """The table, one line per deck, and the counts."""
    width = max((len(o.deck) for o in outcomes), default=4)
    lines = [f"{'deck':<{width}}  {'status':<14} {'worst':>8} {'s':>5}  detail"
             "   (worst: the largest error as a fraction of its tolerance)"]
    for o in outcomes:
        worst = f"{o.worst:.1e}" if o.status == "match" and math.isfinite(o.worst) else ""
        lines.append(f"{o.deck:<{width}}  {o.status:<14} {worst:>8} {o.seconds:5.1f}  "
                     f"{o.detail}")
    counts = {s: sum(o.status == s for o in outcomes)
              for s in ("match", "mismatch", "refused", "ngspice failed", "mna error")}
    lines.append(", ".join(f"{count} {status}" for status, count in counts.items())
                 + f" of {len(outcomes)} decks")
    return "\n".join(lines)


def _deck(argument: str) -> Path:
    """A path, or the name of a corpus deck with or without ``.cir``."""
    path = Path(argument)
    if path.exists():
        return path
    return CORPUS / (argument if argument.endswith(".cir") else f"{argument}.cir")


def main(argv: list[str]) -> int:
    paths = [_deck(a) for a in argv] or decks()
    outcomes = []
    for path in paths:
        outcomes.append(check_deck(path))
    print(report(outcomes))
    return 0 if all(o.status == "match" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
