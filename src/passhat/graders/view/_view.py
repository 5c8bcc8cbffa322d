"""The view of a trial's outcome every grader gets — passhat's kinds and a team's `type: python` graders alike.

Read-only and pathless: the final tree (base + patch) and the base as Trees (trial._paths reads: no link out
of the tree is followed), the patch and its changed paths, the trial's record, the transcript's tool calls, and
`run(command)`: a command on a private copy of the final tree, confined as the tests grader's (graders._run).
A view holds no path: its state lives in this module, keyed by the view, so a careless grader finds no root
to join. It is a guard against accidents, not a sandbox: a team grader is the team's trusted code.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from passhat.graders.view._record import Record, ToolCall, read_tool_calls, record_of
from passhat.graders.view._tree import Tree, make_tree
from passhat.trial._outcome import TrialOutcome

if TYPE_CHECKING:
    from passhat.trial._patch import PatchStats

RUN_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Ran:
    """What `view.run` gave: the exit code (None: killed at its timeout) and its output (stdout + stderr)."""

    code: int | None
    output: str

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def timed_out(self) -> bool:
        return self.code is None


@dataclass
class _State:
    outcome: TrialOutcome
    base: Tree
    cache: dict[str, Any] = field(default_factory=dict)


_STATE: weakref.WeakKeyDictionary[OutcomeView, _State] = weakref.WeakKeyDictionary()


def view_of(outcome: TrialOutcome) -> OutcomeView:
    """The view of `outcome` (its tree built on the first read, shared with every grader of the outcome)."""
    view = make_tree(outcome.tree, OutcomeView)
    _STATE[view] = _State(outcome, make_tree(outcome.base_tree, Tree))
    return view


def outcome_of(view: OutcomeView) -> TrialOutcome:
    """The outcome behind a view: for passhat's own kinds that need its machinery (the tests runner, the scan,
    the judges, Ray), never handed to a team grader."""
    return _STATE[view].outcome


class OutcomeView(Tree):
    """A trial's outcome, read-only: `read`/`text`/`entry`/`is_link`/`readlink`/`listdir`/`files` of the final tree
    (base + the agent's patch), `base` (the same of the tree the agent started from), `patch`, `changed_paths`,
    `record`, `tool_calls`, and `run(command)`."""

    __slots__ = ()

    def _state(self) -> _State:
        return _STATE[self]

    @property
    def base(self) -> Tree:
        """The tree the agent started from (the task's base), read the same way."""
        return self._state().base

    @property
    def patch(self) -> bytes:
        """The agent's patch (git diff --binary of base → final tree); b"" when it changed nothing."""
        return self._state().outcome.patch

    @property
    def changed_paths(self) -> tuple[str, ...]:
        """Every path the patch touches (old and new names of a rename), as git reads them, sorted."""
        return self._stats().paths

    @property
    def lines_added(self) -> int:
        return self._stats().added

    @property
    def lines_removed(self) -> int:
        return self._stats().removed

    def _stats(self) -> PatchStats:
        from passhat.trial._patch import patch_stats

        cache = self._state().cache
        if "stats" not in cache:
            cache["stats"] = patch_stats(self.patch)
        stats: PatchStats = cache["stats"]
        return stats

    @property
    def record(self) -> Record:
        """How the trial went: status, turns, cost_usd, permission_denials, final_text, ... (graders.view.Record)."""
        return record_of(self._state().outcome.run)

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The agent's tool calls from the transcript, in order, each with its reply; () when there is none
        (check-task's reference and empty patch have no trial behind them)."""
        cache = self._state().cache
        if "calls" not in cache:
            cache["calls"] = read_tool_calls(self._state().outcome.run.get("transcript_path"))
        calls: tuple[ToolCall, ...] = cache["calls"]
        return calls

    def run(self, command: str, timeout_s: float = RUN_TIMEOUT_S, env: Mapping[str, str] | None = None) -> Ran:
        """Run `command` (sh -c) at the top of a private, writable copy of the final tree, confined as the tests
        grader's command (no network, none of passhat's environment but PATH, HOME, LANG, CI and `env`), killed
        at `timeout_s`. Each run starts from the final tree afresh: chain steps in one command (`make && du -sb
        dist`). The command runs the agent's code: believe its output no more than the agent."""
        from passhat.graders._run import grader_env, run_command

        outcome = self._state().outcome
        with outcome.private_copy() as workdir:
            home = workdir.parent / "home"
            home.mkdir(exist_ok=True)
            environment = grader_env({"type": "python", "env": dict(env or {})}, home)
            hidden = (outcome.cache_root.parent, outcome.task_dir)  # the state dir, the reference solution
            code, output = run_command(command, workdir, timeout_s, environment, hidden, [home])
        return Ran(code, output)
