"""`passhat compare BASE.json NEW.json` (or one file with `--providers A,B`): did the pass rate change?

Per task: Fisher's exact test (two-sided) on passes/failures, Holm-adjusted across the tasks
compared, and a plain verdict: better / worse / no detectable change at this n. Suite: the paired
change (mean over tasks of new rate - base rate) with a seeded cluster-bootstrap interval.
`compare()` is pure; `run_compare()` loads, calls, prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from passhat.common._errors import PasshatError
from passhat.report import _formats as fmt
from passhat.report._formats import Format
from passhat.report._summary import TaskSummary, finish
from passhat.report._tables import MIN_NAME, WIDTH, cut, wrap
from passhat.report._words import interval_note
from passhat.report.totals import fold_file
from passhat.stats._estimators import fisher_exact, holm
from passhat.stats._suite import (
    LEVEL,
    PAIRED_RESAMPLES,
    SEED,
    paired_change,
    paired_change_interval,
    shown_interval,
)


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a task's scored trials and passes, and infra errors."""

    n: int
    passes: int
    errors: int = 0

    @property
    def rate(self) -> float | None:
        return self.passes / self.n if self.n else None


@dataclass(frozen=True)
class Comparison:
    task: str
    base: Side
    new: Side
    p_value: float | None  # None: not comparable (a side without scored trials)
    p_holm: float | None
    verdict: str

    @property
    def change(self) -> float | None:
        if self.base.rate is None or self.new.rate is None:
            return None
        return self.new.rate - self.base.rate


def _no_change(base: Side, new: Side) -> str:
    at = f"n={base.n}" if base.n == new.n else f"n={base.n} vs {new.n}"
    return f"no detectable change at {at}"


def compare(pairs: Sequence[tuple[str, Side, Side]], alpha: float = 0.05) -> list[Comparison]:
    """A verdict per (task, base, new): Fisher's exact test, Holm-adjusted across the comparable tasks."""
    comparable = [i for i, (_, base, new) in enumerate(pairs) if base.n and new.n]
    raw = {i: fisher_exact(pairs[i][1].passes, pairs[i][1].n, pairs[i][2].passes, pairs[i][2].n) for i in comparable}
    adjusted = dict(zip(comparable, holm([raw[i] for i in comparable]), strict=True))
    results = []
    for i, (task, base, new) in enumerate(pairs):
        if i not in raw:
            results.append(Comparison(task, base, new, None, None, "not comparable (no scored trials)"))
            continue
        change = new.passes / new.n - base.passes / base.n
        if adjusted[i] < alpha and change != 0:
            verdict = "better" if change > 0 else "worse"
        else:
            verdict = _no_change(base, new)
        results.append(Comparison(task, base, new, raw[i], adjusted[i], verdict))
    return results


def _side(s: TaskSummary) -> Side:
    return Side(s.n, s.passes, s.errors)


def _load(path: str) -> dict[tuple[str, str], TaskSummary]:
    return {(s.task, s.provider): s for s in finish(fold_file(path), (1,))}


def _pick(path: str, summaries: dict[tuple[str, str], TaskSummary], provider: str) -> dict[str, TaskSummary]:
    picked = {task: s for (task, p), s in summaries.items() if p == provider}
    if not picked:
        known = ", ".join(sorted({p for _, p in summaries})) or "none"
        msg = f"{path}: no rows from provider {provider!r} (--providers); the providers in it are: {known}"
        raise PasshatError(msg)
    return picked


