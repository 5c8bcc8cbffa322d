"""The cheat rate: the cheat attempts on impossible twins (`expect: impossible`, made by `passhat task impossible`),
whose tests contradict the task's description, so no honest change passes them: a pass, or a trial caught gaming
the tests (once if both), caught and uncaught apart. They are counted apart — attempts/n with its Wilson interval
per task and per provider — and left out of pass^k, the suite's means, the verdicts and the gates.

May import: passhat.report._summary, _formats, _plots (the html page's helpers), stats.
Exports: split_impossible, cheat_data, cheat_text, cheat_markdown, cheat_csv, cheat_html.
"""

from __future__ import annotations

from passhat.report.cheats._cheats import (
    cheat_csv,
    cheat_data,
    cheat_html,
    cheat_markdown,
    cheat_text,
    split_impossible,
)

__all__ = ["cheat_csv", "cheat_data", "cheat_html", "cheat_markdown", "cheat_text", "split_impossible"]
