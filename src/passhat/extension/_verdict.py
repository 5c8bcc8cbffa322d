"""afterAll: `promptfoo eval` ends with passhat's verdict, whether or not a trial failed.

Promptfoo 0.123 calls `afterAll({prompts, results, suite, evalId, config}, {hookName})` once every row is in,
before it prints its own summary and writes `-o`: `results` are the eval's rows as `-o results.json` holds them.
The hook writes them to a temporary results file and prints what `passhat report` prints for it (the verdict, the
per-task table, the summary in words). When asked, it also writes report files and appends the eval to the drift
history: `PASSHAT_REPORT=report.html,report.md` and `PASSHAT_HISTORY=.passhat/history.db` in the environment,
else `metadata: {passhat: {report: [report.html], history: .passhat/history.db}}` in promptfooconfig.yaml.

It never fails the eval: promptfoo saves the eval only after afterAll returns, so a problem is one line in the
output and the hook returns. The gates stay with `passhat report --gate` and its exit status. An eval in which no
trial passed or failed ends its block saying it measured nothing, and why: promptfoo ignores what afterAll returns
and prints "✓ Eval complete" after it with its own exit code, which a Python hook cannot set; `passhat report`
exits 1 on that eval.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from passhat.common._errors import PasshatError
from passhat.extension._terminal import show
from passhat.report._report import ReportFormat, measured_nothing, run_report, write_atomic

KS = (1, 3, 5, 10)  # `passhat report`'s default --k: the verdict's k is the largest
FORMS: dict[str, ReportFormat] = {".html": "html", ".md": "md", ".json": "json", ".csv": "csv", ".txt": "table"}
ERROR = 2  # promptfoo's failureReason of an error row
NOTHING_EXIT = ("passhat: promptfoo's exit code is not passhat's to set (this hook cannot); `passhat report` of this "
                "eval's -o file exits 1, gates or not.")  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """What afterAll writes besides the text it prints."""

    reports: tuple[Path, ...] = ()
    history: Path | None = None


def _paths(value: object, where: str) -> tuple[Path, ...]:
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else None
    if items is None or not all(isinstance(item, str) and item.strip() for item in items):
        msg = f"{where} is {json.dumps(value)}; expected report files, e.g. report.html,report.md"
        raise PasshatError(msg)
    paths = tuple(Path(item.strip()) for item in items)
    for path in paths:
        if path.suffix not in FORMS:
            msg = f"{where}: {path} has no report format; name it .html, .md, .json, .csv or .txt"
            raise PasshatError(msg)
    return paths


def settings(config: Mapping[str, Any], environ: Mapping[str, str], source: str = "promptfooconfig.yaml") -> Settings:
    """The report files and the history to write: the environment's, else the config's `metadata.passhat`
    (`source` names the config in an error)."""
    metadata = config.get("metadata") if isinstance(config.get("metadata"), dict) else {}
    ours = metadata.get("passhat") if isinstance(metadata, dict) else None
    ours = ours if isinstance(ours, dict) else {}
    unknown = sorted(set(ours) - {"report", "history"})
    if unknown:
        msg = f"{source}: metadata.passhat.{unknown[0]}: not a setting; the settings are report, history"
        raise PasshatError(msg)
    if environ.get("PASSHAT_REPORT"):
        reports = _paths(environ["PASSHAT_REPORT"], "PASSHAT_REPORT")
    elif "report" in ours:
        reports = _paths(ours["report"], f"{source}: metadata.passhat.report")
    else:
        reports = ()
    history = environ.get("PASSHAT_HISTORY") or ours.get("history")
    if history is not None and not isinstance(history, str):
        msg = f"{source}: metadata.passhat.history is {json.dumps(history)}; expected a file, e.g. .passhat/history.db"
        raise PasshatError(msg)
    return Settings(reports, Path(history) if history else None)


def unique_rows(rows: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per result cell (promptIdx, testIdx), as the `-o` file will hold them.

    During `promptfoo eval --retry-errors` the hook sees each retried trial twice, the old error row beside the
    new one: promptfoo deletes the old rows only after afterAll. A cell's error rows give way to a row that is not
    an error; of several error rows the last stays."""
    kept: dict[tuple[object, object], dict[str, Any]] = {}
    loose = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        cell = (row.get("promptIdx"), row.get("testIdx"))
        if cell[1] is None:
            loose.append(row)
        elif cell not in kept or row.get("failureReason") != ERROR or kept[cell].get("failureReason") == ERROR:
            kept[cell] = row
    return [*kept.values(), *loose]


def write_results(context: Mapping[str, Any], path: Path) -> int:
    """The eval's rows as a promptfoo `-o` results file at `path`; how many rows."""
    config = context.get("config")
    config = config if isinstance(config, dict) else {}
    rows = unique_rows(context.get("results") or [])
    data = {
        "evalId": context.get("evalId"),
        "results": {"version": 3, "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
                    "results": rows},
        "config": {"description": config.get("description"), "providers": config.get("providers")},
    }  # fmt: skip
    path.write_text(json.dumps(data), encoding="utf-8")
    return len(rows)


def _report(path: Path, form: ReportFormat, source: str, page: Path | None = None) -> str:
    out, err = io.StringIO(), io.StringIO()
    run_report(path, ks=KS, form=form, out=out, err=err, source=source, page=page)
    return out.getvalue()


def verdict_text(context: Mapping[str, Any], environ: Mapping[str, str], folder: Path) -> str:
    """What afterAll prints: the report of the eval's rows, then what it wrote. Raises PasshatError."""
    wanted = settings(context.get("config") or {}, environ)
    path = folder / "results.json"
    if not write_results(context, path):
        return "passhat: this eval has no rows; nothing to report."
    source = f"promptfoo eval {context.get('evalId') or '(no id)'}"
    parts = ["", _report(path, "table", source).rstrip("\n")]
    for target in wanted.reports:
        write_atomic(target, _report(path, FORMS[target.suffix], source, target))
    if wanted.reports:
        parts.append(f"passhat: wrote {', '.join(str(t) for t in wanted.reports)}.")
    if wanted.history is not None:
        from passhat.history import run_drift

        drift = io.StringIO()
        with contextlib.redirect_stdout(drift):
            run_drift(path, db=wanted.history)
        parts += ["", drift.getvalue().rstrip("\n")]
    if (nothing := measured_nothing(path)) is not None:  # last: what promptfoo prints next ("✓ Eval complete") is not
        parts += ["", f"passhat: {nothing.removesuffix(' (exit 1)')}.", NOTHING_EXIT]
    return "\n".join(parts)


def after_all(context: Mapping[str, Any], pid: int | None = None) -> str:
    """Promptfoo's afterAll: print the verdict where its user reads it; never raise. Returns what it printed."""
    try:
        with tempfile.TemporaryDirectory(prefix="passhat-after-all-") as folder:
            text = verdict_text(context, os.environ, Path(folder))
    except PasshatError as error:
        text = f"passhat: error: {error}"
    except Exception as error:  # any: promptfoo saves the eval only after this hook returns
        text = (
            f"passhat: the afterAll hook failed ({type(error).__name__}: {error}); the eval itself is saved: "
            "run `passhat report` on its -o file"
        )
    show(text, pid)
    return text
