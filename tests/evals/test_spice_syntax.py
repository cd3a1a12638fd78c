"""The syntax forms real SPICE decks use, each read by mna and checked against ngspice 39 on
a small deck (or, where ngspice has no such output, against its own vectors)."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

import mna

pytestmark = pytest.mark.ngspice
_HERE = mna.netlist.model.SourceLocation("t.net", 1, 1)


def op_of(text: str) -> dict[str, float]:
    result = mna.operating_point(mna.read_string(text))
    return {name.lower(): value for name, value in zip(result.names, result.values)}


def assert_op_matches(text: str, ngspice, nodes: list[str]) -> None:
    ours = op_of(text + ".op\n")
    theirs = ngspice.run(text + ".op\n")["op"].data.iloc[0]
    for node in nodes:
        assert ours[f"v({node})"] == pytest.approx(theirs[f"V({node})"], rel=1e-9, abs=1e-12)


def assert_ac_matches(text: str, ngspice, outputs: list[str]) -> None:
    """mna's and ngspice's response at 1 kHz, each of `outputs` to 1e-9."""
    text += ".ac lin 1 1k 1k\n"
    (ours,) = mna.run(mna.read_string(text))
    theirs = ngspice.run(text)["ac"].data
    for name in outputs:
        assert np.allclose(ours[name], theirs[name], rtol=1e-9), name


def assert_dc_matches(text: str, ngspice, nodes: list[str], atol: float) -> mna.Result:
    """mna's and ngspice's .dc sweep of `text` at each point, each of `nodes` to `atol`."""
    (ours,) = mna.run(mna.read_string(text))
    theirs = ngspice.run(text)["dc"].data
    for node in nodes:
        assert np.allclose(ours[f"V({node})"], theirs[f"V({node})"], rtol=0, atol=atol), node
    return ours


# two cross-coupled NPNs: a symmetric operating point (both collectors at 1.13 V) and two
# latched ones
LATCH = """latch
.model QN NPN(IS=1e-15 BF=100)
VCC vcc 0 5
RC1 vcc c1 1k
RC2 vcc c2 1k
RB1 c2 b1 10k
RB2 c1 b2 10k
Q1 c1 b1 0 QN
Q2 c2 b2 0 QN
"""


def test_waveforms_without_parentheses(ngspice):
    text = """waveforms as SPICE2 wrote them
V1 a 0 SIN 0 1 1K
V2 b 0 PULSE 0 5 1u 1u 1u 0.2m 0.5m
R1 a 0 1k
R2 b 0 1k
.tran 10u 1m
"""
    (result,) = mna.run(mna.read_string(text))
    reference = ngspice.run(text)["tran"].data
    for node in ("a", "b"):     # each tool's own points: no interpolation between them
        ours = result[f"V({node})"][np.isin(result["time"], reference["time"])]
        theirs = reference[f"V({node})"][np.isin(reference["time"], result["time"])]
        assert len(ours) >= 5 and np.max(np.abs(ours - theirs)) < 1e-9


def test_behavioural_expression_without_braces_and_quoted_values(ngspice):
    text = """unbraced B, quoted value
.param k=2
V3 3 0 1
V4 4 0 3
B1 99 0 V=.5*V(3)+.5*V(4)
R1 99 0 1k
B2 0 98 I=V(3)*1m + k*1m
R2 98 0 1k
R3 4 5 r='k * (500 + 250)'
R4 5 0 1k
"""
    assert_op_matches(text, ngspice, ["99", "98", "5"])


def test_func_definitions(ngspice):
    text = """.func
.param r0=1k
.func par(a, b) = {a*b/(a+b)}
.func twice(x) {2*x}
V1 in 0 10
R1 in out {twice(r0)}
R2 out 0 {par(r0, twice(r0))}
"""
    assert_op_matches(text, ngspice, ["out"])


def test_global_nodes_join_subcircuits(ngspice):
    text = """.global
.global vdd
Vdd vdd 0 5
.subckt load out
R1 vdd out 1k
R2 out 0 3k
.ends
X1 a load
X2 b load
R3 a b 1k
"""
    assert_op_matches(text, ngspice, ["a", "b"])


def test_a_subcircuit_defined_inside_another_is_local_to_it(ngspice):
    text = """nested definitions
I1 0 a 1m
X1 a 0 outer1
I2 0 b 1m
X2 b 0 outer2
I3 0 c 1m
X3 c 0 cell
.subckt outer1 p q
.subckt cell p q
R1 p q 1k
.ends
X1 p q cell
.ends
.subckt outer2 p q
.subckt cell p q
R1 p q 2k
.ends
X1 p q cell
.ends
.subckt cell p q
R1 p q 3k
.ends
"""
    assert_op_matches(text, ngspice, ["a", "b", "c"])
    assert [op_of(text + ".op\n")[f"v({n})"] for n in "abc"] == pytest.approx([1, 2, 3])
    with pytest.raises(mna.NetlistError, match="unknown subcircuit 'inner'"):
        mna.read_string("t\nX1 a 0 inner\nR1 a 0 1\n.subckt outer p q\n.subckt inner p q"
                        "\nR1 p q 1\n.ends\n.ends\n")


def test_a_model_defined_inside_a_subcircuit_is_local_to_it(ngspice):
    text = """local models, one of the subcircuit's parameters
V1 in 0 1
X1 in a clamp
X2 in b clamp2
X3 in c clamp
X4 in d clamp2 n=1
R1 a 0 1k
R2 b 0 1k
R3 c 0 1k
R4 d 0 1k
.subckt clamp p q
.model dx D(IS=1e-14)
D1 p q dx
.ends
.subckt clamp2 p q params: n=2
.model dx D(IS=1e-12 N={n})
D1 p q dx
.ends
.options reltol=1e-10
"""
    assert_op_matches(text, ngspice, ["a", "b", "c", "d"])
    op = op_of(text + ".op\n")
    assert op["v(a)"] == op["v(c)"] and op["v(b)"] != op["v(d)"]
    with pytest.raises(mna.NetlistError, match="undefined model 'dx'"):
        mna.operating_point(mna.read_string(text + "D9 in 0 dx\n"))


def test_an_instance_may_set_a_parameter_its_subcircuit_sets_with_param(ngspice):
    text = """instance parameters over a subcircuit's own .param
