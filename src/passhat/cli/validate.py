"""`passhat validate [promptfooconfig.yaml]`: check every input before the first trial runs.

The passhat providers' `config:` blocks, every task the suite's test generator would load,
and `--repeat` against the largest k you will report. One clear error (exit 2) or a summary.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from passhat._errors import PasshatError, yaml_position

_PROVIDER_FILE = "providers/claude_code.py"


def _load_config(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PasshatError(f"{path}: no such file; pass your promptfooconfig.yaml") from None
    except yaml.YAMLError as error:
        where = yaml_position(error)
        raise PasshatError(
            f"{path}: YAML syntax error{where}: {getattr(error, 'problem', error)}; fix the YAML"
        ) from None
    if not isinstance(data, dict):
        raise PasshatError(f"{path}: expected a mapping with prompts, providers and tests; got {type(data).__name__}")
    return data


def _passhat_providers(path: Path, data: dict) -> list[tuple[str, dict]]:
    providers = data.get("providers")
    if not isinstance(providers, list) or not providers:
        raise PasshatError(f"{path}: field 'providers' must be a non-empty list; add file://{_PROVIDER_FILE}")
    found = []
    for index, entry in enumerate(providers):
        entry = {"id": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise PasshatError(f"{path}: field 'providers[{index}]': {entry!r}: each provider needs an `id`")
        if entry["id"].endswith(_PROVIDER_FILE):
            config = entry.get("config") or {}
            if not isinstance(config, dict):
                raise PasshatError(f"{path}: field 'providers[{index}].config': {config!r}: expected a mapping")
            found.append((entry.get("label") or entry["id"], config))
    return found


def validate(path: Path, repeat: int | None, largest_k: int | None) -> list[str]:
    """Checked facts, one line each; raises PasshatError at the first problem."""
    from passhat.tasks._load import load_tasks
    from passhat.trial._config import parse_config

    data = _load_config(path)
    lines = []
    for label, config in _passhat_providers(path, data):
        try:
            parse_config({**config, "basePath": str(path.parent)})
        except PasshatError as error:
            raise PasshatError(f"{path}: provider {label!r}: {error}") from None
        lines.append(f"provider {label}: config ok")
    tests = data.get("tests")
    if isinstance(tests, str) and "promptfoo_tests.py" in tests:
        tasks_dir = (path.parent / tests.removeprefix("file://").split(":")[0]).parent
        tasks = load_tasks(tasks_dir)
        lines.append(f"{len(tasks)} task(s) in {tasks_dir}: {', '.join(t.id for t in tasks)}")
        from passhat.graders._judges import check_judges

        lines += [line for task in tasks for line in check_judges(task.dir, task.id, task.graders)]
    options_repeat = (data.get("evaluateOptions") or {}).get("repeat")
    repeat = repeat or options_repeat
    if largest_k and repeat is not None and repeat < largest_k:
        msg = f"--repeat {repeat} is less than the largest k ({largest_k}): pass^{largest_k} would be undefined; use --repeat {largest_k} or more"
        raise PasshatError(msg)
    return lines


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", nargs="?", default="promptfooconfig.yaml")
    parser.add_argument("--repeat", type=int, default=None, help="the --repeat you will pass to promptfoo eval")
    parser.add_argument("--k", type=int, default=None, help="the largest k you will report (pass^k needs repeat >= k)")


def run(args: argparse.Namespace) -> int:
    for line in validate(Path(args.config), args.repeat, args.k):
        print(line)
    print("ok: ready to run")
    return 0
