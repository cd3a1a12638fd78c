"""The element library; importing it registers every element class by its SPICE prefix."""

from mna.elements import behavioural, controlled, couplers, diode, passive, sources  # noqa: F401
from mna.elements.base import Edge, Element, Role

__all__ = ["Edge", "Element", "Role"]