.subckt subr in out rint1 = 6
.param rint = 5
.param rint2 = {2*rint}
R0 in out {rint}
R1 in out {rint1}
R2 in out {rint2}
.ends
X1 1 0 subr rint = 7 rint1 = 9
V1 1 0 1
X2 2 0 subr
V2 2 0 1
"""
    ours, theirs = op_of(text + ".op\n"), ngspice.run(text + ".op\n")["op"].data.iloc[0]
    for source in ("v1", "v2"):
        assert ours[f"i({source})"] == pytest.approx(theirs[f"I({source})"], rel=1e-9)
    assert ours["i(v1)"] == pytest.approx(-(1 / 7 + 1 / 9 + 1 / 14), rel=1e-12)
    assert ours["i(v2)"] == pytest.approx(-(1 / 5 + 1 / 6 + 1 / 10), rel=1e-12)


def test_library_sections(ngspice, tmp_path):
    library = tmp_path / "parts.lib"
    # a section line may end in a comment (it found no section)
    library.write_text("* parts\n.lib low ; the low one\nRl a 0 1k\n.endl\n"
                       ".lib high $ the high one\nRl a 0 9k\n.endl\n")
    text = f"""library
V1 in 0 10
R1 in a 1k
.lib '{library}' high
"""
    assert_op_matches(text, ngspice, ["a"])
    assert op_of(text + ".op\n")["v(a)"] == pytest.approx(9.0, rel=1e-12)


def test_conditional_blocks(ngspice):
    text = """if
.param corner=2
V1 in 0 10
R1 in a 1k
.if (corner == 1)
R2 a 0 1k
.elseif (corner == 2)
R2 a 0 3k
.else
R2 a 0 9k
.endif
"""
    assert_op_matches(text, ngspice, ["a"])
    assert op_of(text + ".op\n")["v(a)"] == pytest.approx(7.5, rel=1e-12)


def test_a_lone_equals_sign_compares_in_a_condition_and_a_func_may_take_nothing(ngspice):
    text = """if (a = b), f()
.param corner=2
.func three() {3}
V1 in 0 {three()}
R1 in a 1k
.if (corner = 1)
R2 a 0 1k
.elseif (corner = 2)
R2 a 0 3k
.endif
"""
    assert_op_matches(text, ngspice, ["a"])
    assert op_of(text + ".op\n")["v(a)"] == pytest.approx(2.25, rel=1e-12)
    with pytest.raises(mna.NetlistError, match="unexpected '=' in expression"):
        mna.read_string("t\nR1 a 0 {1 = 1}\n")


@pytest.mark.parametrize("varies", [".step param p list 1 2\n.op\n", ".dc param p 0 2 1\n",
                                    ".mc 3 seed=1\n.op\n"])
def test_a_condition_on_a_varied_parameter_is_refused(varies):
    """A .if picks cards once, at the nominal values: at the step p = 2 the block would
    silently stay out. Through another parameter too; .mc varies a random function."""
    text = ("t\n.param p=1\n.param q={2*p*agauss(1,0.1,1)}\nV1 a 0 1\nR1 a 0 1\n"
            ".if (q > 3)\nR2 a 0 1\n.endif\n" + varies)
    with pytest.raises(mna.NetlistError, match="a .if picks cards once") as info:
        mna.read_string(text)
    assert info.value.location.line == 6
    assert mna.read_string(text.replace("q > 3", "1 > 3"))   # a constant condition stays


def test_temperature_coefficients_of_resistors(ngspice):
    text = """tc
.temp 75
V1 in 0 10
R1 in a 1k tc1=2e-3 tc2=1e-5
R2 a b 1k temp=100 tc1=4e-3
R3 b 0 2k dtemp=-25 tc1=1e-3
"""
    assert_op_matches(text, ngspice, ["a", "b"])


def test_temper_is_the_circuit_temperature_in_expressions(ngspice):
    text = """temper
.param p={2*temper}
V1 in 0 10
R1 in a {1k*(1 + temper/100)}
R2 a 0 {p}
D1 a b dt
R3 b 0 1k
.model dt D(IS={1e-14*temper/50})
.temp 50
.options reltol=1e-10
"""
    assert_op_matches(text, ngspice, ["a", "b"])
    for card, celsius in (("", 27.0), (".temp 50", 50.0), (".options temp=-5", -5.0)):
        assert op_of(f"t\nV1 x 0 {{temper}}\nR1 x 0 1\n{card}\n.op\n")["v(x)"] == celsius
    with pytest.raises(mna.NetlistError, match="'temper' is reserved .the circuit's temp"):
        mna.read_string("t\n.param temper=1\nR1 a 0 1\n")
    with pytest.raises(mna.NetlistError, match="temper is the circuit's temperature"):
        mna.read_string("t\nR1 a 0 {temper}\n.step param temper 0 50 25\n.op\n")


def test_resistor_tc_tce_scale_and_multiplicity(ngspice):
    text = """tc= tce= m= scale=, and ac= at a temperature
.temp 75
V1 in 0 DC 10 AC 1
R1 in a 1k tc1=2e-3 tc2=1e-5
R2 a b 1k tc=4e-3 ac=5k
R3 b c 2k tce=0.7 tc1=1
R4 c d 1k m=2
R5 d 0 1k scale=3
.options reltol=1e-10
"""
    assert_op_matches(text, ngspice, ["a", "b", "c", "d"])
    assert_ac_matches(text, ngspice, ["V(a)", "V(b)", "V(c)", "V(d)"])


def test_capacitor_and_inductor_temperature_coefficients_scale_and_spellings(ngspice):
    """ngspice's tc1=, tc2=, temp=, dtemp=, scale= on C and L (a K coupling takes the
    inductances so made), and the value spelt resistance=, capacitance=, cap=, inductance=."""
    text = """tc on C and L
.options tnom=25
.temp 60
V1 in 0 DC 0 AC 1
R1 in a 1k tc1=0.002 tc2=1e-5 scale=1.5 m=2
C1 a 0 capacitance=1u tc1=0.003 tc2=2e-5 scale=2 m=3
L1 a b inductance=10m tc1=-0.001 tc2=3e-6 temp=80 scale=0.5 m=2
R2 b 0 resistance=100 dtemp=10 tc1=0.01
L2 b c 5m tc1=0.002
R3 c 0 50
K1 L1 L2 0.6
C2 c 0 cap=2u dtemp=-20 tc1=0.004
"""
    assert_ac_matches(text, ngspice, ["V(a)", "V(b)", "V(c)"])
    # one capacitor alone: its admittance at 1 kHz is that of 1u (1 + 0.003 dT + 2e-5 dT^2)
    # x 2 x 3, dT = 35
    (result,) = mna.run(mna.read_string(
        "c\n.options tnom=25\n.temp 60\nV1 a 0 AC 1\nC1 a 0 1u tc1=0.003 tc2=2e-5 scale=2 "
        "m=3\n.ac lin 1 1k 1k\n"))
    capacitance = 1e-6 * (1 + 0.003 * 35 + 2e-5 * 35**2) * 6
    assert -result["I(V1)"][0] == pytest.approx(2j * math.pi * 1e3 * capacitance, rel=1e-12)


@pytest.mark.parametrize("line, message", [
    ("R1 a 0 r=1k resistance=2k", "R1: give one value .r= or resistance=."),
    ("C1 a 0 cap=1u c=2u", "C1: give one value .c= or cap=."),
])
def test_a_value_spelt_twice_is_refused(line, message):
    with pytest.raises(mna.NetlistError, match=message) as raised:
        mna.read_string(f"t\nV1 a 0 1\n{line}\n.op\n")
    assert raised.value.location.line == 3


def test_resistor_models(ngspice):
    text = """SPICE's resistor model
