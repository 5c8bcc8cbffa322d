"""Running totals per (task, provider) of a results file's rows: what `_summary.finish` turns into figures. Pure.

`fold_fields()` reads each row once, as its Trial's fields (`results._trial.trial_fields`: the report reads a big
file without building a Trial per row), and keeps only counts, costs, durations and repeats per group, so it works
on a streamed million-row file; `fold()` does the same for Trials; two folds of a file's halves `merge()` exactly.
n counts the trials that ended without an infra error, c the passes among them; infra errors are counted apart
(with their commonest reasons), never turned into failures.
"""

from __future__ import annotations

import copy
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from math import isfinite
from typing import Any, ClassVar

from msgspec.structs import astuple

from passhat.results._causes import cause
from passhat.results._interrupted import repeats_of
from passhat.results._rows import Trial


@dataclass(slots=True)
class _Group:
    """Running totals for one (task, provider); a trial's other details are dropped after folding.

    Costs, durations and named scores are kept in file order, and summed exactly (fsum) at the end: the figures do
    not depend on how the file was split to be read. They are arrays of doubles, not lists of floats: a quarter of
    the memory, and nothing for the garbage collector to walk once the read is over (it walked every float of the
    lists: ~0.05 CPU-s of a 300,000-row report). (Slots: `fold_fields` reads and writes them once per row.)
    """

    task: str
    provider: str
    # what most rows touch, together (a row's group is another of hundreds: fewer of its cache lines to fetch)
    tier: str | None = None
    costs: array[float] = field(default_factory=lambda: array("d"))  # every known cost, infra errors too: paid for
    repeats: list[int] = field(default_factory=list)
    one_offset: bool = True  # while `offsets` holds at most one: two say the rows disagree, all repeats_of asks
    model: Any = None  # the last row's model: the next row's is compared with it (its string is a new one each row)
    n: int = 0
    passes: int = 0
    turn_sum: int = 0
    durations: array[float] = field(default_factory=lambda: array("d"))
    clean_exits: int = 0
    named: dict[str, array[float]] = field(default_factory=dict)  # named score -> its values, scored trials
    # the rest
    errors: int = 0
    unscored_costs: list[int] = field(default_factory=list)  # where in `costs` the unscored trials' (errors' too) are
    uncosted_passes: int = 0  # passes among the scored trials with no known cost
    unturned: int = 0  # scored trials with no turns
    unreported: int = 0  # scored trials whose provider reported no health
    unscored: int = 0
    judged: int = 0
    reasons: Counter[str] = field(default_factory=Counter)  # infra errors' first lines
    offsets: set[int] = field(default_factory=set)  # testIdx - repeat index of the rows with both (see repeats_of)
    cut_off: list[int | None] = field(default_factory=list)  # testIdx of each call cut off by Ctrl+C
    scripted: int = 0
    models: set[str] = field(default_factory=set)
    ran: set[tuple[str, str]] = field(default_factory=set)  # the models that answered, the CLI's and SDK's versions
    impossible: bool = False
    gamed: int = 0
    scanned: int = 0
    gamed_passes: int = 0
    COUNTS: ClassVar[tuple[str, ...]] = ("n", "passes", "errors", "turn_sum", "unturned", "clean_exits", "unreported",
                                         "unscored", "judged", "uncosted_passes", "scripted", "gamed", "scanned",
                                         "gamed_passes")  # fmt: skip
    LISTS: ClassVar[tuple[str, ...]] = ("durations", "repeats", "cut_off")

    def seen(self) -> list[int]:
        """The repeat indices of its rows (a cut-off repeat has a row), cut-off ones placed where known."""
        return [*self.repeats, *(r for r in repeats_of(self.offsets, self.cut_off) if r is not None)]


def scored_costs(group: _Group) -> array[float]:
    """The known costs of a group's scored trials (neither infra errors nor unscored), in file order: its costs
    less the unscored ones, a slice at a time."""
    scored, start = array("d"), 0
    for at in group.unscored_costs:  # (in file order: ascending)
        scored += group.costs[start:at]
        start = at + 1
    return scored + group.costs[start:] if start else group.costs


