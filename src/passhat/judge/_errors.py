"""Errors of the judge: subclasses of PasshatError (one line, exit code 2), each naming the file,
the field, the value and the fix."""

from __future__ import annotations

from passhat._errors import PasshatError


class RubricError(PasshatError):
    """A rubric file (rubrics/<name>.yaml) or a judge grader's settings are invalid."""


class LabelsError(PasshatError):
    """A calibration labels CSV cannot be read."""
