"""Promptfoo entry for the `pairwise` grader: an LLM judge compares the trial with a reference, both orders
(logic in passhat.judge)."""

from passhat.promptfoo import get_assert_pairwise as get_assert

__all__ = ["get_assert"]
