"""Rounds: `passhat eval --until-decided` spends trials until each task's verdict is decided — Promptfoo evals in
rounds, each on the tasks still open, the rows gathered into one results file, resumable after Ctrl+C.

May import: report, results, stats (the stopping rule's interval), passhat.common._budget. Exports: Settings, start,
resume, next_round, Count, Next.
"""

from __future__ import annotations

from passhat.rounds._plan import Count, Next, Settings, next_round
from passhat.rounds._run import resume, start

__all__ = ["Count", "Next", "Settings", "next_round", "resume", "start"]
