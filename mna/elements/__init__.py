"""The element library; importing it registers every element class by its SPICE prefix and
every nonlinear model type by its name."""

from mna.elements import (  # noqa: F401
    behavioural,
    bjt,
    contact,
    controlled,
    couplers,
    diode,
    fluid_valves,
    friction,
    heat_transfer,
    jfet,
    mosfet,
    passive,
    sources,
    switch,
)
from mna.elements.base import Edge, Element, Role

__all__ = ["Edge", "Element", "Role"]
