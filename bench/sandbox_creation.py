"""Per-trial sandbox creation and patch collection on big repositories: overlay vs copy vs `git worktree`.

Generates two git repositories (default 1,000 and 20,000 files of ~10 KB: ~10 MB and ~200 MB), makes each a
task base once with passhat's own prepare_base, then, in one run, times per trial:

  overlay   open_sandbox: an overlay mount on the base plus a read-only view of its .git (as root; what every
            trial uses there) — then collect_outcome reads the changed paths from the overlay's upper dir
  copy      open_sandbox(overlay=False): `cp -a` of the whole base (the fallback, and every trial before) —
            then collect_outcome walks the whole work tree
  worktree  `git worktree add --detach` in the source repository (the seed's bash loop) — then
            `git add -A && git diff --cached --binary`

The edit before each collection is small: 3 files changed, 1 added, 1 deleted. The overlay and copy patches
must be byte-identical, or the benchmark stops. Medians of --rounds rounds (default 7). Targets (issue #12,
item 7): overlay sandbox <= 50 ms and overlay collection <= 100 ms at 20,000 files, each <= 1.2x its own
1,000-file time. Wall times: on a loaded machine give two runs.

    .venv/bin/python bench/sandbox_creation.py [--sizes 1000 20000] [--rounds 7] [--keep DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from passhat.tasks._load import load_task
from passhat.trial import _sandbox
from passhat.trial._sandbox import Base, close_sandbox, collect_outcome, open_sandbox, prepare_base

FILE_BYTES = 10_000
PER_FOLDER = 100
SANDBOX_MS, COLLECT_MS, GROWTH = 50.0, 100.0, 1.2
METHODS = ("overlay", "copy", "worktree")
GIT = ("git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "gc.auto=0")


def _git(cwd: Path, *args: str) -> bytes:
    proc = subprocess.run([*GIT, *args], cwd=cwd, capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"bench: git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def make_task(folder: Path, files: int) -> Path:
    """A task folder whose repo/ holds `files` text files of FILE_BYTES in folders of PER_FOLDER."""
    repo = folder / "repo"
    if (folder / "task.yaml").is_file():  # made by an earlier run (--keep)
        return folder
    line = b"".join(bytes([97 + (i * 7) % 26]) for i in range(79)) + b"\n"
    body = line * (FILE_BYTES // len(line))
    for i in range(files):
        path = repo / f"pkg{i // PER_FOLDER:04d}" / f"mod{i:06d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"# file {i}\n".encode() + body)
    (folder / "solution.patch").write_text("")
    (folder / "task.yaml").write_text(
        f"id: gen{files}\ndescription: generated\ntier: simple\nprompt: p\n"
        "graders:\n  - type: tests\n    command: 'true'\n"
    )
    return folder


def edit(work: Path) -> None:
    """The small change every round makes: 3 files changed, 1 added, 1 deleted."""
    for i in (0, 1, 2):
        path = work / "pkg0000" / f"mod{i:06d}.py"
        path.write_bytes(path.read_bytes() + b"# edited\n")
    (work / "pkg0000" / "added.py").write_text("ADDED = True\n")
    (work / "pkg0000" / "mod000004.py").unlink()


def _ms(action: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = action()
    return (time.perf_counter() - start) * 1000, result


def one_round(method: str, base: Base, source: Path, scratch: Path, index: int) -> tuple[float, float, bytes]:
    """(creation ms, collection ms, patch) of one trial-sized sandbox made and collected by `method`."""
    root = scratch / f"{method}-{index}"
    if method == "worktree":
        work = root / "work"
        create, _ = _ms(lambda: _git(source, "worktree", "add", "-q", "--detach", str(work), "HEAD"))
        edit(work)

        def collect() -> bytes:
            _git(work, "add", "-A")
            return _git(work, "diff", "--cached", "--binary", "--no-renames", "HEAD")

        took, patch = _ms(collect)
        _git(source, "worktree", "remove", "--force", str(work))
        shutil.rmtree(root, ignore_errors=True)
        return create, took, bytes(patch)  # type: ignore[arg-type]
    overlay = method == "overlay"
    create, sandbox = _ms(lambda: open_sandbox(base.path, root, overlay, base.path / ".git"))
    assert isinstance(sandbox, _sandbox.Sandbox)
    if sandbox.overlay is not overlay:
        sys.exit(f"bench: the {method} sandbox was not one ({_sandbox.overlay_refused}); run as root")
    try:
        edit(sandbox.work)
        took, outcome = _ms(lambda: collect_outcome(sandbox.work, base, None, sandbox.upper, sandbox.git_dir))
    finally:
        close_sandbox(sandbox.root)
    return create, took, outcome.patch  # type: ignore[attr-defined]


def measure(files: int, rounds: int, where: Path) -> dict[str, dict[str, float]]:
    folder = make_task(where / f"gen{files}", files)
    start = time.perf_counter()
    base = prepare_base(load_task(folder), where / "cache")
    prepared = time.perf_counter() - start
    source = where / f"source-{files}"  # the seed loop's repository: the same files, committed
    if not (source / ".git").is_dir():
        shutil.copytree(folder / "repo", source, dirs_exist_ok=True)
        _git(source, "init", "-q")
        _git(source, "add", "-A")
        _git(source, "commit", "-q", "-m", "base")
    scratch = where / "sandboxes"
    scratch.mkdir(exist_ok=True)
    times: dict[str, list[tuple[float, float]]] = {method: [] for method in METHODS}
    for index in range(rounds):  # methods interleaved, so machine noise hits all three
        patches = {}
        for method in METHODS:
            create, took, patches[method] = one_round(method, base, source, scratch, index)
            times[method].append((create, took))
        if patches["overlay"] != patches["copy"]:
            sys.exit(f"bench: at {files} files the overlay and copy patches differ; passhat would grade differently")
    print(f"  {files:,} files: base prepared in {prepared:.1f} s", file=sys.stderr)
    return {
        method: {
            "sandbox_ms": statistics.median(create for create, _ in pairs),
            "collect_ms": statistics.median(took for _, took in pairs),
        }
        for method, pairs in times.items()
    }


def report(results: dict[int, dict[str, dict[str, float]]]) -> list[str]:
    """The table, the ratios and the verdicts; returns the targets missed."""
    small, big = min(results), max(results)
    print(f"{'method':<9} {'files':>7} {'sandbox ms':>11} {'collect ms':>11}")
    for method in METHODS:
        for files in sorted(results):
            row = results[files][method]
            print(f"{method:<9} {files:>7,} {row['sandbox_ms']:>11.1f} {row['collect_ms']:>11.1f}")
    print(f"\nratios {big:,} / {small:,} files:")
    for method in METHODS:
        parts = [
            f"{k.split('_')[0]} {results[big][method][k] / results[small][method][k]:.2f}x"
            for k in results[big][method]
        ]
        print(f"  {method:<9} " + ", ".join(parts))
    overlay_big, overlay_small = results[big]["overlay"], results[small]["overlay"]
    missed = []
    for key, limit in (("sandbox_ms", SANDBOX_MS), ("collect_ms", COLLECT_MS)):
        value, growth = overlay_big[key], overlay_big[key] / overlay_small[key]
        verdict = "ok" if value <= limit and growth <= GROWTH else "MISSED"
        print(
            f"target overlay {key} at {big:,} files <= {limit:g} ms and <= {GROWTH}x: {value:.1f} ms, {growth:.2f}x {verdict}"
        )
        if verdict != "ok":
            missed.append(key)
    print(f"load average (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 20000])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="generate (and keep) the repositories here; reused when present")
    parser.add_argument("--json", action="store_true", help="print the medians as JSON too")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print(
            "bench: not root, so no overlay: passhat's trials copy here; run as root to measure both", file=sys.stderr
        )
        return 2
    where = args.keep or Path(tempfile.mkdtemp(prefix="passhat-bench-"))
    where.mkdir(parents=True, exist_ok=True)
    try:
        results = {files: measure(files, args.rounds, where) for files in args.sizes}
    finally:
        if args.keep is None:
            shutil.rmtree(where, ignore_errors=True)
    missed = report(results)
    if args.json:
        print(json.dumps({str(files): row for files, row in results.items()}, indent=2))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
