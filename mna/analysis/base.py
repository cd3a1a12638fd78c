"""The analysis interface: one subclass per dot card, registered by its card name."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from mna.circuit import Circuit
    from mna.netlist.fields import FieldReader
    from mna.results import Result


class Analysis:
    """An analysis request parsed from its card; `run` performs it on a circuit."""

    card: ClassVar[str] = ""
    usage: ClassVar[str] = ""
    registry: ClassVar[dict[str, type[Analysis]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("card"):
            Analysis.registry[cls.card] = cls

    @classmethod
    def from_fields(cls, reader: FieldReader) -> Analysis:
        raise NotImplementedError

    def run(self, circuit: Circuit) -> Result:
        raise NotImplementedError
