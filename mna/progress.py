"""Progress bars (tqdm) for long work, shown only on a terminal and when warnings are shown
(``-q`` hides them); elsewhere a bar that does nothing."""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager


class _Silent:
    n = 0.0

    def update(self, amount: float = 1) -> None:
        """Nothing to show."""


@contextmanager
def progress(total: float, label: str, unit: str = "", time: bool = False):
    """A bar counting to `total` (`time`: seconds of simulated time, shown as t=...)."""
    if not sys.stderr.isatty() or not logging.getLogger("mna").isEnabledFor(logging.WARNING):
        yield _Silent()
        return
    from tqdm import tqdm

    layout = ("{l_bar}{bar}| t={n:.3g}/{total:.3g} s [{elapsed}<{remaining}]" if time
              else None)
    bar = tqdm(total=total, desc=label, unit=unit or "it", leave=False, file=sys.stderr,
               bar_format=layout)
    try:
        yield bar
    finally:
        bar.close()
