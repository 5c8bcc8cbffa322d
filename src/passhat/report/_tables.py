"""The report as text (`--format table`: 120 columns, or every column with `--wide`), Markdown (`--format md`, for
$GITHUB_STEP_SUMMARY: every section real Markdown) and CSV. Only layout: the figures come in `report_data`'s dict.

Text, from the top: where the figures come from, the verdict per task, the per-task table, the summary in
words, the LLM judge's table. The compact table keeps n, passes, errors, pass@1 and its interval, pass^k, flaky,
$/success and +trials; past WIDTH the pass^k columns beside the verdict's go first, then names are cut in the middle
(…), then more columns are left out, until it fits (the note under the table says which).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import Any

from passhat.report import _formats as fmt
from passhat.report._words import (
    ESTIMATORS_NOTE,
    SCRIPTED_MARK,
    UNSURE,
    verdict_counts,
    verdict_lines,
    verdict_table,
)
from passhat.report.cheats import cheat_csv, cheat_markdown, cheat_text

WIDTH = 120
MIN_NAME = 16  # a task or provider name is never cut shorter than this
COMPACT = ("task", "provider", "n", "pass", "gamed", "err", "unsc", "pass@1", "95% CI", "verdict", "+trials", "flaky",
           "$/success")  # fmt: skip
DROP_ORDER = ("flaky", "95% CI", "err", "+trials")
SHORT = {
    UNSURE: "undecided"
}  # the verdict column's word for "not enough trials to say" (the viewer's too)  # after the pass^k columns but the verdict's, if still too wide


def _dollars(value: float | None, scripted: bool) -> str:
    return fmt.dollars(value) + (SCRIPTED_MARK if scripted and value is not None else "")


def columns(data: dict[str, Any], highlight: int | None) -> tuple[list[str], list[list[str]], set[int]]:
    """Head, rows and left-aligned column indexes of the full per-task table (`--wide`, Markdown)."""
    tasks, ks = data["tasks"], data["ks"]
    tiers = any(t["tier"] for t in tasks)
    hat_ks = [k for k in ks if k != 1]  # pass^1 == pass@1 == c/n: shown once
    head = ["task", "provider", *(["tier"] if tiers else []), "n", "pass", "gamed", "err", "unsc", "pass@1", "95% CI"]
    head += [f"pass@{k}" for k in hat_ks] + [f"pass^{k}" + ("*" if k == highlight else "") for k in hat_ks]
    head += ["verdict", "+trials", "flaky", "clean", "mean s", "p90 s", "turns", "mean $", "$/success"]
    rows = [
        [
            t["task"], t["provider"], *([t["tier"] or "-"] if tiers else []), str(t["n"]), str(t["passes"]),
            str(t["gamed"]) if t["scanned"] else "-", str(t["errors"]), str(t["unscored"]), fmt.fraction(t["pass_rate"]),
            fmt.interval(None if t["wilson_95"] is None else (t["wilson_95"][0], t["wilson_95"][1])),
            *(fmt.fraction(t["pass_at_k"][str(k)]) for k in hat_ks),
            *(fmt.fraction(t["pass_hat_k"][str(k)]) for k in hat_ks),
            SHORT.get(t["verdict"]["verdict"], t["verdict"]["verdict"]), "" if t["verdict"]["runs_to_decide"] is None else str(t["verdict"]["runs_to_decide"]),
            "flaky" if t["flaky"] else "", fmt.fraction(t["clean_exit_rate"], "-"),
            fmt.seconds(t["mean_duration_ms"]), fmt.seconds(t["p90_duration_ms"]),
            "-" if t["mean_turns"] is None else f"{t['mean_turns']:.1f}",
            _dollars(t["mean_cost_usd"], t["scripted_model"]), _dollars(t["cost_per_success_usd"], t["scripted_model"]),
        ]
        for t in tasks
    ]  # fmt: skip
    left = {0, 1, 2 if tiers else 1, head.index("flaky"), head.index("verdict")}
    return head, rows, left


def _width(head: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    return sum(widths) + 2 * (len(widths) - 1)


def cut(text: str, size: int) -> str:
    """At most `size` characters, the middle left out (names of a suite often differ only at the end)."""
    if len(text) <= size:
        return text
    head = size // 2
    return text[:head] + "…" + text[len(text) - (size - 1 - head) :]


def compact(data: dict[str, Any], highlight: int | None) -> tuple[list[str], list[list[str]], set[int], list[str]]:
    """The table cut to WIDTH columns: head, rows, left-aligned indexes, and what was left out (for a note)."""
    head, rows, _ = columns(data, highlight)
    several = len(data["suite"]["providers"]) > 1
    unscored = any(t["unscored"] for t in data["tasks"])
    scanned = any(t["scanned"] for t in data["tasks"])  # an eval whose graders looked for gaming
    verdict_k = data["verdict"]["k"]
    keep = [
        i for i, name in enumerate(head)
        if (name in COMPACT and (name != "provider" or several) and (name != "unsc" or unscored)
            and (name != "gamed" or scanned))
        or name.startswith("pass^")
    ]  # fmt: skip
    left_out: list[str] = []

    def table() -> tuple[list[str], list[list[str]]]:
        return [head[i] for i in keep], [[row[i] for i in keep] for row in rows]

    # A task's name is how a reader finds its row: the pass^k columns beside the verdict's go before names are cut.
    hats = [i for i in keep if head[i].startswith("pass^") and head[i].rstrip("*") != f"pass^{verdict_k}"]
    hats = hats[len(hats) // 2 :] + hats[: len(hats) // 2]
    while _width(*table()) > WIDTH and hats:
        gone = hats.pop(0)
        keep.remove(gone)
        left_out.append(head[gone])
    names = [i for i in keep if head[i] in ("task", "provider")]
    while _width(*table()) > WIDTH and any(max(len(r[i]) for r in rows) > MIN_NAME for i in names):
        widest = max(names, key=lambda i: max(len(r[i]) for r in rows))
        size = max(MIN_NAME, max(len(r[widest]) for r in rows) - 1)
        rows = [[cut(cell, size) if i == widest else cell for i, cell in enumerate(row)] for row in rows]
    droppable = [i for n in DROP_ORDER for i in keep if head[i] == n]
    while _width(*table()) > WIDTH and droppable:
        gone = droppable.pop(0)
        keep.remove(gone)
        left_out.append(head[gone])
    shown_head, shown_rows = table()
    left = {i for i, name in enumerate(shown_head) if name in ("task", "provider", "flaky", "verdict")}
    return shown_head, shown_rows, left, [head[i] for i in sorted(head.index(name) for name in left_out)]


def wrap(line: str, indent: str = "") -> str:
    return textwrap.fill(line, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=False, break_on_hyphens=False)  # fmt: skip


def ran_words(p: dict[str, Any]) -> list[str]:
    """What ran the trials, as the provenance says: "models X, Y" (those that answered, else the configured ones),
    "Claude Code 2.1.N" and "Agent SDK 0.2.N" (several, comma-separated, when rows differ)."""
    models = p.get("models_answered") or p["models"]
    cli, sdk = p.get("claude_code_versions"), p.get("agent_sdk_versions")
    return [f"models {', '.join(models)}" if models else "model not recorded",
            *([f"Claude Code {', '.join(cli)}"] if cli else []), *([f"Agent SDK {', '.join(sdk)}"] if sdk else [])]  # fmt: skip


def repeats_words(p: dict[str, Any]) -> str | None:
    """How many repeats the rows span: "10 repeats", or from a round's offset on "5 repeats (5-9)"."""
    n, first = p.get("repeats_seen"), p.get("first_repeat") or 0
    return None if not n else f"{n} repeats ({first}–{first + n - 1})" if first else f"{n} repeats"


