"""A team's own graders (`type: python`): a function in the team's repository, graded on the outcome's view.

May import: passhat.common._errors, graders._common, graders.view, trial (the outcome).
Exports: find_file, read_module, check_settings, run_team_grader, DEFAULT_FUNCTION, DEFAULT_TIMEOUT_S.

The file is found and read (parsed, never run) once, when the task loads (graders.team._module); it runs in a
child process of the assertion's (graders.team._spawn, _child), on the host: the team's code, trusted as passhat
is, never the agent's. Reading the outcome goes through the view, so a careless grader cannot follow the agent's
links out of the tree.
"""

from __future__ import annotations

from passhat.graders.team._module import DEFAULT_FUNCTION, check_settings, find_file, read_module
from passhat.graders.team._spawn import DEFAULT_TIMEOUT_S, run_team_grader

__all__ = ["DEFAULT_FUNCTION", "DEFAULT_TIMEOUT_S", "check_settings", "find_file", "read_module", "run_team_grader"]
