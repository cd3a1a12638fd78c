"""Fuzzing: reading and running any text or bytes ends within seconds in results or in one of
mna's own errors (`mna.MnaError` and subclasses), never in another exception, a numpy warning
or a log call that cannot be formatted; a `NetlistError`'s place is a line of the file.

Netlists come from a grammar of cards (every element, dot cards, subcircuits, ``.if`` blocks,
continuations, comments), values (SPICE suffixes, unit letters, overflow, underflow,
``{expressions}`` with every operator and function, power towers, deep nesting), waveforms
and options, with stray punctuation, random unicode, and random bytes read by `mna.read`.

    pytest tests/evals/test_fuzz.py                  # quick, deterministic: 150 examples
    MNA_FUZZ=long pytest tests/evals/test_fuzz.py    # by hand: random, MNA_FUZZ_EXAMPLES=5000
    MNA_FUZZ=long MNA_FUZZ_EXAMPLES=40000 pytest tests/evals/test_fuzz.py \\
        --hypothesis-show-statistics                  # ~10 min if nothing fails, with counts

MNA_FUZZ_TIMEOUT: seconds per example (5). Hypothesis keeps its files (and the patch it writes
for a failing example) under the temporary folder, not in the repository.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import tempfile
import warnings
from pathlib import Path

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

import mna

if "HYPOTHESIS_STORAGE_DIRECTORY" not in os.environ:
    set_hypothesis_home_dir(Path(tempfile.gettempdir(), "mna-hypothesis"))
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    # Hypothesis imports this to report a failure, and libcst warns as it loads: under
    # filterwarnings=error that warning would crash pytest instead of showing the failure.
    warnings.simplefilter("ignore")
    import hypothesis.extra._patching  # noqa: F401

LONG = os.environ.get("MNA_FUZZ", "").lower() == "long"
TIMEOUT = float(os.environ.get("MNA_FUZZ_TIMEOUT", "5"))
FILENAME = "fuzz.net"
PROFILE = settings(
    max_examples=int(os.environ.get("MNA_FUZZ_EXAMPLES", "5000")) if LONG else 150,
    derandomize=not LONG, deadline=None, database=None, print_blob=LONG,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                           HealthCheck.data_too_large, HealthCheck.large_base_example])


def one(words: str, separator: str | None = None) -> st.SearchStrategy[str]:
    """One of the blank-separated (or `separator`-separated) `words`; ``~`` is the empty one."""
    return st.sampled_from(["" if w == "~" else w for w in words.split(separator)])


# -- values and expressions ------------------------------------------------------------------

NODES = one("0 gnd GND a b in out n1 A x.y 1 0a")
NUMBERS = one("10k 1e999 -1e999 1e-310 10kg -0 .5meg 0 1 -1 1e308 nan inf 1. 1e --1 +5 0x10 "
              "1e3.5 1_000 4.7kOhm .") | st.builds(
    lambda m, s, u: m + s + u,
    one("0 1 2.5 .5 10 -1 1e3 1e-3 3. 1.5e+2 -2e-9") | st.floats().map(repr)
    | st.integers(-10**6, 10**6).map(str),
    one("~ ~ f p n u m k meg MEG g t mil K"), one("~ ~ ~ F Ohm kg V Hz s Nm xyz"))
NASTY = one("9**9**9 10**10**10 2^3^4^5 (-8)**(1/3) 0/0 1/0 0^-1 ln(0) sqrt(-1) exp(1000) "
            "log(-1) pow(-2,0.5) 1e308*10 1e-310/1e308 pow(1749990,1749990) -0**-1 "
            "floor(1e999) if(0/0,1,2) min() max(1)")
DEEP = st.builds(lambda leaf, n, k: k * n + leaf + ")" * k.count("(") * n,
                 one("1 p1 time"), st.integers(1, 400), one("( -! abs("))
EXPRESSIONS = NASTY | DEEP | st.recursive(
    NUMBERS | one("p1 p2 undefined_q pi e time temper V(a) V(a,b) I(V1) V(nowhere)"),
    lambda inner: st.one_of(
        st.builds(lambda a, s, o, b: f"{a}{s}{o}{s}{b}", inner, st.sampled_from(["", " "]),
                  one("+ - * / ^ ** < <= > >= == != && ||"), inner),
        st.builds(lambda u, a: u + a, one("- ! +"), inner), inner.map(lambda a: f"({a})"),
        st.builds(lambda f, args: f"{f}({', '.join(args)})", one(
            "sqrt exp ln log log10 sin cos tan atan2 abs sign min max pow if floor ceil f "
            "nofunc agauss limit"), st.lists(inner, max_size=3))),
    max_leaves=12)
PLAIN = one("1 1k 2.5m 10u {p1} {2*p1+1} 1e-3 0.5")
VALUES = st.one_of(PLAIN, PLAIN, PLAIN, NUMBERS, EXPRESSIONS.map(lambda x: f"{{{x}}}"),
                   EXPRESSIONS.map(lambda x: f"'{x}'"), one("p1 {p1 {}"))
WAVEFORMS = st.builds(lambda name, args, style: style.format(name, " ".join(args)),
                      one("PULSE SIN EXP PWL pwl sffm"), st.lists(VALUES, max_size=8),
                      st.sampled_from(["{}({})", "{}({})", "{} {}", "{} ({})", "{}({}"]))
OPTIONS = st.builds(lambda k, v: f"{k}={v}", one("IC m J k b I R C L V area p1 tc1 ~ ic"), VALUES)
ANALYSES = one(
    ".op | .tran 1m 10m | .tran 10u 1m uic | .tran 1m 10m 0 1m | .tran 1m 10m 5m | .tran 0 1m | "
    ".tran 1m 0 | .tran -1m 1m | .tran 1m 1e-310 | .tran 1m 1e999 | .tran 1m 10m 20m | .tran 1m | "
    ".ac dec 5 1 1k | .ac lin 3 1 10 | .ac oct 2 1 100 | .ac dec 0 1 10 | .ac dec 5 0 10 | "
    ".ac lin 3 10 1 | .ac dec 5 1 1e999 | .ac bad 5 1 9 | .dc V1 0 1 0.5 | .dc V1 1 0 0.5 | "
    ".dc V1 0 1 0 | .dc V1 0 1 -0.5 | .dc Vnone 0 1 0.5 | .dc V1 0 1e-300 1e-310 | "
    ".dc param p1 0 1 0.25 | .dc I1 0 1 0.5 V1 0 1 0.5 | .dc temp 0 10 5 | .ss in=V1 out=V(a) | "
    ".ss in=V1,I1 out=V(a),I(L1) tf | .ss | .ss in=V1 out=V(b) symbolic | .pz a 0 b 0 vol pz | "
    ".step param p1 list 1 2 | .step param p1 1 2 1 | .step param p1 0 1 0 | "
    ".step param nope list 1 | .meas tran m1 max V(a) | .meas tran m2 find V(a) when V(b)=0.5 | "
    ".meas ac m3 max V(b) | .meas dc m4 avg I(V1) | .four 1k V(a) V(b) | "
    ".meas dc m5 deriv I(V1) at=0.5 | .meas tran m6 rms V(a) from=1m to=0 | "
    ".meas ac m7 find vdb(b) at=10 | .meas tran m8 integ V(a) from=0 to=0 | "
    ".save vdb(a) vp(b) im(V1) vq(a) | .mc 3 seed=1\n.options workers=1 | .mc 0 | "
    ".mc 2 seed=-1 | .tf V(b) V1 | .tf V(a,b) I1 | .tf I(Vx) V1 | .tf I(R1) V1 | .tf V(b) R1 | "
    ".tf V(b) | .tf V(b) V1 extra | .noise V(b) V1 dec 2 1 1k | .noise V(out) V1 lin 2 0 10 3 | "
    ".noise V(b) V1 oct 1 1 1e999 | .noise I(V1) V1 dec 1 1 10 | .noise V(b) I1 dec 1 1 10 -1 | "
    ".noise V(b) nope dec 1 1 10 | .noise", " | ")
ANALYSES |= st.builds(   # extreme but finite: each either runs a few points or is refused
    lambda card, args: card.format(*args), one(
        ".tran {} {} | .tran 1m 10m 0 {} | .tran 1m 10m {} | .ac dec 2 {} {} | .ac lin 2 {} {} | "
        ".ac oct 1 {} {} | .dc V1 {} {} {} | .dc param p1 {} {} {} | .step param p1 {} {} {}",
        " | "),
    st.lists(one("5e-324 1e-310 1e-300 1 1e300 1e308 -1e308 0 -1 nan"), min_size=3, max_size=3))
DOTS = ANALYSES | one(
    ".param p1=1 p2={p1*2} | .param p1={p2} p2={p1} | .param | .func f(x) = {x*2} | "
    ".func f(x,y) {x+y} | .func f(x) = {f(x)} | .model dmod D(IS=1e-14 N=1) | .model dmod D | "
    ".model fr friction(fc=1 fs=2 vs=0.1) | .model sp spring(k=1 k3=1) | .ic V(a)=1 I(L1)=0 | "
    ".model jmod NJF(vto=-2 beta=1m rd=10 cgs=1p kf=1e-16) | .model jmod PJF(fc=0.99 b=0) | "
    ".model swm sw(vt=0.5 vh=0.1 ron=1 roff=1e6) | .ic V(nowhere)=1 | .nodeset V(a)=0.5 | "
    ".save V(a) I(V1) V(a,b) {V(a)*I(V1)} | .save I(nope) | .print tran V(a) | .global gnd a | "
    ".include fuzz_missing.net | .include . | .include '' | .lib fuzz_missing.lib typ | .lib | "
    ".temp 27 | .end | .ends | .endif | .else | .domain thermal a | .domain quantum a | "
    ".control\nrun\n.endc | .control | .options method=trap | .options ordering=amd solver=superlu"
    " | .options stepcontrol=fixed interp | .options maxpoints=3 | .frobnicate 3", " | ")
DOTS |= st.builds(
    lambda card, value: card + ("" if card.endswith("=") else " ") + value,
    one(".param p1= | .param p2= | .options reltol= | .options gmin= | .options abstol= | "
        ".options method= | .ic V(a)= | .nodeset V(b)= | .temp | .model dmod D IS=", " | "), VALUES)

# -- cards -----------------------------------------------------------------------------------


def element(draw, prefix: str) -> list[str]:
    """The fields of an element line of type `prefix`."""
    name, value, nodes = prefix + draw(one("1 2 x ~ _long_name")), draw(VALUES), NODES
    two = [name, draw(nodes), draw(nodes)]
    if prefix in "RCL":
        return [*two, draw(st.sampled_from([value, value, "fr", "sp"])),
                *draw(st.lists(OPTIONS, max_size=2))]
    if prefix in "VI":
        return [*two, *draw(st.lists(
            VALUES.map("DC {}".format) | VALUES.map("AC {}".format) | WAVEFORMS
            | EXPRESSIONS.map(lambda x: f"{{{x}}}"), max_size=3))]
    if prefix in ("E", "G", "TF", "GY"):
        return [*two, *draw(st.sampled_from([[draw(nodes), draw(nodes), value],
                                             ["POLY(1)", draw(nodes), "0", "1", value],
                                             [f"VALUE={{{draw(EXPRESSIONS)}}}"]]))]
    if prefix in "FH":
        return [*two, draw(one("V1 Vx L1 R1")), value]
    if prefix == "B":
        return [*two, f"{draw(one('V I v Q'))}={draw(EXPRESSIONS)}"]
    if prefix == "D":
        return [*two, draw(one("dmod nomodel fr")), *draw(st.lists(VALUES, max_size=1))]
    if prefix == "J":
        return [*two, draw(nodes), draw(one("jmod dmod nomodel")),
                *draw(st.lists(VALUES | one("off area=2 m=3 m=0 ic=1,2"), max_size=2))]
    if prefix == "K":
        return [name, draw(one("L1 L2 Lx R1")), draw(one("L1 L2 Lx")), value]
    if prefix == "X":
        return [name, *draw(st.lists(nodes, max_size=3)), draw(one("sub sub nosub params:")),
                *draw(st.lists(OPTIONS, max_size=2))]
    return [name, *draw(st.lists(nodes, max_size=4)), draw(one("swm qm 1"))]


@st.composite
def cards(draw) -> str:
    """One card, or a block of them, with the decorations of a hand-written netlist."""
    kind = draw(one("element " * 12 + "dot " * 6 + "subckt if junk"))
    if kind == "element":
        fields = element(draw, draw(one("R C L V I E G F H B D K TF GY X S Q M W Z J r")))
        if draw(st.integers(0, 9)) == 0:   # a field missing or doubled
            index = draw(st.integers(1, len(fields) - 1))
            fields[index:index + 1] = draw(st.sampled_from([[], fields[index:index + 1] * 2]))
        line = " ".join(fields)
    elif kind == "dot":
        line = draw(DOTS)
    elif kind == "subckt":
        head = draw(one(".subckt sub a b | .subckt sub a b params: p1=1 | .SUBCKT sub a | "
                        ".subckt", " | "))
        line = "\n".join([head, *draw(st.lists(cards(), max_size=3)), draw(one(".ends ~"))])
    elif kind == "if":
        head = draw(one(".if ({}) | .if ({}) | .if {} | .if {{{}}} | .if | .elseif ({})", " | "))
        line = "\n".join([head.format(draw(EXPRESSIONS)), *draw(st.lists(cards(), max_size=2)),
                          draw(one(".else\nR9 a 0 1\n.endif | .elseif p1\n.endif | .endif | ~",
                                   " | "))])
    else:
        line = draw(st.text(max_size=40) | one("* | + | + 1 | ; |  $ x | { | } | ( | '", " | "))
    if draw(st.integers(0, 5)) == 0 and " " in line:   # a '+' continuation
        words = line.split(" ")
        cut = draw(st.integers(1, len(words) - 1))
        line = " ".join(words[:cut]) + "\n+ " + " ".join(words[cut:])
    if draw(st.integers(0, 11)) == 0:                   # a stray character or comment
        where = draw(st.integers(0, len(line)))
        stray = draw(st.sampled_from(list("{}()'\"=,;\\é\u2028\r\x0c\x00") + [" $ x", " * c"]))
        line = line[:where] + stray + line[where:]
    return line.upper() if draw(st.integers(0, 19)) == 0 else line


PRELUDES = ["", "", "V1 a 0 1\nR1 a b 1k\nC1 b 0 1u",
            "V1 in 0 DC 1 AC 1\nR1 in a 1k\nL1 a b 1m\nL2 b 0 1m\nC1 a 0 1u\nI1 0 b 1m\n"
            "Vx b out 0\nR2 out 0 1k",
            ".param p1=1\nV1 a 0 {p1}\nR1 a b 1\nD1 b 0 dmod\n.model dmod D(IS=1e-14)",
            "I1 0 a 1\nCm a 0 m=1\nRb a 0 b=2\nLk a b k=1\nRb2 b 0 b=1"]


@st.composite
def netlists(draw) -> str:
    title = draw(st.text(max_size=20).filter(lambda t: "\n" not in t)
                 | st.sampled_from(["t", "R1 a 0 1", "", "*"]))
    return "\n".join([title, draw(st.sampled_from(PRELUDES)),
                      *draw(st.lists(cards(), max_size=10)), *draw(st.lists(ANALYSES, max_size=2)),
                      draw(st.sampled_from(["", "", ".end", ".END\nR1 junk"]))])


@st.composite
def raw_files(draw) -> bytes:
    """Bytes of a file: a netlist's UTF-8 or Latin-1 with random bytes put in, or noise."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.binary(max_size=200))
    data = draw(netlists()).encode(draw(one("utf-8 latin-1")), "replace")
    for _ in range(draw(st.integers(0, 3))):
        where = draw(st.integers(0, len(data)))
        data = data[:where] + draw(st.binary(min_size=1, max_size=4)) + data[where:]
    return data