def ran_by(models: tuple[str, ...], code: str | None, sdk: str | None) -> list[tuple[str, str]]:
    """What ran a trial, as (kind, value) pairs: its models that answered (Trial.models), Claude Code's and the Agent
    SDK's versions."""
    found = [("model", model) for model in models]
    found += [("claude_code", code)] if code else []
    return found + ([("agent_sdk", sdk)] if sdk else [])


def first_line(error: str | None) -> str:
    """An infra error's cause: its first line without what differs per trial, the fix kept (results._causes)."""
    return cause(error)


Groups = dict[tuple[str, str], _Group]


def fold_fields(rows: Iterable[tuple[Any, ...]], groups: Groups | None = None) -> Groups:
    """Running totals per (task, provider), added to `groups` (a new dict by default), of rows given as their Trial's
    fields (`results._trial.trial_fields`, in `Trial`'s order). Reads `rows` once.

    The loop runs once per row, a million in a big file, and each row's group is another of hundreds, so it keeps
    to a row's fields in locals and touches a group's totals only where they grow: a count that most rows would
    add to is kept as the rows that do not (`unturned`: n - turns known)."""
    groups = {} if groups is None else groups
    for values in rows:
        (task, provider, repeat, passed, infra_error, error, cost, turns, _, tier, duration, clean_exit, unscored,
         judged, scripted, test_index, interrupted, named, gamed, scanned, model, _, _, _, impossible, models, code,
         sdk) = values  # fmt: skip
        group = groups.get((task, provider))
        if group is None:
            group = groups[task, provider] = _Group(task, provider)
        if group.tier is None:
            group.tier = tier
        if cost is not None:
            group.costs.append(cost)
        if repeat is not None:
            group.repeats.append(repeat)
            if test_index is not None and group.one_offset and (offset := test_index - repeat) not in group.offsets:
                group.offsets.add(offset)
                group.one_offset = len(group.offsets) < 2
        if interrupted:
            group.cut_off.append(test_index)
        if impossible:
            group.impossible = True
        if judged:
            group.judged += 1
        if scripted:
            group.scripted += 1
        if model != group.model:
            group.model = model
            if type(model) is str and model:
                group.models.add(model)
        if models or code or sdk:
            group.ran.update(ran_by(models, code, sdk))
        if infra_error or unscored:
            if cost is not None:
                group.unscored_costs.append(len(group.costs) - 1)
            if infra_error:
                group.errors += 1
                group.reasons[first_line(error)] += 1
            else:
                group.unscored += 1
            continue
        group.n += 1
        if passed:
            group.passes += 1
            if cost is None:
                group.uncosted_passes += 1
        if scanned:  # (gamed only when scanned)
            group.scanned += 1
            if gamed:
                group.gamed += 1
                group.gamed_passes += passed
        if turns is not None:  # an infra error's turns are not the agent's behaviour
            group.turn_sum += turns
        else:
            group.unturned += 1
        if duration is not None:
            group.durations.append(duration)
        if clean_exit:
            group.clean_exits += 1
        elif clean_exit is None:
            group.unreported += 1
        if named is not None:
            for name, value in named.items():
                if ((kind := type(value)) is float or kind is int) and isfinite(value):
                    if (found := group.named.get(name)) is None:
                        found = group.named[str(name)] = array("d")
                    found.append(value)
    return groups


def fold(trials: Iterable[Trial], groups: Groups | None = None) -> Groups:
    """`fold_fields` of Trials."""
    return fold_fields(map(astuple, trials), groups)


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
        into.unscored_costs = into.unscored_costs + [len(into.costs) + at for at in group.unscored_costs]
        into.costs = into.costs + group.costs
        into.reasons = into.reasons + group.reasons
        into.offsets = into.offsets | group.offsets
        into.one_offset = len(into.offsets) < 2
        into.models, into.ran = into.models | group.models, into.ran | group.ran
        into.impossible = into.impossible or group.impossible
        into.named = {
            name: into.named.get(name, array("d")) + group.named.get(name, array("d"))
            for name in {*into.named, *group.named}
        }
    return merged
