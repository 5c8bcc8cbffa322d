"""The view of a trial's outcome that every grader gets: read-only, pathless, links out of the tree never
followed (passhat's kinds and a team's `type: python` graders alike).

May import: passhat.common._errors, trial (the outcome, trial._paths' reads, the patch's paths), graders._run (the
confined command).
Exports: OutcomeView, Tree, Record, ToolCall, Ran, Entry, UnsafePathError, view_of, outcome_of.

    def grade(view, settings):
        size = len(view.read("dist/app.js") or b"")      # None: no such file; a link out: UnsafePathError
        return size <= settings["max_bytes"], 1.0, f"dist/app.js is {size} bytes"
"""

from __future__ import annotations

from passhat.graders.view._record import Record, ToolCall
from passhat.graders.view._tree import Tree
from passhat.graders.view._view import OutcomeView, Ran, outcome_of, view_of
from passhat.trial._paths import Entry, UnsafePathError

__all__ = ["Entry", "OutcomeView", "Ran", "Record", "ToolCall", "Tree", "UnsafePathError", "outcome_of", "view_of"]