def provenance_line(p: dict[str, Any]) -> str:
    """Where the figures come from, in one sentence."""
    parts = [f"eval {p['eval_id']}" if p["eval_id"] else None, p["date"],
             f"promptfoo {p['promptfoo_version']}" if p["promptfoo_version"] else None,
             f"--repeat {p['repeat']}" if p["repeat"] else repeats_words(p),
             *ran_words(p),
             "the scripted model (passhat fake-model), not real Claude" if p.get("scripted_model") else None,
             f"{len(p['rounds'])} rounds of passhat eval --until-decided" if p.get("rounds") else None]  # fmt: skip
    return f"passhat report of {p['source']}: " + "; ".join(part for part in parts if part) + "."


def judge_rows(judge: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[str]], list[str]]:
    head = ["task", "provider", "judge", "rubric / vs", "judge_version", "n", "unscored", "mean", "pass"]
    rows, details = [], []
    for d in judge:
        if d["kind"] == "rubric":
            detail = ", ".join(f"{name} {mean:.2f}" for name, mean in d["criteria"].items())
        else:
            detail = ", ".join(f"{w} {n}" for w, n in sorted(d["winners"].items()))
            detail += f"; position_bias {d['position_bias']}" if d["position_bias"] else ""
        mean = "-" if d["mean_score"] is None else f"{d['mean_score']:.3f}"
        judge_name = d["judge"] + (SCRIPTED_MARK if d.get("scripted") else "")
        rows.append([d["task"], d["provider"], judge_name, d["label"], d["judge_version"], str(d["scored"]),
                     str(d["unscored"]), mean, f"{d['passes']}/{d['scored']}"])  # fmt: skip
        details.append(detail)
    return head, rows, details


