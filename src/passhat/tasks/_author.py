"""Making a task from a commit (`passhat task from-commit`): the pure parts — which language, which files are
tests, the commit's diff split in two, the tier and the task.yaml text (the prompt: passhat.tasks._prompt). No
git, no I/O: the CLI (passhat.cli.task) reads the repository and passes bytes and names in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from passhat.common._errors import PasshatError

Language = Literal["python", "node"]
_ID = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
JUNIT = "{junit}"  # the tests grader puts its report path there (passhat.graders)
TEST_GLOBS: dict[Language, tuple[str, ...]] = {
    "python": ("**/test_*.py", "**/*_test.py", "**/tests/**", "**/test/**", "**/conftest.py"),
    "node": ("**/*.test.*", "**/*.spec.*", "**/test/**", "**/tests/**", "**/__tests__/**"),
}
COMMANDS: dict[Language, str] = {
    "python": f"python -m pytest -q -p no:cacheprovider --junitxml={JUNIT}",
    # the spec reporter on stdout is the runner's own count, which the grader checks the report against
    "node": (
        f"node --test --test-reporter=junit --test-reporter-destination={JUNIT} "
        "--test-reporter=spec --test-reporter-destination=stdout"
    ),
}
_MARKERS: dict[Language, tuple[str, ...]] = {
    "python": ("pyproject.toml", "setup.py", "setup.cfg"),
    "node": ("package.json",),
}
_SOURCE_SUFFIXES: dict[Language, tuple[str, ...]] = {
    "python": (".py",),
    "node": (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"),
}


def check_id(task_id: str, flag: str) -> None:
    if not _ID.match(task_id):
        msg = (
            f"{flag} {task_id!r}: a task id is lowercase letters, digits and dashes, starting with a letter or "
            "digit, e.g. fix-titleize"
        )
        raise PasshatError(msg)


def free_folder(tasks_dir: Path, task_id: str) -> Path:
    """tasks_dir/task_id, which must not exist yet (a new task's folder)."""
    if tasks_dir.exists() and not tasks_dir.is_dir():
        msg = f"--tasks-dir {tasks_dir}: not a folder; give the folder that holds your tasks"
        raise PasshatError(msg)
    dest = tasks_dir / task_id
    if dest.exists() or dest.is_symlink():
        msg = f"{dest}: already exists; choose another id or remove that folder first"
        raise PasshatError(msg)
    return dest


def shown(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when under it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def read_prompt_file(name: str) -> str:
    path = Path(name).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        msg = f"--prompt-file {name!r}: cannot read it ({error.__class__.__name__}); give a UTF-8 text file"
        raise PasshatError(msg) from None
    if not text.strip():
        msg = f"--prompt-file {name!r}: the file is empty; write the prompt the agent gets in it"
        raise PasshatError(msg)
    return text.strip() + "\n"


def listed(kind: str, tests: tuple[str, ...]) -> None:
    """Print the tests left out of the lists, and why."""
    if tests:
        names = ", ".join(t if t.isprintable() else repr(t) for t in tests[:20])
        more = f", and {len(tests) - 20} more" if len(tests) > 20 else ""
        print(f"left out, {kind}: {names}{more}")


def unusable(solution: tuple[str, ...], tests: tuple[str, ...], globs: tuple[str, ...], sha: str) -> str | None:
    """Why a commit's split cannot make a task (no test file, or nothing but test files), or None."""
    if not tests:
        return (
            f"commit {sha[:12]} changes no test file (none of its {len(solution)} changed files matches "
            f"the test globs {' '.join(globs)}), so no test can show the bug it fixes: give the commit that adds "
            "the regression test, or name the test files with --tests"
        )
    if not solution:
        return (
            f"commit {sha[:12]} changes only test files ({len(tests)}): there is no fix for the agent to make; "
            "give the commit that fixes the bug (or narrow --tests)"
        )
    return None


def detect_language(top_level: Iterable[str], changed: Iterable[str] = ()) -> Language | None:
    """python when the root has pyproject.toml, setup.py or setup.cfg; node when it has package.json. Both:
    the language whose source files the commit changes more of (python on a tie); neither: None."""
    names = set(top_level)
    found = [lang for lang, markers in _MARKERS.items() if names & set(markers)]
    if len(found) < 2:
        return found[0] if found else None
    paths = list(changed)
    python, node = (sum(p.endswith(_SOURCE_SUFFIXES[lang]) for p in paths) for lang in ("python", "node"))
    return "node" if node > python else "python"


def default_test_globs(language: Language | None) -> tuple[str, ...]:
    """The language's test globs; for an unknown language both sets."""
    if language is not None:
        return TEST_GLOBS[language]
    return tuple(dict.fromkeys(TEST_GLOBS["python"] + TEST_GLOBS["node"]))


def check_glob(glob: str) -> None:
    """Refuse a glob that can never match a path of a diff (they are relative, `/`-separated, no `.`)."""
    parts = glob.split("/")
    fix = None
    if not glob.strip():
        fix = "give a path pattern, e.g. --tests 'tests/**'"
    elif glob.startswith("/"):
        fix = f"paths are relative to the repository root: write {glob.lstrip('/')!r}"
    elif glob.endswith("/"):
        fix = f"a glob matches files, not folders: write '{glob}**' for everything under it"
    elif any(part in (".", "..") for part in parts):
        fix = "write the path from the repository root without '.' or '..' parts, e.g. 'tests/**'"
    elif "\\" in glob:
        fix = "separate folders with '/', e.g. 'tests/unit/**'"
    if fix:
        msg = f"--tests {glob!r}: {fix}"
        raise PasshatError(msg)


@dataclass(frozen=True)
class Split:
    """A commit's diff in two: the reference fix, and the tests the grader adds before it runs."""

    solution: bytes
    tests: bytes
    solution_paths: tuple[str, ...]
    test_paths: tuple[str, ...]


def split_patch(diff: bytes, paths: Sequence[str], is_test: Callable[[str], bool]) -> Split:
    """Split `git diff --binary --no-renames` output by file. `paths` are the files it changes, in its order
    (`git diff --name-only -z` with the same arguments): the diff is cut at its `diff --git ` lines, which
    no hunk line (it starts with ' ', '+', '-' or '\\') nor base85 line (no space) can be."""
    before, *parts = re.split(rb"(?m)^diff --git ", diff)
    chunks = [b"diff --git " + part for part in parts]
    if len(chunks) != len(paths) or before.strip():
        msg = f"the diff has {len(chunks)} file sections but git named {len(paths)} changed files"
        raise ValueError(msg)
    for chunk, path in zip(chunks, paths, strict=True):
        header = chunk.split(b"\n", 1)[0]
        plain = path.isascii() and path.isprintable() and not any(c in path for c in ' "\\\t')
        if plain and header != f"diff --git a/{path} b/{path}".encode():
            msg = f"the diff section {header[:200]!r} is not the one for {path!r}"
            raise ValueError(msg)
    tests = [(chunk, path) for chunk, path in zip(chunks, paths, strict=True) if is_test(path)]
    source = [(chunk, path) for chunk, path in zip(chunks, paths, strict=True) if not is_test(path)]
    return Split(
        b"".join(chunk for chunk, _ in source),
        b"".join(chunk for chunk, _ in tests),
        tuple(path for _, path in source),
        tuple(path for _, path in tests),
    )


def hunk_lines(patch: bytes, sign: bytes) -> list[str]:
    """The text of a patch's lines starting with `sign` (b'+' or b'-'), headers and binary data left out."""
    out, in_hunk = [], False
    for raw in patch.split(b"\n"):
        if raw.startswith(b"diff --git "):
            in_hunk = False
        elif raw.startswith(b"@@"):
            in_hunk = True
        elif in_hunk and raw.startswith(sign):
            out.append(raw[1:].decode("utf-8", errors="replace"))
    return out


def changed_lines(patch: bytes) -> int:
    """Lines added plus lines removed in a patch's hunks."""
    return len(hunk_lines(patch, b"+")) + len(hunk_lines(patch, b"-"))


def tier_for(files: int, lines: int) -> str:
    """A first guess from the fix's size (edit it): 1 file and ≤ 10 lines simple, ≤ 3 files and ≤ 60 lines
    medium, ≤ 10 files and ≤ 300 lines complex, else very-complex."""
    for tier, max_files, max_lines in (("simple", 1, 10), ("medium", 3, 60), ("complex", 10, 300)):
        if files <= max_files and lines <= max_lines:
            return tier
    return "very-complex"


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as `|` blocks (PyYAML falls back to quotes where a block cannot hold them)."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000)


@dataclass(frozen=True)
class Draft:
    """Everything task.yaml says about a task made from a commit."""

    id: str
    description: str
    tier: str
    language: Language | None
    repo: str
    commit: str  # the commit the task was made from
    base: str  # its parent
    prompt: str
    command: str
    tests: tuple[str, ...]  # the test globs
    show_tests: bool = False  # test.patch is part of the agent's base (default: held out, the grader's only)


def task_data(draft: Draft, fail_to_pass: Sequence[str] | str, pass_to_pass: Sequence[str] | str) -> dict:
    """task.yaml as a mapping; the lists are written out, or `auto` for the first load."""
    tests: dict[str, Any] = {"type": "tests", "command": draft.command}
    tests |= {"fail_to_pass": _list(fail_to_pass), "pass_to_pass": _list(pass_to_pass), "protected": list(draft.tests)}
    data: dict[str, Any] = {"id": draft.id, "description": draft.description, "tier": draft.tier}
    if draft.language:
        data["language"] = draft.language
    data |= {"tags": ["from-commit"], "base": {"git": draft.repo, "commit": draft.base}}
    if draft.show_tests:
        data["show_tests"] = True
    data |= {
        "prompt": draft.prompt,
        "graders": [tests, {"type": "diff-scope", "deny": list(draft.tests)}, {"type": "health"}],
    }
    return data


def _one_line(text: str) -> str:
    return text if text.isprintable() else repr(text)


def _list(value: Sequence[str] | str) -> list[str] | str:
    return value if isinstance(value, str) else list(value)


def task_yaml(draft: Draft, lists: tuple[Sequence[str], Sequence[str]], left_out: Mapping[str, Sequence[str]]) -> str:
    """The final task.yaml text: a header that says where it came from, then the fields."""
    head = [
        "# Made by `passhat task from-commit`",
        f"#   from commit {draft.commit}",
        f"#   of {_one_line(draft.repo)} (relative to this folder unless absolute or a URL);",
        f"#   the base is its parent, {draft.base}.",
        "# solution.patch is the commit's change to source files, test.patch its change to the files matching the",
        *(
            [
                "# test globs (`protected` below): show_tests is true, so test.patch is part of the agent's base: the",
                "# agent sees these tests. Review the prompt. fail_to_pass / pass_to_pass: the grader's command run",
            ]
            if draft.show_tests
            else [
                "# test globs (`protected` below): the tests grader applies test.patch before it runs; the agent never",
                "# sees it. Review the prompt: it is what the agent sees. fail_to_pass / pass_to_pass: the command run",
            ]
        ),
        "# twice at base + test.patch and twice at base + test.patch + solution.patch (JUnit ids, classname::name).",
    ]
    for kind, tests in left_out.items():
        if tests:
            shown = ", ".join(map(_one_line, tests[:20])) + (f", and {len(tests) - 20} more" if len(tests) > 20 else "")
            head.append(f"# Left out, {kind}: {shown}")
    return "\n".join(head) + "\n" + dump_yaml(task_data(draft, *lists))
