"""`passhat report --format html`: the report as one self-contained page (inline CSS and SVG, no script).

`page(data)` lays out report_data's dict and nothing else: the summary in words, the gates, the suite per
provider, the per-task table (the figures of `--format table`), and plots drawn in `_plots`. Every figure
is marked `data-figure="TASK|PROVIDER|NAME" data-value="JSON"`, NAME being its key in the task's JSON
object (`pass_hat_k.3`); suite figures use TASK `(suite)`; a gate is `(gate)|GATE|passed`; report-wide ones `(report)||NAME`.
`history_data()` reads the mean score per eval from a `passhat drift` history for the drift plot.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from passhat._errors import PasshatError
from passhat.report import _formats as fmt
from passhat.report._plots import (
    cost_chart,
    esc,
    figure,
    history_panel,
    label,
    pass_hat_panel,
    pass_rate_chart,
)

CSS = """
:root { --ink: #1f2933; --muted: #5f6b7a; --line: #e3e7ec; --head: #f5f7f9; --accent: #1d4ed8;
        --warn: #b45309; --bad: #b91c1c; --good: #15803d; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 1.5em; margin: 0.4em 0 0.2em; }
h2 { font-size: 1.2em; margin: 1.8em 0 0.5em; padding-bottom: 3px; border-bottom: 1px solid var(--line); }
p.note, figcaption, .legend { color: var(--muted); }
ul.summary { padding-left: 1.2em; } ul.summary li { margin: 0.2em 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 13px; }
caption { text-align: left; color: var(--muted); padding: 0 0 6px; }
th, td { padding: 3px 7px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
thead th { background: var(--head); font-weight: 600; }
th.l, td.l, tbody th { text-align: left; font-weight: normal; }
tbody th, td.name { white-space: normal; max-width: 15em; overflow-wrap: anywhere; }
td.wrap { white-space: normal; min-width: 24em; }
tbody tr:hover { background: #f8fafc; }
td.flaky { color: var(--warn); font-weight: 600; }
.marked { font-weight: 700; color: var(--accent); }
.pass { color: var(--good); font-weight: 600; } .fail { color: var(--bad); font-weight: 600; }
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
svg .bar { fill: #6b8fd6; }
svg .series { fill: none; stroke-width: 1.8; } .series.hat { stroke: var(--accent); }
.series.at { stroke: #9aa3ad; stroke-dasharray: 4 3; }
.mark.hat { fill: var(--accent); } .mark.at { fill: #9aa3ad; }
.key { display: inline-block; width: 18px; height: 0; vertical-align: middle; margin: 0 4px 0 10px; }
.key.hat { border-top: 2px solid var(--accent); } .key.at { border-top: 2px dashed #9aa3ad; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin: 0 4px 0 10px; }
"""


def _td(task: dict[str, Any], name: str, value: object, text: str, css: str = "") -> str:
    attr = f' class="{css}"' if css else ""
    return f"<td{attr}{figure(task['task'], task['provider'], name, value)}>{esc(text)}</td>"


def _k(k: int, highlight: int | None) -> str:
    return f'<span class="marked">pass^{k}*</span>' if k == highlight else f"pass^{k}"


def task_table(data: dict[str, Any], highlight: int | None) -> str:
    """The per-task table: the columns and the text of `--format table`, every cell marked with its figure."""
    tasks, ks = data["tasks"], data["ks"]
    tiers = any(t["tier"] for t in tasks)
    more = [k for k in ks if k != 1]  # pass^1 == pass@1 == c/n: shown once
    head = ["task", "provider", *(["tier"] if tiers else []), "n", "pass", "err", "unsc", "pass@1", "95% CI"]
    head += [f"pass@{k}" for k in more]
    heads = [f'<th scope="col" class="{"l" if i < 2 + tiers else ""}">{esc(h)}</th>' for i, h in enumerate(head)]
    heads += [f'<th scope="col">{_k(k, highlight)}</th>' for k in more]
    tail = ["flaky", "clean", "mean s", "p90 s", "turns", "mean $", "$/success", "+runs"]
    heads += [f'<th scope="col" class="{"l" if h == "flaky" else ""}">{esc(h)}</th>' for h in tail]
    rows = []
    for t in tasks:
        cells = [f'<th scope="row">{esc(t["task"])}</th>', f'<td class="l name">{esc(t["provider"])}</td>']
        if tiers:
            cells.append(_td(t, "tier", t["tier"], t["tier"] or "-", "l"))
        cells += [_td(t, name, t[name], str(t[name])) for name in ("n", "passes", "errors", "unscored")]
        cells.append(_td(t, "pass_rate", t["pass_rate"], fmt.fraction(t["pass_rate"])))
        ci = t["wilson_95"]
        cells.append(_td(t, "wilson_95", ci, fmt.interval(tuple(ci) if ci else None)))
        cells += [_td(t, f"pass_at_k.{k}", t["pass_at_k"][str(k)], fmt.fraction(t["pass_at_k"][str(k)])) for k in more]
        cells += [_td(t, f"pass_hat_k.{k}", t["pass_hat_k"][str(k)], fmt.fraction(t["pass_hat_k"][str(k)]),
                      "marked" if k == highlight else "") for k in more]  # fmt: skip
        turns = t["mean_turns"]
        cells += [
            _td(t, "flaky", t["flaky"], "flaky" if t["flaky"] else "", "l flaky" if t["flaky"] else "l"),
            _td(t, "clean_exit_rate", t["clean_exit_rate"], fmt.fraction(t["clean_exit_rate"], "-")),
            _td(t, "mean_duration_ms", t["mean_duration_ms"], fmt.seconds(t["mean_duration_ms"])),
            _td(t, "p90_duration_ms", t["p90_duration_ms"], fmt.seconds(t["p90_duration_ms"])),
            _td(t, "mean_turns", turns, "-" if turns is None else f"{turns:.1f}"),
            _td(t, "mean_cost_usd", t["mean_cost_usd"], fmt.dollars(t["mean_cost_usd"])),
            _td(t, "cost_per_success_usd", t["cost_per_success_usd"], fmt.dollars(t["cost_per_success_usd"])),
            _td(t, "runs_needed", t["runs_needed"], "" if t["runs_needed"] is None else str(t["runs_needed"])),
        ]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    caption = (
        "n: trials without an infra error; pass: passes among them (c); err: infra errors, outside n; "
        "unsc: judge unreadable, outside n; n&lt;k: undefined."
    )
    return (
        f'<div class="scroll"><table id="tasks"><caption>{caption}</caption><thead><tr>{"".join(heads)}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _suite_td(provider: str, name: str, value: object, text: str) -> str:
    return f"<td{figure('(suite)', provider, name, value)}>{esc(text)}</td>"


def suite_table(data: dict[str, Any]) -> str:
    """Per provider: how many tasks, all-pass / flaky / never-pass counts, infra errors, mean pass^k, ICC(1)."""
    ks = data["ks"]
    head = ["provider", "tasks", "all pass", "flaky", "never pass", "infra errors",
            *(f"mean pass^{k} (95% CI)" for k in ks), "ICC(1)"]  # fmt: skip
    rows = []
    for p in data["suite"]["providers"]:
        name = p["provider"]
        cells = [f'<th scope="row">{esc(name)}</th>', _suite_td(name, "tasks", p["tasks"], str(p["tasks"]))]
        cells += [_suite_td(name, key, p[key], str(len(p[key]))) for key in ("all_pass", "flaky", "never_pass")]
        cells.append(_suite_td(name, "errors", p["errors"], str(p["errors"])))
        for k in ks:
            f = p["mean_pass_hat_k"][k] if k in p["mean_pass_hat_k"] else p["mean_pass_hat_k"][str(k)]
            shown = esc(fmt.fraction(f["mean"], "n<k"))
            ci = f["ci_95"]
            interval = f" ({esc(fmt.interval(tuple(ci)))})" if ci else ""
            cells.append(
                f"<td><span{figure('(suite)', name, f'mean_pass_hat_k.{k}.mean', f['mean'])}>{shown}</span>"
                f"<span{figure('(suite)', name, f'mean_pass_hat_k.{k}.ci_95', ci)}>{interval}</span></td>"
            )
        icc = p["icc1"]
        cells.append(_suite_td(name, "icc1", icc, "-" if icc is None else f"{icc:.2f}"))
        rows.append(f"<tr>{''.join(cells)}</tr>")
    heads = "".join(f'<th scope="col" class="{"l" if i == 0 else ""}">{esc(h)}</th>' for i, h in enumerate(head))
    return (
        f'<div class="scroll"><table id="suite"><thead><tr>{heads}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def gates_list(gates: Sequence[dict[str, Any]]) -> str:
    rows = []
    for g in gates:
        verdict = ('<td class="pass"' if g["passed"] else '<td class="fail"') + figure(
            "(gate)", g["gate"], "passed", g["passed"]
        )
        verdict += ">holds</td>" if g["passed"] else ">FAILS</td>"
        failures = "; ".join(g["failures"])
        rows.append(
            f'<tr><th scope="row"><code>{esc(g["gate"])}</code></th>{verdict}'
            f'<td class="l wrap"{figure("(gate)", g["gate"], "failures", g["failures"])}>{esc(failures)}</td></tr>'
        )
    return (
        '<table id="gates"><thead><tr><th scope="col" class="l">gate</th><th scope="col">result</th>'
        f'<th scope="col" class="l">failing</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


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
    return (
        f'<h2 id="drift">Drift over evals</h2><p class="note">Mean {esc(history["metric"])} (0..1) per eval '
        f"from <code>{esc(history['db'])}</code>, oldest first: {esc(span)}; <code>passhat drift</code> says "
        "which drops are drift. A new judge_version is a new series, never joined to the old one.</p>"
        f'<div class="panels" id="plot-history">{"".join(panels)}</div>'
    )


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
    boot = data["bootstrap"]
    sections = [
        '<h1>passhat report</h1><p class="note">pass@k = 1 − C(n−c, k)/C(n, k) (Chen et al. 2021); '
        "pass^k = C(c, k)/C(n, k) (τ-bench); undefined (n&lt;k) when n &lt; k, never capped. Mean pass^k intervals: "
        f'cluster bootstrap, <span data-figure="(report)||bootstrap.resamples" data-value="{boot["resamples"]}">'
        f'{boot["resamples"]}</span> resamples, seed <span data-figure="(report)||bootstrap.seed" '
        f'data-value="{boot["seed"]}">{boot["seed"]}</span>.</p>',
        f'<h2 id="summary">Summary</h2><ul class="summary">{summary}</ul>',
    ]
    if data["gates"]:
        sections.append(f'<h2 id="gate-results">Gates</h2>{gates_list(data["gates"])}')
    sections += [
        f'<h2 id="suites">Suite per provider</h2>{suite_table(data)}',
        f'<h2 id="per-task">Per task</h2>{task_table(data, highlight)}',
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


def check_history(db: str | Path) -> None:
    """Refuse a --db that is not there: a report reads the history, it never starts one."""
    if not Path(db).is_file():
        msg = (
            f"--db {db}: no such file; `passhat drift results.json --db {db}` appends an eval to the history, "
            "or drop --db"
        )
        raise PasshatError(msg)


def history_data(db: str | Path, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Mean score (0..1) per eval of each (task, provider, judge_version) series in a `passhat drift` history."""
    from passhat.history._store import AGGREGATE, eval_order, load_rows, open_history

    check_history(db)
    conn = open_history(db)
    try:
        order = eval_order(conn)
        times = dict(conn.execute("SELECT eval_id, eval_time FROM evals").fetchall())
        rows = load_rows(conn, AGGREGATE, pairs)
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
        "metric": AGGREGATE,
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
