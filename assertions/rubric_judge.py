"""Promptfoo entry for the `rubric` grader: an LLM judge scores the trial on a rubric (logic in passhat.judge)."""

from passhat.promptfoo import get_assert_rubric as get_assert

__all__ = ["get_assert"]
