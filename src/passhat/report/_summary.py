"""Fold trials into per-(task, provider) summaries and per-provider suite figures. Pure: no I/O.

`fold()` consumes an iterable of trials once and keeps only counts, costs and durations per group,
so it works on a streamed 100,000-row file (and two folds of a file's halves `merge()` exactly);
`finish()` turns the totals into TaskSummary figures; `summarize()` is both. n counts the trials
that ended without an infra error, c the passes among them; infra errors are counted apart and
shown, never turned into failures, with their commonest reasons.

Cost: only trials whose cost is known count (`Trial.cost_usd` is None otherwise, e.g. Promptfoo's $0 on an
error row): mean $ = their mean, over every trial, infra errors too (they were paid for); $/success = the
cost of the scored trials with a known cost / the passes among those same trials.

Repeats: a file's trials are repeats `first..last` of their tasks, `first` the smallest repeat index in the file
(0, but a round of `passhat eval --until-decided` runs repeats from the offset where the last one ended): a
repeat is missing when it lies in that span and no row has it, and `repeats_seen` counts the span.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import ClassVar

from passhat.results._causes import cause
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


@dataclass(slots=True)
class _Group:
    """Running totals for one (task, provider); a trial's other details are dropped after folding.

    Costs and durations are kept as lists, in file order, and summed exactly (fsum) at the end: the
    figures do not depend on how the file was split to be read. (Slots: `add` runs once per row.)
    """

    task: str
    provider: str
    tier: str | None = None
    n: int = 0
    passes: int = 0
    errors: int = 0
    costs: list[float] = field(default_factory=list)  # every known cost, infra errors too: they were paid for
    scored_costs: list[float] = field(default_factory=list)  # the scored trials' known costs
    scored_cost_passes: int = 0  # passes among the scored trials with a known cost
    turn_sum: int = 0
    turns: int = 0
    durations: list[float] = field(default_factory=list)
    clean_exits: int = 0
    health_reported: int = 0
    unscored: int = 0
    judged: int = 0
    repeats: list[int] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)  # infra errors' first lines
    offsets: set[int] = field(default_factory=set)  # testIdx - repeat index of the rows with both (see repeats_of)
    cut_off: list[int | None] = field(default_factory=list)  # testIdx of each call cut off by Ctrl+C
    scripted: int = 0
    models: set[str] = field(default_factory=set)
    ran: set[tuple[str, str]] = field(default_factory=set)  # the models that answered, the CLI's and SDK's versions
    named: dict[str, list[float]] = field(default_factory=dict)  # named score -> its values, scored trials
    impossible: bool = False
    gamed: int = 0
    scanned: int = 0
    gamed_passes: int = 0
    COUNTS: ClassVar[tuple[str, ...]] = ("n", "passes", "errors", "turn_sum", "turns", "clean_exits", "health_reported",
                                         "unscored", "judged", "scored_cost_passes", "scripted", "gamed", "scanned",
                                         "gamed_passes")  # fmt: skip
    LISTS: ClassVar[tuple[str, ...]] = ("costs", "scored_costs", "durations", "repeats", "cut_off")

    def add(self, trial: Trial) -> None:
        """Fold one trial in: once per row (a million in a big file), so each field is read once, into a local."""
        if self.tier is None:
            self.tier = trial.tier
        if (cost := trial.cost_usd) is not None:
            self.costs.append(cost)
        if (repeat := trial.repeat_index) is not None:
            self.repeats.append(repeat)
            if (test := trial.test_index) is not None and test - repeat not in self.offsets:
                self.offsets.add(test - repeat)
        if trial.interrupted:
            self.cut_off.append(trial.test_index)
        self.impossible = self.impossible or trial.impossible
        self.judged += trial.judged
        self.scripted += trial.scripted_model
        if type(model := trial.model) is str and model:
            self.models.add(model)
        if trial.models or trial.claude_code_version or trial.agent_sdk_version:
            self.ran.update(ran_by(trial))
        if trial.infra_error:
            self.errors += 1
            self.reasons[first_line(trial.error)] += 1
            return
        if trial.unscored:
            self.unscored += 1
            return
        self.n += 1
        self.passes += (passed := trial.passed)
        if trial.gamed or trial.scanned:
            self.gamed += trial.gamed
            self.gamed_passes += trial.gamed and passed
            self.scanned += trial.scanned
        if cost is not None:
            self.scored_costs.append(cost)
            self.scored_cost_passes += passed
        if (turns := trial.turns) is not None:  # an infra error's turns are not the agent's behaviour
            self.turn_sum += turns
            self.turns += 1
        if (duration := trial.duration_ms) is not None:
            self.durations.append(duration)
        if (clean_exit := trial.clean_exit) is not None:
            self.health_reported += 1
            self.clean_exits += clean_exit
        for name, value in (trial.named_scores or {}).items():
            if ((kind := type(value)) is float or kind is int) and math.isfinite(value):
                if (values := self.named.get(name)) is None:
                    values = self.named[str(name)] = []
                values.append(float(value))

    def seen(self) -> list[int]:
        """The repeat indices of its rows (a cut-off repeat has a row), cut-off ones placed where known."""
        return [*self.repeats, *(r for r in repeats_of(self.offsets, self.cut_off) if r is not None)]

    def summary(self, ks: Sequence[int], ci_width: float, first: int = 0) -> TaskSummary:
        """Its figures; `first` is the file's first repeat index (see the module)."""
        n, c = self.n, self.passes
        cut_off = repeats_of(self.offsets, self.cut_off)
        repeats = self.seen()
        return TaskSummary(
            task=self.task,
            provider=self.provider,
            n=n,
            passes=c,
            errors=self.errors,
            pass_at_k={str(k): pass_at_k(n, c, k) for k in ks},
            pass_hat_k={str(k): pass_hat_k_plug_in(n, c, k) for k in ks},  # (c/n)^k: the verdict's
            mean_cost_usd=math.fsum(self.costs) / len(self.costs) if self.costs else None,
            cost_per_success_usd=(
                math.fsum(self.scored_costs) / self.scored_cost_passes if self.scored_cost_passes else None
            ),
            mean_turns=self.turn_sum / self.turns if self.turns else None,
            tier=self.tier,
            wilson_95=wilson_interval(n, c),
            mean_duration_ms=math.fsum(self.durations) / len(self.durations) if self.durations else None,
            p90_duration_ms=nearest_rank(self.durations, 90),
            clean_exits=self.clean_exits,
            health_reported=self.health_reported,
            runs_needed=runs_needed(n, c, ci_width) if 0 < c < n else None,
            unscored=self.unscored,
            judged=self.judged,
            duplicate_repeats=tuple(sorted(r for r, seen in Counter(repeats).items() if seen > 1)),
            missing_repeats=tuple(sorted(set(range(first, max(repeats) + 1)) - set(repeats))) if repeats else (),
            interrupted_repeats=cut_off,
            infra_error_reasons=tuple(sorted(self.reasons.items(), key=lambda item: (-item[1], item[0]))),
            cost_known=len(self.costs),
            scripted=self.scripted,
            models=tuple(sorted(self.models)),
            ran=tuple(sorted(self.ran)),
            repeats_seen=max(repeats) + 1 - first if repeats else None,
            first_repeat=first,
            named_scores=tuple((name, math.fsum(v) / len(v)) for name, v in sorted(self.named.items())),
            impossible=self.impossible,
            gamed=self.gamed,
            scanned=self.scanned,
            gamed_passes=self.gamed_passes,
        )


