"""Analyses; importing the package registers each one under its dot card."""

from mna.analysis import ac, dc, op, statespace, transient  # noqa: F401
from mna.analysis.base import Analysis

__all__ = ["Analysis"]
