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


class GradingInfraError(PasshatError):
    """The infrastructure could not grade a trial (its Ray cluster lost the grader's run, or cannot be reached):
    neither a pass nor a fail. A Promptfoo assertion lets it raise, so Promptfoo records the row's grading as
    `Error running Python script: ...`, which passhat's results reader counts as an infra error."""


class SandboxError(Exception):
    """Preparing a base or a trial sandbox failed (an infrastructure error, not bad input)."""


def yaml_position(error: Exception) -> str:
    """' at line L, column C' for a YAML error that knows where it is, else ''."""
    mark = getattr(error, "problem_mark", None)
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""


class RubricError(PasshatError):
    """A rubric file (rubrics/<name>.yaml) or a judge grader's settings are invalid."""


class LabelsError(PasshatError):
    """A calibration labels CSV cannot be read."""
