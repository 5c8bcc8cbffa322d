"""The tables of the HTML report: the verdict, the gates, the suite per provider, the per-task figures (in two
tables that each fit a 1400 px window: the main one, then the rest), and the infra errors.

Every cell that shows a figure carries `data-figure="TASK|PROVIDER|NAME"` and `data-value` (its exact JSON, see
`_html`); a cell's text is that of `--format table --wide` (`_tables.columns`), so the two never disagree.
Every data cell also has `data-label` (its column's name): narrow windows lay each row out as labelled cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from passhat.report import _formats as fmt
from passhat.report._plots import esc, figure
from passhat.report._tables import columns, judge_rows, judge_title
from passhat.report._words import ESTIMATORS_NOTE, ORDER, SCRIPTED_MARK, estimate_text, suite_interval, verdict_parts

MORE = ("unsc", "clean", "mean s", "p90 s", "turns", "mean $", "+trials", "flaky")  # 2nd table; pass@k, k > 1 too
# (+trials there: the verdict table above says it in words; flaky there: 0 < pass < n, in the main table already)
SCRIPTED_TITLE = "scripted model (passhat fake-model): made-up tokens priced as if real, not money spent"


def _name(text: str) -> str:
    """A task or provider name that wraps only between its words: after - (the browser's own break), _ / . :"""
    escaped = esc(text)
    for mark in ("_", "/", ".", ":"):
        escaped = escaped.replace(mark, mark + "<wbr>")
    return escaped


def _figure_name(head: str) -> str | None:
    """The JSON key of a per-task column (None: the name columns)."""
    plain = head.rstrip("*")
    if plain.startswith(("pass@", "pass^")) and plain != "pass@1":
        return ("pass_at_k." if plain.startswith("pass@") else "pass_hat_k.") + plain[5:]
    return {"tier": "tier", "n": "n", "pass": "passes", "gamed": "gamed", "err": "errors", "unsc": "unscored", "pass@1": "pass_rate",
            "95% CI": "wilson_95", "flaky": "flaky", "clean": "clean_exit_rate", "mean s": "mean_duration_ms",
            "p90 s": "p90_duration_ms", "turns": "mean_turns", "mean $": "mean_cost_usd",
            "$/success": "cost_per_success_usd", "verdict": "verdict.verdict",
            "+trials": "verdict.runs_to_decide"}.get(plain)  # fmt: skip


def _value(task: dict[str, Any], name: str) -> object:
    if "." in name:
        field, k = name.split(".")
        return task[field][k]
    return task[name]


def _cell(task: dict[str, Any], head: str, text: str, highlight: int | None) -> str:
    name = _figure_name(head)
    if name is None:
        return f'<td class="l name" data-label="{esc(head)}">{_name(text)}</td>'
    css = ["l"] if head in ("tier", "flaky", "verdict") else []
    css += ["flaky"] if head == "flaky" and task["flaky"] else []
    css += ["marked"] if head.endswith("*") or (highlight is not None and head == f"pass^{highlight}") else []
    shown = esc(text)
    if text.endswith(SCRIPTED_MARK):
        shown = f'{esc(text[:-1])}<abbr class="scripted" title="{SCRIPTED_TITLE}">{SCRIPTED_MARK}</abbr>'
    attr = f' class="{" ".join(css)}"' if css else ""
    return f'<td{attr} data-label="{esc(head.rstrip("*"))}"{figure(task["task"], task["provider"], name, _value(task, name))}>{shown}</td>'


def task_tables(data: dict[str, Any], highlight: int | None) -> str:
    """The per-task figures: the main table (what decides: n, passes, pass@1 and its interval, pass^k, the
    verdict, cost per success) and a second one with the rest (+trials and flaky among them); each row opens with
    the task's name."""
    head, rows, _ = columns(data, highlight)
    tasks = data["tasks"]
    several = len(data["suite"]["providers"]) > 1
    names = [i for i, h in enumerate(head) if h in ("task", "provider")]
    more = [i for i, h in enumerate(head) if h in MORE or (h.startswith("pass@") and h != "pass@1")]
    main = [i for i in range(len(head)) if i not in more and i not in names]
    shown_names = names if several else names[:1]

    def table(ident: str, picked: list[int], caption: str) -> str:
        heads = [f'<th scope="col" class="l">{esc(head[i])}</th>' for i in shown_names]
        heads += [f'<th scope="col" class="{"l" if head[i] in ("tier", "flaky") else ""}">'
                  f'{_marked(head[i])}</th>' for i in picked]  # fmt: skip
        body = []
        for task, row in zip(tasks, rows, strict=True):
            cells = [f'<th scope="row" class="name" data-label="task">{_name(row[names[0]])}</th>']
            cells += [_cell(task, head[i], row[i], highlight) for i in shown_names[1:]]
            cells += [_cell(task, head[i], row[i], highlight) for i in picked]
            body.append(f"<tr>{''.join(cells)}</tr>")
        return (
            f'<div class="scroll"><table id="{ident}" class="data"><caption>{caption}</caption>'
            f"<thead><tr>{''.join(heads)}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        )

    provider = "" if several else f" Provider: {esc(tasks[0]['provider'])}." if tasks else ""
    scripted = any(t["scripted_model"] and t["cost_known"] for t in tasks)
    legend = f' <abbr class="scripted">{SCRIPTED_MARK}</abbr> {SCRIPTED_TITLE}.' if scripted else ""
    first = (
        "n: trials without an infra error; pass: passes among them (c); gamed: trials caught gaming the tests, "
        f"passed or not (-: not looked for); err: infra errors, outside n; n&lt;k: undefined. {esc(ESTIMATORS_NOTE)}"
        f"{provider}{legend}"
    )
    second = f"More per task: unsc (judge unreadable, outside n), pass@k, health, time, cost.{legend}"
    return table("tasks", main, first) + table("tasks-more", more, second)


def _marked(text: str) -> str:
    return f'<span class="marked">{esc(text)}</span>' if text.endswith("*") else esc(text)


def verdict_table(data: dict[str, Any]) -> str:
    """Per task, the verdict and its evidence, the worst first."""
    several = len(data["suite"]["providers"]) > 1
    rows = []
    for task in sorted(data["tasks"], key=lambda t: ORDER.index(t["verdict"]["verdict"])):
        name, verdict, evidence = verdict_parts(task, several)
        v, key = task["verdict"], (task["task"], task["provider"])
        css = {"safe": "pass", "not safe": "fail"}.get(verdict, "warn")
        shown = esc(evidence)
        head = estimate_text(v)  # "pass^10 undefined (n=1 < k=10)" when n < k: its figure null
        if (at := evidence.find(head)) >= 0:  # the estimate as a figure of its own, inside its interval
            span = f"<span{figure(*key, 'verdict.estimate', v['estimate'])}>{esc(head)}</span>"
            shown = f"{esc(evidence[:at])}{span}{esc(evidence[at + len(head) :])}"
        rows.append(
            f'<tr><th scope="row" class="name" data-label="task">{_name(name)}</th>'
            f'<td class="l {css}" data-label="verdict"{figure(*key, "verdict.verdict", v["verdict"])}>{esc(verdict)}</td>'
            f'<td class="l wrap" data-label="evidence"{figure(*key, "verdict.ci_95", v["ci_95"])}>{shown}</td></tr>'
        )
    return (
        '<div class="scroll"><table id="verdict" class="data"><thead><tr><th scope="col" class="l">task</th>'
        '<th scope="col" class="l">verdict</th><th scope="col" class="l">evidence: the estimate (c/n)^k of pass^k, its '
        "95% interval; the chance the next k runs all pass; what would decide it</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def judge_table(data: dict[str, Any]) -> str:
    """The LLM judge's table (the cells of `--format table --wide`'s): per task, provider, judge and judge_version,
    the trials scored and unscored, the mean score, the passes, and each criterion's mean (pairwise: the winners).
    Figures carry `data-figure="TASK|PROVIDER|judge.JUDGE.JUDGE_VERSION.NAME"`; "" when no row was judged."""
    judge = data.get("judge") or []
    if not judge:
        return ""
    head, rows, details = judge_rows(judge)
    figures = {5: "scored", 6: "unscored", 7: "mean_score", 8: "passes"}
    body = []
    for d, row, detail in zip(judge, rows, details, strict=True):
        cells = [f'<th scope="row" class="name" data-label="task">{_name(row[0])}</th>']
        cells += [f'<td class="l name" data-label="{esc(head[i])}">{_name(row[i])}</td>' for i in range(1, 5)]
        for i, name in figures.items():
            at = figure(d["task"], d["provider"], f"judge.{d['judge']}.{d['judge_version']}.{name}", d[name])
            cells.append(f'<td data-label="{esc(head[i])}"{at}>{esc(row[i])}</td>')
        cells.append(f'<td class="l wrap" data-label="detail">{esc(detail)}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    heads = "".join(f'<th scope="col" class="{"l" if i < 5 else ""}">{esc(h)}</th>' for i, h in enumerate(head))
    return (
        f'<h2 id="judge">LLM judge</h2><p class="note">{esc(judge_title(judge))}.</p><div class="scroll"><table id="judge-table" '
        f'class="data"><thead><tr>{heads}<th scope="col" class="l">detail</th></tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def infra_table(data: dict[str, Any]) -> str:
    """The commonest infra-error reasons of every task that had any: count and first line."""
    rows = []
    several = len(data["suite"]["providers"]) > 1
    for t in data["tasks"]:
        key = (t["task"], t["provider"])
        for i, r in enumerate(t["infra_error_reasons"]):
            name = f"{t['task']} [{t['provider']}]" if several else t["task"]
            rows.append(
                f'<tr><th scope="row" class="name" data-label="task">{_name(name)}</th>'
                f'<td data-label="trials"{figure(*key, f"infra_error_reasons.{i}.count", r["count"])}>{r["count"]}</td>'
                f'<td class="l wrap" data-label="first line"{figure(*key, f"infra_error_reasons.{i}.reason", r["reason"])}>'
                f"<code>{esc(r['reason'])}</code></td></tr>"
            )
    if not rows:
        return ""
    return (
        '<h2 id="infra-errors">Infra errors</h2><p class="note">Trials the infrastructure lost (outside n), by the first '
        "line of their error, commonest first.</p>"
        '<div class="scroll"><table id="infra" class="data"><thead><tr><th scope="col" class="l">task</th>'
        '<th scope="col">trials</th><th scope="col" class="l">first line of the error</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _suite_td(provider: str, label: str, name: str, value: object, text: str) -> str:
    return f'<td data-label="{esc(label)}"{figure("(suite)", provider, name, value)}>{esc(text)}</td>'


def suite_table(data: dict[str, Any]) -> str:
    """Per provider: how many tasks, all-pass / flaky / never-pass counts, infra errors, mean pass^k, ICC(1)."""
    ks = data["ks"]
    head = ["provider", "tasks", "all pass", "flaky", "never pass", "infra errors", "gaming attempts",
            *(f"mean pass^{k} (95% CI)" for k in ks), "ICC(1)"]  # fmt: skip
    rows = []
    for p in data["suite"]["providers"]:
        name = p["provider"]
        cells = [f'<th scope="row" class="name" data-label="provider">{_name(name)}</th>',
                 _suite_td(name, "tasks", "tasks", p["tasks"], str(p["tasks"]))]  # fmt: skip
        cells += [_suite_td(name, label, key, p[key], str(len(p[key])))
                  for label, key in (("all pass", "all_pass"), ("flaky", "flaky"), ("never pass", "never_pass"))]  # fmt: skip
        cells.append(_suite_td(name, "infra errors", "errors", p["errors"], str(p["errors"])))
        gaming = f"{p['gamed']} in {p['scanned']}" if p["scanned"] else "-"
        cells.append(_suite_td(name, "gaming attempts", "gamed", p["gamed"], gaming))
        for k in ks:
            f = p["mean_pass_hat_k"][str(k)]
            ci = f["ci_95"]
            note = f["ci_note"]
            interval = f" ({esc(suite_interval(ci, None, f['tasks']) if ci else note)})" if ci or note else ""
            how = "exact bootstrap" if f["ci_method"] == "exact" else f"{f['resamples']} resamples"
            cells.append(
                f'<td data-label="mean pass^{k}" title="{esc(how)}">'
                f"<span{figure('(suite)', name, f'mean_pass_hat_k.{k}.mean', f['mean'])}>"
                f"{esc(fmt.fraction(f['mean'], 'n<k'))}</span>"
                f'<span class="ci{"" if ci else " note"}"{figure("(suite)", name, f"mean_pass_hat_k.{k}.ci_95", ci)}>'
                f"{interval}</span></td>"
            )
        icc = p["icc1"]
        cells.append(_suite_td(name, "ICC(1)", "icc1", icc, "-" if icc is None else f"{icc:.2f}"))
        rows.append(f"<tr>{''.join(cells)}</tr>")
    heads = "".join(f'<th scope="col" class="{"l" if i == 0 else ""}">{esc(h)}</th>' for i, h in enumerate(head))
    return (
        f'<div class="scroll"><table id="suite" class="data"><thead><tr>{heads}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def gates_list(gates: Sequence[dict[str, Any]]) -> str:
    rows = []
    for g in gates:
        verdict = (
            ('<td class="pass"' if g["passed"] else '<td class="fail"')
            + ' data-label="result"'
            + figure("(gate)", g["gate"], "passed", g["passed"])
        )
        verdict += ">holds</td>" if g["passed"] else ">FAILS</td>"
        failures = "; ".join(g["failures"])
        rows.append(
            f'<tr><th scope="row" data-label="gate"><code>{esc(g["gate"])}</code></th>{verdict}'
            f'<td class="l wrap" data-label="failing"{figure("(gate)", g["gate"], "failures", g["failures"])}>'
            f"{esc(failures)}</td></tr>"
        )
    return (
        '<table id="gates" class="data"><thead><tr><th scope="col" class="l">gate</th><th scope="col">result</th>'
        f'<th scope="col" class="l">failing</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def trials_table(trials: Sequence[dict[str, Any]] | None, cap: int) -> str:
    """Each trial a row: task, provider, repeat, outcome, and its transcript, diff and tests output a click away
    (`_html.trial_links`); "" when the report has no trials (another format's data)."""
    if not trials:
        return ""
    rows = []
    for t in trials:
        opened = " · ".join(
            f'<a href="{esc(href)}" target="_blank">{esc(name)}</a>' for name, href in t["links"].items()
        )
        css = "" if t["outcome"] == "passed" else ' class="flaky"'
        rows.append(
            f'<tr><td class="l name" data-label="task">{_name(t["task"])}</td>'
            f'<td class="l name" data-label="provider">{_name(t["provider"])}</td>'
            f'<td data-label="repeat">{"" if t["repeat"] is None else t["repeat"]}</td>'
            f'<td class="l" data-label="outcome"{css}>{esc(t["outcome"])}</td>'
            f'<td class="l" data-label="open">{opened or "no files on disk"}</td></tr>'
        )
    cut = sorted({(t["task"], t["provider"], t["total"]) for t in trials if t["total"] > cap})
    note = (f"<p class=\"note\">More than {cap} trials of {', '.join(esc(f'{a} [{b}]') for a, b, _ in cut)}: "
            f"{cap} shown, those that did not pass first; the results file has them all.</p>") if cut else ""  # fmt: skip
    return (
        '<h2 id="trials">Trials</h2><p class="note">Each trial\'s transcript, diff and the tests grader\'s whole '
        "output, as files beside this page's eval (<code>state_dir/artifacts/</code>): a click opens one.</p>"
        '<table class="trials"><thead><tr><th scope="col" class="l">task</th><th scope="col" class="l">provider</th>'
        '<th scope="col">repeat</th><th scope="col" class="l">outcome</th><th scope="col" class="l">open</th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>{note}"
    )
