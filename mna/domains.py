"""The five energy domains as data: across/through names and units, and the keyword table
that maps physical parameters (``m= J= b= k= I= R= C= L=``) onto electrical analog values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum


class Domain(str, Enum):
    ELECTRICAL = "electrical"
    TRANSLATIONAL = "translational"
    ROTATIONAL = "rotational"
    FLUID = "fluid"
    THERMAL = "thermal"


@dataclass(frozen=True)
class Variables:
    across: str
    across_unit: str
    through: str
    through_unit: str


VARIABLES = {
    Domain.ELECTRICAL: Variables("voltage", "V", "current", "A"),
    Domain.TRANSLATIONAL: Variables("velocity", "m/s", "force", "N"),
    Domain.ROTATIONAL: Variables("angular velocity", "rad/s", "torque", "N*m"),
    Domain.FLUID: Variables("pressure", "Pa", "volume flow", "m^3/s"),
    Domain.THERMAL: Variables("temperature", "K", "heat flow", "W"),
}


def _same(value):
    return value


def _inverse(value):
    return 1 / value


@dataclass(frozen=True)
class Keyword:
    """A physical parameter of a passive element and how it becomes the analog value."""

    name: str
    meaning: str
    to_analog: Callable = _same


# Element type letter -> domain -> the keyword that names its physical parameter.
KEYWORDS: dict[str, dict[Domain, Keyword]] = {
    "R": {
        Domain.ELECTRICAL: Keyword("r", "resistance"),
        Domain.TRANSLATIONAL: Keyword("b", "damping", _inverse),
        Domain.ROTATIONAL: Keyword("b", "rotary damping", _inverse),
        Domain.FLUID: Keyword("r", "fluid resistance"),
        Domain.THERMAL: Keyword("r", "thermal resistance"),
    },
    "C": {
        Domain.ELECTRICAL: Keyword("c", "capacitance"),
        Domain.TRANSLATIONAL: Keyword("m", "mass"),
        Domain.ROTATIONAL: Keyword("j", "inertia"),
        Domain.FLUID: Keyword("c", "fluid capacitance"),
        Domain.THERMAL: Keyword("c", "thermal capacitance"),
    },
    "L": {
        Domain.ELECTRICAL: Keyword("l", "inductance"),
        Domain.TRANSLATIONAL: Keyword("k", "stiffness", _inverse),
        Domain.ROTATIONAL: Keyword("k", "torsional stiffness", _inverse),
        Domain.FLUID: Keyword("i", "inertance"),
    },
}


def domain_of_keyword(letter: str, keyword: str) -> Domain | None:
    """The one domain a keyword places its nodes in (``m=`` translational), if only one."""
    domains = [d for d, k in KEYWORDS[letter].items() if k.name == keyword]
    return domains[0] if len(domains) == 1 else None


def keywords_of(letter: str) -> set[str]:
    return {k.name for k in KEYWORDS[letter].values()}


def across_unit(domain: Domain) -> str:
    return VARIABLES[domain].across_unit


def through_unit(domain: Domain) -> str:
    return VARIABLES[domain].through_unit
