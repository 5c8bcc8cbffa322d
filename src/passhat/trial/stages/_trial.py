"""The trial as every stage reads it: the provider's `options` and Promptfoo's `context`, parsed once
(`parse_trial`, called by call_api at the edge, and by a Ray node on the config shipped to it) into one frozen
value. No stage reads a raw dict: a new setting is parsed here (or in _config.py) and read by name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from passhat.common._budget import budget_of
from passhat.common._endpoint import CHECK_PATH, Endpoint
from passhat.common._errors import PasshatError
from passhat.common._fake_route import route_url
from passhat.tasks._load import Task, load_task
from passhat.trial._config import FAKE_MODEL_ENV, ProviderConfig, model_endpoint, parse_config
from passhat.trial._limits import Limits
from passhat.trial._proxy import credential_headers, upstream_url

_TASKS: dict[Path, Task] = {}  # loaded once per worker process: a task folder does not change during an eval


@dataclass(frozen=True)
class Trial:
    """One (task, repeat) to run, as parsed: what each stage reads, by name."""

    prompt: str
    config: ProviderConfig
    task: Task
    repeat: int  # Promptfoo's repeatIndex (plus $PASSHAT_REPEAT_OFFSET)
    eval_id: str  # Promptfoo's evaluationId, or "adhoc"
    limits: Limits  # the provider config's, the task's own `limits:` over them
    budget: float | None  # the eval's budget (passhat.common._budget's guard); None: no guard
    raw: Mapping[str, object] = field(repr=False, default_factory=dict)  # as given: what a Ray node re-parses
    context: Mapping[str, object] = field(repr=False, default_factory=dict)

    @property
    def scripted(self) -> bool:
        """Run against passhat's scripted model: its dollars are not real money (the reports say so)."""
        return bool(self.config.fake_model_url)

    def where(self) -> dict:
        """The metadata of an infrastructure error of this trial."""
        return {"task_id": self.task.id, "repeat_index": self.repeat, "status": "infra_error",
                "scripted_model": self.scripted}  # fmt: skip

    def infra_error(self, reason: str) -> dict:
        return {"error": f"infrastructure error in task {self.task.id} trial {self.repeat}: {reason}",
                "metadata": self.where()}  # fmt: skip

    def shipped(self) -> tuple[dict, dict]:
        """What a Ray node gets to parse again (parse_trial there, over the node's own folders: passhat.cluster):
        the config as given, with the scripted model's URL this process found (maybe in its environment), and the
        context."""
        raw = dict(self.raw) | ({"fake_model_url": self.config.fake_model_url} if self.config.fake_model_url else {})
        return raw, dict(self.context)


def _task(task_dir: Path) -> Task:
    if task_dir not in _TASKS:
        _TASKS[task_dir] = load_task(task_dir)
    return _TASKS[task_dir]


def parse_trial(prompt: str, raw: Mapping, context: Mapping, on_node: bool = False) -> Trial:
    """The only parser of the provider config and of Promptfoo's context; one clear error (PasshatError) otherwise.

    `on_node`: on a Ray node, the config the driver shipped, the node's own folders put over it (passhat.cluster);
    the trial runs there, locally, and the driver's guard counted it against the budget. The model endpoint is not
    resolved here but by the jail stage (`model_variables`): on the machine that runs the trial, with its credential."""
    config = parse_config(dict(raw))
    variables = context.get("vars") or {}
    task_id = str(variables.get("task_id") or "")
    if not task_id:
        msg = "test vars: 'task_id' is missing; generate tests with tasks/tests.py or set vars.task_id"
        raise PasshatError(msg)
    task = _task(Path(variables.get("task_dir") or config.tasks_dir / task_id).resolve())
    return Trial(
        prompt=prompt,
        config=config,
        task=task,
        repeat=int(context.get("repeatIndex") or 0),
        eval_id=str(context.get("evaluationId") or "adhoc"),
        limits=config.limits.merged(task.limits, f"{task.dir / 'task.yaml'}"),
        budget=None if on_node else budget_of(dict(raw)),
        raw=MappingProxyType(dict(raw)),
        context=MappingProxyType(dict(context)),
    )


_RETRY = "then `promptfoo eval --retry-errors --repeat N` runs the refused trials again"


def model_variables(trial: Trial) -> dict[str, str]:
    """The model variables of the trial's job (credential included), from this machine's environment."""
    return model_endpoint(trial.config, trial.task.id, trial.repeat)


def model_check(config: ProviderConfig, endpoint: Mapping[str, str], task_id: str, trial: int) -> Endpoint:
    """How passhat probes a trial's model endpoint itself (passhat/common/_endpoint.py), and the fix to give when it
    refuses the credential: the variable that holds it, or the scripted model's secret."""
    if config.fake_model_url:  # its own route: a 403 there means the URL's secret is not the server's
        fix = ("the scripted model refuses a token its secret did not make (restarted with another secret?): start "
               "it with `--secret-file` holding the secret of the URL passhat was given, or give passhat the new URL "
               f"(${FAKE_MODEL_ENV} or `fake_model_url:`); {_RETRY}")  # fmt: skip
        return Endpoint(route_url(config.fake_model_url, task_id, trial, config.fake_script), {}, CHECK_PATH, fix)
    headers, auth = credential_headers(dict(endpoint)), config.auth
    if auth is None:
        where = "$ANTHROPIC_API_KEY"
    elif auth.token_env:
        where = f"${auth.token_env} (provider config `{auth.field}`)"
    else:
        where = "the gateway's own configuration (`auth:` names no credential variable)"
    if auth is not None and auth.kind == "oauth_token":
        headers["anthropic-beta"] = "oauth-2025-04-20"
        where += "; `claude setup-token` prints a new OAuth token"
    fix = f"renew the credential in {where} and export it, {_RETRY}"
    cloud = auth is not None and auth.kind in ("bedrock", "vertex")  # no free request there: the connection only
    return Endpoint(upstream_url(dict(endpoint)), headers, None if cloud else CHECK_PATH, fix)
