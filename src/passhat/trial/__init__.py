"""One trial: base workspace, sandbox, confinement, the Claude Code agent, and its outcome (patch + record).

May import: passhat._errors, passhat.tasks.
Exports: call_api (the Promptfoo provider), TrialOutcome (base + patch, what graders read).
"""

from __future__ import annotations

from passhat.trial._outcome import TrialOutcome
from passhat.trial._provider import call_api

__all__ = ["TrialOutcome", "call_api"]
