"""`passhat calibrate LABELS.csv`: how well the LLM judge agrees with people on the same trials.

LABELS.csv has one row per trial and criterion, human and judge side by side:

    trial,criterion,human,judge
    write-changelog/r0,instruction_following,4,5
    write-changelog/r0,pass,pass,fail

`criterion` is a rubric criterion (integer points on its scale; any number for a continuous score such
as `overall`) or `pass` (verdicts: pass/fail, true/false, yes/no, 1/0). Other columns are ignored.

Per criterion: Cohen's kappa, weighted for the ordinal scale (quadratic by default, `--weights linear`),
Spearman's rho, and the mean judge - human difference with an exact sign test; a criterion where the
judge is systematically higher or lower is named. For `pass`: precision, recall and F1 of the judge's
verdict against the human's (pass = positive), accuracy and unweighted kappa.
"""

from __future__ import annotations

import csv
import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from passhat.common._errors import LabelsError
from passhat.judge._agreement import (
    Weights,
    cohen_kappa,
    precision_recall_f1,
    sign_test_p,
    spearman_rho,
)

COLUMNS = ("trial", "criterion", "human", "judge")
VERDICT = "pass"
_TRUE, _FALSE = {"pass", "true", "yes", "1", "y", "p"}, {"fail", "false", "no", "0", "n", "f"}
DIRECTION_SHARE = 0.75  # of the non-zero differences, the share one way that makes a bias systematic


@dataclass(frozen=True)
class Label:
    line: int
    trial: str
    criterion: str
    human: float | bool
    judge: float | bool


def _verdict(path: Path, line: int, field: str, value: str) -> bool:
    text = value.strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise LabelsError(f"{path}: line {line}: field '{field}': {value!r} is not a verdict; write pass or fail "
                      "(true/false, yes/no, 1/0) on `pass` rows")  # fmt: skip


