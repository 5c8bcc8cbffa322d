"""Promptfoo entry for the `health` grader (logic in passhat.graders)."""

from passhat.promptfoo import get_assert_health as get_assert

__all__ = ["get_assert"]
