"""One consistent CLI: a closed pipe ends quietly, --version, the same spelling for the same option in every
subcommand (old spellings kept, hidden), and `fake-model --script` help that lists every script the code takes."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import passhat
from passhat.cli import FORMAT_ORDER, build_parser, main
from passhat.common._errors import PasshatError
from passhat.fake_model import _judge, _scripts, parse_script

PASSHAT = Path(sys.executable).parent / "passhat"
ROW = {"success": True, "failureReason": 0, "score": 1, "namedScores": {}, "provider": {"id": "p"},
       "testCase": {"description": "t"}, "response": {"output": "x", "metadata": {"task_id": "t"}}}  # fmt: skip


def subcommands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_a_reader_that_went_away_ends_the_command_quietly(tmp_path):
    """`passhat report x.json | head`: stdout's reader is gone. Before: a BrokenPipeError traceback, exit 1."""
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"evalId": "e", "results": {"version": 3, "results": [ROW] * 3}}))
    read, write = os.pipe()
    os.close(read)  # the reader left before the first byte: every write fails with EPIPE
    try:
        done = subprocess.run([str(PASSHAT), "report", str(results)], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120, check=False)  # fmt: skip
    finally:
        os.close(write)
    assert done.stderr == ""
    assert done.returncode == 128 + signal.SIGPIPE  # what a shell reports for `yes | head`


def test_head_of_a_long_report_is_quiet(tmp_path):
    rows = [{**ROW, "testCase": {"description": f"task-{i}"}, "response": {"output": "x", "metadata": {"task_id": f"task-{i}"}}}
            for i in range(3000)]  # fmt: skip
    (tmp_path / "r.json").write_text(json.dumps({"evalId": "e", "results": {"version": 3, "results": rows}}))
    done = subprocess.run(["bash", "-c", f"{PASSHAT} report r.json --k 1 | head -n 2"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert len(done.stdout.splitlines()) == 2


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"passhat {passhat.__version__}\n"
    assert passhat.__version__ == version("passhat")


def test_every_format_option_is_spelled_alike():
    formats = {name: next((a for a in p._actions if "--format" in a.option_strings), None)
               for name, p in subcommands().items()}  # fmt: skip
    for name, action in formats.items():
        if action is None:
            continue
        choices = list(action.choices or ())
        assert action.default == "table", name
        assert choices == [f for f in FORMAT_ORDER if f in choices], (name, choices)
        assert {"table", "json"} <= set(choices), (name, choices)


def test_one_option_one_spelling_across_subcommands():
    """An option that means the same in two subcommands is spelled the same (by its dest)."""
    spellings: dict[str, set[tuple[str, ...]]] = {}
    for parser in subcommands().values():
        for action in parser._actions:
            if action.option_strings and action.help != argparse.SUPPRESS:
                spellings.setdefault(action.dest, set()).add(tuple(action.option_strings))
    assert {dest: s for dest, s in spellings.items() if len(s) > 1} == {}
    # a folder of tasks is --tasks-dir everywhere (fake-model said --tasks)
    tasks_options = {o for s in spellings.values() for opts in s for o in opts if "tasks" in o}
    assert tasks_options == {"--tasks-dir"}


def test_old_spellings_still_work_and_are_hidden(capsys):
    args = build_parser(["fake-model"]).parse_args(["fake-model", "--tasks", "elsewhere"])
    assert args.tasks_dir == "elsewhere"
    assert build_parser(["fake-model"]).parse_args(["fake-model"]).tasks_dir == "tasks"
    with pytest.raises(SystemExit):
        main(["fake-model", "--help"])
    out = capsys.readouterr().out
    assert "--tasks-dir" in out and not re.search(r"--tasks\b(?!-)", out)


def _script_names_in_code() -> set[str]:
    """Names the parser accepts, found in its own error messages (agent/fault scripts, judge scripts)."""
    try:
        parse_script("judge-?")
    except PasshatError as error:
        judge_usage = str(error)
    words = set(re.findall(r"[a-z][a-z-]*", _scripts._USAGE + " " + judge_usage)) | set(_judge.NAMES)

    def accepted(name: str) -> bool:
        for spec in (name, f"{name}:1", f"{name}:0.5", f"{name}:500", f"{name}:1,2"):
            try:
                parse_script(spec)
            except PasshatError:
                continue
            return True
        return False

    return {word for word in words if accepted(word)}


def _script_help() -> str:
    action = next(a for a in subcommands()["fake-model"]._actions if a.dest == "script")
    return str(action.help)


def _listed_forms() -> list[str]:
    """`the default script (...): FORM, FORM, ...; an agent script may end in MODIFIER (default oracle)`"""
    return [form.strip() for form in _script_help().split(": ", 1)[1].split(";")[0].split(", ")]


def test_script_help_lists_every_script():
    """Before: `oracle | noop | flaky:P[:SEED] | error:STATUS`, 4 of the 16 scripts."""
    names = _script_names_in_code()
    assert {"oracle", "noop", "flaky", "commands", "error", "rate-limit", "cut", "hang", "slow", "judge",
            "judge-first", "judge-longer", "judge-shorter", "judge-malformed", "judge-noisy", "judge-points"} <= names  # fmt: skip
    listed = {re.split(r"[:\[]", form)[0] for form in _listed_forms()}
    assert names - listed == set(), _script_help()
    assert "may end in +outage:Q[:SEED] or +hack:Q[:SEED]" in _script_help()


SAMPLES = {
    "P": "1",
    "X": "0.5",
    "Q": "0.1",
    "STATUS": "500",
    "N": "2",
    "SECONDS": "1",
    "SEED": "3",
    "KIND": "runner-patch",
}


@pytest.mark.parametrize("form", [*_listed_forms(), "oracle+outage:Q[:SEED]", "flaky:P+hack:Q[:SEED]"])
def test_every_script_the_help_lists_parses(form):
    spec = re.sub(r"[A-Z]+", lambda m: SAMPLES[m.group(0)], form.replace("[", "").replace("]", ""))
    parse_script(spec.replace(",...", ",3"))  # raises on a form the server would refuse