JUDGE_TITLE = (
    "LLM judge (scores 0..1; compare only within one judge_version; unscored = judge reply unusable, left out of n)"
)
SCRIPTED_JUDGE = f"{SCRIPTED_MARK} the scripted judge (passhat fake-model): canned scores, not a model's judgement"


def judge_title(judge: Sequence[dict[str, Any]]) -> str:
    """The judge table's title, saying so when some of its scores are the scripted model's."""
    return JUDGE_TITLE + (f"; {SCRIPTED_JUDGE}" if any(d.get("scripted") for d in judge) else "")


def judge_text(judge: Sequence[dict[str, Any]], wide: bool) -> list[str]:
    """The judge's table; in 120 columns each row's criteria go on the line below it."""
    if not judge:
        return []
    head, rows, details = judge_rows(judge)
    if wide:
        table = fmt.aligned(
            [*head, "detail"], [[*r, d] for r, d in zip(rows, details, strict=True)], (0, 1, 2, 3, 4, 9)
        )
        return ["", judge_title(judge) + ":", table]
    lines = fmt.aligned(head, rows, (0, 1, 2, 3, 4)).splitlines()
    out = lines[:2]
    for line, detail in zip(lines[2:], details, strict=True):
        out += [line, *([wrap(detail, "    ")] if detail else [])]
    return ["", wrap(judge_title(judge) + ":"), *out]


def text(data: dict[str, Any], highlight: int | None, wide: bool = False) -> str:
    """`--format table`."""
    several = len(data["suite"]["providers"]) > 1
    v = data["verdict"]
    lines = [wrap(provenance_line(data["provenance"])), "",
             wrap(f"Safe for {v['k']} unattended runs in a row? {v['rule']} {v['reach_line']} "
                   f"{verdict_counts(data['tasks'])}:"),
             *(wrap(line, "  ") for line in verdict_lines(data["tasks"], several)), ""]  # fmt: skip
    if wide:
        head, rows, left = columns(data, highlight)
        left_out: list[str] = []
    else:
        head, rows, left, left_out = compact(data, highlight)
    lines.append(fmt.aligned(head, rows, left))
    if any(t["scripted_model"] and t["cost_known"] for t in data["tasks"]):
        lines.append(f"{SCRIPTED_MARK} scripted model: made-up tokens priced as if real, not money spent.")
    lines.append(wrap(ESTIMATORS_NOTE))
    if not wide:
        gone = f"; left out to fit {WIDTH} columns: {', '.join(left_out)}" if left_out else ""
        lines.append(wrap(f"(--wide adds pass@k, clean, mean s, p90 s, turns, mean ${gone}.)"))
    lines += ["", *(wrap(line) for line in data["summary"])]
    if highlight is not None:
        lines.append(
            f"* pass^{highlight} (marked): the chance that all {highlight} unattended runs between two looks pass."
        )
    lines += cheat_text(data.get("cheats"), WIDTH)
    lines += judge_text(data.get("judge") or [], wide)
    return "\n".join(lines)


def _md_gate(g: dict[str, Any]) -> str:
    if g["passed"]:
        return f"- holds: `{g['gate']}`"
    return f"- **FAILS**: `{g['gate']}`: " + fmt.md_text("; ".join(g["failures"]))


