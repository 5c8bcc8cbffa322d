"""`passhat regrade RESULTS [-o NEW]`: rerun graders on saved patches, no agent, no cost (logic in passhat.graders).

The regraded eval is a results file like promptfoo's, beside the input unless `-o` names one:
results.json -> results.regraded.json (the input is never written over; a second regrade replaces the first).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from passhat.common._errors import PasshatError
from passhat.graders._regrade import _key, _load, _write_atomically, regrade_row

HELP = "rerun graders on an earlier eval's saved patches (no agent, no cost); writes a new results file"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="promptfoo eval -o results.json of a passhat eval")
    parser.add_argument(
        "-o", "--output", help="where to write the regraded results (default: beside RESULTS, results.regraded.json)"
    )
    parser.add_argument(
        "--tasks-dir", default=None, help="take task.yaml graders from here instead of the saved task_dir"
    )


def default_output(results: Path) -> Path:
    """results.json -> results.regraded.json, beside it (results.jsonl -> results.regraded.jsonl)."""
    return results.with_name(f"{results.stem}.regraded{results.suffix or '.json'}")


def run(args: argparse.Namespace) -> int:
    source = Path(args.results)
    target = Path(args.output) if args.output else default_output(source)
    if source.resolve() == target.resolve():
        raise PasshatError(f"-o {target}: same as the input; write the regrade to a new file")
    data = _load(source)
    tasks_dir = Path(args.tasks_dir).resolve() if args.tasks_dir else None
    rows = data["results"]["results"]
    changes: list[str] = []
    skipped = 0
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    for index, row in enumerate(rows):
        try:
            new = regrade_row(row, tasks_dir)
        except PasshatError as error:
            raise PasshatError(f"{source}: results.results[{index}]: {error}") from None
        if new is None:
            skipped += 1
            continue
        task = _key(row).split(" ")[0]
        before[task] += bool(row.get("success"))
        after[task] += bool(new["success"])
        if bool(new["success"]) != bool(row.get("success")):
            changes.append(
                f"  {_key(row)}: {'PASS' if row.get('success') else 'FAIL'} → {'PASS' if new['success'] else 'FAIL'}"
            )
        rows[index] = new
    _write_atomically(target, data)
    print(
        f"regraded {len(rows) - skipped} trial(s) from {source} into {target}"
        + (f"; {skipped} kept as they were (infra errors or no saved patch)" if skipped else "")
    )
    if changes:
        print(f"{len(changes)} verdict(s) changed:")
        print("\n".join(changes))
        for task in sorted(before):
            if before[task] != after[task]:
                print(f"  {task}: passes {before[task]} → {after[task]}")
    else:
        print("no verdict changed")
    return 0
