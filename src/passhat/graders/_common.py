"""What every grader returns: a Grade (pass, score, reason) that becomes a Promptfoo GradingResult."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Grade:
    passed: bool
    score: float
    reason: str

    def to_promptfoo(self) -> dict:
        return {"pass": self.passed, "score": self.score, "reason": self.reason}


def show_path(path: str) -> str:
    """A path as text on one line: a name with a newline or other control characters is shown quoted."""
    return path if path.isprintable() else repr(path)
