"""SPICE numbers: ``4.7k``, ``10uF``, ``1meg``, ``2.5Nm`` (letters after the suffix are units).

SPICE reads ``2.5Nm`` as 2.5 nano; NETLIST.md promises torque units there, so a unit spelled
``Nm...`` with that exact case is the one exception to the suffix rule (``2.5nm`` stays nano).
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal

SCALE = {
    "t": 1e12,
    "g": 1e9,
    "meg": 1e6,
    "k": 1e3,
    "mil": 25.4e-6,
    "m": 1e-3,
    "u": 1e-6,
    "n": 1e-9,
    "p": 1e-12,
    "f": 1e-15,
}

NUMBER = re.compile(
    r"(?P<mantissa>[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)(?P<suffix>meg|mil|[tgkmunpf])?(?P<unit>[a-z/]*)",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=4096)  # netlists repeat their values (``100``, ``1p``) many times
def parse_number(text: str) -> float | None:
    """Value of a SPICE number, or None when `text` is not one.

    >>> parse_number("4.7k"), parse_number("10uF"), parse_number("1MEG")
    (4700.0, 1e-05, 1000000.0)
    """
    match = NUMBER.fullmatch(text)
    if match is None:
        return None
    value = float(match["mantissa"])
    suffix = match["suffix"]
    if text[len(match["mantissa"]) :].startswith("Nm"):
        return value
    # Decimal scaling rounds once: 10u is 1e-05, not 10*1e-06 = 9.999999999999999e-06.
    if not suffix:
        return value
    return float(Decimal(match["mantissa"]) * Decimal(repr(SCALE[suffix.lower()])))
