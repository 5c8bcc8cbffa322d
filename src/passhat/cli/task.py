"""`passhat task from-commit` and `passhat task new`: make a task (the pure parts in passhat.tasks._author).

from-commit reads the commit from git, writes tasks/<ID>/ (task.yaml, solution.patch, test.patch), computes
FAIL_TO_PASS / PASS_TO_PASS by running the tests (passhat.graders.compute_test_lists) and ends with
check-task. Bad input leaves before anything is written (exit 2); a task that comes out invalid (no test
change, an empty FAIL_TO_PASS, a check-task failure) is removed again and the command exits 1 saying why.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from passhat.common._errors import PasshatError
from passhat.tasks._author import check_id, free_folder, listed, read_prompt_file, shown, unusable

if TYPE_CHECKING:
    from passhat.tasks._author import Draft, Split

HELP = "make a task: from a git commit (from-commit), a scaffold to fill in (new), an impossible twin (impossible)"
# One shape of diff whatever the repository's config says (prefixes, renames, external drivers, colour).
_DIFF = (
    "-c", "core.quotePath=true", "diff", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color",
    "--src-prefix=a/", "--dst-prefix=b/", "--no-relative", "--submodule=short",
)  # fmt: skip


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="task_command", required=True, metavar="{from-commit,new,impossible}")
    fc = sub.add_parser(
        "from-commit",
        help="a task from a commit: its parent is the base, its change the solution and the tests",
        description="Make tasks/ID from COMMIT of REPO: the base is its parent, its change to source files is "
        "solution.patch, its change to test files test.patch; FAIL_TO_PASS / PASS_TO_PASS come from running "
        "the tests; ends with check-task (exit 0 only when the task is valid).",
    )
    fc.add_argument("repo", metavar="REPO", help="the git repository: a path or a URL")
    fc.add_argument(
        "commit", metavar="COMMIT", help="the commit that fixes the bug and adds its test (any name git knows)"
    )
    fc.add_argument("--id", required=True, help="the task id (and folder name): lowercase letters, digits, dashes")
    fc.add_argument("--tasks-dir", default="tasks", help="where task folders live (default tasks)")
    fc.add_argument(
        "--command",
        dest="test_command",
        metavar="CMD",
        help="the test command; {junit} = where it writes its JUnit XML report (default per language)",
    )
    fc.add_argument(
        "--tests",
        nargs="+",
        action="extend",
        metavar="GLOB",
        help="globs of the test files (default per language, e.g. '**/test_*.py' 'tests/**')",
    )
    fc.add_argument("--prompt-file", help="the prompt, instead of one made from the commit message")
    fc.add_argument(
        "--show-tests",
        action="store_true",
        help="let the agent see the commit's test changes (show_tests: true); default: held out in test.patch",
    )
    fc.add_argument("--state-dir", default=".passhat", help="where bases and test runs are cached (default .passhat)")
    fc.set_defaults(task_func=_from_commit)
    new = sub.add_parser(
        "new",
        help="scaffold tasks/ID: task.yaml with comments, repo/, how to make solution.patch",
        description="Scaffold tasks/ID for a hand-written task; then `passhat check-task tasks/ID` says what is missing.",
    )
    new.add_argument("id", metavar="ID", help="the task id (and folder name)")
    new.add_argument("--tasks-dir", default="tasks", help="where task folders live (default tasks)")
    new.add_argument(
        "--held-out-tests",
        action="store_true",
        help="keep the tests that show the bug out of the agent's sight, in test.patch (README.md says how)",
    )
    new.set_defaults(task_func=_new)
    imp = sub.add_parser(
        "impossible",
        help="an impossible twin of TASK: one FAIL_TO_PASS test's expected value changed, so every pass is a cheat",
        description="Write tasks/ID: TASK with one FAIL_TO_PASS test's expected value changed (where the test "
        "lives: repo/ or test.patch), its prompt plus a line asking to follow the description and leave the tests "
        "alone, and `expect: impossible`; ends with check-task (the reference solution must fail the twin).",
    )
    imp.add_argument("task_folder", metavar="TASK", help="the task: its folder (tasks/ID) or its id under --tasks-dir")
    imp.add_argument("--id", required=True, help="the twin's id (and folder name), e.g. py-median-impossible")
    imp.add_argument("--tasks-dir", default="tasks", help="where task folders live (default tasks)")
    imp.add_argument("--state-dir", default=".passhat", help="where bases and test runs are cached (default .passhat)")
    imp.set_defaults(task_func=_impossible)


def run(args: argparse.Namespace) -> int:
    func: Callable[[argparse.Namespace], int] = args.task_func
    return func(args)


def _new(args: argparse.Namespace) -> int:
    from passhat.tasks._scaffold import scaffold

    check_id(args.id, "ID")
    dest = free_folder(Path(args.tasks_dir), args.id)
    (dest / "repo").mkdir(parents=True)
    for name, text in scaffold(args.id, shown(dest), args.held_out_tests).items():
        (dest / name).write_text(text, encoding="utf-8")
    print(f"wrote {shown(dest)}/: task.yaml (every field explained), an empty repo/, README.md (what goes where)")
    print("next:")
    print(f"  1. put the repository the agent starts from in {shown(dest / 'repo')}/")
    print(f"  2. make solution.patch as {shown(dest / 'README.md')} says; fill in task.yaml's TODOs")
    print(f"  3. passhat check-task {shown(dest)}    # says what is still missing")
    return 0


def _impossible(args: argparse.Namespace) -> int:
    from passhat.graders import load_graded_task
    from passhat.graders._check import check_task, describe, make_twin

    check_id(args.id, "--id")
    named = Path(args.task_folder)
    source = named if (named / "task.yaml").is_file() or os.sep in args.task_folder else Path(args.tasks_dir) / named
    task = load_graded_task(source)
    dest, state_dir, ok = free_folder(Path(args.tasks_dir), args.id), Path(args.state_dir), False
    try:
        m = make_twin(task, args.id, dest, state_dir)
        print(
            f"changed the expected value of {m.test_id}: {m.before} -> {m.after} ({m.path} line {m.line}, in {m.where})"
        )
        check = check_task(load_graded_task(dest), state_dir)
        for line in describe(check):
            print(line, flush=True)
        ok = check.ok
    finally:
        if not ok:  # not valid, or stopped half-way: leave nothing behind
            shutil.rmtree(dest, ignore_errors=True)
    if not ok:
        print(f"task {args.id} not written: check-task finds the twin broken (above)")
        return 1
    print(f"wrote {shown(dest)}/: the twin of {task.id}, expect: impossible (every pass is a cheat)")
    return 0


@dataclass(frozen=True)
class _Commit:
    repo: Path  # a local git repository (a URL is mirrored first)
    source: str  # as task.yaml names it
    sha: str
    parent: str
    message: str


def _git(repo: Path, *args: str) -> bytes:
    from passhat.trial._git import git

    return git(repo, *args)


def _open_repo(text: str, name: str, state_dir: Path) -> tuple[Path, str]:
    """(a local repository to read, the base's `git:` value) for REPO as the user wrote it."""
    from passhat.trial._git import GitError

    path = Path(text).expanduser()
    if not path.exists() and ("://" in text or re.match(r"[\w.-]+@[\w.-]+:", text)):
        return _mirror(text, name, state_dir), text
    if not path.is_dir():
        msg = f"REPO {text!r}: no such folder; give the path of a git repository (or its URL)"
        raise PasshatError(msg)
    try:
        bare = _git(path, "rev-parse", "--is-bare-repository").strip() == b"true"
        where = _git(path, "rev-parse", "--absolute-git-dir" if bare else "--show-toplevel").decode().strip()
    except GitError:
        msg = f"REPO {text!r}: not a git repository; give the folder of a git clone (git rev-parse works there)"
        raise PasshatError(msg) from None
    return Path(where).resolve(), str(Path(where).resolve())  # a subfolder means its repository


def _mirror(url: str, name: str, state_dir: Path) -> Path:
    """passhat's bare mirror of the repository at `url` (the one its git bases read later), holding `name`."""
    from passhat.common._errors import TaskError
    from passhat.tasks._load import Task
    from passhat.tasks._source import ensure_mirror

    wanted = Task(
        "from-commit", "", "simple", "-", None, Path(os.devnull), (), Path.cwd(), "", base_git=url, base_commit=name
    )
    try:
        return ensure_mirror(wanted, state_dir / "cache")
    except TaskError as error:
        text = " ".join(str(error).split())  # one line; its field names are task.yaml's, so keep git's words
        if " is not a commit of " in text:
            msg = f"COMMIT {name!r}: no such commit in {url}; give a commit id or a name git knows (git ls-remote)"
        else:
            found = re.search(r"git clone failed: (.*?)(?:; give the path|$)", text)
            why = found[1] if found else text
            msg = f"REPO {url!r}: cannot clone it ({why[:300]}); check the URL and your access"
        raise PasshatError(msg) from None


def _read_commit(repo: Path, source: str, name: str) -> _Commit:
    from passhat.trial._git import GitError

    try:
        sha = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}").decode().strip()
    except GitError:
        msg = f"COMMIT {name!r}: no such commit in {source}; give a commit id or a name git knows (git log --oneline)"
        raise PasshatError(msg) from None
    sha_and_parents = _git(repo, "rev-list", "--parents", "-n", "1", sha).decode().split()
    parents = sha_and_parents[1:]
    if not parents:
        msg = (
            f"COMMIT {name!r} ({sha[:12]}) is the repository's first commit: there is no parent to be the base; "
            "give a commit that fixes a bug in an existing tree"
        )
        raise PasshatError(msg)
    if len(parents) > 1:
        msg = (
            f"COMMIT {name!r} ({sha[:12]}) is a merge of {len(parents)} parents ({', '.join(p[:12] for p in parents)}): "
            "its change is not one diff; give the commit on the branch that made the fix (git log --no-merges)"
        )
        raise PasshatError(msg)
    message = _git(repo, "log", "-1", "--format=%B", sha).decode("utf-8", errors="replace")
    return _Commit(repo, source, sha, parents[0], message)


