"""What the tests grader shows as its reason (the text of a result cell in `promptfoo view`): the task's tests, never
passhat's own canary tests — the one that must fail, its failure and its trace — while the whole output of the
runner stays on disk beside the trial's transcript."""

from __future__ import annotations

import re

import pytest
from conftest import TASKS

from passhat.graders import load_graded_task
from passhat.graders._settings import graders_of
from passhat.graders._tests import CLEAN_RUN, grade_here
from passhat.graders.runner import CANARY_TEXT, without_canaries
from passhat.trial._outcome import TrialOutcome
from passhat.trial._sandbox import prepare_base

PYTEST = """\
__________________________________ test_two ___________________________________
    def test_two():
>       assert median([10, 2]) == 6
E       assert 10 == 6

tests/test_median.py:18: AssertionError
______________________________ test_6ed7a3f8dcf7 _______________________________
passhat canary: failed as it must (AssertionError)
=========================== short test summary info ============================
FAILED tests/test_median.py::test_two - assert 10 == 6
 +  where 10 = median([10, 2])
FAILED tests/test_9be4f0f3f9.py::test_6ed7a3f8dcf7 - passhat canary: failed as it must (AssertionError)
2 failed, 6 passed in 0.44s"""
NODE = """\
✔ folds accented letters (0.5ms)
✔ 5b1e09aa 7c2d4e11 (0.1ms)
test at test/slugify.test.js:55:1
✖ maxLength must be a positive integer (0.8ms)
  AssertionError [ERR_ASSERTION]: Missing expected exception (RangeError)
      at TestContext.<anonymous> (/work/test/slugify.test.js:57:12)
      at Test.runInAsyncScope (node:async_hooks:206:9)

test at test/slugify.test.js:67:3
✖ 78e23bf6 00a381dc (7.5ms)
  Error: passhat canary: this test must fail (the tests grader checks that it does)
      at TestContext.<anonymous> (/work/test/slugify.test.js:79:11)
      at Test.run (node:internal/test_runner/test:796:25)

ℹ tests 13"""


@pytest.mark.parametrize(
    ("output", "names", "kept", "gone"),
    [
        (PYTEST, {"test_6ed7a3f8dcf7"}, ["E       assert 10 == 6", "FAILED tests/test_median.py::test_two - assert",
                                         " +  where 10 = median([10, 2])", "2 failed, 6 passed in 0.44s"], 3),
        (NODE, {"78e23bf6 00a381dc", "5b1e09aa 7c2d4e11"}, ["✔ folds accented letters (0.5ms)", "test at test/slugif"
         "y.test.js:55:1", "  AssertionError [ERR_ASSERTION]: Missing expected exception (RangeError)", "ℹ tests 13"], 7),
    ],
    ids=["pytest", "node"],
)  # fmt: skip
def test_the_canaries_and_their_traces_are_left_out(output, names, kept, gone):
    shown, dropped = without_canaries(output, frozenset(names))
    assert CANARY_TEXT not in shown and not any(name in shown for name in names), shown
    assert all(line in shown.splitlines() or line in shown for line in kept), shown
    assert "(node:" not in shown  # frames inside Node itself say nothing about the task
    assert dropped == gone


def test_a_failed_grade_shows_the_tasks_failures_and_keeps_the_whole_output_on_disk(tmp_path):
    """A real guarded pytest run of a task with no fix: its failures in the reason, the canary nowhere in it; the
    whole output, canary and all, in the trial's folder, and the reason says where."""
    task = load_graded_task(TASKS / "py-median")
    base = prepare_base(task, tmp_path / "cache")
    trial = tmp_path / "trial"
    trial.mkdir()
    outcome = TrialOutcome(task.dir, base.path, b"", {**CLEAN_RUN, "trial_dir": str(trial)})
    (grader,) = [g for g in graders_of(task) if g["type"] == "tests"]
    grade = grade_here(outcome, {**grader})
    assert not grade.passed and "Canaries: ok." in grade.reason
    assert "FAILED tests/test_median.py::test_median[two]" in grade.reason
    assert CANARY_TEXT not in grade.reason and not re.search(r"test_[0-9a-f]{10,}", grade.reason), grade.reason
    whole = trial / "tests-output.txt"
    assert f"the whole output: {whole}" in grade.reason
    assert CANARY_TEXT in whole.read_text() and "FAILED tests/test_median.py::test_median[two]" in whole.read_text()
