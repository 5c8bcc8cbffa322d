"""`passhat init [DIR]`: set a repository up for passhat, then print the next commands.

Writes promptfooconfig.yaml (provider, graders, tests generator, commented), passhat_promptfoo.py (the one
entry file: everything else comes from the installed passhat, see passhat.promptfoo), tasks/README.md, a
package.json pinning promptfoo and the Node 22 it needs, and `.passhat/` (and `node_modules/`) in .gitignore.
Nothing is overwritten: every file is checked before the first one is written; any that exists is one error
naming it (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

from passhat._errors import PasshatError

HELP = "set up passhat in a repository: promptfooconfig.yaml, the entry file, tasks/, package.json"
ENTRY = "passhat_promptfoo.py"
# The pins of passhat's own package.json (tests/cli/test_init.py checks they are equal).
PROMPTFOO_VERSION = "0.123.1"
NODE_VERSION = "22.22.0"
IGNORED = (".passhat/", "node_modules/")  # passhat's state (bases, sandboxes, transcripts); npm's install

CONFIG = f"""\
# passhat: Claude Code on this repository's tasks, each run several times; `passhat report` says how often it
# succeeds every time (pass^k). Written by `passhat init`; the code behind every name here is the installed passhat.
#   npx promptfoo eval --repeat 10 -o results.json && passhat report results.json
description: pass^k of Claude Code on this repository's tasks

prompts:
  - "{{{{prompt}}}}"                  # each task's prompt (tasks/<id>/task.yaml)

providers:
  - id: file://{ENTRY}      # passhat's provider: each trial is Claude Code in a fresh sandbox
    label: claude-code
    config:
      timeout_s: 300                # passhat kills the CLI's process group at this wall-clock deadline
      max_turns: 40
      permission_mode: bypassPermissions
      # model: claude-sonnet-4-5
      # claude_md: contexts/terse.md   # compare context strategies as two providers
      # state_dir: .passhat            # cached bases, sandboxes, transcripts and patches (git-ignored)

# One test per folder in tasks/; a task's deterministic graders (tests, files, diff-scope, health, ...) become one
# assertion that calls {ENTRY}'s get_assert_graders, each judge (rubric, pairwise) one of get_assert_grader.
tests: file://{ENTRY}:generate_tests

evaluateOptions:
  maxConcurrency: 2                 # trials at once
"""

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

TASKS_README = """\
# Tasks

One folder per task, `tasks/<id>/task.yaml` (+ `solution.patch`, `test.patch`); promptfooconfig.yaml runs each
folder here as one test. From the folder that holds promptfooconfig.yaml:

    passhat task from-commit {repo} COMMIT --id ID    # from a commit that fixed a bug and added its test
    passhat task new ID                          # a hand-written task: task.yaml with comments, how to make the patch
    passhat check-task tasks/ID                  # its reference solution passes every grader, the empty patch fails
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


def _gitignore(folder: Path) -> tuple[str, list[str]] | None:
    """The new text of .gitignore and the lines it gains, or None when it has them all."""
    file = folder / ".gitignore"
    if file.is_symlink() or (file.exists() and not file.is_file()):
        msg = f"init: {file}: not a regular file; init adds {', '.join(IGNORED)} to it: make it a file or remove it"
        raise PasshatError(msg)
    text = file.read_text(encoding="utf-8") if file.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    missing = [entry for entry in IGNORED if entry not in present and entry.rstrip("/") not in present]
    if not missing:
        return None
    head = text if not text or text.endswith("\n") else text + "\n"
    return head + "# passhat\n" + "".join(f"{entry}\n" for entry in missing), missing


def plan(folder: Path) -> dict[str, str]:
    """Path (relative to `folder`) → text, for every file init writes; an error when any of them exists."""
    if not folder.is_dir():
        msg = f"init {folder}: no such folder; create it, or pass your repository's folder (default .)"
        raise PasshatError(msg)
    files = {"promptfooconfig.yaml": CONFIG, ENTRY: ENTRY_TEXT, "package.json": package_json()}
    files["tasks/README.md"] = TASKS_README.format(repo=_repository_argument(folder))
    taken = [name for name in files if os.path.lexists(folder / name)]
    if (folder / "tasks").exists() and not (folder / "tasks").is_dir():
        taken.append("tasks")
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
        "npx promptfoo eval --repeat 10 -o results.json && passhat report results.json",
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
    ignore = _gitignore(folder)
    try:
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            with open(folder / name, "x", encoding="utf-8") as out:  # "x": never over a file made meanwhile
                out.write(text)
        if ignore:
            (folder / ".gitignore").write_text(ignore[0], encoding="utf-8")
    except OSError as error:
        raise PasshatError(f"init: cannot write {error.filename}: {error.strerror}; check the folder") from None
    written = [*files, *([f".gitignore (+ {' '.join(ignore[1])})"] if ignore else [])]
    print(f"passhat init: wrote {', '.join(written)} in {folder}")
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
