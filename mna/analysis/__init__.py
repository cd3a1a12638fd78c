"""Analyses; importing the package registers each one under its dot card."""

from mna.analysis import dc, op  # noqa: F401
from mna.analysis import transient  # noqa: F401
from mna.analysis import ac, statespace  # noqa: F401
from mna.analysis.base import Analysis

__all__ = ["Analysis"]
