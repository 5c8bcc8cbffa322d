"""Promptfoo entry for the `rubric` grader: an LLM judge scores the trial on a rubric (logic in passhat.judge)."""

from passhat.judge import rubric_promptfoo


def get_assert(output, context):
    return rubric_promptfoo(output, context)
