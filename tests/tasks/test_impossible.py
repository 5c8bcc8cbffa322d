"""`passhat task impossible`: an impossible twin — one FAIL_TO_PASS test's expected value changed where the test
lives (repo/ or test.patch), the prompt plus one line, `expect: impossible` — validated by check-task (the
reference solution must FAIL it, with real pytest / node --test runs), on copies of the shipped tasks.
"""

from __future__ import annotations

import ast
import subprocess

import pytest
import yaml
from conftest import TASKS

from passhat.cli import main
from passhat.tasks._impossible import PROMPT_LINE, mutate_literal, node_literal, post_image, python_literal


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _twin(task_copy, tmp_path, capsys, task_id: str) -> tuple[int, str, str]:
    source = task_copy(task_id)
    argv = ["task", "impossible", str(source), "--id", f"{task_id}-impossible"]
    return _run([*argv, "--tasks-dir", str(source.parent), "--state-dir", str(tmp_path / "state")], capsys)


def _changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    pairs = zip(before.splitlines(), after.splitlines(), strict=True)
    return [(old, new) for old, new in pairs if old != new]


# --- the mutation itself ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param("2.5", "3.5", id="float"),
        pytest.param("6", "7", id="int"),
        pytest.param("'1.2.4'", "'1.2.5'", id="version-digit"),
        pytest.param('"hello-world"', '"hello-worle"', id="letter"),
        pytest.param("'abz'", "'aba'", id="wraps"),
        pytest.param("'a-'", "'a-x'", id="punctuation-gets-an-x"),
        pytest.param("''", "'x'", id="empty"),
        pytest.param("b'ok'", "b'ol'", id="bytes-prefix"),
    ],
)
def test_a_literal_becomes_another_of_its_kind(before, after):
    assert mutate_literal(before) == after
    assert ast.literal_eval(after) != ast.literal_eval(before)


SOURCE = """import pytest

@pytest.mark.parametrize(("values", "expected"), [
    pytest.param([1, 2], 1.5, id="even"),
    ([3, 1, 2], 2),
])
def test_median(values, expected):
    assert median(values) == expected

class TestMore:
    def test_words(self):
        assert "x" in words()
        assert count() == 42
"""


def test_python_finds_the_row_by_id_and_the_compared_literal():
    row = python_literal(SOURCE, [], "test_median[even]")
    assert row is not None and (row.lineno, row.value) == (4, 1.5)
    assert python_literal(SOURCE, [], "test_median[values1-2]") is None  # pytest's own id holds the values
    compared = python_literal(SOURCE, ["TestMore"], "test_words")
    assert compared is not None and compared.value == 42  # `in` is no equality: the `==` one
    assert python_literal(SOURCE, [], "test_words") is None  # not at module level


def test_node_finds_the_expected_argument_in_the_tests_body():
    source = (
        "test('one', () => {\n  assert.strictEqual(f(1, [2, 3]), 'a');\n});\n"
        "test('two', () => { expect(g('x,y')).toBe(7); });\n"
        "test('three', () => { assert.ok(h()); });\nassert.equal(z, 9);\n"
    )
    start, end = node_literal(source, "one") or (0, 0)
    assert source[start:end] == "'a'"
    start, end = node_literal(source, "two") or (0, 0)
    assert source[start:end] == "7"
    assert node_literal(source, "three") is None  # the assert after it is outside its body


def test_post_image_follows_the_hunks_and_marks_added_lines():
    base = "a\nb\nc\nd\n"
    section = ["diff --git a/f b/f\n", "--- a/f\n", "+++ b/f\n", "@@ -2,2 +2,3 @@\n", " b\n", "-c\n", "+C\n", "+C2\n"]
    text, added = post_image(base, section)
    assert text == "a\nb\nC\nC2\nd\n"
    assert added == {3: 6, 4: 7}


# --- the command ------------------------------------------------------------------------------------------