# -- the property ----------------------------------------------------------------------------


class Hang(BaseException):
    """Time is up (not an Exception, so that no ``except Exception`` in mna swallows it)."""


def expire(*_) -> None:
    raise Hang


class Formatting(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        record.getMessage()   # raises for a log call whose arguments do not fit its format


@contextlib.contextmanager
def guarded(seconds: float):
    """Warnings raised, mna's log records formatted (not shown), and `Hang` raised after
    `seconds` (where there is a SIGALRM)."""
    timed = hasattr(signal, "setitimer")   # pytest runs tests on the main thread
    logger, handler = logging.getLogger("mna"), Formatting()
    logger.addHandler(handler)
    logger.propagate = False
    if timed:
        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            yield
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        logger.propagate = True
        logger.removeHandler(handler)


def line_count(source: str | bytes) -> int:
    if isinstance(source, str):
        return len(source.splitlines())
    return max(len(source.decode(codec, "replace").splitlines()) for codec in ("utf-8", "latin-1"))


def read_and_run(source: str | bytes) -> None:
    """Read `source` (text by `read_string`, bytes by `read` of a file) and run it."""
    if isinstance(source, str):
        circuit = mna.read_string(source, FILENAME)
    else:
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, FILENAME).write_bytes(source)
            circuit = mna.read(Path(folder, FILENAME))
    event("read")
    mna.run(circuit)
    event("ran")