def _score(path: Path, line: int, field: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        fix = "give a score or remove the row" if not value.strip() else "write the score as a number, e.g. 4"
        raise LabelsError(f"{path}: line {line}: field '{field}': {value!r} is not a number; {fix}")
    return number


def read_labels(path: str | Path) -> list[Label]:
    """Every row of LABELS.csv, checked: errors name the file, line, field and value, and the fix."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise LabelsError(f"{path}: no such file; pass a CSV with columns {', '.join(COLUMNS)}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise LabelsError(f"{path}: cannot read it ({error}); save it as UTF-8 CSV") from None
    reader = csv.DictReader(text.splitlines())
    header = [name.strip() for name in (reader.fieldnames or [])]
    missing = [name for name in COLUMNS if name not in header]
    if missing:
        raise LabelsError(f"{path}: line 1: header {header or 'empty'} lacks column(s) {', '.join(missing)}; "
                          f"start the file with: {','.join(COLUMNS)}")  # fmt: skip
    reader.fieldnames = header
    labels: list[Label] = []
    seen: dict[tuple[str, str], int] = {}  # (trial, criterion) → line
    for row in reader:
        line = reader.line_num
        if None in row or any(row.get(name) is None for name in COLUMNS):
            raise LabelsError(f"{path}: line {line}: has {len([v for v in row.values() if v is not None])} fields, "
                              f"the header has {len(header)}; give every row {', '.join(COLUMNS)}")  # fmt: skip
        trial, criterion = row["trial"].strip(), row["criterion"].strip()
        for field, value in (("trial", trial), ("criterion", criterion)):
            if not value:
                raise LabelsError(f"{path}: line {line}: field '{field}' is empty; name the {field}")
        key = (trial, criterion)
        if key in seen:
            raise LabelsError(f"{path}: line {line}: trial {trial!r} criterion {criterion!r} repeats line {seen[key]}; "
                              "keep one row per trial and criterion")  # fmt: skip
        seen[key] = line
        parse = _verdict if criterion == VERDICT else _score
        labels.append(Label(line, trial, criterion, parse(path, line, "human", row["human"]),
                            parse(path, line, "judge", row["judge"])))  # fmt: skip
    if not labels:
        raise LabelsError(f"{path}: no rows under the header; add one row per trial and criterion")
    return labels


@dataclass(frozen=True)
class CriterionAgreement:
    criterion: str
    n: int
    ordinal: bool  # every score an integer: kappa applies
    categories: tuple[int, ...]
    kappa: float | None
    spearman: float | None
    mean_diff: float  # judge - human, in the criterion's points
    judge_higher: int
    judge_lower: int
    sign_p: float | None
    systematic: str | None  # "judge higher" / "judge lower" when the disagreement has a direction


def criterion_agreement(criterion: str, human: list[float], judge: list[float], weights: Weights,
                        scale: int | None, bias: float) -> CriterionAgreement:  # fmt: skip
    ordinal = all(float(v).is_integer() for v in (*human, *judge))
    categories: tuple[int, ...] = ()
    kappa = None
    if ordinal:
        seen = [int(v) for v in (*human, *judge)]
        low, high = (1, scale) if scale else (min(seen), max(seen))
        categories = tuple(range(low, high + 1))
        kappa = cohen_kappa([int(v) for v in human], [int(v) for v in judge], categories, weights)
    diffs = [j - h for h, j in zip(human, judge, strict=True)]
    higher, lower = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    mean_diff = statistics.fmean(diffs)
    systematic = None
    if abs(mean_diff) >= bias and higher + lower:
        share = (higher if mean_diff > 0 else lower) / (higher + lower)
        if share >= DIRECTION_SHARE:
            systematic = "judge higher" if mean_diff > 0 else "judge lower"
    return CriterionAgreement(criterion, len(human), ordinal, categories, kappa, spearman_rho(human, judge), mean_diff,
                              higher, lower, sign_test_p(higher, lower), systematic)  # fmt: skip


def calibrate(labels: list[Label], weights: Weights = "quadratic", scale: int | None = None, bias: float = 0.5) -> dict:
    """Every figure as plain data: per criterion, all ordinal criteria pooled, and the pass verdict."""
    by: dict[str, list[Label]] = {}
    for label in labels:
        by.setdefault(label.criterion, []).append(label)
    criteria = [
        criterion_agreement(name, [float(x.human) for x in rows], [float(x.judge) for x in rows], weights, scale, bias)
        for name, rows in sorted(by.items()) if name != VERDICT
    ]  # fmt: skip
    ordinal = [
        x for x in labels if x.criterion != VERDICT and any(c.criterion == x.criterion and c.ordinal for c in criteria)
    ]
    pooled = None
    if len({c.criterion for c in criteria if c.ordinal}) > 1:
        pooled = criterion_agreement("(all criteria)", [float(x.human) for x in ordinal], [float(x.judge) for x in ordinal],
                                     weights, scale, bias)  # fmt: skip
    verdicts = by.get(VERDICT, [])
    verdict = None
    if verdicts:
        truth, said = [bool(x.human) for x in verdicts], [bool(x.judge) for x in verdicts]
        verdict = {"n": len(verdicts), **precision_recall_f1(truth, said),
                   "kappa": cohen_kappa([int(t) for t in truth], [int(s) for s in said], (0, 1), "none")}  # fmt: skip
    return {"weights": weights, "criteria": [asdict(c) for c in criteria], "pooled": asdict(pooled) if pooled else None,
            "verdict": verdict, "trials": len({x.trial for x in labels})}  # fmt: skip


def ordinal_criteria(labels: list[Label]) -> set[str]:
    """The criteria whose every score, human and judge, is a whole number: points on a scale (kappa applies).
    A criterion with any other score (a continuous 0..1 `overall`, say) is not ordinal, 0.0 and 1.0 included."""
    by: dict[str, list[float]] = {}
    for label in labels:
        if label.criterion != VERDICT:
            by.setdefault(label.criterion, []).extend((float(label.human), float(label.judge)))
    return {name for name, values in by.items() if all(v.is_integer() for v in values)}


def check_scale(path: str | Path, labels: list[Label], scale: int | None) -> None:
    """With --scale N, every score of an ordinal criterion must be one of 1..N (continuous criteria are left alone)."""
    if scale is None:
        return
    ordinal = ordinal_criteria(labels)
    for label in labels:
        if label.criterion not in ordinal:
            continue
        for field in ("human", "judge"):
            value = getattr(label, field)
            if not 1 <= value <= scale:
                raise LabelsError(f"{path}: line {label.line}: field '{field}': {value:g} is outside --scale {scale} "
                                  f"(1..{scale}); fix the score or pass the scale it was given on")  # fmt: skip
