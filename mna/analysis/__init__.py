"""The analyses: `perform` runs a request of the netlist (`mna.netlist.requests`).

Each request names its runner as ``module:function``; the module is imported when a netlist
first asks for it, so that reading and a plain ``.op`` load none of the others (the
transient, the state-space reduction, sympy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mna.circuit import Circuit
    from mna.netlist.requests import Request
    from mna.results import Result


def perform(request: Request, circuit: Circuit) -> Result:
    """The result of `request` on `circuit`."""
    module, function = request.runner.split(":")
    return getattr(importlib.import_module(module), function)(request, circuit)