.temp 60
V1 in 0 DC 10 AC 1
R1 in a sheet L=11u W=2u
.model sheet R(RSH=1000 NARROW=0.5u SHORT=1u TC1=1e-3)
R2 a b 2k fixed
.model fixed r r=1 tc1=3e-3 tnom=40
R3 b c fixed2 tc1=0
.model fixed2 res(resistance=3k tc1=5e-3)
R4 c d plain ac=4k
.model plain R(R=1k TCE=0.5)
R5 d 0 1k
.options reltol=1e-10
"""
    assert_op_matches(text, ngspice, ["a", "b", "c", "d"])
    assert_ac_matches(text, ngspice, ["V(a)", "V(b)", "V(c)", "V(d)"])
    # R1: (11u - 2u) / (2u - 1u) * 1000 * (1 + 1e-3 * 33), R3: 3k exactly (tc1=0 wins)
    sheet = 9e3 * (1 + 1e-3 * 33)
    op = op_of(text + ".op\n")
    assert op["i(v1)"] == pytest.approx(-(10 - op["v(a)"]) / sheet, rel=1e-12)
    assert (op["v(b)"] - op["v(c)"]) / (op["v(a)"] - op["v(b)"]) == pytest.approx(
        3e3 / (2e3 * (1 + 3e-3 * 20)), rel=1e-12)


@pytest.mark.parametrize(("model", "message"), [
    ("R(TC1=1m)", "no resistance: give a value, or r= or rsh="),
    ("R(RSH=1k NARROW=2u)", "the sheet is 1e-05 long and -2e-06 wide"),
    ("R(RSH=1k BOGUS=1)", "unknown parameters bogus"),
])
def test_a_resistor_model_that_gives_no_resistance_is_refused(model, message):
    with pytest.raises(mna.NetlistError, match=message):
        mna.operating_point(mna.read_string(
            f"t\nV1 a 0 1\nR1 a 0 m W=2u\n.model m {model}\n"))


def test_output_lists_may_separate_their_items_by_commas():
    result = mna.operating_point(mna.read_string(
        "t\nV1 a 0 2\nR1 a 0 1\n.print op V(a), I(V1),{V(a)*3}\n"))
    assert dict(zip(result.names, result.values)) == {"V(a)": 2.0, "I(V1)": -2.0,
                                                       "V(a)*3": 6.0}


def test_ac_resistance(ngspice):
    text = """ac=
V1 in 0 DC 1 AC 1
R1 in out 1k ac=3k
R2 out 0 1k
.ac lin 2 1 10
"""
    (op,) = mna.run(mna.read_string(text.replace(".ac lin 2 1 10", ".op")))
    assert op["V(out)"] == pytest.approx(0.5, rel=1e-12)     # DC: 1k
    (ac,) = mna.run(mna.read_string(text))
    reference = ngspice.run(text)["ac"].data
    assert np.allclose(ac["V(out)"], reference["V(out)"], rtol=1e-9)
    assert abs(ac["V(out)"][0]) == pytest.approx(0.25, rel=1e-12)   # AC: 3k


def test_source_values_given_as_assignments(ngspice):
    text = """dc= and ac= on sources
V1 a 0 ac=2 45 dc=3
R1 a 0 1k
V2 b 0 dc = 5 ac = 1
R2 b 0 1k
I3 0 c DC=1m SIN(0 1m 1k)
R3 c 0 1k
.ac lin 1 1k 1k
"""
    ours = op_of(text)
    theirs = ngspice.run(text.replace(".ac lin 1 1k 1k", ".op"))["op"].data.iloc[0]
    for node in ("a", "b", "c"):
        assert ours[f"v({node})"] == pytest.approx(theirs[f"V({node})"], rel=1e-12)
    (ac,) = mna.run(mna.read_string(text))
    reference = ngspice.run(text)["ac"].data
    for node in ("a", "b", "c"):
        assert np.allclose(ac[f"V({node})"], reference[f"V({node})"], rtol=1e-12, atol=1e-15)
    assert ac["V(a)"][0] == pytest.approx(2 * np.exp(1j * np.pi / 4), rel=1e-12)


def test_ngspice_functions_in_parameters_and_behavioural_sources(ngspice):
    # pwr keeps the sign of its base in a B source, not in a .param expression (as ngspice)
    text = """functions
.param p=pwr(-2,3)
V9 9 0 1
B1 1 0 V=pwr(-2,3)+0*V(9)
V3 3 0 {pwr(-2,3)}
V4 4 0 {p}
B6 6 0 V=u(0)+uramp(-1)+u2(0.5)+nint(2.5)+sgn(-3)+asinh(1)+0*V(9)
V7 7 0 {nint(2.5)+nint(-3.5)+int(-2.7)+sqr(3)+arctan(1)+sgn(-2)+atanh(0.5)+acosh(2)}
V8 8 0 2.5
B8 88 0 V=nint(V(8))+10*nint(-V(8)+1)
R8 88 0 1k
B9 99 0 V=eq0(V(8)-2.5)+2*ne0(V(8))+4*gt0(-V(8))+8*lt0(-V(8))+16*ge0(V(8)-2.5)+32*le0(V(8))
R9 99 0 1k
R1 1 0 1k
R3 3 0 1k
R4 4 0 1k
R6 6 0 1k
R7 7 0 1k
"""
    assert_op_matches(text, ngspice, ["1", "3", "4", "6", "7", "88", "99"])   # 88: ties to even
    op = op_of(text + ".op\n")
    assert op["v(1)"] == -8.0 and op["v(3)"] == 8.0 and op["v(99)"] == 1 + 2 + 8 + 16


def test_behavioural_sources_undefined_at_the_all_zero_guess(ngspice):
    text = """ln, log10 and 1/x of a node a source sets
V1 1 0 2.7
B1 b1 0 V=ln(V(1))
B2 b2 0 V=log10(V(1)) + 1/V(1)
R2 b2 0 1k
B3 0 b3 I=1m*sqrt(V(1))/V(1)
R3 b3 0 1k
"""
    assert_op_matches(text, ngspice, ["b1", "b2", "b3"])
    assert op_of(text + ".op\n")["v(b1)"] == pytest.approx(math.log(2.7), rel=1e-12)


def test_ngspice_functions_across_their_corners_in_a_dc_sweep(ngspice):
    text = """steps, ramps and powers of an unknown
