"""`passhat validate [promptfooconfig.yaml]`: check every input before the first trial runs.

Promptfoo drops a key it does not know (`confg:` for `config:`) without a word, and waits forever on a
provider file it cannot load (`file://providers/claude-code.py`), so this checks what it would not:
the keys of the config and of every provider entry, that each `file://` provider and extension hook exists, the
passhat providers' `config:`, every task the suite's test generator would load (`tasks/promptfoo_tests.py`, or the
entry file `passhat init` writes), the extension's report settings, that the Python promptfoo will run imports
passhat, `--repeat` against the largest k you will report, and per passhat provider that it has a model to call
(the scripted model, or real Claude on opt-in), that the endpoint answers and takes the credential (one probe;
`--no-probe` skips it), and a writable state dir. Every error found in one run (exit 2), one line each naming
the file, the key and the fix (a check that needs what failed is skipped), or a summary — never "ok" when no
passhat provider was checked.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import yaml

from passhat.cli import k_list
from passhat.common._deadline import deadline_warning
from passhat.common._errors import PasshatError, yaml_position

if TYPE_CHECKING:
    from passhat.tasks._load import Task
    from passhat.trial._config import ProviderConfig

_PROVIDER_FILE = "providers/claude_code.py"
# promptfoo 0.123.1's UnifiedConfigSchema and ProviderOptionsSchema: the keys it reads, dropping the rest.
_TOP_KEYS = ("description", "tags", "providers", "targets", "prompts", "tests", "scenarios", "defaultTest",
             "outputPath", "sharing", "nunjucksFilters", "env", "derivedMetrics", "extensions", "metadata",
             "redteam", "writeLatestResults", "tracing", "evaluateOptions", "commandLineOptions")  # fmt: skip
_PROVIDER_KEYS = ("id", "label", "config", "prompts", "transform", "delay", "env", "inputs")
_FILE_ID = re.compile(r"^(file://|python:)(.+?\.\w+)(:\w+)?$")  # file://path.py[:function]


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


def _near(key: str, known: tuple[str, ...]) -> str | None:
    return next(iter(difflib.get_close_matches(key, known, n=1, cutoff=0.7)), None)


def _check_top_keys(path: Path, data: dict, errors: list[str]) -> None:
    for key in data:
        if key not in _TOP_KEYS and (near := _near(str(key), _TOP_KEYS)):
            errors.append(f"{path}: key {key!r}: promptfoo ignores it; did you mean {near!r}? rename it")


@contextlib.contextmanager
def _kept(errors: list[str], prefix: str = "") -> Iterator[None]:
    """A PasshatError raised inside is one more entry of `errors` (prefixed), and the checks go on."""
    try:
        yield
    except PasshatError as error:
        errors.append(f"{prefix}{error}")


def _load_each(tasks_dir: Path, errors: list[str]) -> list[Task]:
    """Each task under `tasks_dir` that loads (graders checked); each one that does not is one more error."""
    from passhat.graders import load_graded_task, load_graded_tasks

    folders, tasks = sorted(p.parent for p in tasks_dir.glob("*/task.yaml")), []
    with _kept(errors):
        tasks += [] if folders else load_graded_tasks(tasks_dir)  # its error: no such folder, or no task in it
    for folder in folders:
        with _kept(errors):
            tasks.append(load_graded_task(folder))
    return tasks


def _provider_file(path: Path, where: str, provider_id: str) -> Path | None:
    """The file of a `file://` (or `python:`) provider, checked to exist; None for other providers."""
    match = _FILE_ID.match(provider_id)
    if not match:
        return None
    prefix, written, function = match.group(1), match.group(2), match.group(3) or ""
    file = path.parent / written  # promptfoo resolves it against the config's folder; an absolute path stays
    if file.is_file():
        return file
    fix = f"give its path relative to {path.parent}, e.g. file://{_PROVIDER_FILE}"
    siblings = [p.name for p in file.parent.iterdir() if p.is_file()] if file.parent.is_dir() else []
    if near := next(iter(difflib.get_close_matches(file.name, siblings, n=1, cutoff=0.6)), None):
        fix = f"did you mean {prefix}{PurePosixPath(written).with_name(near)}{function}?"
    msg = f"{path}: key '{where}.id': {provider_id!r}: no such file {file} (promptfoo would hang on it); {fix}"
    raise PasshatError(msg)


def _is_passhat(file: Path) -> bool:
    text = file.read_text(encoding="utf-8", errors="replace")
    return file.name == "claude_code.py" or "passhat.trial" in text or "passhat.promptfoo" in text  # passhat init's


def _passhat_providers(path: Path, data: dict, errors: list[str]) -> list[tuple[str, dict]]:
    """passhat's providers (label, config); every problem of an entry is one more entry of `errors`."""
    before = len(errors)
    providers = data.get("providers", data.get("targets"))
    if providers is None and any(k not in _TOP_KEYS and _near(str(k), ("providers", "targets")) for k in data):
        return []  # its misspelt key is the error already found
    if not isinstance(providers, list) or not providers:
        raise PasshatError(f"{path}: key 'providers' must be a non-empty list; add - id: file://{_PROVIDER_FILE}")
    found: list[tuple[str, dict]] = []
    ids = []
    for index, entry in enumerate(providers):
        where = f"providers[{index}]"
        if isinstance(entry, dict) and "id" not in entry and len(entry) == 1:  # {ID: {config: ...}}
            [(provider_id, options)] = entry.items()
            entry = {"id": provider_id, **options} if isinstance(options, dict) else entry
        entry = {"id": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            errors.append(f"{path}: key '{where}': {entry!r}: each provider needs an `id`")
            continue
        for key in entry:
            if key not in _PROVIDER_KEYS:
                hint = f"did you mean {near!r}? " if (near := _near(str(key), _PROVIDER_KEYS)) else ""
                errors.append(f"{path}: key '{where}.{key}': promptfoo ignores it; {hint}a provider takes "
                              f"{', '.join(_PROVIDER_KEYS)}")  # fmt: skip
        ids.append(entry["id"])
        file = None
        with _kept(errors):
            file = _provider_file(path, where, entry["id"])
        if file is not None and _is_passhat(file):
            config = entry.get("config") or {}
            if not isinstance(config, dict):
                errors.append(f"{path}: key '{where}.config': {config!r}: expected a mapping")
                continue
            found.append((entry.get("label") or entry["id"], config))
    if not found and len(errors) > before:
        return found  # the errors above say why no passhat provider was found
    if not found:
        msg = (f"{path}: key 'providers': no passhat provider among {', '.join(ids)}, so there is nothing to check; "
               f"add - id: file://{_PROVIDER_FILE}")  # fmt: skip
        raise PasshatError(msg)
    return found


def _model(path: Path, label: str, config: ProviderConfig) -> str:
    """Where the provider's trials will send their requests; an error when nowhere."""
    from passhat.common._fake_route import redact
    from passhat.trial._config import FAKE_MODEL_ENV, REAL_CLAUDE_ENV, model_endpoint

    if config.fake_model_url:
        try:
            model_endpoint(config, "validate", 0)  # the provider's own check of the URL (its secret)
        except PasshatError as error:
            raise PasshatError(f"{path}: provider {label!r}: {error}") from None
        rehearsed = (
            f" (rehearsing auth: {config.auth.describe()}, with a placeholder credential)" if config.auth else ""
        )
        return f"the scripted model at {redact(config.fake_model_url)}{rehearsed}"
    if config.auth is not None:
        try:
            model_endpoint(config, "validate", 0)  # the named variable must be set
        except PasshatError as error:
            raise PasshatError(f"{path}: provider {label!r}: {error}") from None
        return f"the endpoint of `auth:`: {config.auth.describe()} (this spends tokens)"
    real, key = os.environ.get(REAL_CLAUDE_ENV) == "1", bool(os.environ.get("ANTHROPIC_API_KEY"))
    if real and key:
        return f"real Claude ({REAL_CLAUDE_ENV}=1 and ANTHROPIC_API_KEY set: this spends tokens)"
    why = (f"{REAL_CLAUDE_ENV}=1 but ANTHROPIC_API_KEY is not set" if real
           else f"ANTHROPIC_API_KEY is set but {REAL_CLAUDE_ENV} is not 1, and a key alone never spends money" if key
           else f"neither {FAKE_MODEL_ENV} nor {REAL_CLAUDE_ENV}=1 with ANTHROPIC_API_KEY is set")  # fmt: skip
    msg = (f"{path}: provider {label!r}: no model to run against ({why}); start `passhat fake-model` and set "
           f"{FAKE_MODEL_ENV} (or `fake_model_url:` in its config), or export {REAL_CLAUDE_ENV}=1 and "
           "ANTHROPIC_API_KEY for real Claude")  # fmt: skip
    raise PasshatError(msg)


def _unwritable(folder: Path) -> str | None:
    """Why passhat could not create `folder` and files in it, or None."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".passhat-validate-", dir=existing))
    except OSError as error:
        return f"cannot create a folder in {existing} ({error.strerror})"
    return None


def _probe(path: Path, label: str, config: ProviderConfig) -> str:
    """One probe of the endpoint the trials will use (passhat/common/_endpoint.py): the connection, and the credential
    with the API's free request or the scripted model's own route. What it found, or an error with the fix."""
    from passhat.common._endpoint import probe
    from passhat.trial._config import model_endpoint
    from passhat.trial._provider import model_check

    found = probe(model_check(config, model_endpoint(config, "passhat-validate", 0), "passhat-validate", 0))
    if found.problem is None:
        return f"provider {label}: endpoint probed: {found.found}"
    fix = "" if found.auth else (
        "; start it (`passhat fake-model --url-file FILE`, then give passhat that URL)" if config.fake_model_url
        else "; check the URL and that the endpoint is up"
    )  # fmt: skip
    raise PasshatError(f"{path}: provider {label!r}: the model endpoint: {found.problem}{fix}")


_GENERATOR_DIR = re.compile(r"tests_generator\(\s*__file__\s*(?:,\s*(?:tasks_dir\s*=\s*)?[\"']([^\"']+)[\"'])?")


def _tasks_dir(path: Path, tests: object) -> Path | None:
    """The tasks folder the config's test generator loads: `tasks/promptfoo_tests.py`'s folder, or the one an entry
    file written by `passhat init` names (`tests_generator(__file__, tasks_dir="tasks")`); None for other tests."""
    if not isinstance(tests, str):
        return None
    file = path.parent / tests.removeprefix("file://").split(":")[0]
    if file.name == "promptfoo_tests.py":
        return file.parent
    if file.suffix == ".py" and file.is_file() and (found := _GENERATOR_DIR.search(file.read_text(errors="replace"))):
        return file.parent / (found.group(1) or "tasks")
    return None


def _dotenv(folder: Path) -> dict[str, str]:
    """NAME=value lines of the .env promptfoo loads from its folder (it never overrides the environment)."""
    try:
        lines = (folder / ".env").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    pairs = (line.removeprefix("export ").split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
    return {name.strip(): value.strip().strip("\"'") for name, value in pairs}


def _promptfoo_python(path: Path, configs: list[dict]) -> tuple[str, str]:
    """The Python promptfoo will run for passhat's provider and hooks, and how it finds it (promptfoo 0.123.1's
    order: `pythonExecutable:` in a provider's config, PROMPTFOO_PYTHON, then `python`, then `python3` on PATH)."""
    explicit = [c["pythonExecutable"] for c in configs if isinstance(c.get("pythonExecutable"), str)]
    if explicit:
        return explicit[0], "pythonExecutable in the provider's config"
    if env := os.environ.get("PROMPTFOO_PYTHON") or _dotenv(path.parent).get("PROMPTFOO_PYTHON"):
        return env, "PROMPTFOO_PYTHON"
    for name in ("python", "python3"):
        if found := shutil.which(name):
            return found, f"`{name}` on PATH"
    return "python3", "nothing on PATH"


def _imports_passhat(path: Path, configs: list[dict]) -> str:
    """One line: the Python promptfoo will run imports passhat; else an error with the fix (promptfoo would fail
    every trial with a ModuleNotFoundError, after it started them)."""
    python, how = _promptfoo_python(path, configs)
    probe = "import passhat, sys; print(passhat.__file__)"
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
        problem = None if done.returncode == 0 else (done.stderr.strip().splitlines() or ["no output"])[-1]
    except (OSError, subprocess.TimeoutExpired) as error:
        problem = str(error)
    if problem is not None:
        msg = (f"{path}: promptfoo will run {python} ({how}), which cannot import passhat ({problem}); activate the "
               f"venv passhat is installed in, or export PROMPTFOO_PYTHON={shlex.quote(sys.executable)}")  # fmt: skip
        raise PasshatError(msg)
    return f"promptfoo's Python: {python} ({how}) imports passhat from {Path(done.stdout.strip()).parent}"


def _extensions(path: Path, data: dict) -> list[str]:
    """Each `file://` extension hook exists (promptfoo would fail at the very end of the eval, after every trial),
    and the report settings passhat's afterAll reads are sound."""
    from passhat.extension._verdict import settings

    lines = []
    for index, entry in enumerate(data.get("extensions") or []):
        match = _FILE_ID.match(entry) if isinstance(entry, str) else None
        if match and not (path.parent / match.group(2)).is_file():
            msg = (f"{path}: key 'extensions[{index}]': {entry!r}: no such file {path.parent / match.group(2)} "
                   "(promptfoo would fail after the last trial); give its path relative to the config")  # fmt: skip
            raise PasshatError(msg)
        if match and match.group(3) == ":afterAll":
            lines.append(f"extension {entry}: promptfoo eval ends with passhat's verdict")
    wanted = settings(data, os.environ, str(path))
    lines += [f"afterAll writes {target}" for target in wanted.reports]
    lines += [f"afterAll appends the eval to {wanted.history}"] if wanted.history else []
    return lines


def validate(path: Path, repeat: int | None, largest_k: int | None, probe: bool = True) -> list[str]:
    """Checked facts, one line each; raises PasshatError naming every problem found, one per line: each check
    runs whatever the others found (one that needs what failed before it is skipped)."""
    lines, errors = _checks(path, repeat, largest_k, probe)
    if errors:  # one: its line; several: how many, then one a line
        raise PasshatError(errors[0] if len(errors) == 1 else f"{len(errors)} problems:\n  " + "\n  ".join(errors))
    return lines


def _checks(path: Path, repeat: int | None, largest_k: int | None, probe: bool) -> tuple[list[str], list[str]]:
    from passhat.trial._config import parse_config

    data = _load_config(path)  # nothing else can be checked without it
    errors: list[str] = []
    _check_top_keys(path, data, errors)
    providers = []
    found = _passhat_providers(path, data, errors)
    for label, raw in found:
        with _kept(errors, f"{path}: provider {label!r}: "):
            providers.append((label, parse_config({**raw, "basePath": str(path.parent)})))
    lines = [f"provider {label}: config ok" for label, _ in providers]
    if found:
        with _kept(errors):
            lines.append(_imports_passhat(path, [raw for _, raw in found]))
    with _kept(errors):
        lines += _extensions(path, data)
    tasks = []
    if (tasks_dir := _tasks_dir(path, data.get("tests"))) is not None:
        tasks = _load_each(tasks_dir, errors)
        if tasks:
            lines.append(f"{len(tasks)} task(s) in {tasks_dir}: {', '.join(t.id for t in tasks)}")
        from passhat.graders import preflight

        for task in tasks:
            with _kept(errors):
                lines += preflight([task])
    with _kept(errors):
        lines += _grading(tasks)
    options_repeat = (data.get("evaluateOptions") or {}).get("repeat")
    repeat = repeat or options_repeat
    if largest_k and repeat is not None and repeat < largest_k:
        errors.append(f"--repeat {repeat} is less than the largest k ({largest_k}): pass^{largest_k} would be "
                      f"undefined; use --repeat {largest_k} or more")  # fmt: skip
    probe = probe and not errors  # the endpoint's one request waits until the configuration is right
    for label, config in providers:
        with _kept(errors):  # _model and _probe name the file and the provider; the two others, below
            lines.append(f"provider {label}: model: {_model(path, label, config)}")
            if problem := _unwritable(config.state_dir):
                raise PasshatError(f"{path}: provider {label!r}: key 'state_dir' ({config.state_dir}): {problem}; "
                                   "make it writable or point `state_dir:` in its config at a writable folder")  # fmt: skip
            lines.append(f"provider {label}: state dir {config.state_dir} writable")
            lines.append(
                _probe(path, label, config) if probe else f"provider {label}: endpoint not probed (--no-probe)"
            )
            if warning := deadline_warning(config.timeout_s, config.api_timeout_s, config.max_retries):
                lines.append(f"warning: provider {label}: {warning}")
            if config.executor.kind == "ray":  # every node runs a probe: passhat, git, the CLI, bwrap, setup's
                from passhat.cluster import check_cluster

                programs = tuple(sorted({shlex.split(task.setup)[0] for task in tasks if task.setup}))
                with _kept(errors, f"{path}: provider {label!r}: "):
                    lines += check_cluster(config.executor, config.isolation != "none", programs)
    return lines, errors


def _grading(tasks: list[Task]) -> list[str]:
    """Where the tests graders run (PASSHAT_GRADER_EXECUTOR, a grader's `executor:`); a cluster they use is probed."""
    from passhat.cluster import Executor, check_cluster, grader_executor

    found: dict[Executor, list[str]] = {}
    for task in tasks:
        for index, grader in enumerate(task.graders):
            if grader["type"] == "tests":
                try:
                    executor = grader_executor(grader)
                except PasshatError as error:
                    raise PasshatError(f"{task.dir / 'task.yaml'}: graders[{index}]: {error}") from None
                found.setdefault(executor, []).append(task.id)
    if not tasks:
        found[grader_executor({})] = []  # the environment's choice is checked all the same
    lines = []
    for executor, ids in found.items():
        if executor.kind == "ray":
            lines.append(f"tests graders{' of ' + ', '.join(ids) if ids else ''} run on the Ray cluster at "
                         f"{executor.address}")  # fmt: skip
            field = "their ray_address (the grader's `ray_address:`, else PASSHAT_RAY_ADDRESS, else auto)"
            try:
                lines += check_cluster(executor, need_bwrap=False, field=field)
            except PasshatError as error:
                raise PasshatError(f"tests graders with executor: ray: {error}") from None
    return lines


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", nargs="?", default="promptfooconfig.yaml", help="(default promptfooconfig.yaml)")
    parser.add_argument("--repeat", type=int, default=None, help="the --repeat you will pass to promptfoo eval")
    parser.add_argument(
        "--k", type=k_list, default=None, help="the ks you will report, e.g. 1,3,5,10 (pass^k needs repeat >= k)"
    )
    parser.add_argument(
        "--no-probe", action="store_true", help="do not send the endpoint its one probe request (connection and "
        "credential: the API's free count_tokens, or the scripted model's own route)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    for line in validate(Path(args.config), args.repeat, max(args.k) if args.k else None, not args.no_probe):
        print(line)
    print("ok: ready to run")
    return 0
