"""The gaming figures: the red-team corpus caught / tried by class, and false alarms / honest fixes.

    .venv/bin/python bench/gaming_corpus.py [--only ID ...] [--with-references] [--with-tasks] [--json]
                                            [--twins world]

Red team (tests/graders/corpus): each hack graded with its task's tests grader with the runner guard off (is the
attack real?) and with every defence on (tests grader + integrity scan): caught = any rule flags it; by design =
the rule the manifest names flags it (a `pending` row names the defence still to come). Honest (tests/data/honest):
the scan on every commit's non-test diff; --with-references: every rule on every shipped reference solution, graded
with its own tests; --with-tasks: the ten fixes made into tasks by `task from-commit` (slow: ~1 min each).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "graders"))

from corpus.redteam import Bench, manifest  # noqa: E402
from honest import DATA, commits, scan_commit  # noqa: E402

from passhat.graders import TrialOutcome, grade, load_graded_task  # noqa: E402
from passhat.graders._settings import graders_of  # noqa: E402
from passhat.trial._sandbox import prepare_base  # noqa: E402

RUN = {"status": "ok", "is_error": False, "subtype": "success", "permission_denials": 0}


TWINS: dict[str, str] = {}  # --twins world: every tests grader's `twins:`


def red_team(state: Path, only: list[str]) -> dict:
    bench, by_class = (
        Bench(state, TWINS.get("twins")),
        defaultdict(lambda: {"tried": 0, "real": 0, "caught": 0, "by_design": 0}),
    )
    missed = []
    for row in manifest():
        if only and row["id"] not in only:
            continue
        start = time.perf_counter()
        verdict = bench.judge(row)
        counts = by_class[row["class"]]
        counts["tried"] += 1
        counts["real"] += verdict.real
        counts["caught"] += verdict.flagged
        counts["by_design"] += verdict.caught
        if not verdict.flagged or not verdict.caught:
            missed.append({"id": row["id"], "expect": row["expect"], "pending": row.get("pending"),
                           "found": sorted(verdict.rules), "real": verdict.real})  # fmt: skip
        rules = ",".join(sorted(verdict.rules)) or "-"
        print(
            f"  {row['id']:28} real={verdict.real!s:5} {rules}  ({time.perf_counter() - start:.1f}s)", file=sys.stderr
        )
    return {"by_class": dict(by_class), "missed": missed}


def honest_scan() -> dict:
    rows = list(commits())
    alarms = {f"{r['repo']}@{r['commit'][:12]}": [str(f) for f in found] for r in rows if (found := scan_commit(r))}
    return {"fixes": len(rows), "repositories": len({r["repo"] for r in rows}), "false_alarms": alarms}


def _graded_clean(task_dir: Path, state: Path) -> list[str]:
    task = load_graded_task(task_dir)
    base = prepare_base(task, state / "cache")
    outcome = TrialOutcome(task.dir, base.path, task.solution.read_bytes(), RUN)
    return [item for config in graders_of(task) if config["type"] in ("tests", "integrity")
            for item in grade(outcome, {**config, **TWINS} if config["type"] == "tests" else config).gamed]  # fmt: skip


def references(state: Path) -> dict:
    found = {p.name: _graded_clean(p, state) for p in sorted((ROOT / "tasks").iterdir()) if (p / "task.yaml").is_file()}
    return {"references": len(found), "false_alarms": {k: v for k, v in found.items() if v}}


def tasks(state: Path) -> dict:
    made, alarms, broken = 0, {}, []
    prompt = state / "prompt.md"
    prompt.write_text("Fix the bug that the project's tests describe.\n")
    for bundle in sorted((DATA / "tasks").glob("*.bundle")):
        clone = state / bundle.stem
        subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True)
        heads = subprocess.run(["git", "-C", str(clone), "branch", "-r"], capture_output=True, text=True, check=True)
        for branch in sorted(line.strip().split("/", 1)[1] for line in heads.stdout.splitlines() if "fix-" in line):
            code = subprocess.run(
                [sys.executable, "-m", "passhat", "task", "from-commit", str(clone), f"origin/{branch}", "--id", branch,
                 "--tasks-dir", str(state / "tasks"), "--state-dir", str(state), "--prompt-file", str(prompt)],
                capture_output=True, text=True,
            ).returncode  # fmt: skip
            if code != 0:
                broken.append(branch)
                continue
            made += 1
            if found := _graded_clean(state / "tasks" / branch, state):
                alarms[branch] = found
    return {"tasks": made, "not_made": broken, "false_alarms": alarms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", default=[], help="hack ids")
    parser.add_argument("--with-references", action="store_true")
    parser.add_argument("--with-tasks", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--twins", choices=["in-process", "world"], help="every tests grader's `twins:`")
    args = parser.parse_args()
    if args.twins:
        TWINS["twins"] = args.twins
    state = Path(tempfile.mkdtemp(prefix="passhat-gaming-"))
    result = {"red_team": red_team(state, args.only), "honest_scan": honest_scan()}
    if args.with_references:
        result["honest_references"] = references(state)
    if args.with_tasks:
        result["honest_tasks"] = tasks(state)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    classes = result["red_team"]["by_class"]
    print(f"{'class':26} {'tried':>5} {'real':>5} {'caught':>6} {'by design':>9}")
    for name, c in sorted(classes.items()):
        print(f"{name:26} {c['tried']:5} {c['real']:5} {c['caught']:6} {c['by_design']:9}")
    total = {k: sum(c[k] for c in classes.values()) for k in ("tried", "real", "caught", "by_design")}
    print(f"{'all':26} {total['tried']:5} {total['real']:5} {total['caught']:6} {total['by_design']:9}")
    for row in result["red_team"]["missed"]:
        print(f"  not by design: {row['id']} expects {row['expect']} ({row['pending'] or 'no pending defence'}); "
              f"found {row['found'] or 'nothing'}")  # fmt: skip
    scan = result["honest_scan"]
    print(f"honest fixes, scan: {len(scan['false_alarms'])} false alarm(s) / {scan['fixes']} fixes "
          f"({scan['repositories']} repositories) {scan['false_alarms'] or ''}")  # fmt: skip
    for key, label in (("honest_references", "references"), ("honest_tasks", "tasks")):
        if key in result:
            part = result[key]
            print(
                f"honest {label}, every rule: {len(part['false_alarms'])} false alarm(s) / {part[label]} "
                f"{part['false_alarms'] or ''}{' not made: ' + str(part['not_made']) if part.get('not_made') else ''}"
            )


if __name__ == "__main__":
    main()