V1 1 0 0
B1 2 0 V=u(V(1))+uramp(V(1))+u2(V(1))+sgn(V(1))+nint(V(1)*1.3)+pwr(V(1),3)
R2 2 0 1k
B3 3 0 I=1m*pwr(V(3)+V(1),3)+1m*V(3)+1m*asinh(V(3))
.options reltol=1e-9 abstol=1e-15 vntol=1e-12
.dc V1 -2.05 2 0.1
"""
    assert_dc_matches(text, ngspice, ["2", "3"], atol=1e-9)


@pytest.mark.parametrize("count", ["3", "2.5"])
def test_a_pulse_of_so_many_periods(ngspice, count):
    """PULSE's eighth argument is ngspice's number of pulses (of periods: 2.5 cuts the third
    pulse at 25 us); it was refused."""
    text = (f"np\nV1 a 0 PULSE(0 1 0 1u 1u 5u 10u {count})\nR1 a b 1k\nC1 b 0 1n\n"
            ".tran 0.1u 60u\n")
    theirs = ngspice.run(text)["tran"].data
    (ours,) = mna.run(mna.read_string(text))
    t = theirs["time"].to_numpy()
    assert np.max(np.abs(np.interp(t, ours["time"], ours["V(a)"]) - theirs["V(a)"])) < 1e-12
    assert np.max(np.abs(np.interp(t, ours["time"], ours["V(b)"]) - theirs["V(b)"])) < 2e-3
    late = ours["time"] > 10e-6 * float(count)
    assert np.all(ours["V(a)"][late] == 0.0)


def test_pwl_repeat_and_delay(ngspice):
    text = """PWL r= td=
V1 a 0 PWL(0 0 1m 1 2m 1 3m 0) r=1m td=0.5m
R1 a 0 1k
V2 b 0 PWL(0 0 1m 1 2m 0) r=0
R2 b 0 1k
V3 c 0 pwl 0 0 1m 1 2m 0 td=0.2m
R3 c 0 1k
V4 d 0 PWL(0 1 1m 2) r=-1
R4 d 0 1k
.tran 10u 10m
"""

    def expected(time, points, repeat=None, delay=0.0, left=False):
        """The waveform; with `left`, the end of a period where the next one starts."""
        times, levels = np.array(points[0::2]), np.array(points[1::2])
        local = time - delay
        if repeat is not None:
            period = times[-1] - repeat
            since = (local - repeat) % period
            wrap = np.minimum(since, period - since) < 1e-9 * period
            again = np.where(wrap, times[-1] if left else repeat, repeat + since)
            local = np.where(local > times[-1], again, local)
        return np.interp(local, times, levels)

    waves = {"a": ((0, 0, 1e-3, 1, 2e-3, 1, 3e-3, 0), 1e-3, 0.5e-3),
             "b": ((0, 0, 1e-3, 1, 2e-3, 0), 0.0, 0.0),
             "c": ((0, 0, 1e-3, 1, 2e-3, 0), None, 0.2e-3),
             "d": ((0, 1, 1e-3, 2), None, 0.0)}
    (ours,) = mna.run(mna.read_string(text))
    theirs = ngspice.run(text)["tran"].data
    for node, wave in waves.items():
        for result in (ours, theirs):   # where it jumps, either side (mna: the left one)
            time, value = np.asarray(result["time"]), np.asarray(result[f"V({node})"])
            error = np.minimum(np.abs(value - expected(time, *wave)),
                               np.abs(value - expected(time, *wave, left=True)))
            assert np.max(error) < 1e-9, node
    corners = 1e-3 + 2e-3 * np.arange(4) + 0.5e-3   # where V(a) starts again (and others)
    assert np.all(np.min(np.abs(np.asarray(ours["time"])[:, None] - corners), axis=0) < 1e-12)
    with pytest.raises(mna.NetlistError, match="r=0.5 must be one of its time points"):
        mna.read_string("t\nV1 a 0 PWL(0 0 1 1) r=0.5\nR1 a 0 1\n.tran 1m 2\n")


def test_temperature_coefficients_of_b_sources_and_resistances_that_read_the_circuit(ngspice):
    text = """B tc1=, R={f(V(x))} tc1=
.temp 127
V1 1 0 DC 100 AC 10
B2 2 0 I=V(1)/1k tc1=1e-3 tc2=1e-5
R2 2 0 1k
B3 3 0 V=V(1) tc1=1e-3
R3 3 0 1k
V9 9 0 DC 500 AC 0
R4 1 4 r={1k + V(9)} tc1=1e-3
V4 4 0 0
R5 1 5 {1k*(1 + V(5,0))}
R6 5 0 1k
.options reltol=1e-10
"""
    assert_op_matches(text, ngspice, ["2", "3", "5"])
    op = op_of(text + ".op\n")
    assert op["v(3)"] == pytest.approx(100 * 1.1, rel=1e-12)
    assert op["i(v4)"] == pytest.approx(100 / (1.5e3 * 1.1), rel=1e-12)
    assert_ac_matches(text, ngspice, ["V(2)", "V(3)", "V(5)", "I(v4)"])
    (tran,) = mna.run(mna.read_string("r(t)\nV1 a 0 1\nR1 a 0 {1k*(1 + time/1m)}\n"
                                      ".tran 0.1m 2m\n"))
    assert np.allclose(-tran["I(V1)"], 1e-3 / (1 + tran["time"] / 1e-3), rtol=1e-9)


def test_distortion_inputs_of_a_source_are_ignored_with_a_warning(caplog):
    plain = "t\nV1 a 0 DC 1 AC 1 SIN(0 1 1k)\nR1 a b 1k\nC1 b 0 1u\n.ac lin 3 1 1k\n"
    with caplog.at_level(logging.WARNING):
        (ours,) = mna.run(mna.read_string(plain.replace("SIN(0 1 1k)",
                                                        "SIN(0 1 1k) DISTOF1 0.5 DISTOF2 0.2 90")))
    assert "DISTOF1 is for .disto" in caplog.text and "DISTOF2" in caplog.text
    (reference,) = mna.run(mna.read_string(plain))
    assert np.array_equal(ours["V(b)"], reference["V(b)"])


def test_pwl_function_of_a_behavioural_source(ngspice):
    text = """pwl(x, points...) through its corners and beyond them
