"""Promptfoo entry: `providers: [{id: file://providers/claude_code.py, config: {...}}]`, and passhat's extension
hooks: `extensions: [file://providers/claude_code.py:afterAll, file://providers/claude_code.py:afterEach]`.

Thin on purpose: the provider lives in passhat.trial, the hooks in passhat.extension; passhat.promptfoo offers them
(and every grader's entry) to any repository that installs passhat (see `passhat init`).
"""

from passhat.promptfoo import afterAll, afterEach, call_api

__all__ = ["afterAll", "afterEach", "call_api"]
