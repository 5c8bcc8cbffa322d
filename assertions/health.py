"""Promptfoo entry for the `health` grader (logic in passhat.graders)."""

from passhat.graders import grade_promptfoo


def get_assert(output, context):
    return grade_promptfoo("health", context)
