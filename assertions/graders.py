"""Promptfoo entry for a task's deterministic graders (tests, files, diff-scope, health, ...) as one assertion:
one process per trial, one component and one named score per grader (logic in passhat.graders)."""

from passhat.promptfoo import get_assert_graders as get_assert

__all__ = ["get_assert"]
