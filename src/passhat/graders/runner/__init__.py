"""The runner guard of the `tests` grader: the test verdict cannot be written by the code under test alone.

Canary tests whose outcome passhat knows, a safe start of the runner (never a `pytest.py` of the work tree),
each test's outcome over a channel passhat opened (a pytest plugin loaded before any test module), and a check
that pytest's core callables are still its own — cross-checked with the JUnit report and the exit status.

May import: passhat.graders' private modules (_globs, _junit), trial (safe paths). plugin/ is not imported: it is
the folder the grader's pytest loads passhat's plugin from.
Exports: open_guard / Guard (before the command), check_run / Integrity (after it), runner_of, guard_on, GUARD_ENV;
capabilities_file / learned_capabilities / judge_capabilities (the audit hook's records against the base's run).
"""

from passhat.graders.runner._audit import capabilities_file, judge_capabilities, learned_capabilities
from passhat.graders.runner._guard import GUARD_ENV, Guard, guard_on, open_guard, runner_of
from passhat.graders.runner._verdict import Integrity, check_run

__all__ = [
    "GUARD_ENV",
    "Guard",
    "Integrity",
    "capabilities_file",
    "check_run",
    "guard_on",
    "judge_capabilities",
    "learned_capabilities",
    "open_guard",
    "runner_of",
]
