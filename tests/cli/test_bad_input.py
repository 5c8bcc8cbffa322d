"""Every file passhat reads, given bad content: one line on stderr naming the file, the field (or line),
the value and the fix; exit code 2; no traceback; nothing half-written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, TASKS

from passhat.cli import main

PROVIDER = f"file://{ROOT / 'providers' / 'claude_code.py'}"  # validate checks that the provider file exists
GOOD_ROW = {
    "success": True,
    "failureReason": 0,
    "score": 1,
    "namedScores": {},
    "provider": {"id": "p"},
    "testCase": {"description": "t"},
    "response": {"output": "x", "metadata": {"task_id": "t"}},
}


def results(rows, version=3) -> str:
    return json.dumps({"evalId": "eval-x", "results": {"version": version, "results": rows}})


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def bad_task(tmp_path: Path, yaml_text: str) -> Path:
    folder = tmp_path / "tasks" / "broken"
    shutil.copytree(TASKS / "py-median", folder)
    (folder / "task.yaml").write_text(yaml_text)
    return folder


def bad_rubric_task(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks" / "judged"
    shutil.copytree(TASKS / "py-median", folder)
    write(
        tmp_path,
        "tasks/judged/code-readability.yaml",
        (ROOT / "rubrics" / "code-readability.yaml").read_text().replace("weight: 0.30", "weight: 0.9", 1),
    )
    (folder / "task.yaml").write_text(
        (folder / "task.yaml").read_text().replace("id: py-median", "id: judged")
        + "  - type: rubric\n    rubric: code-readability.yaml\n"
    )
    return folder


CASES = [
    # (id, argv builder, fragments the one line must hold)
    (
        "task-tier",
        lambda t: [
            "check-task",
            str(bad_task(t, "id: broken\ndescription: d\ntier: easy\nprompt: p\ngraders: [{type: health}]\n")),
        ],
        ["task.yaml", "field 'tier'", "'easy'", "use one of those"],
    ),
    (
        "task-yaml-syntax",
        lambda t: ["check-task", str(bad_task(t, "id: broken\nprompt: [unclosed\n"))],
        ["task.yaml", "YAML syntax error at line", "fix the YAML"],
    ),
    (
        "task-grader-field",
        lambda t: [
            "check-task",
            str(
                bad_task(
                    t, "id: broken\ndescription: d\ntier: simple\nprompt: p\ngraders: [{type: tests, comand: x}]\n"
                )
            ),
        ],
        ["task.yaml", "graders[0]", "command"],
    ),
    (
        "rubric-weights",
        lambda t: [
            "validate",
            str(
                write(
                    t,
                    "promptfooconfig.yaml",
                    json.dumps(
                        {
                            "providers": [{"id": PROVIDER}],
                            "tests": f"file://{bad_rubric_task(t).parent}/promptfoo_tests.py:generate_tests",
                        }
                    ),
                )
            ),
        ],
        ["code-readability.yaml", "weight"],
    ),
    (
        "provider-config-field",
        lambda t: [
            "validate",
            str(
                write(
                    t,
                    "promptfooconfig.yaml",
                    json.dumps({"providers": [{"id": PROVIDER, "label": "cc", "config": {"max_turn": 3}}]}),
                )
            ),
        ],
        ["promptfooconfig.yaml", "provider 'cc'", "field 'max_turn'", "3", "known fields"],
    ),
    (
        "provider-config-type",
        lambda t: [
            "validate",
            str(
                write(
                    t,
                    "promptfooconfig.yaml",
                    json.dumps({"providers": [{"id": PROVIDER, "config": {"timeout_s": "soon"}}]}),
                )
            ),
        ],
        ["promptfooconfig.yaml", "field 'timeout_s'", "'soon'", "expected a number"],
    ),
    (
        "repeat-below-k",
        lambda t: [
            "validate",
            str(write(t, "promptfooconfig.yaml", json.dumps({"providers": [{"id": PROVIDER}]}))),
            "--repeat",
            "3",
            "--k",
            "10",
        ],
        ["--repeat 3", "largest k (10)", "use --repeat 10"],
    ),
    ("results-missing", lambda t: ["report", str(t / "nope.json")], ["nope.json", "no such file"]),
    ("results-empty", lambda t: ["report", str(write(t, "r.json", ""))], ["r.json", "empty"]),
    (
        "results-truncated",
        lambda t: ["report", str(write(t, "r.json", results([GOOD_ROW])[:60]))],
        ["r.json", "line 1"],
    ),
    (
        "results-version",
        lambda t: ["report", str(write(t, "r.json", results([GOOD_ROW], version=2)))],
        ["r.json", "results.version", "2"],
    ),
    (
        "results-type",
        lambda t: ["report", str(write(t, "r.json", results([{**GOOD_ROW, "success": "yes"}])))],
        ["r.json", "results.results[0].success", '"yes"', "true or false"],
    ),
    (
        "results-jsonl-line",
        lambda t: ["report", str(write(t, "r.jsonl", json.dumps(GOOD_ROW) + "\n{oops\n"))],
        ["r.jsonl", "line 2"],
    ),
    (
        "compare-truncated",
        lambda t: ["compare", str(write(t, "a.json", results([GOOD_ROW]))), str(write(t, "b.json", "{"))],
        ["b.json"],
    ),
    (
        "drift-truncated",
        lambda t: ["drift", str(write(t, "r.json", '{"results": ')), "--db", str(t / "h.db")],
        ["r.json"],
    ),
    (
        "regrade-truncated",
        lambda t: ["regrade", str(write(t, "r.json", '{"results"')), "-o", str(t / "out.json")],
        ["r.json", "not JSON"],
    ),
    (
        "regrade-missing-patch",
        lambda t: [
            "regrade",
            str(
                write(
                    t,
                    "r.json",
                    results(
                        [
                            {
                                **GOOD_ROW,
                                "response": {
                                    "output": "x",
                                    "metadata": {
                                        "task_id": "py-median",
                                        "task_dir": str(TASKS / "py-median"),
                                        "base_dir": str(t / "base"),
                                        "patch_path": str(t / "gone.diff"),
                                    },
                                },
                            }
                        ]
                    ),
                )
            ),
            "-o",
            str(t / "out.json"),
        ],
        ["r.json: results.results[0]:", "gone.diff", "is gone", "artifacts folder"],
    ),
    (
        "labels-csv-value",
        lambda t: ["calibrate", str(write(t, "labels.csv", "trial,criterion,human,judge\na,overall,0.5,high\n"))],
        ["labels.csv", "line 2", "judge", "'high'"],
    ),
    ("labels-csv-header", lambda t: ["calibrate", str(write(t, "labels.csv", "trial,human\na,0.5\n"))], ["labels.csv"]),
]


@pytest.mark.parametrize(("argv", "fragments"), [pytest.param(a, f, id=i) for i, a, f in CASES])
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, capsys, monkeypatch, argv, fragments):
    # a model to run against: validate lists every problem it finds, and the bad input must be the only one
    monkeypatch.setenv("PASSHAT_FAKE_MODEL_URL", "http://passhat:" + "0" * 64 + "@127.0.0.1:9")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code = main(argv(tmp_path))
    out, err = capsys.readouterr()
    assert code == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("passhat: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    written = {p.name for p in tmp_path.rglob("*") if p.relative_to(tmp_path) not in before and p.is_file()}
    assert not {"out.json", "h.db"} & written  # nothing half-written
