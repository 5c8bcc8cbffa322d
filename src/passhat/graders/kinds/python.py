"""The `python` grader: a function of the team's own, in the team's repository, given the outcome's view.

`file` is the module (found from the task folder up to the repository's root: `evals/graders/size.py`, or
`./size.py` beside task.yaml), `function` its function (default `grade`), `settings` its second argument —
checked when the task loads against the JSON schema the module declares as `SETTINGS = {...}`, if it does.
The function gets a graders.view.OutcomeView (read-only, no path of the tree, links out of it never followed)
and returns a bool, a score 0..1 (passes when > 0, or >= `threshold`), (passed, score, reason) or a dict of
those. It is the team's trusted code, not the agent's: it runs on the host, in a child process of the
assertion's, stopped at `timeout_s` (default 60); raising, hanging or printing to stdout fails it with one line
naming file:line, and no other grader's score.
"""

from __future__ import annotations

from pathlib import Path

from passhat.graders._common import Grade
from passhat.graders.kinds import GraderKind
from passhat.graders.view import OutcomeView, outcome_of


def grade_python(view: OutcomeView, config: dict) -> Grade:
    from passhat.graders.team import run_team_grader

    return run_team_grader(outcome_of(view), config)


def resolve_python(task_dir: Path, grader: dict) -> dict:
    """The grader with its file found (absolute), its function and settings checked against the module, and a
    name (its metric; default the file's stem, `stem.function` for another function than grade)."""
    from passhat.graders.team import DEFAULT_FUNCTION, check_settings, find_file, read_module

    file = find_file(task_dir, grader["file"])
    function = grader.get("function", DEFAULT_FUNCTION)
    module = read_module(file, function)
    check_settings(module, grader.get("settings", {}), "settings")
    default_name = file.stem if function == DEFAULT_FUNCTION else f"{file.stem}.{function}"
    return {**grader, "file": str(file), "name": grader.get("name", default_name)}


def python_preflight(task_dir: Path, task_id: str, grader: dict) -> str:
    """What `passhat validate` says of it: the file it found, the function, what checks the settings."""
    from passhat.graders.team import DEFAULT_FUNCTION, read_module

    module = read_module(Path(grader["file"]), grader.get("function", DEFAULT_FUNCTION))
    checked = f"settings checked by SETTINGS at line {module.settings_line}" if module.settings else "no SETTINGS"
    return f"python {grader['file']}:{grader.get('function', DEFAULT_FUNCTION)} ({checked})"


SETTINGS = {
    "required": ["file"],
    "properties": {
        "file": {
            "description": "the grader's .py file, from the repository's root (evals/graders/size.py) or from the "
            "task folder (./size.py)",
            "type": "string",
            "minLength": 1,
        },
        "function": {
            "description": "the function to call with the view and the settings (default grade)",
            "type": "string",
            "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
        },
        "settings": {"description": "the function's second argument (its module's SETTINGS schema checks it)"},
        "threshold": {
            "description": "a returned score passes when >= threshold (default: when > 0, as Promptfoo's)",
            "type": "number",
            "minimum": 0,
            "maximum": 1,
        },
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "default": 60},
    },
}

KIND = GraderKind(
    "python",
    grade_python,
    deterministic=True,
    settings=SETTINGS,
    preflight=python_preflight,
    resolve=resolve_python,
)
