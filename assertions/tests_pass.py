"""Promptfoo entry for the `tests` grader: the task's test command on base + the trial's patch."""

from passhat.graders import grade_promptfoo


def get_assert(output, context):
    return grade_promptfoo("tests", context)
