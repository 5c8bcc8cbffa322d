"""Promptfoo entry: `providers: [{id: file://providers/claude_code.py, config: {...}}]`.

Thin on purpose: the provider lives in passhat.trial; passhat.promptfoo offers it (and every grader's entry)
to any repository that installs passhat (see `passhat init`).
"""

from passhat.promptfoo import call_api

__all__ = ["call_api"]
