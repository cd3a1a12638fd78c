"""The element library; importing it registers every element class by its SPICE prefix."""

from mna.elements import (  # noqa: F401
    behavioural,
    bjt,
    controlled,
    couplers,
    diode,
    mosfet,
    passive,
    sources,
)
from mna.elements.base import Edge, Element, Role

__all__ = ["Edge", "Element", "Role"]