V1 1 0 0
V5 5 0 1
B1 2 0 V=pwl(V(1), -1,-2, 0,0, 1,3, 2,3.5)
R2 2 0 1k
B4 0 4 I=0.3m*pwl(V(4)+V(5), 0,0, 1,1, 2,4)
R4 4 0 1k
.options reltol=1e-10 abstol=1e-15 vntol=1e-12
.dc V1 -3.05 3 0.1
"""
    ours = assert_dc_matches(text, ngspice, ["2", "4"], atol=1e-12)
    assert ours["V(2)"][0] == pytest.approx(-2 - 2 * 2.05, rel=1e-12)   # the first segment on
    falling = mna.expr.parse_expression("pwl(x, 2,1, 0,0, -2,-1)", _HERE)   # as ngspice 40
    assert [falling.evaluate({"x": x}) for x in (-3, 1, 3)] == [-1.5, 0.5, 1.5]
    (tran,) = mna.run(mna.read_string("t\nV1 a 0 {pwl(time, 0,0, 1m,1, 2m,0)}\nR1 a 0 1\n"
                                      ".tran 0.3m 3m\n"))
    assert np.min(np.abs(tran["time"] - 1e-3)) < 1e-15   # a source's corner: a breakpoint
    assert max(tran["V(a)"]) == pytest.approx(1.0, abs=1e-8)   # (the left limit, 1e-9 early)
    assert tran["V(a)"][-1] == pytest.approx(-1.0, rel=1e-12)   # the last segment on


def test_a_comparison_of_a_node_held_at_its_threshold_is_a_tie(ngspice):
    text = """ties: V(8) is the threshold itself
V8 8 0 2.5
B1 1 0 V=V(8) >= 2.5
B2 2 0 V=V(8) > 2.5
B3 3 0 V=V(8) <= 2.5
B4 4 0 V=V(8) < 2.5
B5 5 0 V=ge0(V(8) - 2.5) + 2*le0(2.5 - V(8))
"""
    assert_op_matches(text, ngspice, ["1", "2", "3", "4", "5"])
    op = op_of(text + ".op\n")
    assert [op[f"v({k})"] for k in range(1, 6)] == [1, 0, 1, 0, 3]


def test_the_micro_sign_is_micro(ngspice):
    text = "micro\nI1 0 a 2\u00b5\nR1 a 0 1k\nC1 a 0 10\u03bcF\n"
    assert_op_matches(text.replace("\u03bc", "\u00b5"), ngspice, ["a"])
    assert op_of(text + ".op\n")["v(a)"] == pytest.approx(2e-3, rel=1e-12)


def test_polynomial_controlled_sources(ngspice):
    text = """poly
V1 a 0 2
V2 b 0 3
R1 a 0 1k
R2 b 0 1k
E1 e 0 POLY(2) a 0 b 0 1 2 3 0.5 0.25 0.125
R3 e 0 1k
G1 0 g POLY(1) a 0 1m 2m 3m
R4 g 0 1k
F1 f 0 POLY(1) V1 0 2
R5 f 0 1k
H1 h 0 POLY(2) V1 V2 0 100 200
R6 h 0 1k
"""
    assert_op_matches(text, ngspice, ["e", "g", "f", "h"])


def test_polynomial_controls_as_pspice_node_pairs(ngspice):
    text = """POLY(2) (3,0) (4,0), as vendor macromodels write them
V3 3 0 1
V4 4 0 2
R3 3 0 1k
R4 4 0 1k
EGND 99 0 POLY(2) (3,0) (4,0) 0 .5 .5
R1 99 0 1k
G1 0 g POLY(2) (3, 4) (4,0) 1m 2m 3m
R2 g 0 1k
"""
    assert_op_matches(text, ngspice, ["99", "g"])
    assert op_of(text + ".op\n")["v(99)"] == pytest.approx(1.5, rel=1e-12)


def test_behavioural_controlled_sources(ngspice):
    """E and G with PSpice's VALUE= and TABLE, and ngspice's vol= and cur=, swept through
    the tables' corners and beyond their ends (where they hold their end values). A TABLE
    is linear between its points, as PSpice reads it; ngspice's XSPICE stand-in rounds each
    corner over a tenth of its shorter segment, so it is compared away from the corners."""
    text = """value, table, vol, cur
V1 in 0 0
R0 in 0 1k
E1 o1 0 VALUE={2*V(in)}
R1 o1 0 1k
E2 o2 0 TABLE {V(in)} = (0,0) (1,2)
R2 o2 0 1k
G3 0 o3 value = {1m*V(in)*V(in)}
R3 o3 0 1k
E4 o4 0 vol='V(in)*3'
R4 o4 0 1k
G5 0 o5 cur='1m*V(in)'
R5 o5 0 1k
G6 0 o6 TABLE {V(in)+V(o1)} (-1,-1m), (0.25,0) (2,1m)
R6 o6 0 1k
.dc V1 -2 2 0.125
"""
    (ours,) = mna.run(mna.read_string(text))
    theirs = ngspice.run(text)["dc"].data
    v = ours["V(in)"]
    exact = {"o1": 2 * v, "o2": np.interp(v, [0, 1], [0, 2]), "o3": v * v, "o4": 3 * v,
             "o5": v, "o6": np.interp(3 * v, [-1, 0.25, 2], [-1, 0, 1])}
    smoothed = {"o2": np.abs(v[:, None] - [0, 1]).min(axis=1) <= 0.1,
                "o6": np.abs(3 * v[:, None] - [-1, 0.25, 2]).min(axis=1) <= 0.2}
    for node, values in exact.items():
        assert np.allclose(ours[f"V({node})"], values, rtol=0, atol=1e-15), node
        away = ~smoothed.get(node, np.zeros(len(v), bool))
        assert np.allclose(ours[f"V({node})"][away], theirs[f"V({node})"][away], rtol=0,
                           atol=1e-12), node


@pytest.mark.parametrize(("line", "message"), [
    ("E1 o 0 TABLE V(in) = (0,0) (1,2)", "TABLE takes its control in braces"),
    ("E1 o 0 TABLE {V(in)} = (0,0)", "TABLE needs at least two points"),
    ("E1 o 0 TABLE {V(in)} = (0,0) 1 2", "a TABLE point is a pair"),
    ("E1 o 0 TABLE {V(in)} = (0,0) (0,1) (1,2)", "first two points and its last two need"),
    ("E1 o 0 TABLE {V(in)} = (0,0) (1,1) (1.0,2)", "first two points and its last two need"),
    ("E1 o 0 TABLE {V(in)} = (0,0) (0.0,1) (1,2)", "first two points and its last two need"),
    ("E1 o 0 VALUE={V(in)} vol={V(in)}", "or VOL="),
    ("G1 o 0", "expected the controlling nodes nc\\+ nc-, POLY"),
])
def test_behavioural_controlled_sources_refuse_what_they_cannot_read(line, message):
    with pytest.raises(mna.NetlistError, match=message):
        mna.read_string(f"bad\nV1 in 0 1\nR1 in 0 1k\n{line}\nR2 o 0 1k\n.op\n")


def test_a_nodeset_on_some_nodes_picks_the_state_it_names(ngspice):
    """A latch of two cross-coupled NPNs has a symmetric operating point (both collectors at
    1.13 V, where Newton from nothing goes) and two latched ones. A .nodeset on the
    collectors alone used to be only Newton's start, and the bases, at 0 V, pulled it back to
    the symmetric point; held there first, as ngspice holds it, it picks the latched state,
    for the .op and for the transient's start."""
    text = LATCH
    symmetric = op_of(text + ".op\n")
    assert symmetric["v(c1)"] == pytest.approx(symmetric["v(c2)"], rel=1e-9)
    latched = text + ".nodeset V(c1)=0.1 V(c2)=4.5\n.options reltol=1e-9 vntol=1e-13 abstol=1e-17\n"
    assert_op_matches(latched, ngspice, ["c1", "c2", "b1", "b2"])
    ours = op_of(latched + ".op\n")
    assert ours["v(c1)"] < 0.1 and ours["v(c2)"] > 4.5
    (tran,) = mna.run(mna.read_string(latched + ".tran 1u 10u\n"))
    for node in ("c1", "c2"):
        assert np.allclose(tran[f"V({node})"], ours[f"v({node})"], rtol=1e-9)


