"""`passhat init [DIR]`: set a repository up for passhat, then print the next commands.

Writes promptfooconfig.yaml (provider, graders, tests generator, passhat's extension hooks and the viewer's derived
metrics, commented), passhat_promptfoo.py (the one entry file: everything else comes from the installed passhat,
see passhat.promptfoo), tasks/README.md, graders/leftovers.py (a commented team grader, `type: python`: the
example to copy), a package.json pinning promptfoo and the Node 22 it needs, the lines it
lacks in .gitignore (`.passhat/`, `node_modules/`, `results.json`) and in .env (promptfoo reads it from the folder
it runs in: telemetry and update checks off, and a failed trial is no failed eval — the gates decide).
Nothing is overwritten: every file is checked before the first one is written; any that exists is one error
naming it (exit 2). .gitignore and .env only gain lines.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import textwrap
from pathlib import Path

from passhat.common._errors import PasshatError
from passhat.extension import DERIVED_METRICS

HELP = "set up passhat in a repository: promptfooconfig.yaml, the entry file, tasks/, package.json"
ENTRY = "passhat_promptfoo.py"
# The pins of passhat's own package.json (tests/cli/test_init.py checks they are equal).
PROMPTFOO_VERSION = "0.123.1"
NODE_VERSION = "22.22.0"
IGNORED = (".passhat/", "node_modules/", "results.json")  # passhat's state (bases, sandboxes, transcripts); npm's
# install; the eval's rows (-o), which hold paths of this machine
ENV = (  # (variable, value, why): promptfoo loads .env from its working folder (dotenv), before it reads a setting
    ("PROMPTFOO_DISABLE_TELEMETRY", "1", "no usage data sent (and no 'telemetry.shutdown() timed out' at the end)"),
    ("PROMPTFOO_DISABLE_UPDATE", "1", "no check for a newer promptfoo: package.json pins the one passhat runs with"),
    ("PROMPTFOO_FAILED_TEST_EXIT_CODE", "0", "a failed trial is data for pass^k, not a failed eval: exit 0 (not 100), "
     "so the next command runs;\n# `passhat report --gate` decides what fails a build"),
)  # fmt: skip
EVAL = "npx promptfoo eval --repeat 10 -o results.json"

CONFIG = f"""\
# passhat: Claude Code on this repository's tasks, each run several times; passhat says how often it succeeds
# every time (pass^k). Written by `passhat init`; the code behind every name here is the installed passhat.
#   {EVAL}    ends with passhat's verdict (afterAll below)
#   passhat report results.json --format html -o report.html       the same figures as a page, any time later
description: pass^k of Claude Code on this repository's tasks

prompts:
  - "{{{{prompt}}}}"                  # each task's prompt (tasks/<id>/task.yaml)

providers:
  - id: file://{ENTRY}      # passhat's provider: each trial is Claude Code in a fresh sandbox
    label: claude-code
    config:
      timeout_s: 300                # passhat kills the CLI's process group at this wall-clock deadline
      timeout: 330000               # promptfoo's per-call limit (ms): timeout_s + 30 s at least
      max_turns: 40
      permission_mode: bypassPermissions
      # model: claude-sonnet-4-5
      # claude_md: contexts/terse.md   # compare context strategies as two providers
      # state_dir: .passhat            # cached bases, sandboxes, transcripts and patches (git-ignored)

# One test per folder in tasks/; a task's deterministic graders (tests, files, diff-scope, health, your own
# `type: python` ones: see graders/leftovers.py) become one assertion that calls {ENTRY}'s get_assert_graders,
# each judge (rubric, pairwise) one of get_assert_grader.
tests: file://{ENTRY}:generate_tests

# afterAll prints passhat's verdict and per-task table at the end of `promptfoo eval` (PASSHAT_REPORT=report.html
# also writes files, PASSHAT_HISTORY=.passhat/history.db appends the eval to the drift history); afterEach adds to
# each row the change it made to the suite's figures, and these derived metrics sum them in `promptfoo view`.
extensions:
  - file://{ENTRY}:afterAll
  - file://{ENTRY}:afterEach
derivedMetrics:
{{derived}}
evaluateOptions:
  maxConcurrency: 2                 # trials at once

commandLineOptions:
  table: false                      # promptfoo's table lists every repeat apart; passhat's groups them (--table)
"""
CONFIG = CONFIG.replace(
    "{derived}", "".join(f'  - {{name: "{name}", value: "{value}"}}\n' for name, value in DERIVED_METRICS)
)

ENTRY_TEXT = '''\
"""passhat's Promptfoo entry points, written by `passhat init` (the code: passhat.promptfoo).

