"""The exception hierarchy: every failure a user can cause or meet has a type and a place."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mna.netlist.model import SourceLocation


class MnaError(Exception):
    """Root of every error `mna` raises on purpose."""

    exit_status = 3


class NetlistError(MnaError, ValueError):
    """A netlist that breaks the language; printed as ``file:line:col: error: ...``."""

    exit_status = 1

    def __init__(self, message: str, location: SourceLocation | None = None):
        self.message = message
        self.location = location
        super().__init__(self.render())

    def __reduce__(self):   # crosses to and from worker processes with its place
        return type(self), (self.message, self.location)

    def render(self) -> str:
        if self.location is None:
            return f"error: {self.message}"
        if not self.location.quoted:   # words of a file that is not a netlist stay unshown
            return (f"{self.location}: error: not a netlist line (the included file's "
                    "contents are not shown: its name has no netlist suffix)")
        return f"{self.location}: error: {self.message}\n{self.location.excerpt()}"


class TopologyError(NetlistError):
    """A connection pattern that has no solution: floating nodes, source loops and cut-sets."""


class SingularSystemError(MnaError):
    """A linear system that cannot be solved, naming the unknowns at fault."""

    def __init__(self, message: str, unknowns: tuple[str, ...] = ()):
        self.unknowns = unknowns
        super().__init__(message)

    def __reduce__(self):
        return type(self), (self.args[0], self.unknowns)


class ConvergenceError(MnaError):
    """Newton's method gave up: says where, how far off and what was tried."""


class NoOperatingPoint(ConvergenceError):
    """The DC equations were solved only thanks to a convergence aid: the circuit has no
    operating point (a force that nothing but a gmin leak carries)."""


class DescriptorIndexError(MnaError):
    """A descriptor system with no state-space form (e.g. a loop of across sources)."""


class OutputError(MnaError):
    """A result file cannot be written (a full disk, a folder in the way)."""


class SchedulerError(MnaError):
    """The Dask scheduler named by ``--scheduler`` cannot be reached."""


def in_context(error: MnaError, context: str) -> MnaError:
    """The same error, its message saying where it happened (a sweep or step point)."""
    if isinstance(error, NetlistError):
        error.message = f"{error.message} ({context})"
        error.args = (error.render(),)
    else:
        error.args = (f"{context}: {error.args[0] if error.args else error}", *error.args[1:])
    return error
