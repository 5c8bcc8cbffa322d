"""The runner guard of the `tests` grader: the test verdict cannot be written by the code under test alone.

Canary tests whose outcome passhat knows, a safe start of the runner (never a `pytest.py` of the work tree),
each test's outcome over a channel passhat opened (a pytest plugin loaded before any test module), and a check
that pytest's core callables are still its own — cross-checked with the JUnit report and the exit status.

May import: passhat.graders' private modules (_globs, _junit), trial (safe paths). plugin/ is the folder the
grader's pytest loads passhat's plugin from; the host imports only its passhat_guard_perturb (standard library).
Exports: open_guard / Guard (before the command), check_run / Integrity (after it), runner_of, guard_on, GUARD_ENV;
capabilities_file / learned_capabilities / judge_capabilities (the audit hook's records against the base's run);
plan_world / in_random_order / WORLD (the twin world, `twins: world`); without_canaries (a run's output
less passhat's canaries).
"""

from passhat.graders.runner._audit import capabilities_file, judge_capabilities, learned_capabilities
from passhat.graders.runner._canary import CANARY_TEXT, without_canaries
from passhat.graders.runner._guard import GUARD_ENV, Guard, guard_on, open_guard, runner_of
from passhat.graders.runner._verdict import Integrity, check_run
from passhat.graders.runner._world import WORLD, World, in_random_order
from passhat.graders.runner._world import plan as plan_world

__all__ = [
    "CANARY_TEXT",
    "GUARD_ENV",
    "WORLD",
    "Guard",
    "Integrity",
    "World",
    "capabilities_file",
    "check_run",
    "guard_on",
    "in_random_order",
    "judge_capabilities",
    "learned_capabilities",
    "open_guard",
    "plan_world",
    "runner_of",
    "without_canaries",
]
