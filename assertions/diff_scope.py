"""Promptfoo entry for the `diff-scope` grader (logic in passhat.graders)."""

from passhat.graders import grade_promptfoo


def get_assert(output, context):
    return grade_promptfoo("diff-scope", context)