def ran_by(trial: Trial) -> list[tuple[str, str]]:
    """What ran a trial, as (kind, value) pairs: its models that answered, Claude Code's and the Agent SDK's version."""
    found = [("model", model) for model in trial.models]
    found += [("claude_code", trial.claude_code_version)] if trial.claude_code_version else []
    return found + ([("agent_sdk", trial.agent_sdk_version)] if trial.agent_sdk_version else [])


def first_line(error: str | None) -> str:
    """An infra error's cause: its first line without what differs per trial, the fix kept (results._causes)."""
    return cause(error)


Groups = dict[tuple[str, str], "_Group"]


def fold(trials: Iterable[Trial], groups: Groups | None = None) -> Groups:
    """Running totals per (task, provider), added to `groups` (a new dict by default). Reads `trials` once."""
    groups = {} if groups is None else groups
    for trial in trials:
        key = (trial.task, trial.provider)
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Group(trial.task, trial.provider)
        group.add(trial)
    return groups


def merge(first: Groups, second: Groups) -> Groups:
    """The totals of two consecutive parts of one file (`first` comes first: its tier wins)."""
    merged = dict(first)
    for key, group in second.items():
        if key not in merged:
            merged[key] = group
            continue
        into = merged[key] = copy.copy(merged[key])
        into.tier = into.tier if into.tier is not None else group.tier
        for name in _Group.COUNTS + _Group.LISTS:
            setattr(into, name, getattr(into, name) + getattr(group, name))
        into.reasons = into.reasons + group.reasons
        into.offsets = into.offsets | group.offsets
        into.models, into.ran = into.models | group.models, into.ran | group.ran
        into.impossible = into.impossible or group.impossible
        into.named = {
            name: into.named.get(name, []) + group.named.get(name, []) for name in {*into.named, *group.named}
        }
    return merged


def finish(groups: Groups, ks: Sequence[int], ci_width: float = 0.2) -> list[TaskSummary]:
    """One TaskSummary per (task, provider), sorted by task then provider."""
    first = min((r for group in groups.values() for r in group.seen()), default=0)
    return [groups[key].summary(ks, ci_width, first) for key in sorted(groups)]


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
