"""The `tests` grader: the task's test command on base + the trial's patch (+ the task's test.patch).

Protected paths (default: the task's test files) are restored from the base first; without fail_to_pass /
pass_to_pass it passes when the command exits 0; with them (SWE-bench), when every listed test passes in the
JUnit report, which is believed only when it agrees with the runner's summary and exit status. A pytest or
`node --test` command also runs canary tests, and pytest reports each test to passhat over a channel of its own
(passhat.graders.runner): a run the code under test tampered with fails as gamed. The steps live in
passhat.graders._tests; this module is the kind: where a run happens (here or on a Ray node) and its settings.
"""

from __future__ import annotations

from pathlib import Path

from passhat.common._errors import GradingInfraError, SandboxError
from passhat.graders._common import Grade
from passhat.graders._tests import CLEAN_RUN, grade_here
from passhat.graders.kinds import GraderKind
from passhat.graders.runner import runner_of
from passhat.graders.view import OutcomeView, outcome_of
from passhat.trial._outcome import TrialOutcome

_TEST_IDS = {"anyOf": [{"const": "auto"}, {"type": "array", "items": {"type": "string", "minLength": 1}}]}
_AUTO = (
    "or `auto`: computed from two runs at base + test.patch and two at base + test.patch + solution.patch "
    "(flaky tests left out), cached per task version."
)
_NAMES = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}


def grade_tests(view: OutcomeView, config: dict) -> Grade:
    """The grade, from a run here, or on a Ray node when the grader's executor is `ray` (passhat.cluster._grading):
    the same steps there, on the node's own base of the same task version. passhat's own machinery (restoring
    the test files, test.patch, the runner guard) works on the outcome behind the view."""
    from passhat.cluster import grader_executor, without_executor

    outcome = outcome_of(view)
    executor = grader_executor(config, outcome.run.get("ray_address"))
    if executor.kind == "local":
        return grade_here(outcome, without_executor(config))
    from passhat.cluster import run_for_task  # the Ray side, imported only when used
    from passhat.tasks import load_task

    task = load_task(outcome.task_dir)
    grade: Grade = run_for_task(grade_tests_on_node, task, (outcome.patch, without_executor(config)), executor)
    return grade


def grade_tests_on_node(task_dir: Path, state_dir: Path, patch: bytes, config: dict) -> Grade:
    """The tests grader as a Ray task: the outcome rebuilt on this node (its base of the task, the shipped patch).
    A base this node cannot build is the node's fault: GradingInfraError."""
    from passhat.tasks import load_task
    from passhat.trial._sandbox import prepare_base

    task = load_task(task_dir)
    try:
        base = prepare_base(task, state_dir / "cache")
    except (SandboxError, OSError) as error:
        msg = f"infrastructure error: the tests grader of task {task.id} on Ray node {state_dir.parent.name}: {error}"
        raise GradingInfraError(msg) from None
    return grade_here(TrialOutcome(task.dir, base.path, patch, CLEAN_RUN), config)


def _rules(config: dict) -> str | None:
    """Test lists (or `auto`) are read from a JUnit report: the grader must say where it is. The twin world runs
    the listed tests of a pytest command."""
    if config.get("twins") == "world" and (runner_of(config["command"]) != "pytest" or "fail_to_pass" not in config):
        return (
            f"twins: world reruns the FAIL_TO_PASS tests of a pytest command; {config['command']!r} with "
            f"fail_to_pass {'set' if 'fail_to_pass' in config else 'unset'} has none to rerun: drop `twins: world` "
            "(a node --test command's twins run in-process) or list fail_to_pass"
        )
    if not {"fail_to_pass", "pass_to_pass"} & config.keys() or "junit" in config or "{junit}" in config["command"]:
        return None
    return (
        "fail_to_pass / pass_to_pass are read from a JUnit report, and the tests grader's command "
        f"{config['command']!r} names none; "
        "put {junit} where the report path goes (e.g. `pytest --junitxml={junit}`) or set `junit:`"
    )


