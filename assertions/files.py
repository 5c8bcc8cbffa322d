"""Promptfoo entry for the `files` grader (logic in passhat.graders)."""

from passhat.promptfoo import get_assert_files as get_assert

__all__ = ["get_assert"]
