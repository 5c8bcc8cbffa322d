"""Stage jail: where the agent runs. First the model endpoint (with this machine's credential) and its health
across trials (after `unreachable_after` trials in a row could not reach it, a trial is refused while it refuses).
Confined (bwrap): the trial's uid, cgroups and view, and the model proxy, its only way out (credentials added
outside) — started on entry, stopped and removed on exit, here and nowhere else. Unconfined: the CLI's environment
only."""

from __future__ import annotations

from types import TracebackType

from passhat.common._endpoint import EndpointHealth
from passhat.trial._agent import bundled_cli, cli_environment
from passhat.trial._isolation import Confinement, Jail, open_jail
from passhat.trial._proxy import ModelProxy
from passhat.trial.stages._trial import Trial, model_check, model_variables
from passhat.trial.stages._workspace import Folders


class EndpointRefusedError(Exception):
    """The endpoint still refuses after `unreachable_after` trials in a row could not reach it: the reason."""


class JailStage:
    """`with JailStage(trial, folders, confined) as jail`: `jail.env` is the CLI's whole environment and
    `jail.confined` how run_agent confines it (None: unconfined)."""

    env: dict[str, str]

    def __init__(self, trial: Trial, folders: Folders, confined: Confinement) -> None:
        self.trial, self.folders, self.label, self._bwrap = trial, folders, confined.label, confined.bwrap
        self.confined: Jail | None = None
        self._proxy: ModelProxy | None = None
        self._health: EndpointHealth | None = None

    def __enter__(self) -> JailStage:
        trial, folders, config = self.trial, self.folders, self.trial.config
        variables = model_variables(trial)  # the scripted model's route, or the real job's endpoint and credential
        check = model_check(config, variables, trial.task.id, trial.repeat)
        self._health = EndpointHealth(config.state_dir, config.unreachable_after)
        if (refused := self._health.refuse(check)) is not None:
            raise EndpointRefusedError(refused)
        if not self._bwrap:
            self.env = cli_environment(config, folders.home, folders.tmp, folders.work, variables)
            return self
        hidden = (config.state_dir, config.tasks_dir, trial.task.dir)  # all else in the state dir, the tasks
        self.confined, self._proxy, self.env = open_jail(
            self._bwrap, folders.sandbox, hidden, trial.limits, variables, trial.task.network,
            lambda variables: cli_environment(config, folders.home, folders.tmp, folders.work, variables),
            bundled_cli(), config.visible, config.model, check,
        )  # fmt: skip
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        jail = self.confined
        if kind is None and jail is not None and jail.witness is not None and self._health is not None:
            self._health.record(jail.witness.gave_up or jail.witness.unreachable())  # the agent ran: what it met
        if self._proxy is not None:
            self._proxy.stop()
        if jail is not None:
            jail.cgroups.remove()

    @property
    def scripted(self) -> bool:
        """Real mode pointed at the scripted model (a rehearsal): its replies said so."""
        return self.confined is not None and self.confined.witness is not None and self.confined.witness.scripted

    def spend(self) -> dict | None:
        """What the proxy counted against the spend caps (trial.spend), when confined."""
        jail = self.confined
        return jail.spend.totals() if jail is not None and jail.spend is not None else None