def test_m_beside_a_value_is_ngspices_multiplier_on_c_and_l(ngspice):
    """``C2 c 0 1n m=2`` is two capacitors in parallel, ``L1 ... 1m m=2`` two inductors: half
    the inductance, and the mutual inductance of one copy in a K coupling (each copy carries
    half the current and couples to L2 by k sqrt(L1 L2)); refused before (m= alone is a
    mass). AC against ngspice at 1 kHz, and the closed form of the first: a 1k-2n low-pass."""
    text = """multipliers
V1 in 0 DC 0 AC 1
R1 in c 1k
C2 c 0 1n m=2
R3 in l 1k m=2
L1 l 0 1m m=2
L2 k 0 4m
R4 k 0 50
K1 L1 L2 0.5
"""
    assert_ac_matches(text, ngspice, ["V(c)", "V(l)", "V(k)"])
    (ac,) = mna.run(mna.read_string(text + ".ac lin 1 1k 1k\n"))
    assert ac["V(c)"][0] == pytest.approx(1 / (1 + 2j * np.pi * 1e3 * 1e3 * 2e-9), rel=1e-12)
    keyed = text.replace("C2 c 0 1n m=2", "C2 c 0 C=1n m=2").replace("1m m=2", "L=1m m=2")
    assert_ac_matches(keyed, ngspice, ["V(c)", "V(l)", "V(k)"])   # m= beside C= and L=


@pytest.mark.parametrize("sweep", [".dc TEMP -40 125 15", ".dc R2 500 2k 250",
                                   ".dc R2 500 2k 500 TEMP 0 100 50"])
def test_dc_sweeps_of_the_temperature_and_of_a_resistor(ngspice, sweep):
    """ngspice's .dc TEMP (diode and BJT parameters, a resistor's tc1 and tc2) and .dc of a
    resistor's value, alone and nested, against ngspice at tight tolerances; refused before
    ("'TEMP' is not an independent source")."""
    text = f"""sweeps
.model D1 D(IS=1e-14 N=1.2 EG=1.11 XTI=3 RS=10)
.model QN NPN(IS=1e-16 BF=100 XTB=1.5)
I1 0 a 1m
D1 a 0 D1
V2 b 0 5
R1 b c 1k tc1=1e-3 tc2=1e-6
R2 c 0 1k
VB bb 0 0.7
RB bb base 10k
RC b col 1k
Q1 col base 0 QN
.options reltol=1e-9 vntol=1e-13 abstol=1e-17
{sweep}
"""
    result = assert_dc_matches(text, ngspice, ["a", "c", "col"], atol=1e-10)
    rise = result["TEMP"] - 27 if "TEMP" in result.columns else 0.0
    r1 = 1e3 * (1 + 1e-3 * rise + 1e-6 * rise**2)
    r2 = result["R2"] if "R2" in result.columns else 1e3
    assert np.allclose(result["V(c)"], 5 * r2 / (r1 + r2), rtol=1e-12)
    if "TEMP" in result.columns:
        assert result.units["TEMP"] == "°C"


@pytest.mark.parametrize(("sweep", "message"), [
    (".dc TEMP -300 0 10", "the temperature must stay above -273.15"),
    (".dc C1 1n 2n 1n", "'C1' is not an independent source"),
    (".dc R9 1 2 1", "'R9' is not a resistor"),
    (".dc R1 0 1k 500", "the sweep of R1 reaches 0"),   # was a ZeroDivisionError
])
def test_dc_sweeps_refuse_what_they_cannot_vary(sweep, message):
    with pytest.raises(mna.NetlistError, match=message):
        mna.read_string(f"bad\nV1 a 0 1\nR1 a b 1k\nC1 b 0 1n\n{sweep}\n")


def test_a_dc_sweep_of_a_resistor_inside_a_subcircuit():
    (dc,) = mna.run(mna.read_string("divider\n.subckt half a b\nR1 a b 1k\nR2 b 0 1k\n.ends\n"
                                    "V1 a 0 1\nX1 a b half\n.dc X1.R1 1k 3k 1k\n"))
    assert np.allclose(dc["V(b)"], 1e3 / (dc["X1.R1"] + 1e3), rtol=1e-12)


@pytest.mark.parametrize("nodeset", ["", ".nodeset V(x)=2.5\n"])
def test_an_off_transistor_picks_the_latch_state_it_names(ngspice, nodeset):
    """Q1 OFF is held off until Newton first converges, then let go, as in ngspice: the
    latch settles with Q1 off (V(c1) = 4.6145 V). The hold never ended before (its
    junction steps counted as limited from the held values at every iteration) and the
    symmetric point came of gmin stepping; with a nodeset, OFF was not held at all."""
    text = (LATCH.replace("Q1 c1 b1 0 QN", "Q1 c1 b1 0 QN OFF") + "RX vcc x 1k\nRY x 0 1k\n"
            ".options reltol=1e-9 vntol=1e-13 abstol=1e-17\n" + nodeset)
    assert_op_matches(text, ngspice, ["c1", "c2", "b1", "b2"])
    ours = op_of(text + ".op\n")
    assert ours["v(c1)"] > 4.6 and ours["v(c2)"] < 0.1
    (tran,) = mna.run(mna.read_string(text + ".tran 1u 10u\n"))
    assert np.allclose(tran["V(c1)"], ours["v(c1)"], rtol=1e-9)


