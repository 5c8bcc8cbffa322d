"""Small statistics helpers."""

from stats_utils.median import median

__all__ = ["median"]
