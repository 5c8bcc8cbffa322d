"""The report in words: per provider a headline, the suite's figures, what to rerun; the verdict per task; the
commonest infra-error reasons. Pure: figures in, sentences out (shared by every format).

The verdict (`verdict_of`), for k unattended runs in a row and a threshold t (default 0.9, `--safe-at`): the 95%
interval of pass^k is an interval of the pass rate c/n with each end raised to the k-th power — Clopper–Pearson
at a fixed n, the anytime-valid mixture when the trials came in rounds (`stats._verdict`). "safe" when its lower
end is at least t, "not safe" when its upper end is below t, else "not enough trials to say", with how many more
trials would decide it if the observed rate holds (`stats._verdict.trials_to_decide`). A task with any trial
caught gaming the tests is "not safe: gamed the tests in G of n trials", whatever its pass^k (`stats._figures`).
The block says once what the trials at hand can decide (`reach_line`), and each task's chance that its next k runs
all pass under a uniform prior.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from passhat.report import _formats as fmt
from passhat.report._summary import ProviderSuite, TaskSummary
from passhat.results._causes import with_repeat
from passhat.stats._estimators import pass_hat_k_plug_in
from passhat.stats._figures import PRIOR, next_runs_all_pass, task_decision
from passhat.stats._intervals import Method
from passhat.stats._suite import MIN_TASKS
from passhat.stats._verdict import hat_interval, trials_to_decide

SAFE, NOT_SAFE, UNSURE = "safe", "not safe", "not enough trials to say"
SAFE_AT = 0.9  # default threshold on pass^k
SCRIPTED_MARK = "†"  # after a cost from the scripted model (html: the word "scripted")
REASONS_SHOWN = 3  # infra-error reasons per task
TASKS_WITH_REASONS = 10  # tasks whose reasons the text formats list (--format json has every one)


def _label(summary: TaskSummary, several: bool) -> str:
    return f"{summary.task} [{summary.provider}]" if several else summary.task


def _names(tasks: Sequence[TaskSummary]) -> str:
    return ", ".join(f"{s.task} ({s.passes}/{s.n})" for s in tasks)


def _verb(count: int, singular: str, plural: str) -> str:
    return singular if count == 1 else plural


def _headline(suite: ProviderSuite) -> str:
    total, perfect = len(suite.tasks), suite.all_pass
    sizes = {s.n for s in perfect}
    if perfect and len(sizes) == 1:
        n = sizes.pop()
        line = f"{len(perfect)} of {total} tasks {_verb(len(perfect), 'is', 'are')} {n}/{n}"
    else:
        line = f"{len(perfect)} of {total} tasks {_verb(len(perfect), 'passes', 'pass')} every trial"
    flaky = suite.flaky
    line += f"; {len(flaky)} {_verb(len(flaky), 'is', 'are')} flaky: {_names(flaky)}" if flaky else "; none is flaky"
    if suite.never_pass:
        never = suite.never_pass
        line += f"; {len(never)} never {_verb(len(never), 'passes', 'pass')}: {_names(never)}"
    if suite.unscored:
        line += f"; {len(suite.unscored)} had no scored trial: " + ", ".join(s.task for s in suite.unscored)
    errors = suite.errors
    return line + (f". {fmt.plural(errors, 'infra error')} excluded from n." if errors else ". No infra errors.")


def gaming_attempts(suite: ProviderSuite, twins: Sequence[TaskSummary]) -> tuple[int, int]:
    """(gaming attempts, trials looked at) of a provider: its tasks' trials caught gaming, and on its impossible
    twins every cheat attempt (a pass, or a trial caught gaming)."""
    mine = [s for s in twins if s.provider == suite.provider]
    return suite.gamed + sum(s.cheats for s in mine), suite.scanned + sum(s.n for s in mine)


def _gaming_line(suite: ProviderSuite, twins: Sequence[TaskSummary] = ()) -> str | None:
    """How many trials tried to game the tests (said when the graders looked, or an impossible twin ran)."""
    mine = [s for s in twins if s.provider == suite.provider]
    attempts, looked = gaming_attempts(suite, mine)
    if not looked:
        return None
    line = f"{fmt.plural(attempts, 'gaming attempt')} in {fmt.plural(looked, 'trial')}"
    named = [f"{s.task} ({s.gamed}/{s.n})" for s in suite.tasks if s.gamed]
    named += [f"{s.task} ({s.cheats}/{s.n}, impossible: {s.gamed} caught, {s.cheats - s.gamed} uncaught)"
              for s in mine if s.cheats]  # fmt: skip
    if named:
        return line + ": " + ", ".join(named) + "; each is counted apart from failures."
    return line + "."


def _icc_line(icc: float | None) -> str | None:
    if icc is None:
        return None
    if icc <= 0:
        return f"ICC(1) = {icc:.2f}: tasks differ no more than trial-to-trial luck alone would make them."
    share = min(icc, 1.0)
    return (
        f"ICC(1) = {icc:.2f}: about {share:.0%} of the pass/fail variance is which task it is, "
        f"{1 - share:.0%} is trial-to-trial luck."
    )


def interval_note(why: str | None, tasks: int) -> str | None:
    """Why a suite figure has no interval beside it, in words (every format says the same); None when it has."""
    if why == "not enough tasks":
        return f"not enough tasks for a 95% interval ({tasks}; it needs {MIN_TASKS})"
    if why == "estimate outside":
        return "no interval: the bootstrap's leaves the estimate out (too few trials per task at this k)"
    return None


def suite_interval(interval: Sequence[float] | None, why: str | None, tasks: int) -> str:
    """The interval beside a suite figure, or why there is none."""
    if interval:
        return fmt.interval((interval[0], interval[1]))
    return interval_note(why, tasks) or "-"


def _suite_lines(
    suite: ProviderSuite, ks: Sequence[int], unattended_runs: int | None, twins: Sequence[TaskSummary] = ()
) -> list[str]:
    lines = [_headline(suite)]
    if (gaming := _gaming_line(suite, twins)) is not None:
        lines.append(gaming)
    figures = [(k, f) for k in ks if (f := suite.pass_hat_k[str(k)]).mean is not None]
    notes = {interval_note(f.no_interval, f.tasks) for _, f in figures}
    if len(notes) == 1 and None not in notes:  # one reason for every k (too few tasks): said once
        plain = ", ".join(f"pass^{k} {f.mean:.3f}" for k, f in figures)
        lines.append(f"Mean over tasks: {plain} ({notes.pop()}).")
    elif figures:
        means = []
        for k, f in figures:
            ci = suite_interval(f.interval, f.no_interval, f.tasks)
            if f.tasks < len(suite.tasks):
                ci += f", {f.tasks} of {len(suite.tasks)} tasks"
            means.append(f"pass^{k} {f.mean:.3f} ({ci})")
        lines.append("Mean over tasks (95% cluster-bootstrap CI): " + ", ".join(means) + ".")
    if (icc := _icc_line(suite.icc1)) is not None:
        lines.append(icc)
    if suite.tiers:
        tiers = [
            f"{t.tier}: {fmt.plural(t.tasks, 'task')}, {t.all_pass} all-pass, {t.flaky} flaky, "
            + ", ".join(f"pass^{k} {fmt.fraction(t.mean_pass_hat_k[str(k)])}" for k in ks)
            for t in suite.tiers
        ]
        lines.append("By tier: " + "; ".join(tiers) + ".")
    if unattended_runs is not None:
        u = unattended_runs
        figure = suite.pass_hat_k[str(u)]
        defined = [s for s in suite.tasks if s.n >= u]
        if figure.mean is None:
            lines.append(f"Unattended, {u} runs between looks: pass^{u} is undefined for every task (n<{u}).")
        else:
            expected = sum(1 - (s.pass_hat_k[str(u)] or 0.0) for s in defined)
            lines.append(
                f"Unattended, {u} runs between looks: mean pass^{u} {figure.mean:.3f} "
                f"({suite_interval(figure.interval, figure.no_interval, figure.tasks)}); expect {expected:.1f} of {fmt.plural(len(defined), 'task')} "
                f"to fail at least once in {u} runs."
            )
    return lines


def _cut_off_line(s: TaskSummary, several: bool, repeat: int | None) -> str:
    """Trials cut off by Ctrl+C: promptfoo's error rows that `--resume` counts as done (results._interrupted)."""
    known = [str(r) for r in s.interrupted_repeats if r is not None]
    unknown = len(s.interrupted_repeats) - len(known)
    label = _label(s, several)
    if known:
        what = f"{label} {_verb(len(known), 'repeat', 'repeats')} {fmt.some(known)}"
        if unknown:
            what += f" and {fmt.plural(unknown, 'other trial')} (promptfoo did not record which)"
    else:
        trials = "a trial" if unknown == 1 else f"{unknown} trials"
        what = f"{trials} of {label} (promptfoo did not record {_verb(unknown, 'its repeat', 'their repeats')})"
    total = len(s.interrupted_repeats)
    return (
        f"WARNING: {what} {_verb(total, 'was', 'were')} cut off by Ctrl+C: promptfoo saved the unfinished "
        f'{_verb(total, "call", "calls")} as {_verb(total, "an error", "errors")} ("Worker shutting down"; counted '
        f"in err, outside n), and `promptfoo eval --resume` counts {_verb(total, 'it', 'them')} as done and never "
        f"runs {_verb(total, 'it', 'them')} again. Run `promptfoo eval --retry-errors --repeat {repeat or 'N'}` "
        f"(after `--resume`, if the eval is still paused) to run {_verb(total, 'it', 'them')}."
    )