def test_an_ic_on_a_node_without_storage_lets_go_into_the_nearby_state(ngspice):
    """.ic V(c1)=0.1 holds a latch without capacitors off its balance at t = 0; the rate
    the start read from that imbalance (as if a charge moved) was carried into the
    trapezoidal steps: V(c1) went to -1.01 V, then 10.96 V, and the latch flipped. Rows
    without a charge have no rate: the first step settles at the state the .ic names, as
    ngspice's."""
    text = LATCH + ".ic V(c1)=0.1\n.tran 1u 10u\n"
    (ours,) = mna.run(mna.read_string(text))
    theirs = ngspice.run(text)["tran"].data
    assert ours["V(c1)"][0] == 0.1
    assert np.max(np.abs(ours["V(c1)"][1:] - theirs["V(c1)"].iloc[-1])) < 1e-6   # 2e-9
    assert np.max(np.abs(ours["V(c2)"][1:] - theirs["V(c2)"].iloc[-1])) < 1e-6


def test_forms_of_ported_decks(ngspice):
    """A parameter's name alone as a value (on an R line and an instance's parameter),
    // comments, E and G with VALUE {expr} (no '='), and ternary_fcn: each refused before;
    V(b) = 2k / 3k, V(c) = 0.5, V(e) = 2 V(b), V(g) = 1k * 1m * V(b), V(t) = 4."""
    text = """ported
// a comment line
.param rr=2k p2={ternary_fcn(1 > 2, 3, 4)}
.subckt half a b r=1k
R1 a b r // the upper leg
.ends
V1 a 0 1 // the supply
R1 a b 1k
R2 b 0 rr
X2 a c half r=rr
R3 c 0 2k
E1 e 0 VALUE {2*V(b)}
R4 e 0 1k
G1 0 g value {1m*V(b)}
R5 g 0 1k
V2 t 0 {p2}
R6 t 0 1k
"""
    assert_op_matches(text, ngspice, ["b", "c", "e", "g", "t"])
    op = op_of(text + ".op\n")
    assert op["v(b)"] == pytest.approx(2 / 3, rel=1e-12) and op["v(t)"] == 4.0
    assert op["v(c)"] == pytest.approx(0.5, rel=1e-12)


def test_a_parameters_name_alone_is_read_where_ngspice_reads_it(ngspice):
    """After AC a parameter's name is the magnitude and phase (it was taken for the DC
    value: V1 a 0 AC 1 ph gave 45 V); a parameter wins over a model of its name, as
    ngspice substitutes it first; a node named value or table stays a node; temper alone
    is no value (only {temper})."""
    text = """alone
.param ph=45 amag=2 rm=2k
.model rm R(r=5k)
V1 a 0 AC 1 ph
R1 a 0 1k
I1 0 c AC amag
R3 c 0 1k
V2 b 0 1
R4 b d 1k
R2 d 0 rm
"""
    assert_ac_matches(text.replace("I1 0 c AC amag", "I1 0 c AC 2"), ngspice,
                      ["V(a)", "V(c)", "V(d)"])
    assert_op_matches(text.replace("I1 0 c AC amag", "I1 0 c AC 2"), ngspice, ["d"])
    text += "E1 e 0 value 0 2\nV3 value 0 DC 0.5 AC 0\nR5 e 0 1k\n"   # ngspice refuses it
    (ac,) = mna.run(mna.read_string(text + ".ac lin 1 1k 1k\n"))
    assert ac["V(a)"][0] == pytest.approx(np.exp(1j * np.pi / 4), rel=1e-12)
    assert ac["V(c)"][0] == pytest.approx(2e3, rel=1e-12)
    op = op_of(text + ".op\n")
    assert op["v(a)"] == 0.0 and op["v(c)"] == 0.0
    assert op["v(d)"] == pytest.approx(2 / 3, rel=1e-12) and op["v(e)"] == 1.0
    with pytest.raises(mna.NetlistError, match="bad number 'temper'"):
        mna.read_string("t\nV1 a 0 1\nR1 a 0 temper\n.op\n")


def test_expressions_as_outputs(ngspice):
    text = """expression outputs
V1 a 0 SIN(0 1 1k)
R1 a b 1k
R2 b 0 2k
C1 b 0 1u
.tran 20u 2m 0 2u
"""
    (result,) = mna.run(mna.read_string(text + ".save {V(b)+0.2} V(a)-V(b) I(V1)*2\n"))
    assert list(result.columns) == ["time", "V(b)+0.2", "V(a)-V(b)", "I(V1)*2"]
    (probes,) = mna.run(mna.read_string(text + ".save V(a) V(b) I(V1)\n"))
    assert np.array_equal(result["V(b)+0.2"], probes["V(b)"] + 0.2)
    assert np.array_equal(result["V(a)-V(b)"], probes["V(a)"] - probes["V(b)"])
    assert np.array_equal(result["I(V1)*2"], probes["I(V1)"] * 2)
    reference = ngspice.run(text)["tran"].data
    ours = np.interp(reference["time"], result["time"], result["V(a)-V(b)"])
    theirs = reference["V(a)"] - reference["V(b)"]
    assert np.max(np.abs(ours - theirs)) < 1e-3 * np.ptp(theirs)


def test_parts_of_probes(ngspice):
    text = """parts of phasors
V1 in 0 DC 2 AC 1
R1 in out 1k
C1 out 0 1u
.ac dec 5 10 10k
.print ac vdb(out) vp(out) vm(out) vr(out) vi(out) im(C1) v(out)
.meas ac gain find vdb(out) at=1k
"""
    result, measured = mna.run(mna.read_string(text))
    w = 2 * np.pi * result["frequency"]
    exact = 1 / (1 + 1j * w * 1e-3)
    assert result["VDB(out)"] == pytest.approx(20 * np.log10(np.abs(exact)), rel=1e-12)
    assert result["VP(out)"] == pytest.approx(np.angle(exact), rel=1e-12)   # radians
    assert result["VM(out)"] == pytest.approx(np.abs(exact), rel=1e-12)
    assert result["VR(out)"] + 1j * result["VI(out)"] == pytest.approx(exact, rel=1e-12)
    assert result["IM(C1)"] == pytest.approx(np.abs(1j * w * 1e-6 * exact), rel=1e-12)
    assert result.units["VDB(out)"] == "dB" and result.units["VP(out)"] == "rad"
    reference = ngspice.run(text)["ac"].data
    assert np.allclose(result["V(out)"], reference["V(out)"], rtol=1e-9)
    # between the sweep's points .meas interpolates, as ngspice does
    k = int(np.searchsorted(result["frequency"], 1e3))
    assert measured["gain"] == pytest.approx(result["VDB(out)"][k], rel=1e-9)
    (op,) = mna.run(mna.read_string(text.split(".ac")[0] + ".op\n.save vdb(out) vp(out)\n"))
    assert op["VDB(out)"] == pytest.approx(20 * np.log10(2)) and op["VP(out)"] == 0


