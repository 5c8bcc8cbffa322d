"""run_trial: one parsed trial here, stage by stage (the folder's docstring draws them)."""

from __future__ import annotations

from passhat.common._errors import SandboxError
from passhat.trial._agent import run_agent
from passhat.trial._isolation import confinement, warn_if_unconfined
from passhat.trial.stages._jail import EndpointRefusedError, JailStage
from passhat.trial.stages._record import Ran, respond
from passhat.trial.stages._trial import Trial
from passhat.trial.stages._workspace import Workspace, make_folders


def run_trial(trial: Trial) -> dict:
    """Promptfoo's response for one trial; an infrastructure failure is its `error`. Each stage cleans up on its
    way out: the jail (proxy, cgroups) when the agent is done, the sandbox once the patch is read."""
    confined = confinement(trial.config.isolation)
    warn_if_unconfined(confined)
    try:
        folders = make_folders(trial)
    except OSError as error:
        return trial.infra_error(
            f"cannot create {error.filename} ({error.strerror}); make the state dir {trial.config.state_dir} "
            "writable or set `state_dir:` in the provider config to a folder that is"
        )
    try:
        with Workspace(trial, folders) as workspace:
            with JailStage(trial, folders, confined) as jail:
                run = run_agent(trial.prompt, trial.config, folders.work, jail.env, folders.trial_dir, jail.confined)
            run, outcome = workspace.outcome(run)
    except EndpointRefusedError as refused:
        return trial.infra_error(str(refused))
    except SandboxError as error:
        return {"error": f"infrastructure error (sandbox) in task {trial.task.id}: {error}", "metadata": trial.where()}
    scripted = trial.scripted or jail.scripted  # real mode pointed at the scripted model: a rehearsal
    return respond(trial, folders, Ran(workspace.base, run, outcome, jail.label, jail.spend(), scripted))