SETTINGS = {
    "required": ["command"],
    "properties": {
        "command": {
            "type": "string",
            "minLength": 1,
            "description": "the shell command to run at the repo root, e.g. `command: npm test` (`{junit}` is "
            "replaced by the path of the JUnit XML report passhat reads, e.g. pytest --junitxml={junit})",
        },
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "default": 300},
        "junit": {
            "description": "Path (relative to the repo root) of the JUnit XML report the command writes; "
            "or put {junit} in the command.",
            "type": "string",
            "minLength": 1,
        },
        "fail_to_pass": {"description": f"Test ids (classname::name) that fail on the base and must pass; {_AUTO}"}
        | _TEST_IDS,
        "pass_to_pass": {"description": f"Test ids that pass on the base and must still pass; {_AUTO}"} | _TEST_IDS,
        "protected": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": "Globs restored from the base before running (default: test files).",
        },
        "env": {
            "description": "Variables set for the command, e.g. {TZ: UTC}. The command gets none of passhat's own "
            "environment: only PATH, HOME (a private folder), LANG, CI=true, PYTHONDONTWRITEBYTECODE=1, these, "
            "and pass_env (plus, for a pytest command, the runner guard's PYTHONSAFEPATH, PYTHONPATH and "
            "PYTEST_ADDOPTS; the task's own PYTHONPATH and PYTEST_ADDOPTS are kept after passhat's).",
            "type": "object",
            "propertyNames": {"pattern": _NAMES["pattern"]},
            "additionalProperties": {"type": "string"},
        },
        "pass_env": {
            "description": "Names of host variables passed through to the command when set (never secrets you do "
            "not mean the agent's code to see).",
            "type": "array",
            "uniqueItems": True,
            "items": _NAMES,
        },
        "executor": {
            "description": "Where the run (base + patch, the command) happens: local (the default; or "
            "PASSHAT_GRADER_EXECUTOR) or ray (a Ray task on a cluster node).",
            "enum": ["local", "ray"],
        },
        "ray_address": {
            "description": "With executor: ray, the cluster's HOST:PORT or auto; default PASSHAT_RAY_ADDRESS, "
            "else the cluster the trial ran on, else auto.",
            "type": "string",
        },
        "ray_num_cpus": {
            "description": "With executor: ray, the CPUs one run holds on its node (default 1).",
            "type": "number",
            "exclusiveMinimum": 0,
        },
        "integrity": {
            "description": "Set from the task's `integrity:` (flag): a run the runner guard caught keeps the verdict "
            "the run itself gave, and the attempt is counted (default: it fails as gamed).",
            "enum": ["fail", "flag"],
        },
        "twins": {
            "description": "How a listed FAIL_TO_PASS test's twin (the test with its expectation made wrong, which "
            "must fail) is run: in-process (the default: in the same pytest session) or world (pytest: the command "
            "run once more on a copy of the tree whose test files hold the wrong expectations from the start, in "
            "random order with the real run — catches code that reads the answer by any route, at about twice "
            "the tests grader's cost; README, Gaming the tests).",
            "enum": ["in-process", "world"],
        },
        "allow_capabilities": {
            "description": "Audit events the tree's code may use beyond what the base's own run does from the same "
            "place (runner-capability), e.g. [sys._getframe, 'object.__getattr__:f_code', gc.get_referrers]; "
            "default none.",
            "type": "array",
            "uniqueItems": True,
            "items": {"type": "string", "minLength": 1},
        },
        "ray_memory_mb": {
            "description": "With executor: ray, the MB of memory Ray reserves per run (default none).",
            "type": "integer",
            "minimum": 1,
        },
    },
}

KIND = GraderKind("tests", grade_tests, deterministic=True, settings=SETTINGS, rules=_rules)
