"""SPICE numbers: suffixes f p n u m k meg g t mil, units after them ignored, m is milli."""

from __future__ import annotations

import pytest

from mna.units import parse_number


@pytest.mark.parametrize(
    "text, value",
    [
        ("1", 1.0), ("-2.5", -2.5), ("+3", 3.0), (".5", 0.5), ("5.", 5.0), ("1e3", 1e3),
        ("1E-3", 1e-3), ("2.5e+2", 250.0),
        ("1f", 1e-15), ("1p", 1e-12), ("1n", 1e-9), ("1u", 1e-6), ("1m", 1e-3), ("1k", 1e3),
        ("1meg", 1e6), ("1g", 1e9), ("1t", 1e12), ("1mil", 25.4e-6),
        ("1M", 1e-3), ("1MEG", 1e6), ("1Meg", 1e6), ("1K", 1e3), ("1MIL", 25.4e-6),
        ("10uF", 1e-5), ("4.7kOhm", 4700.0), ("4.7k", 4700.0), ("100nH", 1e-7),
        ("1megohm", 1e6), ("3V", 3.0), ("2s", 2.0), ("5ms", 5e-3), ("1e3k", 1e6),
        ("2.5Nm", 2.5), ("2.5nm", 2.5e-9), ("12mA", 0.012), ("0.1uF", 1e-7),
    ],
)
def test_numbers_and_suffixes(text, value):
    assert parse_number(text) == pytest.approx(value, rel=1e-15, abs=0)


def test_suffixes_scale_exactly():
    # 10u must be the double nearest 1e-5 (10 * 1e-6 is one ulp off)
    assert parse_number("10u") == 1e-5
    assert parse_number("3.3n") == 3.3e-9
    assert parse_number("4.7k") == 4700.0


@pytest.mark.parametrize("text", ["", "abc", "k", "1x2", "1.2.3", "--1", "1e", "e3", "1k2"])
def test_not_numbers(text):
    # "1e" is read as 1 with the unit "e" by SPICE; the rest are not numbers at all
    if text == "1e":
        assert parse_number(text) == 1.0
    else:
        assert parse_number(text) is None


@pytest.mark.parametrize("text", ["\u0661", "\uff11", "1\u0660k"])
def test_digits_are_ascii(text):
    # Python's float() reads Arabic-Indic and full-width digits: a netlist does not
    assert parse_number(text) is None