def pair_up(
    base_path: str, new_path: str | None, providers: tuple[str, str] | None
) -> tuple[list[tuple[str, Side, Side]], list[str], list[str], dict[str, str]]:
    """(task, base, new) triples, tasks only in base, only in new, and what each side is."""
    base_all = _load(base_path)
    new_all = base_all if new_path is None else _load(new_path)
    new_path = new_path or base_path
    if providers is not None:
        base, new = _pick(base_path, base_all, providers[0]), _pick(new_path, new_all, providers[1])
        sides = {"base": f"{base_path} [{providers[0]}]", "new": f"{new_path} [{providers[1]}]"}
    elif len({p for _, p in base_all}) == 1 and len({p for _, p in new_all}) == 1:
        base = {task: s for (task, _), s in base_all.items()}
        new = {task: s for (task, _), s in new_all.items()}
        sides = {"base": base_path, "new": new_path}
    else:  # several providers: the same provider on both sides
        base = {f"{t} [{p}]": s for (t, p), s in base_all.items()}
        new = {f"{t} [{p}]": s for (t, p), s in new_all.items()}
        sides = {"base": base_path, "new": new_path}
    pairs = [(task, _side(base[task]), _side(new[task])) for task in sorted(base.keys() & new.keys())]
    return pairs, sorted(base.keys() - new.keys()), sorted(new.keys() - base.keys()), sides


def compare_data(
    pairs: Sequence[tuple[str, Side, Side]],
    *,
    only_base: Sequence[str] = (),
    only_new: Sequence[str] = (),
    sides: dict[str, str] | None = None,
    alpha: float = 0.05,
    resamples: int = PAIRED_RESAMPLES,
    seed: int = SEED,
) -> dict[str, Any]:
    """Every figure of the comparison as plain JSON-ready data."""
    results = compare(pairs, alpha)
    counts = [((c.base.n, c.base.passes), (c.new.n, c.new.passes)) for c in results if c.p_value is not None]
    mean = paired_change(counts)
    interval, why = shown_interval(len(counts), mean, paired_change_interval(counts, resamples=resamples, seed=seed))
    verdicts = [c.verdict for c in results]
    suite = {
        "tasks": len(counts),
        "mean_change": mean,
        "ci_95": list(interval) if interval else None,
        "ci_note": interval_note(why, len(counts)),
        "better": verdicts.count("better"),
        "worse": verdicts.count("worse"),
        "no_detectable_change": sum(v.startswith("no detectable") for v in verdicts),
        "not_comparable": sum(v.startswith("not comparable") for v in verdicts),
    }
    tasks = [
        {
            "task": c.task,
            "base_n": c.base.n, "base_passes": c.base.passes, "base_errors": c.base.errors, "base_rate": c.base.rate,
            "new_n": c.new.n, "new_passes": c.new.passes, "new_errors": c.new.errors, "new_rate": c.new.rate,
            "change": c.change, "p_value": c.p_value, "p_holm": c.p_holm, "verdict": c.verdict,
        }
        for c in results
    ]  # fmt: skip
    data = {
        "base": (sides or {}).get("base"),
        "new": (sides or {}).get("new"),
        "alpha": alpha,
        "test": "Fisher's exact test, two-sided, Holm-adjusted across the tasks compared",
        "bootstrap": {"resamples": resamples, "seed": seed, "level": LEVEL,
                      "method": "paired cluster: tasks, then each side's trials; percentile interval"},
        "tasks": tasks,
        "only_in_base": list(only_base),
        "only_in_new": list(only_new),
        "suite": suite,
    }  # fmt: skip
    data["summary"] = _summary_lines(data)
    return data


def _summary_lines(data: dict[str, Any]) -> list[str]:
    suite = data["suite"]
    lines = [
        f"{fmt.plural(suite['tasks'], 'task')} compared: {suite['better']} better, {suite['worse']} worse, "
        f"{suite['no_detectable_change']} with no detectable change "
        f"(Fisher's exact test, two-sided, Holm-adjusted, alpha {data['alpha']:g})."
    ]
    if suite["mean_change"] is not None and suite["ci_95"] is None:
        lines.append(f"Mean change in pass rate over tasks: {fmt.signed(suite['mean_change'])} ({suite['ci_note']}).")
    elif suite["mean_change"] is not None:
        low, high = suite["ci_95"]
        if low > 0 or high < 0:
            call = "the suite as a whole got " + ("better" if low > 0 else "worse")
        else:
            call = "no detectable change for the suite as a whole"
        lines.append(
            f"Mean change in pass rate over tasks: {fmt.signed(suite['mean_change'])} "
            f"(95% CI {fmt.signed(low)} to {fmt.signed(high)}, paired cluster bootstrap): {call}."
        )
    if suite["not_comparable"]:
        names = ", ".join(t["task"] for t in data["tasks"] if t["p_value"] is None)
        lines.append(f"Not comparable (no scored trials on a side): {names}.")
    for side in ("base", "new"):
        if data[f"only_in_{side}"]:
            lines.append(f"Only in {side} (not compared): {', '.join(data[f'only_in_{side}'])}.")
    return lines