def _coverage_lines(summaries: Sequence[TaskSummary], several: bool, repeat: int | None = None) -> list[str]:
    """Every (task, provider, repeat) should appear exactly once; say so when not. `repeat`: the eval's --repeat."""
    lines = []
    for s in summaries:
        if s.interrupted_repeats:
            lines.append(_cut_off_line(s, several, repeat))
        if s.duplicate_repeats:
            lines.append(
                f"WARNING: {_label(s, several)} has repeat(s) {fmt.some([str(r) for r in s.duplicate_repeats])} "
                "more than once (a merged or doubly resumed eval?); its figures count them twice."
            )
        if s.missing_repeats:
            lines.append(
                f"WARNING: {_label(s, several)} is missing repeat(s) {fmt.some([str(r) for r in s.missing_repeats])}: "
                f"if you ran `promptfoo eval --retry-errors` without `--repeat {repeat or 'N'}`, it dropped errored "
                f"trials; rerun with --retry-errors --repeat {repeat or 'N'}."
            )
        if s.unscored:
            lines.append(
                f"{_label(s, several)}: {fmt.plural(s.unscored, 'trial')} unscored (the judge's reply could not be "
                "read after its retries): outside n, neither passed nor failed."
            )
    return lines


def summary_lines(
    summaries: Sequence[TaskSummary],
    suites: Sequence[ProviderSuite],
    ks: Sequence[int],
    *,
    unattended_runs: int | None = None,
    ci_width: float = 0.2,
    repeat: int | None = None,
    impossible: Sequence[TaskSummary] = (),
) -> list[str]:
    """The report in words: per provider, then runs needed, then undefined pass^k. `repeat`: the eval's
    --repeat, for the commands the report suggests; `impossible` the impossible twins (their cheat attempts
    join the gaming count)."""
    several = len(suites) > 1
    lines = []
    for suite in suites:
        block = _suite_lines(suite, ks, unattended_runs, impossible)
        lines += [f"{suite.provider}: {line}" for line in block] if several else block
    rerun = [(s, s.runs_needed) for s in summaries if s.runs_needed]
    if rerun:
        items = ", ".join(
            f"{_label(s, several)} {s.passes}/{s.n} needs {more} more (n={s.n + more})" for s, more in rerun
        )
        lines.append(
            f"Pass-rate interval width (not the verdict: +trials says what would decide it): for a 95% interval of "
            f"c/n at most {ci_width:g} wide, if the observed rate holds: {items}."
        )
    noun = "task" if not several else "task/provider pair"
    scripted = [s for s in summaries if s.scripted]
    if scripted:
        lines.append(
            f"Not real money: the costs of {fmt.plural(len(scripted), noun)} come from the scripted model "
            f"(passhat fake-model), which the CLI prices as if it were Claude; they are marked {SCRIPTED_MARK}."
        )
    lines += _coverage_lines(summaries, several, repeat)
    lines += infra_error_lines(summaries, several, repeat)
    for k in ks:
        short = [s for s in summaries if 0 < s.n < k]  # n == 0: said with its infra errors above
        if short:
            names = ", ".join(f"{_label(s, several)} (n={s.n})" for s in short)
            lines.append(
                f"Note: pass^{k} is undefined (n<k) for {fmt.plural(len(short), noun)}: {names}; "
                f"run at least {k} trials per task (promptfoo --repeat {k}) or lower --k."
            )
    return lines