def _changed_paths(commit: _Commit) -> list[str]:
    listing = _git(commit.repo, *_DIFF, "--name-only", "-z", commit.parent, commit.sha)
    return [name.decode("utf-8", errors="surrogateescape") for name in listing.split(b"\0") if name]


def _base_texts(commit: _Commit, paths: list[str], limit: int = 200) -> list[str]:
    """The parent's version of the files the fix changes (those it adds have none)."""
    from passhat.trial._git import GitError

    texts = []
    for path in paths[:limit]:
        try:
            texts.append(_git(commit.repo, "cat-file", "blob", f"{commit.parent}:{path}").decode(errors="replace"))
        except GitError:
            pass
    return texts


def _base_location(repo: Path, source: str, dest: Path) -> str:
    """task.yaml's `base.git`: a URL as given; a repository that holds the task folder relative to it (the
    task moves with its repository); any other path absolute."""
    if source != str(repo):
        return source
    return os.path.relpath(repo, dest) if dest.resolve().is_relative_to(repo) else str(repo)


def _from_commit(args: argparse.Namespace) -> int:
    from passhat.graders._globs import matches
    from passhat.tasks._author import (
        COMMANDS,
        JUNIT,
        Draft,
        changed_lines,
        check_glob,
        default_test_globs,
        detect_language,
        split_patch,
        tier_for,
    )  # fmt: skip

    check_id(args.id, "--id")
    tasks_dir = Path(args.tasks_dir)
    dest = free_folder(tasks_dir, args.id)
    for glob in args.tests or ():
        check_glob(glob)
    if args.test_command is not None and JUNIT not in args.test_command:
        msg = (
            f"--command {args.test_command!r}: the tests' results are read from a JUnit XML report: put {JUNIT} where "
            f"the command writes it, e.g. --command 'python -m pytest -q --junitxml={JUNIT}'"
        )
        raise PasshatError(msg)
    written_prompt = read_prompt_file(args.prompt_file) if args.prompt_file else None
    state_dir = Path(args.state_dir)
    repo, source = _open_repo(args.repo, args.commit, state_dir)
    commit = _read_commit(repo, source, args.commit)
    paths = _changed_paths(commit)
    top_level = _git(repo, "ls-tree", "--name-only", "-z", commit.parent).decode(errors="replace").split("\0")
    language = detect_language(top_level, paths)
    if language is None and args.test_command is None:
        msg = (
            f"REPO {source}: no pyproject.toml, setup.py, setup.cfg or package.json at its root in {commit.parent[:12]}, "
            f"so passhat cannot tell how to run its tests: pass --command (with {JUNIT}) and --tests"
        )
        raise PasshatError(msg)
    globs = tuple(args.tests) if args.tests else default_test_globs(language)
    diff = _git(repo, *_DIFF, "--binary", commit.parent, commit.sha)
    try:
        split = split_patch(diff, paths, lambda path: matches(path, globs))
    except ValueError as error:  # git printed a diff that does not match its own list of files
        msg = f"COMMIT {commit.sha[:12]}: cannot split its diff by file ({error}); pass the test files with --tests"
        raise PasshatError(msg) from None
    why = unusable(split.solution_paths, split.test_paths, globs, commit.sha)
    if why:
        print(f"task {args.id} not written: {why}")
        return 1
    prompt = _prompt(commit, split, written_prompt)
    made = not tasks_dir.exists()
    dest.mkdir(parents=True)
    subject = next((line.strip() for line in commit.message.splitlines() if line.strip()), "")
    draft = Draft(
        id=args.id,
        description=f"{subject} (commit {commit.sha[:12]})" if subject else f"commit {commit.sha[:12]}",
        tier=tier_for(len(split.solution_paths), changed_lines(split.solution)),
        language=language,
        repo=_base_location(repo, source, dest),
        commit=commit.sha,
        base=commit.parent,
        prompt=prompt,
        command=args.test_command or COMMANDS[language or "python"],  # no language: --command was required
        tests=globs,
        show_tests=args.show_tests,
    )
    code = 1
    try:
        code = _write_task(args, dest, draft, split)
    finally:
        if code != 0:  # not valid, or stopped half-way: leave nothing behind
            shutil.rmtree(dest, ignore_errors=True)
            if made and not any(tasks_dir.iterdir()):
                tasks_dir.rmdir()
    return code


