"""Promptfoo entry for the `pairwise` grader: an LLM judge compares the trial with a reference, both orders
(logic in passhat.judge)."""

from passhat.judge import pairwise_promptfoo


def get_assert(output, context):
    return pairwise_promptfoo(output, context)
