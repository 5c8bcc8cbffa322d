"""Render rows of cells as an aligned text table, a Markdown table or CSV; format single figures.

Shared by `passhat report` and `passhat compare`. Only formatting: the figures come in computed.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Sequence
from typing import Literal

Format = Literal["table", "md", "csv", "json"]
FORMATS: tuple[Format, ...] = ("table", "md", "csv", "json")


def aligned(head: Sequence[str], rows: Sequence[Sequence[str]], left: Iterable[int] = (0,)) -> str:
    """Columns padded to their widest cell; columns in `left` left-aligned, the rest right-aligned."""
    left = set(left)
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        padded = (
            cell.ljust(width) if i in left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        )
        return "  ".join(padded).rstrip()

    return "\n".join([line(head), line(["-" * width for width in widths]), *(line(row) for row in rows)])


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~$&])")
_MD_BLOCK_START = re.compile(r"^\s*(?:[#+*-]|\d+[.)])(?=\s|$)")  # a heading or list item when it starts a line


def md_text(text: str) -> str:
    """Text that Markdown shows as written: every character that could start inline markup backslash-escaped
    (CommonMark escapes any ASCII punctuation; `$` too, which GitHub would read as math), a heading or list
    marker at the start escaped too (`1. x` as `1\\. x`), and a line break made a space."""
    flat = _MD_SPECIAL.sub(r"\\\1", " ".join(text.split("\n")))
    match = _MD_BLOCK_START.match(flat)
    return flat if match is None else flat[: match.end() - 1] + "\\" + flat[match.end() - 1 :]


def markdown(
    head: Sequence[str], rows: Sequence[Sequence[str]], left: Iterable[int] = (0,), strong: Iterable[int] = ()
) -> str:
    """A GitHub-flavoured Markdown table (renders in a PR comment or a job summary); cells escaped,
    the head cells of `strong` in bold."""
    left, strong = set(left), set(strong)
    rule = [":--" if i in left else "--:" for i in range(len(head))]
    shown = [f"**{md_text(cell)}**" if i in strong else md_text(cell) for i, cell in enumerate(head)]
    lines = [shown, rule, *([md_text(cell) or " " for cell in row] for row in rows)]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def csv_text(head: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """RFC 4180 CSV; None becomes an empty cell, floats keep full precision."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(head)
    for row in rows:
        writer.writerow("" if cell is None else cell for cell in row)
    return out.getvalue().rstrip("\n")


def fraction(value: float | None, undefined: str = "n<k") -> str:
    return undefined if value is None else f"{value:.3f}"


def interval(value: tuple[float, float] | None) -> str:
    return "-" if value is None else f"{value[0]:.3f}-{value[1]:.3f}"


def dollars(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def seconds(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.1f}"


def signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {plural_noun or noun + 's'}"


def p_value(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def some(names: Sequence[str], limit: int = 5) -> str:
    """Up to `limit` names, then how many more."""
    if not names:
        return "none"
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def json_text(data: object, depth: int = 0) -> str:
    """JSON, indented two levels deep with one line per list item below that.

    Readable, and written by the C encoder (json.dumps with `indent` falls back to pure Python,
    which takes seconds on a report of 10,000 task/provider pairs).
    """
    pad, inner = "  " * depth, "  " * (depth + 1)
    if depth < 2 and isinstance(data, dict) and data:
        items = (f"{inner}{json.dumps(key)}: {json_text(value, depth + 1)}" for key, value in data.items())
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if depth < 2 and isinstance(data, list) and data:
        return "[\n" + ",\n".join(f"{inner}{json.dumps(item)}" for item in data) + f"\n{pad}]"
    return json.dumps(data)