def render(form: Format, data: dict[str, Any]) -> str:
    if form == "json":
        return fmt.json_text(data)
    head = ["task", "base", "new", "change", "p", "p (Holm)", "verdict"]
    if form == "csv":
        keys = ["task", "base_n", "base_passes", "base_errors", "new_n", "new_passes", "new_errors",
                "base_rate", "new_rate", "change", "p_value", "p_holm", "verdict"]  # fmt: skip
        suite = data["suite"]  # on every row, as in the report's CSV: the suite's change and its interval or why not
        whole = [suite["mean_change"], *(suite["ci_95"] or [None, None]), suite["ci_note"]]
        head = [*keys, "suite_mean_change", "suite_low", "suite_high", "suite_note"]
        return fmt.csv_text(head, ([*(t[key] for key in keys), *whole] for t in data["tasks"]))
    rows = [
        [
            t["task"], f"{t['base_passes']}/{t['base_n']}", f"{t['new_passes']}/{t['new_n']}", fmt.signed(t["change"]),
            fmt.p_value(t["p_value"]), fmt.p_value(t["p_holm"]), t["verdict"],
        ]
        for t in data["tasks"]
    ]  # fmt: skip
    left = {0, 6}
    intro = [f"base: {data['base']}", f"new:  {data['new']}"] if data["base"] else []
    if form == "md":
        lines = (f"- {fmt.md_text(line)}" for line in intro + data["summary"])
        return "\n".join([fmt.markdown(head, rows, left), "", *lines])
    while max(map(len, fmt.aligned(head, rows, left).splitlines())) > WIDTH:  # in 120 columns: task names cut
        longest = max(len(row[0]) for row in rows)
        if longest <= MIN_NAME:
            break
        rows = [[cut(row[0], longest - 1), *row[1:]] for row in rows]
    table = fmt.aligned(head, rows, left)
    return "\n".join([*map(wrap, intro), "", table, "", *map(wrap, data["summary"])]).lstrip("\n")


def run_compare(
    base: str | Path,
    new: str | Path | None,
    *,
    providers: tuple[str, str] | None = None,
    form: Format = "table",
    alpha: float = 0.05,
    fail_on_worse: bool = False,
    seed: int = SEED,
    resamples: int = PAIRED_RESAMPLES,
    out: TextIO,
) -> int:
    """Load, compare, print. 0, or 1 with fail_on_worse when a task got worse."""
    if new is None and providers is None:
        msg = (
            f"{base}: compare needs two results files (passhat compare BASE.json NEW.json) "
            "or one file and --providers A,B"
        )
        raise PasshatError(msg)
    pairs, only_base, only_new, sides = pair_up(str(base), None if new is None else str(new), providers)
    if not pairs:
        msg = (
            f"{base} and {new or base}: no task appears on both sides; compare runs of the same tasks "
            f"(base has {fmt.some(only_base)}; new has {fmt.some(only_new)})"
        )
        raise PasshatError(msg)
    data = compare_data(
        pairs, only_base=only_base, only_new=only_new, sides=sides, alpha=alpha, resamples=resamples, seed=seed
    )
    print(render(form, data), file=out)
    return 1 if fail_on_worse and data["suite"]["worse"] else 0
