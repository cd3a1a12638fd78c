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
def collector_paused(freeze: bool = False) -> Iterator[None]:
    """No automatic collection inside; the collector's state as it was afterwards. With
    `freeze` (what was made inside lives on, as a command's circuit through its run), every
    object there is when the block ends is frozen out of the collector's passes
    (`gc.freeze`, until `gc.unfreeze`); else the first passes after it walk each one again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()
