"""A tiny Python task (calc.py with a bug in add, three tests) and trials of it whose patch is whatever
a function does to a copy of the base: real `git diff` patches, applied with `git apply` when graded.

Imported by the graders' tests (tests/graders is on sys.path, as tests/ is for browser_helpers).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

from passhat.graders._live import grade_one_promptfoo
from passhat.tasks._load import load_task
from passhat.trial._sandbox import collect_outcome, copy_tree, prepare_base

PYTEST = "python -m pytest -q -p no:cacheprovider --junitxml=report.xml"
F2P = ["tests.test_calc::test_add"]
P2P = ["tests.test_calc::test_sub", "tests.test_calc::test_mul"]
JUNIT_TESTS = {"type": "tests", "command": PYTEST, "junit": "report.xml", "fail_to_pass": F2P, "pass_to_pass": P2P}

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = textwrap.dedent("""\
    from calc import add, mul, sub


    def test_add():
        assert add(2, 3) == 5


    def test_sub():
        assert sub(5, 3) == 2


    def test_mul():
        assert mul(2, 3) == 6
""")

Trial = Callable[..., dict]


def make_trial(tmp_path: Path) -> Trial:
    """A task folder + its base; `trial(change)` makes a trial whose patch is change's edits → its metadata."""
    task_dir = tmp_path / "tasks" / "calc"
    (task_dir / "repo" / "tests").mkdir(parents=True)
    (task_dir / "repo" / "calc.py").write_text(CALC)
    (task_dir / "repo" / "tests" / "test_calc.py").write_text(TESTS)
    (task_dir / "repo" / "pytest.ini").write_text("[pytest]\ntestpaths = tests\npythonpath = .\n")
    (task_dir / "solution.patch").write_text("")
    (task_dir / "task.yaml").write_text(
        "id: calc\ndescription: d\ntier: simple\nprompt: fix add\ngraders:\n  - type: tests\n    command: x\n"
    )
    base = prepare_base(load_task(task_dir), tmp_path / "state" / "cache")
    count = iter(range(1000))

    def trial(change: Callable[[Path], object] = lambda work: None, run: dict | None = None) -> dict:
        work = tmp_path / f"work-{next(count)}"
        copy_tree(base.path, work)
        change(work)
        patch_path = tmp_path / f"{work.name}.diff"
        patch_path.write_bytes(collect_outcome(work, base).patch)
        return {"task_dir": str(task_dir), "base_dir": str(base.path), "patch_path": str(patch_path), **(run or {})}

    return trial


def run(grader: dict, metadata: dict) -> dict:
    return grade_one_promptfoo("", {"config": grader, "providerResponse": {"metadata": metadata}})


def fix_add(work: Path) -> None:
    (work / "calc.py").write_text(CALC.replace("return a - b", "return a + b", 1))
