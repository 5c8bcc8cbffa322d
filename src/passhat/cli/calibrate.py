"""`passhat calibrate LABELS`: agreement of the LLM judge with human labels (logic in passhat.judge)."""

from __future__ import annotations

import argparse
import json
import sys

from passhat.cli import whole_number
from passhat.judge._calibrate import VERDICT, calibrate, check_scale, read_labels
from passhat.report._formats import aligned

HELP = "agreement of the LLM judge with human labels: weighted kappa, Spearman's rho, precision/recall/F1"


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render(data: dict) -> str:
    head = ["criterion", "n", f"kappa ({data['weights']})", "spearman", "judge-human", "higher", "lower", "sign p",
            "systematic"]  # fmt: skip
    rows = []
    for c in [*data["criteria"], *([data["pooled"]] if data["pooled"] else [])]:
        kappa = _f(c["kappa"]) if c["ordinal"] else "n/a"
        rows.append([c["criterion"], str(c["n"]), kappa, _f(c["spearman"]), f"{c['mean_diff']:+.2f}",
                     str(c["judge_higher"]), str(c["judge_lower"]), _f(c["sign_p"]), c["systematic"] or ""])  # fmt: skip
    lines = [f"calibration: {data['trials']} trial(s), judge vs human"]
    if rows:
        lines += [aligned(head, rows, left=(0, 8))]
    weighting = {"quadratic": "quadratic weights (i-j)^2/(K-1)^2", "linear": "linear weights |i-j|/(K-1)",
                 "none": "unweighted"}[data["weights"]]  # fmt: skip
    lines.append(f"kappa: Cohen's, {weighting}, categories = the scale's points; n/a for non-integer scores.")
    flagged = [c for c in data["criteria"] if c["systematic"]]
    for c in flagged:
        lines.append(f"Systematic: {c['criterion']}: the {c['systematic']} than humans by {abs(c['mean_diff']):.2f} "
                     f"points on average ({max(c['judge_higher'], c['judge_lower'])} of "
                     f"{c['judge_higher'] + c['judge_lower']} disagreements that way).")  # fmt: skip
    v = data["verdict"]
    if v is None:
        lines.append(f"Pass verdict: no `{VERDICT}` rows; add rows with criterion {VERDICT} to calibrate the verdict.")
    else:
        lines.append(f"Pass verdict (n={v['n']}, pass = positive): precision {_f(v['precision'])}, recall "
                     f"{_f(v['recall'])}, F1 {_f(v['f1'])}, accuracy {_f(v['accuracy'])}, kappa {_f(v['kappa'])} "
                     f"(TP {v['tp']}, FP {v['fp']}, FN {v['fn']}, TN {v['tn']}).")  # fmt: skip
    return "\n".join(lines)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("labels", help="CSV: trial,criterion,human,judge (criterion `pass` holds verdicts)")
    parser.add_argument(
        "--weights",
        choices=("quadratic", "linear", "none"),
        default="quadratic",
        help="kappa weighting for ordinal scores (default quadratic)",
    )
    parser.add_argument(
        "--scale",
        type=whole_number("--scale", 2, "give the number of points, e.g. 5 for a 1-5 scale"),
        metavar="N",
        help="categories 1..N for kappa (default: the range seen)",
    )
    parser.add_argument(
        "--bias",
        type=float,
        default=0.5,
        metavar="POINTS",
        help="mean judge-human difference that, one-sided, counts as systematic (default 0.5)",
    )
    parser.add_argument("--format", choices=("table", "json"), default="table")


def run(args: argparse.Namespace) -> int:
    labels = read_labels(args.labels)
    check_scale(args.labels, labels, args.scale)
    data = calibrate(labels, args.weights, args.scale, args.bias)
    print(json.dumps(data, indent=2) if args.format == "json" else render(data), file=sys.stdout)
    return 0
