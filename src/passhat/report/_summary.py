"""Per-(task, provider) summaries and per-provider suite figures. Pure: no I/O.

`finish()` turns the running totals of a file (`totals.fold_fields`) into TaskSummary figures; `summarize()` folds
trials and finishes them. n counts the trials that ended without an infra error, c the passes among them; infra
errors are counted apart and shown, never turned into failures, with their commonest reasons.

Cost: only trials whose cost is known count (`Trial.cost_usd` is None otherwise, e.g. Promptfoo's $0 on an
error row): mean $ = their mean, over every trial, infra errors too (they were paid for); $/success = the
cost of the scored trials with a known cost / the passes among those same trials.

Repeats: a file's trials are repeats `first..last` of their tasks, `first` the smallest repeat index in the file
(0, but a round of `passhat eval --until-decided` runs repeats from the offset where the last one ended): a
repeat is missing when it lies in that span and no row has it, and `repeats_seen` counts the span.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import fmean

from passhat.report.totals._tally import Groups, _Group, fold, scored_costs
from passhat.results._interrupted import repeats_of
from passhat.results._rows import Trial
from passhat.stats import _bootstrap as bootstrap
from passhat.stats import _suite as suite_stats
from passhat.stats._estimators import (
    nearest_rank,
    pass_at_k,
    pass_hat_k_plug_in,
    runs_needed,
    wilson_interval,
)


@dataclass(frozen=True)
class TaskSummary:
    """The figures for one task run by one provider. Keys of the k dicts are str(k)."""

    task: str
    provider: str
    n: int
    passes: int
    errors: int
    pass_at_k: dict[str, float | None]
    pass_hat_k: dict[str, float | None]
    mean_cost_usd: float | None
    cost_per_success_usd: float | None
    mean_turns: float | None
    tier: str | None = None
    wilson_95: tuple[float, float] | None = None
    mean_duration_ms: float | None = None
    p90_duration_ms: float | None = None
    clean_exits: int = 0
    health_reported: int = 0  # scored trials whose provider reported is_error / status
    runs_needed: int | None = None  # flaky tasks only: more trials for a narrow pass-rate interval (not the verdict)
    unscored: int = 0  # judge could not be read: outside n, like errors, but shown apart
    judged: int = 0  # rows an LLM judge graded (the report then adds the judge's table)
    duplicate_repeats: tuple[int, ...] = ()  # repeat indexes seen more than once (a merge or resume gone wrong)
    missing_repeats: tuple[int, ...] = ()  # gaps in first..max repeat index (e.g. --retry-errors without --repeat)
    interrupted_repeats: tuple[int | None, ...] = ()  # per call cut off by Ctrl+C: its repeat (None: unknown)
    infra_error_reasons: tuple[tuple[str, int], ...] = ()  # commonest first: (first line of the error, count)
    cost_known: int = 0  # trials (infra errors too) whose cost is known
    scripted: int = 0  # trials run against the scripted model: their dollars are not real
    models: tuple[str, ...] = ()  # metadata model of the trials
    ran: tuple[tuple[str, str], ...] = ()  # what ran, sorted: ("model" | "claude_code" | "agent_sdk", id or version)
    repeats_seen: int | None = None  # 1 + the largest repeat index - first_repeat
    first_repeat: int = 0  # the file's smallest repeat index (a round's offset, else 0)
    named_scores: tuple[tuple[str, float], ...] = ()  # (grader or criterion, mean named score over the scored trials)
    impossible: bool = False  # an impossible twin's trials (expect: impossible): its passes are cheats
    gamed: int = 0  # scored trials a grader caught gaming the tests, whether or not they passed
    scanned: int = 0  # scored trials whose graders looked for gaming (rows with the named score `gamed`)
    gamed_passes: int = 0  # scored trials that passed and were caught gaming (both): cheats = passes + gamed - this

    @property
    def cheats(self) -> int:
        """On an impossible twin, the trials that tried to cheat: passed (uncaught) or caught gaming (or both)."""
        return self.passes + self.gamed - self.gamed_passes

    @property
    def flaky(self) -> bool:
        """Passed some trials and failed others: 0 < c < n."""
        return 0 < self.passes < self.n

    @property
    def pass_rate(self) -> float | None:
        """c / n (= pass@1 = pass^1), None when n == 0."""
        return self.passes / self.n if self.n else None

    @property
    def pass_at_1(self) -> float | None:
        return self.pass_rate

    @property
    def clean_exit_rate(self) -> float | None:
        """Share of the scored trials that reported health and exited cleanly."""
        return self.clean_exits / self.health_reported if self.health_reported else None


def _summary(group: _Group, ks: Sequence[int], ci_width: float, first: int = 0) -> TaskSummary:
    """A group's figures; `first` is the file's first repeat index (see the module)."""
    n, c = group.n, group.passes
    costed_passes, turns = c - group.uncosted_passes, n - group.unturned
    cut_off = repeats_of(group.offsets, group.cut_off)
    repeats = group.seen()
    seen, last = set(repeats), max(repeats, default=None)
    twice = () if len(seen) == len(repeats) else sorted(r for r, times in Counter(repeats).items() if times > 1)
    return TaskSummary(
        task=group.task,
        provider=group.provider,
        n=n,
        passes=c,
        errors=group.errors,
        pass_at_k={str(k): pass_at_k(n, c, k) for k in ks},
        pass_hat_k={str(k): pass_hat_k_plug_in(n, c, k) for k in ks},  # (c/n)^k: the verdict's
        mean_cost_usd=math.fsum(group.costs) / len(group.costs) if group.costs else None,
        cost_per_success_usd=math.fsum(scored_costs(group)) / costed_passes if costed_passes else None,
        mean_turns=group.turn_sum / turns if turns else None,
        tier=group.tier,
        wilson_95=wilson_interval(n, c),
        mean_duration_ms=math.fsum(group.durations) / len(group.durations) if group.durations else None,
        p90_duration_ms=nearest_rank(group.durations, 90),
        clean_exits=group.clean_exits,
        health_reported=n - group.unreported,
        runs_needed=runs_needed(n, c, ci_width) if 0 < c < n else None,
        unscored=group.unscored,
        judged=group.judged,
        duplicate_repeats=tuple(twice),
        missing_repeats=() if last is None else tuple(sorted(set(range(first, last + 1)) - seen)),
        interrupted_repeats=cut_off,
        infra_error_reasons=tuple(sorted(group.reasons.items(), key=lambda item: (-item[1], item[0]))),
        cost_known=len(group.costs),
        scripted=group.scripted,
        models=tuple(sorted(group.models)),
        ran=tuple(sorted(group.ran)),
        repeats_seen=None if last is None else last + 1 - first,
        first_repeat=first,
        named_scores=tuple((name, math.fsum(v) / len(v)) for name, v in sorted(group.named.items())),
        impossible=group.impossible,
        gamed=group.gamed,
        scanned=group.scanned,
        gamed_passes=group.gamed_passes,
    )


def finish(groups: Groups, ks: Sequence[int], ci_width: float = 0.2) -> list[TaskSummary]:
    """One TaskSummary per (task, provider), sorted by task then provider."""
    first = min((min(seen) for group in groups.values() if (seen := group.seen())), default=0)
    return [_summary(groups[key], ks, ci_width, first) for key in sorted(groups)]


def summarize(trials: Iterable[Trial], ks: Sequence[int], ci_width: float = 0.2) -> list[TaskSummary]:
    """One TaskSummary per (task, provider), sorted by task then provider. Reads `trials` once."""
    return finish(fold(trials), ks, ci_width)


@dataclass(frozen=True)
class KFigure:
    """Mean pass^k over the tasks where it is defined (n >= k), with its cluster-bootstrap interval, or why the
    interval is not shown (`stats._suite.shown_interval`: no task, not enough tasks, estimate outside)."""

    mean: float | None
    interval: tuple[float, float] | None
    tasks: int  # tasks with n >= k
    undefined: tuple[str, ...]  # tasks with n < k
    method: str | None = None  # "exact" (the bootstrap law computed whole) or "monte-carlo"
    resamples: int = 0  # Monte Carlo resamples drawn (0: exact)
    mc_error: float = 0.0  # estimated Monte Carlo standard error of the less certain bound
    no_interval: suite_stats.NoInterval | None = None  # why `interval` is None


@dataclass(frozen=True)
class TierFigure:
    tier: str
    tasks: int
    flaky: int
    all_pass: int
    mean_pass_hat_k: dict[str, float | None]


@dataclass(frozen=True)
class ProviderSuite:
    """Suite figures for one provider: its tasks are the suite."""

    provider: str
    tasks: tuple[TaskSummary, ...]
    pass_hat_k: dict[str, KFigure]
    icc1: float | None
    tiers: tuple[TierFigure, ...]

    @property
    def flaky(self) -> list[TaskSummary]:
        return [s for s in self.tasks if s.flaky]

    @property
    def all_pass(self) -> list[TaskSummary]:
        return [s for s in self.tasks if s.n and s.passes == s.n]

    @property
    def never_pass(self) -> list[TaskSummary]:
        return [s for s in self.tasks if s.n and s.passes == 0]

    @property
    def unscored(self) -> list[TaskSummary]:
        return [s for s in self.tasks if s.n == 0]

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.tasks)

    @property
    def gamed(self) -> int:
        """Trials caught gaming the tests (passed or not), over the suite's tasks."""
        return sum(s.gamed for s in self.tasks)

    @property
    def scanned(self) -> int:
        """Trials whose graders looked for gaming."""
        return sum(s.scanned for s in self.tasks)


