"""Stages base and sandbox: the trial's folders, the task's base (cached per task version), and this trial's
writable view of it (an overlay, or a copy) with the provider's CLAUDE.md put in. On exit the sandbox is
unmounted and removed (only unmounted with `keep_sandbox`); the patch is read from it before (`outcome`)."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from passhat.trial._paths import UnsafePathError, lstat_within, read_within, remove_within, write_within
from passhat.trial._sandbox import (
    AgentTreeError,
    Base,
    Outcome,
    close_sandbox,
    collect_outcome,
    open_sandbox,
    prepare_base,
)
from passhat.trial.stages._trial import Trial

if TYPE_CHECKING:
    from passhat.trial._agent import AgentRun


@dataclass(frozen=True)
class Folders:
    """The trial's artifacts folder (patch, transcript, record) and its sandbox (work/, home/, tmp/)."""

    trial_dir: Path
    sandbox: Path

    @property
    def work(self) -> Path:
        return self.sandbox / "work"

    @property
    def home(self) -> Path:
        return self.sandbox / "home"

    @property
    def tmp(self) -> Path:
        return self.sandbox / "tmp"


def make_folders(trial: Trial) -> Folders:
    """Created here (OSError when the state dir is not writable); the sandbox's work/ is open_sandbox's."""
    name = f"r{trial.repeat:03d}-{uuid.uuid4().hex[:8]}"
    state = trial.config.state_dir
    folders = Folders(trial.config.artifacts_dir / trial.eval_id / trial.task.id / name,
                      state / "sandboxes" / f"{trial.task.id}-{name}")  # fmt: skip
    for folder in (folders.trial_dir, folders.home, folders.tmp):
        folder.mkdir(parents=True, exist_ok=True)
    return folders


class Workspace:
    """`with Workspace(trial, folders) as workspace`: the base and the sandbox on it; removed on the way out."""

    base: Base

    def __init__(self, trial: Trial, folders: Folders) -> None:
        self.trial, self.folders = trial, folders
        self._injected: bytes | None = None
        self._upper: Path | None = None
        self._git_dir: Path | None = None

    def __enter__(self) -> Workspace:
        try:
            self.base = prepare_base(self.trial.task, self.trial.config.state_dir / "cache")
            opened = open_sandbox(self.base.path, self.folders.sandbox, base_git=self.base.path / ".git")
            self._upper, self._git_dir = opened.upper, opened.git_dir
            if self.trial.config.claude_md:
                self._injected = _inject_claude_md(self.trial.config.claude_md, self.folders.work)
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._close()

    def _close(self) -> None:
        close_sandbox(self.folders.sandbox, keep=self.trial.config.keep_sandbox)  # unmounted; removed unless kept

    def outcome(self, run: AgentRun) -> tuple[AgentRun, Outcome]:
        """The agent's patch against the base (without our CLAUDE.md); a tree the agent left unreadable or too big
        is the agent's doing (`limit` or `agent_crash`), with an empty patch."""
        if self._injected is not None:
            _restore_claude_md(self.folders.work, self.base.path, self._injected)
        try:  # with the base's .git, never the agent's: its git config and hooks never run outside the sandbox
            return run, collect_outcome(self.folders.work, self.base, self.trial.limits, self._upper, self._git_dir)
        except AgentTreeError as error:
            status = "limit" if error.limit else "agent_crash"
            return replace(run, status=status, error=str(error), is_error=True), Outcome(b"", ())


def _inject_claude_md(source: Path, workdir: Path) -> bytes:
    content = source.read_bytes()
    (workdir / "CLAUDE.md").write_bytes(content)
    if os.geteuid() == 0:  # the agent's, like the rest of the tree (owned by the base's uid)
        owner = os.lstat(workdir)
        os.lchown(workdir / "CLAUDE.md", owner.st_uid, owner.st_gid)
    return content


def _restore_claude_md(workdir: Path, base_path: Path, injected: bytes) -> None:
    """The injected context file is ours, not the agent's: keep it out of the patch unless edited."""
    if lstat_within(workdir, "CLAUDE.md").kind != "file":  # a link, FIFO or folder the agent left: its own
        return
    try:
        if read_within(workdir, "CLAUDE.md", limit=len(injected)) != injected:
            return  # edited: part of the patch
    except UnsafePathError:
        return
    original = base_path / "CLAUDE.md"
    if original.is_file():
        write_within(workdir, "CLAUDE.md", original.read_bytes())
    else:
        remove_within(workdir, "CLAUDE.md")
