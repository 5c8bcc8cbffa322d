"""Inline SVG charts for `passhat report --format html`, drawn from report_data's plain dicts. Pure: no I/O.

Every mark that shows a figure carries `data-figure="TASK|PROVIDER|NAME"` and `data-value` (the JSON of the
value in report_data, so exact: 0.1666... stays 0.1666...), and a `<title>` that a screen reader or a hover
reads. NAME is the key in the task's JSON object; a k figure is `pass_hat_k.3`. Text is escaped everywhere:
task names come from users.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from html import escape
from typing import Any

FONT_PX = 6.6  # mean width of a character at the 11-12 px labels: sizes the label column
MAX_LABEL = 40  # characters; longer labels are cut with an ellipsis (the <title> keeps the whole name)
ROW = 22  # px per task in the horizontal charts
RATE_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def esc(text: object) -> str:
    return escape(str(text), quote=True)


def figure(task: str, provider: str, name: str, value: object) -> str:
    """The attributes that name one figure of report_data and carry its exact value."""
    return f' data-figure="{esc(f"{task}|{provider}|{name}")}" data-value="{esc(json.dumps(value))}"'


def label(task: dict[str, Any], several: bool) -> str:
    return f"{task['task']} [{task['provider']}]" if several else task["task"]


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _svg(ident: str, width: float, height: float, title: str, desc: str, body: Sequence[str]) -> str:
    return (
        f'<svg id="{ident}" role="img" aria-labelledby="{ident}-t {ident}-d" viewBox="0 0 {_num(width)} {_num(height)}"'
        f' width="{_num(width)}" height="{_num(height)}" style="max-width:100%;height:auto">'
        f'<title id="{ident}-t">{esc(title)}</title><desc id="{ident}-d">{esc(desc)}</desc>' + "".join(body) + "</svg>"
    )


def _label_width(labels: Sequence[str]) -> float:
    return 16 + FONT_PX * max((len(_cut(text)) for text in labels), default=4)


def _row_label(x: float, y: float, text: str) -> str:
    return f'<text class="label" x="{_num(x)}" y="{_num(y + 4)}" text-anchor="end"><title>{esc(text)}</title>{esc(_cut(text))}</text>'


def _x_axis(left: float, width: float, top: float, bottom: float, ticks: Sequence[tuple[float, str]]) -> list[str]:
    """Vertical grid lines at each tick (a fraction 0..1 of the width), labelled under the plot."""
    parts = []
    for at, text in ticks:
        x = left + at * width
        parts.append(f'<line class="grid" x1="{_num(x)}" x2="{_num(x)}" y1="{_num(top)}" y2="{_num(bottom)}"/>')
        parts.append(
            f'<text class="tick" x="{_num(x)}" y="{_num(bottom + 14)}" text-anchor="middle">{esc(text)}</text>'
        )
    return parts


def _rate(value: float | None) -> str:
    return "n<k" if value is None else f"{value:.3f}"


def pass_rate_chart(tasks: Sequence[dict[str, Any]], several: bool, ident: str = "plot-pass-rate") -> str:
    """(a) Pass rate c/n per task, a dot, with its Wilson 95% interval, a whisker; on a 0..1 axis."""
    labels = [label(t, several) for t in tasks]
    left, plot, right, top = _label_width(labels), 440.0, 90.0, 8.0
    bottom = top + ROW * len(tasks)
    parts = _x_axis(left, plot, top, bottom, [(v, f"{v:g}") for v in RATE_TICKS])
    for i, (t, name) in enumerate(zip(tasks, labels, strict=True)):
        y = top + ROW * i + ROW / 2
        key = (t["task"], t["provider"])
        parts.append(_row_label(left - 8, y, name))
        count = (
            f"<tspan{figure(*key, 'passes', t['passes'])}>{t['passes']}</tspan>/"
            f"<tspan{figure(*key, 'n', t['n'])}>{t['n']}</tspan>"
        )
        parts.append(f'<text class="value" x="{_num(left + plot + 8)}" y="{_num(y + 4)}">{count}</text>')
        rate, ci = t["pass_rate"], t["wilson_95"]
        if rate is None:
            parts.append(f'<text class="none" x="{_num(left + 4)}" y="{_num(y + 4)}">no scored trial</text>')
            continue
        status = "all" if rate == 1 else "none" if rate == 0 else "flaky"
        if ci is not None:
            lo, hi = (left + v * plot for v in ci)
            parts.append(
                f'<g class="ci"{figure(*key, "wilson_95", ci)}><title>{esc(name)}: Wilson 95% interval '
                f'{ci[0]:.3f}-{ci[1]:.3f}</title><line x1="{_num(lo)}" x2="{_num(hi)}" y1="{_num(y)}" y2="{_num(y)}"/>'
                f'<line x1="{_num(lo)}" x2="{_num(lo)}" y1="{_num(y - 5)}" y2="{_num(y + 5)}"/>'
                f'<line x1="{_num(hi)}" x2="{_num(hi)}" y1="{_num(y - 5)}" y2="{_num(y + 5)}"/></g>'
            )
        parts.append(
            f'<circle class="dot {status}" cx="{_num(left + rate * plot)}" cy="{_num(y)}" r="5"'
            f"{figure(*key, 'pass_rate', rate)}><title>{esc(name)}: pass rate {rate:.3f} "
            f"({t['passes']}/{t['n']})</title></circle>"
        )
    desc = "One row per task: the dot is the pass rate c/n, the whisker its Wilson 95% interval."
    return _svg(ident, left + plot + right, bottom + 22, "Pass rate per task, Wilson 95% interval", desc, parts)


def _k_x(ks: Sequence[int], left: float, width: float) -> dict[int, float]:
    low, high = min(ks), max(ks)
    return {k: left + (width / 2 if high == low else (k - low) / (high - low) * width) for k in ks}


def _line(points: Sequence[tuple[float, float] | None], css: str) -> list[str]:
    """Polylines through consecutive known points: an unknown point breaks the line, it is not drawn as 0."""
    runs: list[list[tuple[float, float]]] = [[]]
    for point in points:
        if point is None:
            runs.append([])
        else:
            runs[-1].append(point)
    return [
        f'<polyline class="{css}" points="{" ".join(f"{_num(x)},{_num(y)}" for x, y in run)}"/>'
        for run in runs
        if len(run) > 1
    ]


PANEL_W, PANEL_H = 210.0, 130.0


def pass_hat_panel(t: dict[str, Any], ks: Sequence[int], name: str, ident: str, highlight: int | None) -> str:
    """(b) One small multiple: pass^k (solid) and pass@k (dashed) against k; n<k is written, never drawn as 0."""
    left, right, top, bottom = 30.0, 12.0, 14.0, PANEL_H - 22
    xs = _k_x(ks, left, PANEL_W - left - right)
    height = bottom - top
    key = (t["task"], t["provider"])
    parts = []
    for v in (0.0, 0.5, 1.0):
        y = bottom - v * height
        parts.append(
            f'<line class="grid" x1="{_num(left)}" x2="{_num(PANEL_W - right)}" y1="{_num(y)}" y2="{_num(y)}"/>'
        )
        parts.append(f'<text class="tick" x="{_num(left - 4)}" y="{_num(y + 4)}" text-anchor="end">{v:g}</text>')
    for k, x in xs.items():
        css = "tick strong" if k == highlight else "tick"
        parts.append(f'<text class="{css}" x="{_num(x)}" y="{_num(bottom + 14)}" text-anchor="middle">{k}</text>')
    for field, css, what in (("pass_at_k", "at", "pass@"), ("pass_hat_k", "hat", "pass^")):
        values = t[field]
        points = [None if values[str(k)] is None else (xs[k], bottom - values[str(k)] * height) for k in ks]
        parts += _line(points, f"series {css}")
        for k, point in zip(ks, points, strict=True):
            value = values[str(k)]
            tag = figure(*key, f"{field}.{k}", value)
            if point is None:
                if css == "hat":  # said once per k: pass@k is undefined at the same k
                    parts.append(
                        f'<text class="undefined" x="{_num(xs[k])}" y="{_num(top + height / 2)}" text-anchor="middle"'
                        f"{tag}><title>{esc(name)}: pass^{k} undefined, n={t['n']} &lt; k={k}</title>n&lt;k</text>"
                    )
                continue
            x, y = point
            parts.append(
                f'<circle class="mark {css}" cx="{_num(x)}" cy="{_num(y)}" r="3"{tag}>'
                f"<title>{esc(name)}: {what}{k} = {value:.3f}</title></circle>"
            )
    title = f"{name}: pass^k and pass@k against k"
    desc = "Solid: pass^k, every one of k trials passes. Dashed: pass@k, at least one does. n<k: undefined."
    return _svg(ident, PANEL_W, PANEL_H, title, desc, parts)


def _ticks(top: float) -> tuple[list[float], float]:
    """0 and 4-6 round steps up to at least `top` (> 0): the ticks and the axis end."""
    raw = top / 4
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    count = math.ceil(top / step - 1e-9)
    return [i * step for i in range(count + 1)], count * step


def cost_chart(tasks: Sequence[dict[str, Any]], several: bool, ident: str = "plot-cost") -> str:
    """(c) Cost per success per task, a bar: cost of the scored trials / passes."""
    labels = [label(t, several) for t in tasks]
    left, plot, right, top = _label_width(labels), 440.0, 200.0, 8.0
    bottom = top + ROW * len(tasks)
    known = [t["cost_per_success_usd"] for t in tasks if t["cost_per_success_usd"] is not None]
    ticks, end = _ticks(max(known)) if known and max(known) > 0 else ([0.0, 1.0], 1.0)
    parts = _x_axis(left, plot, top, bottom, [(v / end, f"${v:g}") for v in ticks])
    for i, (t, name) in enumerate(zip(tasks, labels, strict=True)):
        y = top + ROW * i + ROW / 2
        value = t["cost_per_success_usd"]
        key = (t["task"], t["provider"])
        parts.append(_row_label(left - 8, y, name))
        if value is None:
            why = "no pass" if not t["passes"] else "no known cost"
            parts.append(
                f'<text class="none" x="{_num(left + 4)}" y="{_num(y + 4)}"{figure(*key, "cost_per_success_usd", None)}>'
                f"<title>{esc(name)}: no cost per success ({why})</title>{why}</text>"
            )
            continue
        width = max(value / end * plot, 1.0)
        fake = " (scripted model: not real money)" if t.get("scripted_model") else ""
        parts.append(
            f'<rect class="bar{" scripted" if fake else ""}" x="{_num(left)}" y="{_num(y - 7)}" width="{_num(width)}"'
            f' height="14"{figure(*key, "cost_per_success_usd", value)}><title>{esc(name)}: ${value:.4f} per success '
            f"({t['passes']} passes){fake}</title></rect>"
            f'<text class="value" x="{_num(left + width + 6)}" y="{_num(y + 4)}">${value:.4f}'
            f"{' scripted, not real' if fake else ''}</text>"
        )
    desc = (
        "One bar per task: the cost of its scored trials with a known cost divided by their passes, in US dollars; "
        "a scripted model's dollars are marked as not real."
    )
    return _svg(ident, left + plot + right, bottom + 22, "Cost per success per task", desc, parts)


def history_panel(series: dict[str, Any], evals: Sequence[str], name: str, ident: str) -> str:
    """(d) One small multiple: the mean score of each batch (eval) in the history, oldest first, on 0..1."""
    left, right, top, bottom = 30.0, 12.0, 14.0, PANEL_H - 22
    width, height = PANEL_W - left - right, bottom - top
    step = width / (len(evals) - 1) if len(evals) > 1 else 0.0
    xs = {eval_id: left + (i * step if len(evals) > 1 else width / 2) for i, eval_id in enumerate(evals)}
    key = (series["task"], series["provider"])
    parts = []
    for v in (0.0, 0.5, 1.0):
        y = bottom - v * height
        parts.append(
            f'<line class="grid" x1="{_num(left)}" x2="{_num(PANEL_W - right)}" y1="{_num(y)}" y2="{_num(y)}"/>'
        )
        parts.append(f'<text class="tick" x="{_num(left - 4)}" y="{_num(y + 4)}" text-anchor="end">{v:g}</text>')
    parts.append(f'<text class="tick" x="{_num(left)}" y="{_num(bottom + 14)}">oldest</text>')
    parts.append(
        f'<text class="tick" x="{_num(PANEL_W - right)}" y="{_num(bottom + 14)}" text-anchor="end">newest</text>'
    )
    batches = {b["eval_id"]: b for b in series["batches"]}
    points = [
        None if e not in batches or batches[e]["mean"] is None else (xs[e], bottom - batches[e]["mean"] * height)
        for e in evals
    ]
    parts += _line([p for p in points if p is not None], "series hat")  # a missing batch is skipped, not 0
    for e, point in zip(evals, points, strict=True):
        if e not in batches:
            continue
        b = batches[e]
        tag = figure(*key, f"history.{e}.mean", b["mean"])
        if point is None:
            parts.append(
                f'<text class="undefined" x="{_num(xs[e])}" y="{_num(top + height / 2)}" text-anchor="middle"'
                f"{tag}><title>{esc(name)}: eval {esc(e)}: no scored trial</title>?</text>"
            )
            continue
        parts.append(
            f'<circle class="mark hat" cx="{_num(point[0])}" cy="{_num(point[1])}" r="3"{tag}>'
            f"<title>{esc(name)}: eval {esc(e)} ({esc(b['eval_time'])}): mean score {b['mean']:.3f} "
            f"over {b['n']} scored trials</title></circle>"
        )
    desc = "Mean score (0..1) of each eval in the history, oldest on the left."
    return _svg(ident, PANEL_W, PANEL_H, f"{name}: mean score per eval", desc, parts)