FOUND = [   # what the long profile found once: each must stay an mna error or a result
    "t\n.if p1\n.endif\n", "t\n.if 9**9**9\n.endif\n", "t\n.if\n.endif\n", "t\n.ss\n",
    "t\nR1 0 0 1\n.ss\n", "t\n.options interp\n.tran 10u 1m\n", "t\n.include \x00x\n",
    "t\n.tran 1m 5e-324\n", "t\n.tran 1m 10m 0 1e307\n", "t\n.tran 1e-300 1e-299\n",
    "t\nV1 a 0 1\nR1 a 0 1\n.dc V1 0 1 5e-324\n",
    "t\nV1 a 0 1\nR1 a 0 1\n.dc V1 -1e308 1e308 1e308\n",
    "t\nV1 a 0 DC 1 AC 1\nR1 a 0 1\n.ac dec 2 1e-300 1e300\n",
    "t\nV1 a 0 DC 1 AC 1\nR1 a 0 1\n.ac oct 1 1e-310 1\n",
    "t\nV1 a 0 1\nR1 a b 1k\nC1 b 0 1u\n.tran 1m 1e-310\n",
    "t\nV1 a 0 DC 1 AC 1\nR1 a b 1\nC1 b 0 1\n.ac oct 1 1 1e308\n",
    "\n\nC1 0 0 FR\n", "t\nV1 a 0 1e308\nD1 a 0 dmod\n.model dmod D\n.op\n",
    "t\n.param p1=1\nV1 a 0 {p1}\nR1 a 0 1\n.step param p1 1e-310 5e-324 5e-324\n.op\n",
    '\n\nE1 0 0 "POLY(1) 0 0 1 1\n', "t\nG1 a 0 foo(1) b 0 1\n",
    "t\nV1 a 0 1\nR1 a 0 1k\n.meas dc m4 avg I(V1)\n.dc V1 5e-324 5e-324 5e-324\n",
    "t\nV1 a 0 1\nR1 a b 1k\nC1 b 0 1u\n.op\nG1 0 0 POLY(1) A 0 1 {(-8)**(1/3)}\n",
    "t\n.op\nG1 0 0 POLY(1) 0 0 1 {9**9**9}\n", "t\n.op\nG1 0 0 POLY(1) 0 0 1 1\n",
]


def found(test):
    for source in FOUND:
        test = example(source)(test)
    return test


@PROFILE
@given(netlists() | netlists() | raw_files())
@found
def test_any_netlist_ends_in_results_or_an_mna_error(source):
    try:
        with guarded(TIMEOUT):
            read_and_run(source)
    except Hang:
        raise AssertionError(f"no result and no error within {TIMEOUT:g} s") from None
    except mna.NetlistError as error:
        event(type(error).__name__)
        place = error.location
        if place is not None:
            assert Path(place.file).name == FILENAME, f"{place} is in another file: {error}"
            assert 1 <= place.line <= line_count(source), f"{place} is outside the text: {error}"
            assert place.column >= 1, f"{place} is before its line: {error}"
    except mna.MnaError as error:
        event(type(error).__name__)
