"""`passhat judge-noise RESULTS`: regrade saved outputs with the judge N times (logic in passhat.judge)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from passhat.cli import format_option, whole_number
from passhat.common._errors import PasshatError
from passhat.judge._noise import _load_rows, collect, summary
from passhat.report._formats import aligned

HELP = "regrade saved outputs with the LLM judge N times and report its own disagreement"


def render(summaries: list[dict], times: int) -> str:
    if not summaries:
        return "judge-noise: no row was graded by a rubric or pairwise grader; nothing to regrade"
    lines = []
    for d in summaries:
        what = f"rubric {d['label']}" if d["kind"] == "rubric" else f"pairwise vs {d['label']}"
        lines.append(f"judge {d['grader']} ({what}, judge_version {', '.join(d['judge_versions'])}): "
                     f"{d['trials']} trial(s) x {times} regrades")  # fmt: skip
        if d["criteria"]:
            rows = [[c["criterion"], "-" if c["pooled_sd"] is None else f"{c['pooled_sd']:.3f}",
                     "-" if c["max_range"] is None else f"{c['max_range']:g}", f"{c['trials_disagreeing']}/{c['trials']}"]
                    for c in d["criteria"]]  # fmt: skip
            lines.append(aligned(["criterion", "pooled SD", "max range", "trials disagreeing"], rows))
        what = "pass verdicts" if d["kind"] == "rubric" else "winners"
        if d["verdict_agreement"] is None:
            lines.append(f"{what}: fewer than two scored regrades per trial; nothing to compare")
        else:
            lines.append(f"{what} agree on {d['trials_agreeing']}/{d['trials_compared']} trials "
                         f"({d['verdict_agreement']:.2f}); unscored regrades: {d['unscored']} of {d['regrades']}")  # fmt: skip
        lines.append("")
    lines.append("SD in the rubric's points (overall in 0..1), n - 1 per trial, pooled as sqrt(mean variance).")
    return "\n".join(lines)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="promptfoo eval -o results.json of an eval with rubric/pairwise graders")
    parser.add_argument(
        "--times",
        type=whole_number("--times", 2, "regrade at least twice to see disagreement, e.g. --times 2"),
        default=2,
        help="regrades per trial (default 2)",
    )
    parser.add_argument(
        "--tasks-dir", default=None, help="take judge graders from task.yaml here when the file lacks them"
    )
    parser.add_argument("-j", "--jobs", type=int, default=4, help="judge calls at once (default 4)")
    format_option(parser, ("table", "json"))


def run(args: argparse.Namespace) -> int:
    from passhat.judge._client import endpoint

    where = endpoint("judge-noise", 0, None)
    if isinstance(where, str):
        raise PasshatError(f"judge-noise: {where}")
    rows = _load_rows(Path(args.results))
    tasks_dir = Path(args.tasks_dir).resolve() if args.tasks_dir else None
    summaries = [summary(s) for s in collect(rows, args.times, tasks_dir, args.jobs)]
    if args.format == "json":
        print(json.dumps({"times": args.times, "graders": summaries}, indent=2))
    else:
        print(render(summaries, args.times))
    return 0
