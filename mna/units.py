"""SPICE numbers: ``4.7k``, ``10uF``, ``1meg``, ``2.5Nm``.

As in SPICE, letters after a number's scale suffix are ignored: ``10uF`` is 10e-6. Where they
are not a unit (``m=10kg`` reads as 10k, not 10 kg) `read_number` warns with the place, since
the value the user meant is likely another. ``2.5Nm`` (torque) is the one exception to the
suffix rule that NETLIST.md promises: ``Nm`` with that exact case is a unit, not nano.
"""

from __future__ import annotations

import functools
import logging
import re
from decimal import Decimal
from typing import TYPE_CHECKING

from mna.errors import NetlistError

if TYPE_CHECKING:
    from mna.netlist.model import SourceLocation

log = logging.getLogger(__name__)

SCALE = {
    "t": 1e12,
    "g": 1e9,
    "meg": 1e6,
    "k": 1e3,
    "mil": 25.4e-6,
    "m": 1e-3,
    "u": 1e-6,
    "\u00b5": 1e-6,   # the micro sign, which ngspice reads as u
    "\u03bc": 1e-6,   # the Greek mu, likewise
    "n": 1e-9,
    "p": 1e-12,
    "f": 1e-15,
}
# units a value may carry after its suffix (lower case): those of the domain table and of
# element values
UNITS = {"v", "a", "ohm", "ohms", "f", "h", "s", "sec", "hz", "w", "j", "n", "nm", "pa", "m",
         "rad", "k", "c"}

NUMBER = re.compile(
    r"(?P<mantissa>[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)(?P<suffix>meg|mil|[tgkmunpf\u00b5\u03bc])?"
    r"(?P<unit>[a-z/]*)",
    re.IGNORECASE,
)


RKM = re.compile(r"([0-9]+)(r|meg|[tgkmunpf])([0-9]+)", re.IGNORECASE)   # IEC 60062 codes


@functools.lru_cache(maxsize=4096)  # netlists repeat their values (``100``, ``1p``) many times
def number(text: str) -> tuple[float, str] | None:
    """``(value, stray letters)`` of SPICE number `text` (letters after the scale suffix that
    are no unit, '' where there are none), or None when `text` is not one."""
    match = NUMBER.fullmatch(text)
    if match is None:
        return None
    mantissa, suffix, unit = match["mantissa"], match["suffix"], match["unit"]
    if text[len(mantissa):].startswith("Nm"):
        return float(mantissa), ""
    # Decimal scaling rounds once: 10u is 1e-05, not 10*1e-06 = 9.999999999999999e-06.
    value = float(Decimal(mantissa) * Decimal(repr(SCALE[suffix.lower()]))) if suffix else (
        float(mantissa))
    return value, unit if suffix and unit.lower() not in UNITS else ""


def parse_number(text: str) -> float | None:
    """Value of a SPICE number, or None when `text` is not one.

    >>> parse_number("4.7k"), parse_number("10uF"), parse_number("1MEG")
    (4700.0, 1e-05, 1000000.0)
    """
    parsed = number(text)
    return None if parsed is None else parsed[0]


def read_number(text: str, location: SourceLocation, what: str = "") -> float:
    """The value of SPICE number `text` at `location`: an error when it is none (or not
    finite), a warning when letters after its suffix are not a unit."""
    parsed = number(text)
    if parsed is None:
        hint = " (write {" + text + "} for an expression)" if text[:1].isalpha() else ""
        if rkm := RKM.fullmatch(text):   # the letter as the decimal point: 4K7 for 4.7k
            scale = "" if rkm[2].lower() == "r" else rkm[2]
            hint = f" (the code {text} is not read: write {rkm[1]}.{rkm[3]}{scale})"
        raise NetlistError(f"bad number '{text}'" + (f" for {what}" if what else "") + hint,
                           location)
    value, stray = parsed
    if value != value or abs(value) == float("inf"):
        raise NetlistError(f"the number '{text}' is not finite", location)
    if stray:
        log.warning("%s: '%s' reads as %g: SPICE ignores the letters '%s' after the scale "
                    "suffix, and they are no unit", location, text, value, stray)
    return value