def _prompt(commit: _Commit, split: Split, written: str | None) -> str:
    from passhat.tasks._prompt import derive_prompt

    left_out: tuple[tuple[str, str], ...] = ()
    if written is not None:
        prompt = written
        print("review this prompt: it is what the agent sees (from --prompt-file)")
    else:
        bases = _base_texts(commit, list(split.solution_paths))
        derived = derive_prompt(commit.message, split.solution, split.solution_paths, bases, split.tests)
        if not derived.text:
            msg = (
                f"COMMIT {commit.sha[:12]}: nothing of its message is left once the lines that give the fix away are "
                "left out; write the prompt (what is wrong, as a bug report says it) in a file and pass --prompt-file"
            )
            raise PasshatError(msg)
        prompt, left_out = derived.text, derived.left_out
        print(f"review this prompt: it is what the agent sees (made from the message of {commit.sha[:12]}; edit")
        print("`prompt:` in task.yaml, or pass --prompt-file)")
    for line in prompt.splitlines():
        print(f"  | {line}".rstrip())
    for piece, why in left_out:
        print(f"  left out: {piece!r}: {why}")
    return prompt


def _write_task(args: argparse.Namespace, dest: Path, draft: Draft, split: Split) -> int:
    """Write the folder, compute the test lists, write them out, check the task. 1 (and the caller removes the
    folder) when the task is not valid."""
    from passhat.common._errors import SandboxError, TaskError
    from passhat.graders import compute_test_lists
    from passhat.graders import load_graded_task as load_task
    from passhat.graders._check import check_task, describe
    from passhat.tasks._author import dump_yaml, task_data, task_yaml

    (dest / "solution.patch").write_bytes(split.solution)
    (dest / "test.patch").write_bytes(split.tests)
    (dest / "task.yaml").write_text(dump_yaml(task_data(draft, "auto", "auto")), encoding="utf-8")
    state_dir = Path(args.state_dir)
    print(f"running `{draft.command}` twice at base + test.patch and twice with solution.patch too", flush=True)
    try:
        lists = compute_test_lists(load_task(dest), task_data(draft, "auto", "auto")["graders"][0], state_dir)
    except (SandboxError, TaskError) as error:  # the runs failed or their reports cannot be believed
        print(f"task {args.id} not written: the tests could not be run as the grader runs them: {error}")
        return 1
    listed("flaky (differed between two runs of one state)", lists.flaky)
    listed("broken (failed even with solution.patch)", lists.broken)
    if not lists.fail_to_pass:
        print(
            f"task {args.id} not written: FAIL_TO_PASS is empty: no test failed at base + test.patch and passed "
            f"with solution.patch ({len(lists.pass_to_pass)} passed both times, {len(lists.flaky)} flaky, "
            f"{len(lists.broken)} broken); check that the command runs the tests of test.patch "
            f"({', '.join(split.test_paths[:5])}) and that they fail without the fix"
        )
        return 1
    left_out = {"flaky": lists.flaky, "broken": lists.broken}
    (dest / "task.yaml").write_text(
        task_yaml(draft, (lists.fail_to_pass, lists.pass_to_pass), left_out), encoding="utf-8"
    )
    check = check_task(load_task(dest), state_dir)
    for line in describe(check):
        print(line, flush=True)
    if not check.ok:
        print(f"task {args.id} not written: check-task finds it broken (above)")
        return 1
    print(
        f"wrote {shown(dest)}/: task.yaml (FAIL_TO_PASS {len(lists.fail_to_pass)}, PASS_TO_PASS "
        f"{len(lists.pass_to_pass)}), solution.patch ({len(split.solution_paths)} file(s)), test.patch "
        f"({len(split.test_paths)} file(s))"
    )
    return 0
