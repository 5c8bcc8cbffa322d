"""Promptfoo entry: `providers: [{id: file://providers/claude_code.py, config: {...}}]`.

Thin on purpose: the provider lives in passhat.trial.
"""

from passhat.trial import call_api

__all__ = ["call_api"]
