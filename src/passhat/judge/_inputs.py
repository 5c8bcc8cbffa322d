"""What the judge sees of one trial, gathered at the boundary from a Promptfoo assertion context,
a saved results row or a grader outcome: the task prompt, the agent's final text, its diff, the
ground truth (the task's solution.patch and `reference_output`) and the agent's model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class JudgeInputs:
    task_id: str
    trial: int
    prompt: str
    output: str | None  # the agent's final text (the assertion's `output`)
    diff: str | None  # the trial's patch against the base
    reference_patch: str | None
    reference_output: str | None
    agent_model: str | None
    task_dir: Path | None

    def roots(self) -> list[Path]:
        """Where rubric paths are looked up: the task folder, the project (tasks/..), the working directory."""
        roots = [self.task_dir, self.task_dir.parent.parent] if self.task_dir else []
        return [*roots, Path.cwd()]


def _read_text(path: str | Path | None) -> str | None:
    if not path:
        return None
    try:
        return Path(path).read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None


def _task_yaml(task_dir: Path | None) -> dict:
    if task_dir is None:
        return {}
    try:
        data = yaml.safe_load((task_dir / "task.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def gather(output: str | None, metadata: dict, variables: dict, config: dict, prompt: str | None = None,
           patch: bytes | None = None) -> JudgeInputs:  # fmt: skip
    """JudgeInputs from a trial's provider metadata, the test's vars and the grader's config."""
    task_dir_raw = metadata.get("task_dir") or variables.get("task_dir")
    task_dir = Path(task_dir_raw).resolve() if task_dir_raw else None
    task = _task_yaml(task_dir)
    use_reference = config.get("use_reference", True)
    reference_patch = None
    if use_reference and task_dir is not None:
        reference_patch = _read_text(task_dir / task.get("solution", "solution.patch"))
    reference_output = config.get("reference_output") or (task.get("reference_output") if use_reference else None)
    diff = patch.decode("utf-8", errors="replace") if patch is not None else _read_text(metadata.get("patch_path"))
    return JudgeInputs(
        task_id=str(metadata.get("task_id") or variables.get("task_id") or task.get("id") or "judge"),
        trial=_int(metadata.get("repeat_index")),
        prompt=str(prompt or variables.get("prompt") or task.get("prompt") or ""),
        output=output if isinstance(output, str) else (None if output is None else str(output)),
        diff=diff,
        reference_patch=reference_patch if use_reference else None,
        reference_output=reference_output,
        agent_model=metadata.get("model") or None,
        task_dir=task_dir,
    )


def from_promptfoo(output: Any, context: dict, config: dict) -> JudgeInputs:
    """The assertion's `output` and `context` (vars, test, providerResponse.metadata, prompt)."""
    response = context.get("providerResponse") or {}
    test = context.get("test") or {}
    metadata = {**(test.get("metadata") or {}), **(context.get("metadata") or {}), **(response.get("metadata") or {})}
    variables = {**(test.get("vars") or {}), **(context.get("vars") or {})}
    prompt = variables.get("prompt") or context.get("prompt")
    return gather(output, metadata, variables, config, prompt=prompt)


def from_row(row: dict, config: dict) -> JudgeInputs:
    """A saved Promptfoo results row (for judge-noise and calibration)."""
    response = row.get("response") or {}
    test = row.get("testCase") or {}
    metadata = {**(test.get("metadata") or {}), **(row.get("metadata") or {}), **(response.get("metadata") or {})}
    variables = {**(test.get("vars") or {}), **(row.get("vars") or {})}
    prompt = variables.get("prompt") or (row.get("prompt") or {}).get("raw")
    return gather(response.get("output"), metadata, variables, config, prompt=prompt)
