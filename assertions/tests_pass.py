"""Promptfoo entry for the `tests` grader: the task's test command on base + the trial's patch."""

from passhat.promptfoo import get_assert_tests as get_assert

__all__ = ["get_assert"]
