"""Writes the honest corpus: real bug-fix commits of public repositories (permissive licenses), the non-test part
of each diff, for the integrity scan's false-alarm count (tests/graders/test_honest_corpus.py).

    .venv/bin/python tests/data/honest/extract.py /work/.mirror   # read-only git dirs (owner+name/repo)

Per repository, the newest commits (no merges) whose subject says fix/bug and that change both code and tests
(the test files by `passhat task from-commit`'s default globs). For each: the diff of its non-test code files with
whole-file context (so the scan reads each changed file as it was after the commit, and the lines the commit
added), and the literals of the commit's test files' assertions less those the changed code already had (what
`copied-test-literals` compares against). One JSON line per commit in <owner>+<name>.jsonl.xz.
"""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
from pathlib import Path

from passhat.graders._globs import matches
from passhat.graders.scan import assertion_literals, scan_source
from passhat.graders.scan._source import CODE
from passhat.tasks._author import TEST_GLOBS

HERE = Path(__file__).resolve().parent
REPOS = {  # owner+name: (language, license, commits to keep)
    "more-itertools+more-itertools": ("python", "MIT", 15),
    "pytoolz+toolz": ("python", "BSD-3-Clause", 15),
    "mahmoud+boltons": ("python", "BSD-3-Clause", 15),
    "hukkin+tomli": ("python", "MIT", 10),
    "pallets+click": ("python", "BSD-3-Clause", 15),
    "npm+node-semver": ("node", "ISC", 15),
    "ljharb+qs": ("node", "BSD-3-Clause", 15),
    "yargs+yargs-parser": ("node", "ISC", 15),
}
MAX_CHANGED = 300  # added + removed lines of the non-test part: a bug fix, not a rewrite
MAX_FILE = 400_000


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout.decode(
        "utf-8", "replace"
    )


def show(repo: Path, commit: str, path: str) -> str | None:
    try:
        return git(repo, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return None


def entries(repo: Path, language: str, keep: int) -> list[dict]:
    globs = TEST_GLOBS[language]  # type: ignore[index]
    found = []
    log = git(repo, "log", "--no-merges", "-i", "-E", r"--grep=\bfix|\bbug", "--format=%H%x00%P%x00%s")
    for line in log.splitlines():
        commit, parents, subject = line.split("\0")
        if len(parents.split()) != 1:
            continue
        parent = parents.strip()
        stat = git(repo, "diff", "--numstat", "--no-renames", parent, commit)
        rows = [r.split("\t") for r in stat.splitlines() if r.count("\t") >= 2]
        tests = [p for _, _, p in rows if matches(p, globs)]
        code = [(int(a), int(d), p) for a, d, p in rows if a != "-" and not matches(p, globs) and p.endswith(CODE)]
        if not tests or not code or sum(a + d for a, d, _ in code) > MAX_CHANGED:
            continue
        paths = [p for _, _, p in code]
        diff = git(repo, "diff", "-U1000000", "--no-renames", parent, commit, "--", *paths)
        if len(diff) > MAX_FILE:
            continue
        literals: set[tuple[str, str]] = set()
        for path in tests:
            text = show(repo, commit, path)
            if text is not None and path.endswith(CODE):
                literals |= assertion_literals(path, text)
        for path in paths:
            before = show(repo, parent, path)
            if before is not None:
                literals -= {v for v, _ in scan_source(path, before, set(range(1, before.count("\n") + 2)), set())[1]}
        found.append({"commit": commit, "subject": subject, "diff": diff, "test_literals": sorted(literals)})
        if len(found) == keep:
            break
    return found


def main(mirror: Path) -> None:
    for name, (language, license_id, keep) in REPOS.items():
        rows = entries(mirror / name / "repo", language, keep)
        with lzma.open(HERE / f"{name}.jsonl.xz", "wt", preset=9 | lzma.PRESET_EXTREME) as out:
            for row in rows:
                out.write(json.dumps({"repo": name.replace("+", "/"), "language": language,
                                      "license": license_id, **row}) + "\n")  # fmt: skip
        print(f"{name}: {len(rows)} commits, {(HERE / f'{name}.jsonl.xz').stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
