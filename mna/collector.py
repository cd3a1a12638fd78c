"""The cyclic garbage collector paused while a netlist is read or a system assembled.

Both make many small objects that live as long as the circuit and form no reference
cycles, so the collector's passes over them (each young object is traversed as it ages, a
full pass the whole heap) find nothing.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection inside; the collector's state as it was afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
