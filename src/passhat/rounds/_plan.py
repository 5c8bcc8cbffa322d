"""The stopping rule of `passhat eval --until-decided`, as pure functions of counts and dollars.

After each round, per (task, provider): decided when the anytime-valid 95% interval of pass^k (the mixture,
`stats._verdict.decide(method="mixture")`) lies at or above the threshold, or below it. A task stays open while
any of its providers is undecided and more trials can still decide it: it has had fewer than `max_trials`, and
the trials left are more likely than not (HOPE) to decide it, by the posterior predictive of its rate
(`stats._verdict.chance_to_decide`): a task that passed 10 of 10 will not be called safe within 60 trials and
shows enough failures to be called not safe in only 36% of cases, so it stops; one that passed its first 5
(59%) or 9 of 10 (78%) goes on. The next round runs the open tasks `round` more times (fewer when `max_trials`
is closer) — unless its forecast cost (the mean cost of a trial so far x the trials it would run) would take the
total past the budget: the rule stops before crossing it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from passhat.stats._intervals import Method
from passhat.stats._verdict import chance_to_decide, decide

INTERVAL: Method = "mixture"
HOPE = 0.5  # a task goes on while the trials left are more likely than not to decide it


@dataclass(frozen=True)
class Settings:
    round: int  # trials per open task per round
    max_trials: int  # per task, over all rounds
    budget_usd: float | None
    k: int
    safe_at: float


@dataclass(frozen=True)
class Count:
    """One (task, provider) so far: scored trials n, passes c, trials run (infra errors too), dollars."""

    task: str
    provider: str
    n: int
    passes: int
    trials: int
    cost_usd: float  # over the trials whose cost is known
    cost_known: int


@dataclass(frozen=True)
class Next:
    tasks: tuple[str, ...]  # the tasks of the next round; empty: stop
    repeat: int  # trials per task in it
    stop: str | None  # why the rounds end (None: they go on)
    forecast_usd: float | None = None
    beyond: tuple[str, ...] = ()  # undecided tasks the trials left are unlikely to decide (left as they are)


@lru_cache(maxsize=1 << 16)
def _decided(n: int, c: int, k: int, safe_at: float) -> bool:
    return decide(n, c, k, safe_at, INTERVAL) is not None


@lru_cache(maxsize=1 << 16)
def _chance(n: int, c: int, more: int, k: int, safe_at: float) -> float:
    return chance_to_decide(n, c, more, k, safe_at, INTERVAL)


def decided(count: Count, settings: Settings) -> bool:
    return _decided(count.n, count.passes, settings.k, settings.safe_at)


def _hopeful(count: Count, room: int, settings: Settings) -> bool:
    """Undecided, and the trials left have at least a HOPE chance to decide it (no scored trial yet: try)."""
    if decided(count, settings):
        return False
    if count.n == 0:
        return True
    return _chance(count.n, count.passes, room, settings.k, settings.safe_at) >= HOPE


def next_round(counts: Sequence[Count], scheduled: Mapping[str, int], settings: Settings) -> Next:
    """The next round: which tasks, how many trials each, or why to stop. `scheduled` = trials so far per task."""
    by_task: dict[str, list[Count]] = {}
    for count in counts:
        by_task.setdefault(count.task, []).append(count)
    undecided = sorted(task for task, group in by_task.items() if not all(decided(c, settings) for c in group))
    if not undecided:
        return Next((), 0, "every task is decided")
    room = {task: settings.max_trials - scheduled.get(task, 0) for task in undecided}
    if all(room[task] <= 0 for task in undecided):
        return Next((), 0, f"the undecided tasks have had --max-trials {settings.max_trials} trials")
    open_tasks = tuple(task for task in undecided if any(_hopeful(c, room[task], settings) for c in by_task[task]))
    beyond = tuple(task for task in undecided if task not in open_tasks)
    if not open_tasks:
        return Next((), 0, (
            f"the trials --max-trials {settings.max_trials} leaves are unlikely (< {HOPE:.0%}) to decide the "
            "undecided tasks (raise it, or accept 'not enough trials to say')"
        ), beyond=beyond)  # fmt: skip
    repeat = min(settings.round, max(room[task] for task in open_tasks))
    forecast = None
    if settings.budget_usd is not None:
        spent = sum(c.cost_usd for c in counts)
        known = sum(c.cost_known for c in counts)
        providers = max(len(by_task[task]) for task in open_tasks)
        if known:
            forecast = spent / known * repeat * len(open_tasks) * providers
            if spent + forecast > settings.budget_usd:
                return Next((), 0, (
                    f"the next round ({len(open_tasks)} task(s) x {repeat} trial(s), about ${forecast:.2f} at the mean "
                    f"${spent / known:.4f} a trial) would take the ${spent:.2f} spent past --budget-usd "
                    f"{settings.budget_usd:g}"
                ), forecast, beyond)  # fmt: skip
    return Next(open_tasks, repeat, None, forecast, beyond)