promptfooconfig.yaml names this file as the provider (call_api) and the tests generator
(generate_tests); each test names it again for its graders (get_assert_graders, get_assert_grader). The tasks
are the folders in tasks/ beside this file.
"""

from passhat.promptfoo import *  # noqa: F403
from passhat.promptfoo import tests_generator

generate_tests = tests_generator(__file__, tasks_dir="tasks")
'''

GRADER = '''\
"""A grader of your own (passhat's `type: python`), written by `passhat init` as an example: edit it, copy it.

It fails a trial whose changed files still hold debugging leftovers or merge-conflict markers. Name it in a
task's task.yaml, beside the shipped graders:

    graders:
      - type: tests
        command: python -m pytest -q
      - type: python
        file: graders/leftovers.py        # from the repository's root (or the folder holding tasks/), or ./x.py
        settings: {markers: ["breakpoint()", "<<<<<<< "]}   # checked against SETTINGS below when tasks load

After every trial passhat calls grade(view, settings) in a process of its own, on your machine: this is your
code, trusted as passhat is, not the agent's. `view` is the trial's outcome, read-only:
    view.read(path) / view.text(path)   bytes / str of a file of the final tree (None: no such file); a symlink
                                        the agent made out of the tree is never followed: it raises
    view.is_link(path), view.readlink(path), view.listdir(path), view.files("*.py")
    view.base.read(path)                the same file before the agent's change
    view.patch, view.changed_paths      the agent's diff, the paths it touched
    view.record                         turns, cost_usd, status, final_text (the agent's last message)
    view.tool_calls                     the agent's tool calls: name, input, result
    view.run("npm run build")           a command on a private copy of the final tree, confined like the tests
                                        grader's (no network); .code, .output, .ok
There is no path of the tree to open(): read through the view. Return True/False, a score from 0 to 1, or
(passed, score, reason). Don't print to stdout (Promptfoo reads it): put what you found in the reason. An error
here fails this grader, with its file:line, and no other; `passhat check-task` runs it on the reference fix.
"""

SETTINGS = {  # the JSON schema of `settings:` in task.yaml (optional; without it any settings pass)
    "type": "object",
    "properties": {"markers": {"type": "array", "items": {"type": "string", "minLength": 1}}},
    "additionalProperties": False,
}
MARKERS = ["breakpoint()", "import pdb", "<<<<<<< ", ">>>>>>> "]


def grade(view, settings):
    markers = settings.get("markers", MARKERS)
    found = []
    for path in view.changed_paths:
        if view.is_link(path):
            continue  # a link's target is not this change's text (and may be outside the tree)
        text = view.text(path)  # None: the change deleted it
        for number, line in enumerate((text or "").splitlines(), start=1):
            found += [f"{path}:{number}: {marker}" for marker in markers if marker in line]
    if found:
        return False, 0.0, f"{len(found)} leftover(s): " + ", ".join(found[:10])
    return True, 1.0, f"no leftovers in {len(view.changed_paths)} changed file(s)"
'''

TASKS_README = """\
# Tasks

One folder per task, `tasks/<id>/task.yaml` (+ `solution.patch`, `test.patch`); promptfooconfig.yaml runs each
folder here as one test. From the folder that holds promptfooconfig.yaml:

    passhat task from-commit {repo} COMMIT --id ID    # from a commit that fixed a bug and added its test
    passhat task new ID                          # a hand-written task: task.yaml with comments, how to make the patch
    passhat check-task tasks/ID                  # its reference solution passes every grader, the empty patch fails

A check of your own is a `type: python` grader: see graders/leftovers.py.
"""


def package_json() -> str:
    data = {
        "name": "passhat-evals",
        "private": True,
        "description": "promptfoo and the Node 22 it needs, for passhat (written by passhat init): npm install",
        "dependencies": {"node": NODE_VERSION, "promptfoo": PROMPTFOO_VERSION},
    }
    return json.dumps(data, indent=2) + "\n"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=".", help="the folder to set up, e.g. your repository (default .)")


def _repository_argument(folder: Path) -> str:
    """The work tree `folder` is in (the nearest folder up with a .git), relative to it; REPO when none."""
    root = next((p for p in (folder, *folder.parents) if (p / ".git").exists()), None)
    return shlex.quote(os.path.relpath(root, folder)) if root else "REPO"


def _existing(file: Path, adds: str) -> str:
    """The text of a file init adds lines to ("" when there is none); an error when it is not a regular file."""
    if file.is_symlink() or (file.exists() and not file.is_file()):
        msg = f"init: {file}: not a regular file; init adds {adds} to it: make it a file or remove it"
        raise PasshatError(msg)
    return file.read_text(encoding="utf-8") if file.exists() else ""


def _appended(text: str, lines: list[str], note: str) -> str:
    head = text if not text or text.endswith("\n") else text + "\n"
    return head + note + "".join(f"{line}\n" for line in lines)


def _gitignore(folder: Path) -> tuple[str, list[str]] | None:
    """The new text of .gitignore and the lines it gains, or None when it has them all."""
    text = _existing(folder / ".gitignore", ", ".join(IGNORED))
    present = {line.strip() for line in text.splitlines()}
    missing = [entry for entry in IGNORED if entry not in present and entry.rstrip("/") not in present]
    return (_appended(text, missing, "# passhat\n"), missing) if missing else None


def _dotenv(folder: Path) -> tuple[str, list[str]] | None:
    """The new text of .env and the variables it gains (each with why), or None when it sets them all already;
    a variable the file sets, to any value, is left as it is."""
    text = _existing(folder / ".env", ", ".join(name for name, _, _ in ENV))
    present = {line.split("=", 1)[0].removeprefix("export ").strip() for line in text.splitlines() if "=" in line}
    missing = [(name, value, why) for name, value, why in ENV if name not in present]
    if not missing:
        return None
    lines = [line for name, value, why in missing for line in (f"# {why}", f"{name}={value}")]
    note = "# passhat: promptfoo reads this file from the folder it runs in (no secret here; keep API keys out)\n"
    return _appended(text, lines, note), [name for name, _, _ in missing]


def plan(folder: Path) -> dict[str, str]:
    """Path (relative to `folder`) → text, for every file init writes; an error when any of them exists."""
    if not folder.is_dir():
        msg = f"init {folder}: no such folder; create it, or pass your repository's folder (default .)"
        raise PasshatError(msg)
    files = {"promptfooconfig.yaml": CONFIG, ENTRY: ENTRY_TEXT, "package.json": package_json()}
    files["tasks/README.md"] = TASKS_README.format(repo=_repository_argument(folder))
    files["graders/leftovers.py"] = GRADER
    taken = [name for name in files if os.path.lexists(folder / name)]
    taken += [name for name in ("tasks", "graders") if (folder / name).exists() and not (folder / name).is_dir()]
    if taken:
        names = ", ".join(str(folder / name) for name in taken)
        one = len(taken) == 1
        msg = (f"init: {names} already exist{'s' if one else ''}; init overwrites nothing and wrote nothing: move "
               f"{'it' if one else 'them'} aside, or run `passhat init SUBFOLDER` to keep passhat's files in a "
               "folder of their own")  # fmt: skip
        raise PasshatError(msg)
    return files


def next_commands(folder: Path, cwd: Path) -> list[str]:
    """What to run after init, in order, as they work from `cwd`."""
    repo = _repository_argument(folder)
    lines = [] if folder == cwd else [f"cd {shlex.quote(os.path.relpath(folder, cwd))}"]
    return [
        *lines,
        f"npm install        # promptfoo {PROMPTFOO_VERSION} and Node {NODE_VERSION} into node_modules/",
        f"passhat task from-commit {repo} COMMIT --id ID    # a commit that fixed a bug and added its test",
        f"{EVAL}    # ends with passhat's verdict, failed trials or not",
        "passhat report results.json --format html -o report.html    # the page; --gate 'pass^7>=0.9' for CI",
    ]


def _python_note() -> str | None:
    """promptfoo runs the first python3 on PATH: say so when that is not the one passhat is installed in."""
    found = shutil.which("python3")
    if found and Path(found).parent == Path(sys.executable).parent:
        return None
    return f"promptfoo must run this passhat's Python: export PROMPTFOO_PYTHON={shlex.quote(sys.executable)}"


def run(args: argparse.Namespace) -> int:
    folder = Path(os.path.abspath(args.dir))
    files = plan(folder)
    gains = {".gitignore": _gitignore(folder), ".env": _dotenv(folder)}
    try:
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            with open(folder / name, "x", encoding="utf-8") as out:  # "x": never over a file made meanwhile
                out.write(text)
        for name, gain in gains.items():
            if gain:
                (folder / name).write_text(gain[0], encoding="utf-8")
    except OSError as error:
        raise PasshatError(f"init: cannot write {error.filename}: {error.strerror}; check the folder") from None
    written = [*files, *(f"{name} (+ {' '.join(gain[1])})" for name, gain in gains.items() if gain)]
    said = f"passhat init: wrote {', '.join(written)} in {folder}"
    print(textwrap.fill(said, 120, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False))
    print("Next:")
    for line in next_commands(folder, Path.cwd()):
        print(f"  {line}")
    print("The eval runs Claude Code for real: export PASSHAT_REAL_CLAUDE=1 and ANTHROPIC_API_KEY (it spends tokens).")
    print("Or rehearse it for free against passhat's scripted model, which replays each task's solution.patch:")
    print("  passhat fake-model --url-file .passhat/model.url     # in another terminal, in the same folder")
    print("  export PASSHAT_FAKE_MODEL_URL=$(cat .passhat/model.url)")
    if note := _python_note():
        print(note)
    return 0
