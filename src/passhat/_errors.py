"""The one exception module. Every user-facing error is a PasshatError.

The CLI turns it into one line on stderr and exit code 2, never a traceback.
Messages name the file, the field, the value and the fix.
"""

from __future__ import annotations


class PasshatError(Exception):
    """Bad input or configuration: reported as one line, exit code 2."""

    exit_code = 2


class TaskError(PasshatError):
    """A task folder or its task.yaml is invalid."""


class ResultsError(PasshatError):
    """A Promptfoo results file cannot be read."""


class SandboxError(Exception):
    """Preparing a base or a trial sandbox failed (an infrastructure error, not bad input)."""
