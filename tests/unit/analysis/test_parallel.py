"""`mna.analysis.parallel.gather`: outputs, and the first failure, in the points' order
whichever chunk finishes first."""

from __future__ import annotations

import pytest

from mna.analysis import parallel


def _failing(point: int) -> int:
    if point % 2:
        raise ValueError(f"point {point} failed")
    return point * 10


def _gathered(monkeypatch, job, points: list[int]) -> list[int]:
    """`gather` on one process, its chunks of one point each seen finished last first."""
    monkeypatch.setattr(parallel, "wait", lambda pending, return_when: (
        list(pending)[::-1], set()))
    outputs: list[int] = []
    token = "test"
    parallel.install(token, job)
    try:
        parallel.gather(parallel.InlineExecutor(), token, len(points), points, outputs.append)
    finally:
        parallel.uninstall(token)
    return outputs


def test_outputs_come_in_the_points_order(monkeypatch):
    assert _gathered(monkeypatch, lambda point: point * 10, [0, 1, 2, 3]) == [0, 10, 20, 30]


def test_the_first_failing_point_is_raised_whichever_finishes_first(monkeypatch):
    with pytest.raises(ValueError, match="point 1 failed"):
        _gathered(monkeypatch, _failing, [0, 1, 2, 3, 4, 5])
