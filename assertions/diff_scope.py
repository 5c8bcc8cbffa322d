"""Promptfoo entry for the `diff-scope` grader (logic in passhat.graders)."""

from passhat.promptfoo import get_assert_diff_scope as get_assert

__all__ = ["get_assert"]
