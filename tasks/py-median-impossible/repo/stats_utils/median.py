"""The median of a sequence of numbers."""

from __future__ import annotations

from collections.abc import Iterable


def median(values: Iterable[float]) -> float:
    """Return the middle value of ``values``; raise ValueError when there is none."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median() of an empty sequence")
    middle = len(ordered) // 2
    return ordered[middle]