INTERVAL_WORDS = {
    "clopper-pearson": "the Clopper-Pearson interval of c/n",
    "mixture": "the anytime-valid beta-binomial mixture interval of c/n, valid however the trials were stopped",
    "wilson": "the Wilson interval of c/n",
}


def verdict_of(s: TaskSummary, k: int, threshold: float, method: Method = "clopper-pearson") -> dict[str, Any]:
    """Is the task safe for k unattended runs in a row? The verdict and its evidence, as plain data."""
    verdict = verdict_for(s.n, s.passes, k, threshold, method, s.gamed)
    verdict["trials_used"] = s.n + s.errors + s.unscored  # every trial run, infra errors too (they were paid for)
    return verdict


METHOD_WORDS = {
    "clopper-pearson": "Clopper-Pearson, trials at a fixed n",
    "mixture": "the anytime-valid mixture, wider than Clopper-Pearson: it holds however the rounds were stopped",
    "wilson": "Wilson",
}


def verdict_for(
    n: int, passes: int, k: int, threshold: float, method: Method = "clopper-pearson", gamed: int = 0
) -> dict[str, Any]:
    """The verdict of a task with `passes` of `n` scored trials, `gamed` of them caught gaming (see `verdict_of`).

    The one place the verdict's figures are made: the decision is `stats._figures.task_decision` (what the viewer's
    counts use too); `ci_95` is the `method` interval of c/n with each end to the power k (stats._verdict);
    `estimate` is the plug-in (c/n)^k, the pass^k every column prints, inside that interval, None when n < k;
    `runs_to_decide` the more trials that would decide it if the rate holds, by the same `method`;
    `next_runs_all_pass` the chance the next k runs all pass under a uniform prior (stats._figures)."""
    interval = hat_interval(n, passes, k, method)
    decided = task_decision(n, passes, gamed, k, threshold, method)
    verdict = {"safe": SAFE, "not safe": NOT_SAFE, None: UNSURE}[decided]
    more = trials_to_decide(n, passes, k, threshold, method) if verdict == UNSURE and n else None
    return {
        "verdict": verdict,
        "k": k,
        "threshold": threshold,
        "estimate": pass_hat_k_plug_in(n, passes, k),
        "estimator": "(c/n)^k",
        "ci_95": None if interval is None else list(interval),
        "interval": method,
        "passes": passes,
        "n": n,
        "trials_used": n,
        "runs_to_decide": more,
        "next_runs_all_pass": next_runs_all_pass(n, passes, k) if n else None,
        "prior": f"Beta{PRIOR}",
    }


