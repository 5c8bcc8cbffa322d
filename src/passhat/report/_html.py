"""`passhat report --format html`: the report as one self-contained page (inline CSS and SVG, no script).

`page(data)` lays out report_data's dict and nothing else: where the figures come from, the verdict per task,
the summary in words, the gates, the suite per provider, the per-task tables (the figures of `--format table
--wide`, `_html_tables`), the infra errors, the LLM judge's table, and plots drawn in `_plots`. Every figure is marked
`data-figure="TASK|PROVIDER|NAME" data-value="JSON"`, NAME being its key in the task's JSON object
(`pass_hat_k.3`); suite figures use TASK `(suite)`; a gate is `(gate)|GATE|passed`; report-wide ones
`(report)||NAME`. `history_data()` reads the mean score per eval from a `passhat drift` history for the drift plot.

Layout: no table needs a horizontal scroll at 1400 px; below 1000 px each table row is laid out as labelled
cells (tests/report/test_e2e_report_html.py checks both in Chromium). Names wrap only between their words.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Any
from urllib.parse import quote

from passhat.common._errors import PasshatError
from passhat.report._html_tables import (
    gates_list,
    infra_table,
    judge_table,
    suite_table,
    task_tables,
    trials_table,
    verdict_table,
)
from passhat.report._plots import (
    cost_chart,
    esc,
    figure,
    history_panel,
    label,
    pass_hat_panel,
    pass_rate_chart,
)
from passhat.report._tables import repeats_words
from passhat.report._words import INTERVAL_WORDS
from passhat.report.cheats import cheat_html

CSS = """
:root { --ink: #1f2933; --muted: #5f6b7a; --line: #e3e7ec; --head: #f5f7f9; --accent: #1d4ed8;
        --warn: #b45309; --bad: #b91c1c; --good: #15803d; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 1.5em; margin: 0.4em 0 0.2em; }
h2 { font-size: 1.2em; margin: 1.8em 0 0.5em; padding-bottom: 3px; border-bottom: 1px solid var(--line); }
p.note, figcaption, .legend { color: var(--muted); }
ul.summary { padding-left: 1.2em; } ul.summary li { margin: 0.2em 0; overflow-wrap: break-word; }
dl.provenance { display: grid; grid-template-columns: max-content 1fr; gap: 1px 12px; margin: 0.4em 0;
                color: var(--muted); } dl.provenance dd { margin: 0; color: var(--ink); overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 13px; margin-bottom: 10px; }
caption { text-align: left; color: var(--muted); padding: 0 0 6px; caption-side: top; }
th, td { padding: 3px 6px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
thead th { background: var(--head); font-weight: 600; white-space: normal; vertical-align: bottom; }
th.l, td.l, tbody th { text-align: left; font-weight: normal; }
th.name, td.name { white-space: normal; overflow-wrap: normal; word-break: normal; hyphens: none; min-width: 6em; }
td.wrap { white-space: normal; min-width: 16em; } td.wrap code { overflow-wrap: anywhere; }
td .ci { display: block; color: var(--muted); font-size: 12px; }
td .ci.note { white-space: normal; min-width: 9em; }  /* "not enough tasks ...": words, wrapped in their column */
tbody tr:hover { background: #f8fafc; }
td.flaky { color: var(--warn); font-weight: 600; }
.marked { font-weight: 700; color: var(--accent); }
abbr.scripted { color: var(--warn); text-decoration: none; cursor: help; }
.pass { color: var(--good); font-weight: 600; } .fail { color: var(--bad); font-weight: 600; }
.warn { color: var(--warn); font-weight: 600; }
@media (max-width: 1000px) {
  table.data thead { display: none; }
  table.data, table.data tbody, table.data tr, table.data caption { display: block; }
  table.data tr { border-bottom: 1px solid var(--line); padding: 4px 0; }
  table.data th[scope="row"] { display: block; border: 0; padding: 2px 0; font-weight: 600; }
  table.data td { display: inline-block; border: 0; padding: 1px 14px 1px 0; text-align: left; }
  table.data td::before { content: attr(data-label) ": "; color: var(--muted); }
  table.data td.wrap { display: block; min-width: 0; }
}
.panels { display: flex; flex-wrap: wrap; gap: 10px; }
figure.panel { margin: 0; padding: 4px 6px 0; border: 1px solid var(--line); border-radius: 4px; }
figure.panel figcaption { font-size: 12px; max-width: 210px; overflow: hidden; text-overflow: ellipsis;
                          white-space: nowrap; }
figure.panel figcaption b { color: var(--ink); font-weight: 600; }
svg text { font: 11px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: var(--muted); }
svg text.label { font-size: 12px; fill: var(--ink); }
svg text.value { fill: var(--ink); } svg text.none, svg text.undefined { font-style: italic; }
svg text.strong { font-weight: 700; fill: var(--accent); }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg .ci line { stroke: #4b5563; stroke-width: 1.5; }
svg .dot { stroke: #fff; stroke-width: 1; } .dot.all { fill: var(--good); } .dot.flaky { fill: var(--warn); }
.dot.none { fill: var(--bad); }
svg .bar { fill: #6b8fd6; } svg .bar.scripted { fill: #d6b56b; }
svg .series { fill: none; stroke-width: 1.8; } .series.hat { stroke: var(--accent); }
.series.at { stroke: #9aa3ad; stroke-dasharray: 4 3; }
.mark.hat { fill: var(--accent); } .mark.at { fill: #9aa3ad; }
.key { display: inline-block; width: 18px; height: 0; vertical-align: middle; margin: 0 4px 0 10px; }
.key.hat { border-top: 2px solid var(--accent); } .key.at { border-top: 2px dashed #9aa3ad; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin: 0 4px 0 10px; }
"""


def _panels(tasks: Sequence[dict[str, Any]], several: bool, ks: Sequence[int], highlight: int | None) -> str:
    panels = []
    for i, t in enumerate(tasks):
        name = label(t, several)
        counts = (
            f"<span{figure(t['task'], t['provider'], 'passes', t['passes'])}>{t['passes']}</span>/"
            f"<span{figure(t['task'], t['provider'], 'n', t['n'])}>{t['n']}</span>"
        )
        panels.append(
            f'<figure class="panel"><figcaption title="{esc(name)}"><b>{esc(name)}</b> {counts}</figcaption>'
            f"{pass_hat_panel(t, ks, name, f'plot-pass-hat-{i}', highlight)}</figure>"
        )
    return f'<div class="panels" id="plot-pass-hat">{"".join(panels)}</div>'


def _history_section(history: dict[str, Any]) -> str:
    evals = [e["eval_id"] for e in history["evals"]]
    pairs = {(s["task"], s["provider"]) for s in history["series"]}
    several = len({provider for _, provider in pairs}) > 1
    judges: dict[tuple[str, str], int] = {}
    for s in history["series"]:
        judges[(s["task"], s["provider"])] = judges.get((s["task"], s["provider"]), 0) + 1
    panels = []
    for i, s in enumerate(history["series"]):
        name = label(s, several)
        if judges[(s["task"], s["provider"])] > 1:
            name += f" (judge {s['judge_version']})"
        panels.append(
            f'<figure class="panel"><figcaption title="{esc(name)}"><b>{esc(name)}</b></figcaption>'
            f"{history_panel(s, evals, name, f'plot-history-{i}')}</figure>"
        )
    if not panels:
        return (
            '<h2>Drift over evals</h2><p class="note">The history has no score for these tasks: append evals '
            "with <code>passhat drift results.json</code>.</p>"
        )
    first, last = history["evals"][0], history["evals"][-1]
    span = f"{first['eval_id']} ({first['eval_time']})" + (
        f" to {last['eval_id']} ({last['eval_time']})" if last is not first else ""
    )
    what = "Pass rate" if history["metric"] == "pass" else f"Mean {esc(history['metric'])}"
    return (
        f'<h2 id="drift">Drift over evals</h2><p class="note">{what} (0..1) per eval '
        f"from <code>{esc(history['db'])}</code>, oldest first: {esc(span)}; <code>passhat drift</code> says "
        "which drops are drift. A new judge_version is a new series, never joined to the old one.</p>"
        f'<div class="panels" id="plot-history">{"".join(panels)}</div>'
    )


PROVENANCE = (("source", "source file"), ("eval_id", "eval"), ("date", "run"), ("promptfoo_version", "promptfoo"),
              ("repeat", "--repeat"), ("models", "models"), ("models_answered", "models that answered"),
              ("claude_code_versions", "Claude Code"), ("agent_sdk_versions", "Agent SDK"),
              ("scripted_model", "scripted model"), ("description", "suite"))  # fmt: skip


def _provenance(p: dict[str, Any]) -> str:
    """Where the figures come from: each known field of the provenance, in a definition list."""
    items = []
    for field, title in PROVENANCE:
        key, name, value = field, title, p.get(field)
        if key == "repeat" and value is None and p.get("repeats_seen"):
            key, name, value = "repeats_seen", "repeats seen", p["repeats_seen"]
        if value in (None, [], "", False):
            continue
        text = (
            repeats_words(p) or str(value)
            if key == "repeats_seen"
            else ", ".join(value)
            if isinstance(value, list)
            else "yes: not real Claude, not real money"
            if value is True
            else str(value)
        )
        items.append(
            f'<dt>{esc(name)}</dt><dd data-figure="(report)||provenance.{key}" data-value="{esc(json.dumps(value))}">'
            f"{esc(text)}</dd>"
        )
    return f'<dl class="provenance" id="provenance">{"".join(items)}</dl>'


def page(data: dict[str, Any], highlight: int | None = None) -> str:
    """The whole HTML document for report_data's dict."""
    tasks, ks = data["tasks"], data["ks"]
    several = len(data["suite"]["providers"]) > 1
    summary = "".join(f'<li data-figure="(report)||summary">{esc(line)}</li>' for line in data["summary"])
    if highlight is not None:
        summary += (
            f'<li><span class="marked">pass^<span data-figure="(report)||unattended_runs" '
            f'data-value="{highlight}">{highlight}</span>*</span> (marked): the chance that all '
            f"{highlight} unattended runs between two looks pass.</li>"
        )
    boot, v = data["bootstrap"], data["verdict"]
    resamples = (
        f'<span data-figure="(report)||bootstrap.resamples" data-value="{esc(json.dumps(boot["resamples"]))}">'
        + ("as many as it takes (exact when the suite is small)" if boot["resamples"] is None else
           f'{boot["resamples"]} resamples') + "</span>"
    )  # fmt: skip
    sections = [
        f"<h1>passhat report</h1>{_provenance(data['provenance'])}",
        f'<h2 id="verdict-head">Safe for <span data-figure="(report)||verdict.k" data-value="{v["k"]}">{v["k"]}</span>'
        ' unattended runs?</h2><p class="note">Safe when the whole 95% interval of pass^k ('
        f"{esc(INTERVAL_WORDS[v['interval']])}, each end to the k-th power) is at or above "
        f'<span data-figure="(report)||verdict.threshold" data-value="{v["threshold"]}">{v["threshold"]:g}</span>; '
        "not safe when it is all below; else not enough trials to say (<code>--safe-at</code> sets the threshold, "
        f"<code>--unattended-runs</code> k).</p>"
        f'<p class="note" id="reach"{figure("(report)", "", "verdict.reach", v["reach"])}>{esc(v["reach_line"])}</p>'
        f"{verdict_table(data)}",
        f'<h2 id="summary">Summary</h2><ul class="summary">{summary}</ul>',
    ]
    if data["gates"]:
        sections.append(f'<h2 id="gate-results">Gates</h2>{gates_list(data["gates"])}')
    sections += [
        f'<h2 id="suites">Suite per provider</h2>{suite_table(data)}<p class="note">pass@k = 1 − C(n−c, k)/C(n, k) '
        "(Chen et al. 2021); pass^k = (c/n)^k, the verdict's estimate (τ-bench's chance that k runs all pass); "
        "undefined (n&lt;k) when n &lt; k, never capped; the suite's mean pass^k is their mean. "
        f'Mean pass^k intervals: cluster bootstrap, {resamples}, seed <span data-figure="(report)||bootstrap.seed" '
        f'data-value="{boot["seed"]}">{boot["seed"]}</span>.</p>',
        f'<h2 id="per-task">Per task</h2>{task_tables(data, highlight)}',
        trials_table(data.get("trials"), TRIALS_SHOWN),
        cheat_html(data.get("cheats")),
        infra_table(data),
        judge_table(data),
        '<h2 id="pass-rate">Pass rate and its 95% interval</h2><p class="legend">'
        '<span class="swatch" style="background:var(--good)"></span>every trial passed'
        '<span class="swatch" style="background:var(--warn)"></span>flaky'
        '<span class="swatch" style="background:var(--bad)"></span>never passed; whisker: Wilson 95% interval</p>'
        f"{pass_rate_chart(tasks, several)}",
        '<h2 id="pass-hat">pass^k against k</h2><p class="legend"><span class="key hat"></span>pass^k (all k trials '
        'pass)<span class="key at"></span>pass@k (at least one passes); <i>n&lt;k</i>: undefined, not drawn.</p>'
        f"{_panels(tasks, several, ks, highlight)}",
        f'<h2 id="cost">Cost per success</h2>{cost_chart(tasks, several)}',
    ]
    if data.get("history") is not None:
        sections.append(_history_section(data["history"]))
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>passhat report: pass@k and pass^k per task</title><style>{CSS}</style></head>\n"
        f"<body>{''.join(sections)}</body></html>"
    )


TRIALS_SHOWN = 50  # per task and provider: the page stays light on a big eval (failures first past it)


def _href(path: str, page: Path | None) -> str:
    """A link to a trial's file: relative to the page's folder (the page and the artifacts move together, or are
    served together), else an absolute file:// URL. A page opened from disk opens either in one click."""
    if page is None:
        return Path(path).as_uri()
    return quote(Path(os.path.relpath(path, page.resolve().parent)).as_posix())


def trial_links(results: str | Path, page: Path | None) -> list[dict[str, Any]]:
    """Each trial of the results file as the page's Trials table shows it: task, provider, repeat, outcome and
    links to its transcript, diff and the tests grader's whole output (those on disk), TRIALS_SHOWN per task."""
    from passhat.results import iter_trials

    groups: dict[tuple[str, str], list[Any]] = {}
    for trial in iter_trials(results):
        groups.setdefault((trial.task, trial.provider), []).append(trial)
    shown = []
    for (task, provider), trials in sorted(groups.items()):
        kept = sorted(trials, key=lambda t: t.passed)[:TRIALS_SHOWN] if len(trials) > TRIALS_SHOWN else trials
        for t in sorted(kept, key=lambda t: (t.repeat_index is None, t.repeat_index or 0)):
            outcome = (
                "infra error" if t.infra_error else "unscored" if t.unscored else "passed" if t.passed else "failed"
            )
            files = [(name, p) for name, p in (("transcript", t.transcript_path), ("diff", t.patch_path))
                     if isinstance(p, str) and os.path.isabs(p) and os.path.isfile(p)]  # fmt: skip
            if files and files[0][0] == "transcript":
                files += [(f"{out.name.removesuffix('-output.txt')} output", str(out))
                          for out in sorted(Path(files[0][1]).parent.glob("*-output.txt"))]  # fmt: skip
            shown.append({"task": task, "provider": provider, "repeat": t.repeat_index, "total": len(trials),
                          "outcome": outcome + (", caught gaming" if t.gamed else ""),
                          "links": {name: _href(p, page) for name, p in files}})  # fmt: skip
    return shown


def check_history(db: str | Path) -> None:
    """Refuse a --db that is not there: a report reads the history, it never starts one."""
    if not Path(db).is_file():
        msg = (
            f"--db {db}: no such file; `passhat drift results.json --db {db}` appends an eval to the history, "
            "or drop --db"
        )
        raise PasshatError(msg)


def history_data(db: str | Path, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Pass rate per eval of each (task, provider, judge_version) series in a `passhat drift` history (its metric
    "pass", the mean of each trial's 1 / 0: what the verdict is about, and drift's default)."""
    from passhat.history._store import PASS, eval_order, load_rows, open_history

    check_history(db)
    conn = open_history(db)
    try:
        order = eval_order(conn)
        times = dict(conn.execute("SELECT eval_id, eval_time FROM evals").fetchall())
        rows = load_rows(conn, PASS, pairs)
    except sqlite3.Error as error:
        raise PasshatError(f"--db {db}: reading the history failed ({error}); pass another --db") from None
    finally:
        conn.close()
    series: dict[tuple[str, str, str], dict[str, list[float | None]]] = {}
    for row in rows:
        series.setdefault((row.task, row.provider, row.judge_version), {}).setdefault(row.eval_id, []).append(row.score)
    seen = {eval_id for batches in series.values() for eval_id in batches}
    return {
        "db": str(db),
        "metric": PASS,
        "evals": [{"eval_id": e, "eval_time": times[e]} for e in order if e in seen],
        "series": [
            {"task": task, "provider": provider, "judge_version": judge, "batches": [
                {"eval_id": e, "eval_time": times[e], "n": len(known), "unscored": len(scores) - len(known),
                 "mean": fmean(known) if known else None}
                for e, scores in batches.items() for known in [[s for s in scores if s is not None]]
            ]}
            for (task, provider, judge), batches in sorted(series.items())
        ],
    }  # fmt: skip
