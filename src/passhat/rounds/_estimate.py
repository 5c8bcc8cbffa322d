"""`passhat estimate`: what an eval will cost, before the first real trial, from a scripted rehearsal.

A rehearsal against `passhat fake-model` (oracle or flaky) gives each task's turn count for free; a turn of real
Claude Code costs about the same whatever the task: the system prompt and tool definitions (~15,000 tokens) are
read again every turn (from the prompt cache after the first), each turn adds its tool results to the context
(~1,500 tokens), and the model writes ~400 tokens. With the model's list prices, a trial of T turns costs

    (S + (T - 1) G) x input x w             the context written to the cache, once (w: the 5-minute cache write,
                                            1.25: the API's default lifetime)
    + sum over turns t of (S + (t - 1) G) x input x r      read back from the cache every turn (r: 0.1, or the
                                                           model's own, e.g. 0.05 for Opus 5.5)
    + T x O x output

(input, output, w and r: the model's entry of passhat's one price list, passhat.trial.spend.PRICES.)

S = 15,000, G = 1,500, O = 400 tokens (--context-tokens, --growth-tokens, --output-tokens). The scripted agent
takes the reference solution's shortest path, so a real one takes more turns: --turns-factor (default 2) scales
the rehearsal's turns. Every assumption is printed with the figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from passhat.common._errors import PasshatError
from passhat.results._rows import iter_trials
from passhat.trial.spend import PRICES, Price, listed_price

__all__ = ["DEFAULT_MODEL", "Assumptions", "Price", "estimate", "known_models", "price_of", "trial_cost"]

DEFAULT_MODEL = "claude-opus-5-5"  # the bundled Claude Code CLI's own default (the model its requests name)


@dataclass(frozen=True)
class Assumptions:
    context_tokens: int = 15_000
    growth_tokens: int = 1_500
    output_tokens: int = 400
    turns_factor: float = 2.0


@dataclass(frozen=True)
class TaskEstimate:
    task: str
    rehearsal_trials: int
    rehearsal_turns: float  # mean over the rehearsal's trials with a turn count
    turns: float  # as forecast for the real model
    usd_per_trial: float


def known_models() -> list[str]:
    return [f"claude-{key}" for key, _ in PRICES]


def price_of(model: str) -> Price:
    """The list price of `model` (passhat's one price list, passhat.trial.spend.PRICES)."""
    found = listed_price(model)
    if found is None:
        msg = (f"--model {model!r}: no list price known; use one of {', '.join(known_models())} or give --price-in "
               "and --price-out ($ per million tokens)")  # fmt: skip
        raise PasshatError(msg)
    return found


def trial_cost(turns: float, price: Price, a: Assumptions) -> float:
    """Dollars for one trial of `turns` turns (fractional turns: the formula's smooth extension)."""
    price_in, price_out = price.input / 1e6, price.output / 1e6
    written = (a.context_tokens + max(turns - 1, 0) * a.growth_tokens) * price_in * price.cache_write_5m
    read = (turns * a.context_tokens + a.growth_tokens * turns * (turns - 1) / 2) * price_in * price.cache_read
    return written + read + turns * a.output_tokens * price_out


def estimate(rehearsal: Path, price: Price, a: Assumptions) -> list[TaskEstimate]:
    """Per task of the rehearsal's results file, its turns and the forecast dollars per real trial."""
    turns: dict[str, list[int]] = {}
    passed: dict[str, list[int]] = {}  # a passing trial's turns are the solution's path: preferred when any
    for trial in iter_trials(rehearsal):
        if trial.turns is not None and not trial.infra_error:
            turns.setdefault(trial.task, []).append(trial.turns)
            if trial.passed:
                passed.setdefault(trial.task, []).append(trial.turns)
    turns |= passed
    if not turns:
        msg = (f"{rehearsal}: no trial with a turn count; give the -o file of a rehearsal run against the scripted "
               "model (passhat fake-model --script oracle), whose rows carry metadata num_turns")  # fmt: skip
        raise PasshatError(msg)
    found = []
    for task, seen in sorted(turns.items()):
        mean = sum(seen) / len(seen)
        forecast = mean * a.turns_factor
        found.append(TaskEstimate(task, len(seen), mean, forecast, trial_cost(forecast, price, a)))
    return found