def reach_line(r: dict[str, Any], k: int, threshold: float) -> str:
    """`stats._figures.reach` in one sentence, said once above the tasks."""
    n, needs, fails = r["n"], r["safe_needs"], r["not_safe_failures"]
    if not n:
        return "No task has a scored trial: nothing is decided yet."
    failures = (
        f"a task with {fmt.plural(fails, 'failure')} or more is shown not safe"
        if fails is not None
        else "no number of failures shows a task not safe"
    )
    if needs is None:
        safe = f"no number of trials can show a task safe for {k} runs at {threshold:g}"
    elif n < needs:
        safe = f"no task can be shown safe for {k} runs in a row at {threshold:g}; that needs {needs} passes in a row"
    else:
        safe = f"a task can be shown safe for {k} runs in a row at {threshold:g} from {needs} passes in a row on"
    return f"At n = {n}: {failures}; {safe} ({METHOD_WORDS[r['method']]})."


ORDER = (NOT_SAFE, UNSURE, SAFE)


def verdict_rule(k: int, threshold: float, method: Method = "clopper-pearson") -> str:
    return (
        f"safe when the whole 95% interval of pass^{k} ({INTERVAL_WORDS[method]}, each end to the power {k}) is "
        f"at or above {threshold:g}, not safe when it is all below, else not enough trials to say (--safe-at sets "
        f"{threshold:g})."
    )