def markdown(data: dict[str, Any], highlight: int | None) -> str:
    """`--format md`: headings, lists and GFM tables; every piece of text escaped."""
    several = len(data["suite"]["providers"]) > 1
    v, md = data["verdict"], fmt.md_text
    out = ["## passhat report", "", md(provenance_line(data["provenance"])), "",
           f"### Safe for {v['k']} unattended runs?", "",
           md(f"{v['rule'][:1].upper()}{v['rule'][1:]} {v['reach_line']} "
              f"{verdict_counts(data['tasks'])}."), ""]  # fmt: skip
    for name, verdict, evidence in verdict_table(data["tasks"], several):
        out.append(f"- **{md(verdict)}**: {md(name)}: {md(evidence)}")
    if data["gates"]:
        out += ["", "### Gates", "", *(_md_gate(g) for g in data["gates"])]
    head, rows, left = columns(data, highlight)
    marked = {i for i, name in enumerate(head) if name.endswith("*")}
    out += ["", "### Per task", "", fmt.markdown([h.rstrip("*") for h in head], rows, left, strong=marked)]
    out += ["", md(ESTIMATORS_NOTE)]
    if any(t["scripted_model"] and t["cost_known"] for t in data["tasks"]):
        out += ["", md(f"{SCRIPTED_MARK} scripted model: made-up tokens priced as if real, not money spent.")]
    out += ["", "### Summary", "", *(f"- {md(line)}" for line in data["summary"])]
    if highlight is not None:
        out.append(f"- **pass^{highlight}** (in bold): the chance that all {highlight} unattended runs between two "
                   "looks pass.")  # fmt: skip
    out += cheat_markdown(data.get("cheats"))
    if data.get("judge"):
        head, rows, details = judge_rows(data["judge"])
        out += ["", "### LLM judge", "", md(judge_title(data["judge"]) + "."), "",
                fmt.markdown([*head, "detail"], [[*r, d] for r, d in zip(rows, details, strict=True)],
                             (0, 1, 2, 3, 4, 9))]  # fmt: skip
    return "\n".join(out)


PROVENANCE_COLUMNS = ("source", "eval_id", "date", "promptfoo_version", "repeat", "models_answered",
                      "claude_code_versions", "agent_sdk_versions")  # fmt: skip


def _origin_cell(origin: dict[str, Any], key: str) -> Any:
    """A provenance field as one CSV cell: a list joined by ", " (empty: none), --repeat else the repeats seen."""
    value = origin.get(key)
    if isinstance(value, list):
        return ", ".join(value) or None
    return origin.get("repeats_seen") if key == "repeat" and value is None else value


def csv(data: dict[str, Any]) -> str:
    """`--format csv`: one row per task and provider, every number at full precision. Each row also carries
    where its figures come from (the provenance's fields) and its provider's suite figures (mean pass^k per k and
    its interval, or why there is none), so a row read alone is whole."""
    ks = data["ks"]
    head = ["task", "provider", "tier", "n", "passes", "gamed", "errors", "unscored", "pass_rate", "wilson_low",
            "wilson_high"]  # fmt: skip
    head += [f"pass_at_{k}" for k in ks] + [f"pass_hat_{k}" for k in ks]
    head += ["flaky", "clean_exit_rate", "mean_duration_ms", "p90_duration_ms", "mean_turns", "mean_cost_usd",
             "cost_per_success_usd", "runs_needed", "cost_known_trials", "scripted_model", "verdict", "verdict_k",
             "verdict_estimate", "verdict_low", "verdict_high", "verdict_interval", "trials_used", "runs_to_decide",
             "next_runs_all_pass", "infra_error_reasons",
             "interrupted_repeats"]  # fmt: skip
    head += [f"suite_mean_pass_hat_{k}{part}" for k in ks for part in ("", "_low", "_high", "_note")]
    head += list(PROVENANCE_COLUMNS)
    suites = {p["provider"]: p["mean_pass_hat_k"] for p in data["suite"]["providers"]}
    origin = data["provenance"]
    rows = [
        [
            t["task"], t["provider"], t["tier"], t["n"], t["passes"], t["gamed"] if t["scanned"] else None, t["errors"],
            t["unscored"], t["pass_rate"],
            *(t["wilson_95"] or [None, None]),
            *(t["pass_at_k"][str(k)] for k in ks), *(t["pass_hat_k"][str(k)] for k in ks),
            t["flaky"], t["clean_exit_rate"], t["mean_duration_ms"], t["p90_duration_ms"], t["mean_turns"],
            t["mean_cost_usd"], t["cost_per_success_usd"], t["runs_needed"], t["cost_known"], t["scripted_model"],
            t["verdict"]["verdict"], t["verdict"]["k"], t["verdict"]["estimate"], *(t["verdict"]["ci_95"] or [None, None]),
            t["verdict"]["interval"], t["verdict"]["trials_used"], t["verdict"]["runs_to_decide"],
            t["verdict"]["next_runs_all_pass"],
            json.dumps(t["infra_error_reasons"]) if t["infra_error_reasons"] else None,
            json.dumps(t["interrupted_repeats"]) if t["interrupted_repeats"] else None,
            *(cell for k in ks for f in [suites[t["provider"]][str(k)]]
              for cell in (f["mean"], *(f["ci_95"] or [None, None]), f["ci_note"])),
            *(_origin_cell(origin, key) for key in PROVENANCE_COLUMNS),
        ]
        for t in data["tasks"]
    ]  # fmt: skip
    return fmt.csv_text(*cheat_csv(head, rows, data.get("cheats")))
