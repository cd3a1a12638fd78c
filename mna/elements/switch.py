"""SPICE's switches: ``S`` controlled by an across variable (model type ``sw``), ``W`` by the
through variable of another element (``csw``), with ngspice's hysteresis.

A switch is a D-type element of resistance ``ron`` or ``roff`` (in a mechanical domain the
damper's 1/b, as any R's analog value). It turns on where its control exceeds ``vt + vh``
and off where it falls below ``vt - vh``, and keeps its state in between; a DC solution
starts it off (``ON`` on the line: on) and settles it to its control, as ngspice does. Its one
switching function is the control's margin to the threshold it watches, and the transient
steps onto each crossing instead of switching at the next time point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mna.elements.base import Edge, Role
from mna.elements.controlled import check_controller
from mna.elements.device import (
    Device,
    Instance,
    Load,
    NoiseCurrent,
    branch,
    parameters,
    terminal_array,
)
from mna.elements.diode import BOLTZMANN
from mna.elements.modelled import ModelledElement, ModelType, Parameter
from mna.netlist.fields import GROUND, FieldReader


class Switches(Device):
    """Every switch: terminals (n+, n-, c+, c-), the control being ``e(c+) - e(c-)``."""

    width = 4

    def __init__(self, names, terminals, threshold, hysteresis, ron, roff, on):
        super().__init__(names, terminals)
        self.upper, self.lower = threshold + hysteresis, threshold - hysteresis
        self.gon, self.goff = 1 / ron, 1 / roff
        self.on = on.astype(bool)
        self.modes = np.ones(self.count)   # one function each, kept positive by its state
        self.linear_in_modes = True

    @classmethod
    def build(cls, instances: list[Instance]) -> Switches:
        names = tuple(instance.name for instance in instances)
        return cls(names, terminal_array(instances, cls.width),
                   *parameters(instances, "threshold", "hysteresis", "ron", "roff", "on"))

    def load(self, v, t):
        conductance = np.where(self.on, self.gon, self.goff)
        return Load(*branch(conductance * (v[:, 0] - v[:, 1]), conductance, -conductance,
                            self.width))

    def noise(self, v, temperature):
        """The thermal noise of the resistance in force (ngspice's)."""
        conductance = np.where(self.on, self.gon, self.goff)
        return [NoiseCurrent("", 0, 1, 4 * BOLTZMANN * temperature * conductance,
                             np.zeros(self.count))]

    def switching(self, v, t):
        control = v[:, 2] - v[:, 3]
        return np.where(self.on, control - self.lower, self.upper - control)

    def switch(self, v, t, crossed):
        self.on = self.on ^ crossed

    def settle(self, v, t):
        control = v[:, 2] - v[:, 3]
        settled = np.where(control > self.upper, True, np.where(control < self.lower, False,
                                                                self.on))
        changed = not np.array_equal(settled, self.on)
        self.on = settled
        return changed


class VoltageSwitchModel(ModelType):
    """``.model NAME sw(vt= vh= ron= roff=)``."""

    kind = "sw"
    letter = "S"
    names = ("vt", "vh")
    parameters = (
        Parameter("vt", "(control)", 0.0, meaning="threshold"),
        Parameter("vh", "(control)", 0.0, 0.0, meaning="hysteresis: on above vt+vh, "
                  "off below vt-vh"),
        Parameter("ron", "analog resistance", 1.0, 0.0, above=True, meaning="on resistance"),
        Parameter("roff", "analog resistance", 1e12, 0.0, above=True,
                  meaning="off resistance"),
    )

    @classmethod
    def stamp(cls, element, s, p):
        threshold, hysteresis = (p[name] for name in cls.names)
        s.device(Switches, element.name, element.terminals(s),
                 {"threshold": threshold, "hysteresis": hysteresis, "ron": p["ron"],
                  "roff": p["roff"], "on": float(element.initially_on)})


class CurrentSwitchModel(VoltageSwitchModel):
    """``.model NAME csw(it= ih= ron= roff=)``."""

    kind = "csw"
    letter = "W"
    names = ("it", "ih")
    parameters = (Parameter("it", "(control)", 0.0, meaning="threshold"),
                  Parameter("ih", "(control)", 0.0, 0.0, meaning="hysteresis"),
                  *VoltageSwitchModel.parameters[2:])


def _initial_state(reader: FieldReader) -> bool:
    """ngspice's optional ``ON`` / ``OFF`` after the model: the state a DC solution starts
    from."""
    return reader.keyword("on", "off") == "on"


@dataclass(eq=False)
class VoltageSwitch(ModelledElement):
    """``Sname n+ n- nc+ nc- model [ON|OFF]``."""

    initially_on: bool

    prefix = "S"
    usage = "Sname n+ n- nc+ nc- model [ON|OFF]   with .model model SW(VT= VH= RON= ROFF=)"

    @classmethod
    def from_fields(cls, reader: FieldReader) -> VoltageSwitch:
        nodes = reader.nodes("n+", "n-", "nc+", "nc-")
        model = reader.model()
        place = reader.place()
        on = _initial_state(reader)
        reader.done()
        reader.no_more_options()
        return cls(reader.name, reader.location, nodes, model, "S", place, on)

    def edges(self):
        return [Edge(self, *self.nodes[:2], Role.DISSIPATOR)]

    def domain_groups(self):
        return [self.nodes[:2], self.nodes[2:]]

    def terminals(self, s) -> tuple:
        return self.nodes


@dataclass(eq=False)
class CurrentSwitch(ModelledElement):
    """``Wname n+ n- Vctrl model [ON|OFF]``: controlled by ``I(Vctrl)``."""

    control: str
    initially_on: bool

    prefix = "W"
    usage = "Wname n+ n- Vctrl model [ON|OFF]   with .model model CSW(IT= IH= RON= ROFF=)"

    @classmethod
    def from_fields(cls, reader: FieldReader) -> CurrentSwitch:
        nodes = reader.nodes("n+", "n-")
        control = reader.element("controlling element")
        model = reader.model()
        place = reader.place()
        on = _initial_state(reader)
        reader.done()
        reader.no_more_options()
        return cls(reader.name, reader.location, nodes, model, "W", place, control, on)

    def edges(self):
        return [Edge(self, *self.nodes, Role.DISSIPATOR)]

    def validate(self, circuit) -> None:
        check_controller(self, self.control, circuit)
        super().validate(circuit)

    def terminals(self, s) -> tuple:
        return (*self.nodes, s.branch(s.circuit.elements_by_key[self.control]), GROUND)