def verdict_counts(tasks: Sequence[dict[str, Any]]) -> str:
    counts = {v: sum(t["verdict"]["verdict"] == v for t in tasks) for v in ORDER}
    return ", ".join(f"{counts[v]} {v}" for v in ORDER if counts[v]) or "no task"


def verdict_parts(t: dict[str, Any], several: bool) -> tuple[str, str, str]:
    """One task's name, verdict and evidence, in words."""
    v = t["verdict"]
    name = f"{t['task']} [{t['provider']}]" if several else t["task"]
    if v["ci_95"] is None:
        errors = f": all {fmt.plural(t['errors'], 'trial')} were infra errors" if t["errors"] else ""
        return name, v["verdict"], f"no scored trial{errors}"
    low, high = v["ci_95"]
    evidence = f"{estimate_text(v)} (95% CI {low:.3f}-{high:.3f})"
    if gamed := t.get("gamed") or 0:
        return name, v["verdict"], f"gamed the tests in {gamed} of {v['n']} trials; {evidence}"
    evidence += f"; {next_runs_text(v)}"
    if v["verdict"] != UNSURE:
        evidence += f"; decided after {fmt.plural(v['trials_used'], 'trial')}"
    else:
        more = v["runs_to_decide"]
        evidence += (
            f"; about {fmt.plural(more, 'more trial')} would decide it if the rate holds"
            if more is not None
            else "; no number of trials decides it at this rate"
        )
    return name, v["verdict"], evidence


def next_runs_text(v: dict[str, Any]) -> str:
    """The per-task figure the data supports: `next 10 runs all pass: 0.524 (uniform prior)`."""
    return f"next {v['k']} runs all pass: {v['next_runs_all_pass']:.3f} (uniform prior)"


def estimate_text(v: dict[str, Any]) -> str:
    """The verdict's estimate as its formula shows it: `pass^10 = (9/10)^10 = 0.349`; undefined when n < k."""
    if v["estimate"] is None:
        return f"pass^{v['k']} undefined (n={v['n']} < k={v['k']})"
    return f"pass^{v['k']} = ({v['passes']}/{v['n']})^{v['k']} = {v['estimate']:.3f}"


ESTIMATORS_NOTE = (
    "pass^k = (c/n)^k, the verdict's estimate, inside its interval; n<k: undefined. verdict: undecided = not enough "
    "trials to say; +trials: more trials that would decide it if the observed rate holds (by the verdict's interval)."
)


def verdict_line(t: dict[str, Any], several: bool) -> str:
    return ": ".join(verdict_parts(t, several))


def _ordered(tasks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(tasks, key=lambda t: ORDER.index(t["verdict"]["verdict"]))  # the worst verdicts first


def verdict_lines(tasks: Sequence[dict[str, Any]], several: bool) -> list[str]:
    """Per task, the worst verdicts first."""
    return [verdict_line(t, several) for t in _ordered(tasks)]


def verdict_table(tasks: Sequence[dict[str, Any]], several: bool) -> list[tuple[str, str, str]]:
    """(name, verdict, evidence) per task, the worst verdicts first."""
    return [verdict_parts(t, several) for t in _ordered(tasks)]


def infra_error_lines(summaries: Sequence[TaskSummary], several: bool, repeat: int | None = None) -> list[str]:
    """The commonest infra-error causes of each task that had any (count and cause, the fix whole; the real
    --repeat in its hint)."""
    erred = [s for s in summaries if s.errors]
    lines = []
    for s in erred[:TASKS_WITH_REASONS]:
        total = s.errors + s.n + s.unscored
        share = f"all {fmt.plural(total, 'trial')}" if s.errors == total else f"{s.errors} of {total} trials"
        shown = s.infra_error_reasons[:REASONS_SHOWN]
        reasons = "; ".join(f"{count}x {with_repeat(reason, repeat)}" for reason, count in shown)
        more = len(s.infra_error_reasons) - REASONS_SHOWN
        reasons += f"; and {more} other reason{'s' if more > 1 else ''}" if more > 0 else ""
        lines.append(f"Infra errors, {_label(s, several)} ({share}): {reasons}.")
    if len(erred) > TASKS_WITH_REASONS:
        lines.append(f"Infra errors in {len(erred) - TASKS_WITH_REASONS} more tasks: --format json lists them all.")
    return lines