TIERS = ("simple", "medium", "complex", "very-complex")


def _tier_order(tier: str) -> tuple[int, str]:
    return (TIERS.index(tier) if tier in TIERS else len(TIERS), tier)


def _mean(values: Iterable[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return fmean(known) if known else None


def provider_suites(
    summaries: Sequence[TaskSummary],
    ks: Sequence[int],
    *,
    resamples: int | None = None,
    seed: int = suite_stats.SEED,
) -> list[ProviderSuite]:
    """One ProviderSuite per provider, in name order. `resamples` None: the bootstrap's own (see stats)."""
    suites = []
    for provider in sorted({s.provider for s in summaries}):
        tasks = tuple(s for s in summaries if s.provider == provider)
        counts = [(s.n, s.passes) for s in tasks]
        found = bootstrap.mean_pass_hat_k_bootstrap(counts, ks, resamples=resamples, seed=seed)
        figures = {}
        for k in ks:
            mean, b, defined = suite_stats.mean_pass_hat_k(counts, k), found[k], sum(n >= k for n, _ in counts)
            interval, why = suite_stats.shown_interval(defined, mean, None if b is None else b.interval)
            figures[str(k)] = KFigure(
                mean=mean,
                interval=interval,
                tasks=defined,
                undefined=tuple(s.task for s in tasks if s.n < k),
                method=None if b is None else b.method,
                resamples=0 if b is None else b.resamples,
                mc_error=0.0 if b is None else b.mc_error,
                no_interval=why,
            )
        tiers = tuple(
            TierFigure(
                tier=tier,
                tasks=len(members),
                flaky=sum(s.flaky for s in members),
                all_pass=sum(bool(s.n) and s.passes == s.n for s in members),
                mean_pass_hat_k={str(k): _mean(s.pass_hat_k[str(k)] for s in members) for k in ks},
            )
            for tier in sorted({s.tier for s in tasks if s.tier is not None}, key=_tier_order)
            for members in [[s for s in tasks if s.tier == tier]]
        )
        suites.append(ProviderSuite(provider, tasks, figures, suite_stats.icc1(counts), tiers))
    return suites