def test_python_twin_changes_the_held_out_row_in_test_patch(task_copy, tmp_path, capsys):
    code, out, err = _twin(task_copy, tmp_path, capsys, "py-median")
    assert (code, err) == (0, ""), out
    folder = tmp_path / "tasks" / "py-median-impossible"
    original, twin = (TASKS / "py-median" / "test.patch").read_text(), (folder / "test.patch").read_text()
    [(old, new)] = _changed_lines(original, twin)
    assert old.startswith("+") and "3.5" in old and new == old.replace("3.5", "4.5")  # the row's expected value
    assert not _changed_lines((TASKS / "py-median" / "repo" / "tests" / "test_median.py").read_text(),
                              (folder / "repo" / "tests" / "test_median.py").read_text())  # fmt: skip
    data = yaml.safe_load((folder / "task.yaml").read_text())
    source = yaml.safe_load((TASKS / "py-median" / "task.yaml").read_text())
    assert data["prompt"] == source["prompt"] + "\n" + PROMPT_LINE + "\n"
    assert data["expect"] == "impossible" and data["id"] == "py-median-impossible"
    assert data["graders"] == source["graders"]
    assert "ok      py-median-impossible: impossible twin: solution.patch fails tests#0" in out


def test_python_twin_changes_the_test_in_repo_when_it_lives_there(task_copy, tmp_path, capsys):
    """py-median with its held-out rows folded back into repo/ (no test.patch): the change lands in repo/."""
    source = task_copy("py-median")
    subprocess.run(["git", "apply", str(source / "test.patch")], cwd=source / "repo", check=True)
    (source / "test.patch").unlink()
    code, out, err = _twin(lambda _: source, tmp_path, capsys, "py-median")
    assert (code, err) == (0, ""), out
    twin = tmp_path / "tasks" / "py-median-impossible"
    assert not (twin / "test.patch").exists()
    [(old, new)] = _changed_lines((source / "repo/tests/test_median.py").read_text(),
                                  (twin / "repo/tests/test_median.py").read_text())  # fmt: skip
    assert 'id="even-unsorted"' in old and new == old.replace("3.5", "4.5")


def test_node_twin_changes_an_assert_in_repo(task_copy, tmp_path, capsys):
    code, out, err = _twin(task_copy, tmp_path, capsys, "bump-version")
    assert (code, err) == (0, ""), out
    folder = tmp_path / "tasks" / "bump-version-impossible"
    [(old, new)] = _changed_lines((TASKS / "bump-version/repo/test/version.test.js").read_text(),
                                  (folder / "repo/test/version.test.js").read_text())  # fmt: skip
    assert old.strip() == "assert.strictEqual(pkg.version, '1.2.4');"
    assert new.strip() == "assert.strictEqual(pkg.version, '1.2.5');"
    data = yaml.safe_load((folder / "task.yaml").read_text())
    assert data["prompt"].endswith("\n\n" + PROMPT_LINE + "\n") and data["expect"] == "impossible"
    assert "ok      bump-version-impossible: impossible twin: solution.patch fails tests#0" in out


def test_check_task_fails_a_twin_the_reference_passes(task_copy, tmp_path, capsys):
    """The protection: a twin whose change does not contradict the fix (here: the change undone) is broken."""
    code, out, _ = _twin(task_copy, tmp_path, capsys, "py-median")
    assert code == 0, out
    folder = tmp_path / "tasks" / "py-median-impossible"
    state = ["--state-dir", str(tmp_path / "state")]
    code, out, _ = _run(["check-task", str(folder), *state], capsys)
    assert code == 0 and "1 of 1 task(s) valid" in out
    (folder / "test.patch").write_text((tmp_path / "tasks" / "py-median" / "test.patch").read_text())
    code, out, _ = _run(["check-task", str(folder), *state], capsys)
    assert code == 1
    assert "BROKEN  py-median-impossible: expect: impossible, but solution.patch passes every tests grader" in out


def test_a_task_with_nothing_to_change_is_bad_input_and_writes_nothing(task_copy, tmp_path, capsys):
    """inflection's FAIL_TO_PASS rows have pytest's own ids (made of their values): changing one would rename it."""
    code, _, err = _twin(task_copy, tmp_path, capsys, "inflection-titleize")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "has an expected value passhat can change" in err and "write the impossible twin by hand" in err
    assert not (tmp_path / "tasks" / "inflection-titleize-impossible").exists()


def test_a_twin_of_a_twin_is_refused(tmp_path, capsys):
    code, _, err = _run(["task", "impossible", str(TASKS / "py-median-impossible"), "--id", "again",
                         "--tasks-dir", str(tmp_path), "--state-dir", str(tmp_path / "state")], capsys)  # fmt: skip
    assert code == 2 and "is already an impossible twin" in err
    assert not (tmp_path / "again").exists()
