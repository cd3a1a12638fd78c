"""From text to cards: the lexer keeps places, the parser gives each line its fields."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a netlist is read or elaborated.

    Reading creates millions of small long-lived objects (tokens, cards, elements) and no
    reference cycles; with the collector on, its passes over them cost more than the reading
    itself (3x on a 200,000-line netlist). Reference counting still frees everything; the
    collector's previous state is restored.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
