"""Promptfoo entry for one grader of any kind, named by the assertion's `config.type` — a judge (rubric, pairwise)
or a deterministic grader on its own (logic in passhat.graders)."""

from passhat.promptfoo import get_assert_grader as get_assert

__all__ = ["get_assert"]