def test_a_part_of_something_else_is_refused():
    with pytest.raises(mna.NetlistError, match="found 'vq\\(out\\)'") as info:
        mna.read_string("t\nV1 out 0 1\nR1 out 0 1\n.save vq(out)\n.op\n")
    assert (info.value.location.line, info.value.location.column) == (4, 7)


@pytest.mark.parametrize("line, named", [
    ("A1 in out amod", "XSPICE code-model devices"),
    ("T1 in 0 out 0 Z0=50 TD=1n", "lossless transmission lines"),
    ("O1 in 0 out 0 lossy", "lossy transmission lines"),
    ("U1 in out 0 urc", "RC lines"),
    ("Z1 out in 0 zmod", "MESFETs"),
    (".sens V(out)", "sensitivity analysis"),
    (".sp dec 10 1 1k", "S-parameter analysis"),
    (".disto dec 10 1 1k", "distortion analysis"),
])
def test_what_mna_does_not_model_is_a_located_refusal(line, named):
    text = f"t\nV1 in 0 DC 1 AC 1\nR1 in out 1k\nR2 out 0 1k\n{line}\n.op\n"
    with pytest.raises(mna.NetlistError, match=f"{named} (is|are) not supported by mna") as info:
        mna.read_string(text)
    assert (info.value.location.line, info.value.location.column) == (5, 1)


@pytest.mark.parametrize("card, column", [
    (".ss in=V1 out=VDB(out)", 15), (".nodeset VM(out)=1", 10), (".ic VDB(out)=1", 5),
    (".four 1k VM(out)", 10),
])
def test_parts_of_probes_are_outputs_only(card, column):
    with pytest.raises(mna.NetlistError, match="expected V\\(node\\), V\\(a,b\\) or I") as info:
        mna.read_string(f"t\nV1 in 0 DC 1 AC 1\nR1 in out 1k\nC1 out 0 1u\n{card}\n.op\n")
    assert (info.value.location.line, info.value.location.column) == (5, column)


def test_an_output_printed_for_several_analyses_is_one_column():
    text = ("t\nV1 in 0 DC 1 AC 1\nR1 in out 1k\nC1 out 0 1u\n.print op V(out) vdb(out)\n"
            ".print ac vdb(out) V(in)\n.save v(OUT)\n.op\n")
    (op,) = mna.run(mna.read_string(text))
    assert op.names == ("V(out)", "VDB(out)", "V(in)")


VENDOR_MODELS = """LTspice-style vendor models
.options reltol=1e-8 vntol=1e-12 abstol=1e-16
Vc c 0 DC 5
Vb b 0 DC 0.7
Q1 c b 0 Q2N3904
V1 a 0 DC 1
R1 a d 100
D1 d 0 D1N4148
.model Q2N3904 NPN(IS=1E-14 VAF=100 Bf=300 IKF=0.4 XTB=1.5 BR=4 CJC=4E-12 CJE=8E-12 RB=20
+ RC=0.1 RE=0.1 TR=250E-9 TF=350E-12 ITF=1 VTF=2 XTF=3 Vceo=40 Icrating=200m{maker})
.model D1N4148 D(IS=2.52n RS=.568 N=1.752 CJO=4p M=.4 TT=20n Iave=200m Vpk=75{maker}{kind})
"""


def test_datasheet_values_of_vendor_models_are_not_used(ngspice, caplog):
    """LTspice's libraries give a transistor's Vceo and Icrating, a diode's Iave, Vpk and
    type and each part's manufacturer; no simulator reads them (ngspice ignores the numbers
    with a warning and stops at a manufacturer's name). mna's operating point is that of
    the models without them and ngspice's with the numbers."""
    written = VENDOR_MODELS.format(maker=" mfg=Philips", kind=" type=silicon")
    with caplog.at_level(logging.INFO):
        ours = op_of(written + ".op\n")
    assert "Vceo=40 Icrating=200m mfg=Philips" in caplog.text
    bare = VENDOR_MODELS.format(maker="", kind="")
    for datasheet in (" Vceo=40 Icrating=200m", " Iave=200m Vpk=75"):
        bare = bare.replace(datasheet, "")
    assert ours == op_of(bare + ".op\n")
    assert_op_matches(VENDOR_MODELS.format(maker="", kind=""), ngspice, ["c", "b", "d"])
    theirs = ngspice.run(VENDOR_MODELS.format(maker="", kind="") + ".op\n")["op"].data.iloc[0]
    for source in ("vc", "vb", "v1"):
        assert ours[f"i({source})"] == pytest.approx(theirs[f"I({source})"], rel=1e-9)


def test_a_misspelt_model_parameter_is_still_refused():
    text = VENDOR_MODELS.format(maker="", kind="").replace("Bf=300", "Bff=300") + ".op\n"
    with pytest.raises(mna.NetlistError, match="unknown parameters bff"):
        mna.read_string(text)


def test_pspice_parameters_that_ngspice_ignores_are_ignored_with_a_warning(ngspice, caplog):
    """LTspice's 2N3819 carries PSpice's JFET parameters (gate emission N, recombination
    ISR and NR, impact ionisation ALPHA and VK, grading M) that ngspice 39's JFET lacks and
    ignores with a warning: mna warns and gives ngspice's operating point."""
    text = ("jfet\n.options reltol=1e-8 vntol=1e-12 abstol=1e-16\nVd d 0 DC 10\nVg g 0 DC -1\n"
            "J1 d g 0 J2N3819\n.model J2N3819 NJF(Beta=1.304m Betatce=-.5 Rd=1 Rs=1 "
            "Lambda=2.25m Vto=-3 Vtotc=-2.5m Is=33.57f Isr=322.4f N=1 Nr=2 Xti=3 Alpha=311.7u "
            "Vk=243.6 Cgd=1.6p M=.3622 Pb=1 Fc=.5 Cgs=2.414p Kf=9.882E-18 Af=1{maker})\n")
    with caplog.at_level(logging.WARNING):
        ours = op_of(text.format(maker=" mfg=Vishay") + ".op\n")
    assert "Isr=322.4f N=1 Nr=2 Alpha=311.7u Vk=243.6 M=.3622: other simulators'" in caplog.text
    theirs = ngspice.run(text.format(maker="") + ".op\n")["op"].data.iloc[0]
    for source in ("vd", "vg"):
        assert ours[f"i({source})"] == pytest.approx(theirs[f"I({source})"], rel=1e-9, abs=0)
