"""`passhat report --format table|md|csv|json`: every format shows the same figures from `report_data`; the
Markdown (for $GITHUB_STEP_SUMMARY) is read back with a real Markdown parser, markdown-it-py."""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from test_report import passhat_row, report, suite_rows, words, write_results

from passhat.report import _formats


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_results(tmp_path / "results.json", suite_rows())


def test_csv_matches_json(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(report(capsys, str(results), "--format", "json", "--k", "1,3")[1])
    code, out, err = report(capsys, str(results), "--format", "csv", "--k", "1,3")
    assert (code, err) == (0, "")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == [
        "task", "provider", "tier", "n", "passes", "gamed", "errors", "unscored", "pass_rate", "wilson_low",
        "wilson_high", "pass_at_1", "pass_at_3", "pass_hat_1", "pass_hat_3", "flaky", "clean_exit_rate",
        "mean_duration_ms", "p90_duration_ms", "mean_turns", "mean_cost_usd", "cost_per_success_usd", "runs_needed",
        "cost_known_trials", "scripted_model", "verdict", "verdict_k", "verdict_estimate", "verdict_low",
        "verdict_high", "verdict_interval", "trials_used", "runs_to_decide", "next_runs_all_pass", "infra_error_reasons",
        "interrupted_repeats",
        "suite_mean_pass_hat_1", "suite_mean_pass_hat_1_low", "suite_mean_pass_hat_1_high", "suite_mean_pass_hat_1_note",
        "suite_mean_pass_hat_3", "suite_mean_pass_hat_3_low", "suite_mean_pass_hat_3_high", "suite_mean_pass_hat_3_note",
        "source", "eval_id", "date", "promptfoo_version", "repeat", "models_answered", "claude_code_versions",
        "agent_sdk_versions",
        "expect", "cheats", "cheats_caught", "cheats_uncaught", "cheat_rate", "cheat_low", "cheat_high",  # twins
    ]  # fmt: skip
    suites = {p["provider"]: p["mean_pass_hat_k"] for p in data["suite"]["providers"]}
    for row, task in zip(rows, data["tasks"], strict=True):
        assert (row["task"], row["provider"], int(row["n"]), int(row["passes"])) == (
            task["task"], task["provider"], task["n"], task["passes"],
        )  # fmt: skip
        assert row["pass_hat_3"] == ("" if task["pass_hat_k"]["3"] is None else repr(task["pass_hat_k"]["3"]))
        assert float(row["wilson_low"]) == task["wilson_95"][0]  # full precision, not rounded for display
        assert row["runs_needed"] == ("" if task["runs_needed"] is None else str(task["runs_needed"]))
        assert (row["verdict"], int(row["verdict_k"])) == (task["verdict"]["verdict"], 3)
        if task["n"] < 3:  # undefined, as the pass^3 column: empty, never (c/n)^3 of fewer than 3 trials
            assert (row["verdict_estimate"], task["verdict"]["estimate"]) == ("", None)
            continue
        assert (
            float(row["verdict_estimate"])
            == task["verdict"]["estimate"]
            == float(Fraction(task["passes"], task["n"]) ** 3)
        )  # (c/n)^3, exact then rounded
        assert int(row["unscored"]) == task["unscored"]
        reasons = task["infra_error_reasons"]
        assert row["infra_error_reasons"] == (json.dumps(reasons) if reasons else "")
        # Where the figures come from, on every row; the provider's suite figure, with "not enough tasks" for
        # fewer than 5 tasks (this file has 1 or 2 per provider), never a degenerate interval.
        provenance = data["provenance"]
        assert (row["source"], row["eval_id"], row["date"], row["promptfoo_version"]) == (
            provenance["source"],
            provenance["eval_id"],
            provenance["date"],
            provenance["promptfoo_version"],
        )
        suite = suites[task["provider"]]["1"]
        assert float(row["suite_mean_pass_hat_1"]) == suite["mean"]
        assert (row["suite_mean_pass_hat_1_low"], row["suite_mean_pass_hat_1_high"]) == ("", "")
        assert row["suite_mean_pass_hat_1_note"].startswith("not enough tasks for a 95% interval (")


def judged_rows() -> list[dict]:
    """suite_rows, plus a task graded by an LLM judge (its rubric scores in the componentResults)."""
    rows = suite_rows()
    for repeat, score in enumerate((0.8, 0.6)):
        row = passhat_row("write-changelog", "pass", turns=2, repeat=repeat)
        row["namedScores"] = {"judge": score, "judge_unscored": 0.0}
        row["gradingResult"] = {"pass": True, "score": score, "componentResults": [{
            "pass": True, "score": score, "reason": "PASS",
            "assertion": {"metric": "judge", "config": {"type": "rubric"}},
            "metadata": {"judge_version": "12304a252ea0", "rubric": "agent-output",
                         "criteria": {"instruction_following": {"value": score}, "coherence": {"value": 1.0}}},
        }]}  # fmt: skip
        rows.append(row)
    odd = passhat_row("*odd* | <b>task</b> $1 & $2", "pass", turns=1, repeat=0)
    rows.append(odd)
    return rows


def parse_markdown(text: str) -> list[Token]:
    """CommonMark plus GFM tables, the way GitHub reads a job summary."""
    return MarkdownIt("commonmark").enable("table").parse(text)


def test_markdown_is_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "results.json", judged_rows())
    code, out, _ = report(capsys, str(path), "--format", "md", "--k", "1,3", "--unattended-runs", "2",
                          "--gate", "pass^2>=0.5", "--gate", "errors<=5")  # fmt: skip
    assert code == 1  # pass^2>=0.5 fails
    tokens = parse_markdown(out)
    kinds = [t.type for t in tokens]
    # No raw HTML anywhere: a task's name is text, never a tag GitHub would strip or run.
    assert "html_inline" not in kinds and "html_block" not in kinds
    assert not any(child.type == "html_inline" for t in tokens for child in t.children or [])
    headings = [tokens[i + 1].content for i, kind in enumerate(kinds) if kind == "heading_open"]
    assert headings == ["passhat report", "Safe for 2 unattended runs?", "Gates", "Per task", "Summary", "LLM judge"]
    # Two tables (per task, the judge's), every row of each parsed into cells.
    assert kinds.count("table_open") == 2
    cells = [tokens[i + 1].content for i, kind in enumerate(kinds) if kind in ("th_open", "td_open")]
    assert "*odd* | <b>task</b> $1 & $2" in [tokens[i + 1].children[0].content  # the name, as text, in one cell
                                            for i, kind in enumerate(kinds) if kind == "td_open"
                                            and tokens[i + 1].children]  # fmt: skip
    assert "12304a252ea0" in " ".join(cells) and "instruction\\_following 0.70, coherence 1.00" in " ".join(cells)
    # The gates are a list: the failed one says FAILS, each gate is code.
    gates = out.split("### Gates")[1].split("###")[0]
    gate_tokens = parse_markdown(gates)
    assert [t.type for t in gate_tokens].count("list_item_open") == 2
    codes = [c.content for t in gate_tokens for c in t.children or [] if c.type == "code_inline"]
    assert codes == ["pass^2>=0.5", "errors<=5"]
    assert "**FAILS**: `pass^2>=0.5`: " in gates
    # No paragraph holds a table that failed to parse, and every list item is one.
    paragraphs = [tokens[i + 1].content for i, kind in enumerate(kinds) if kind == "paragraph_open"]
    assert not any(text.lstrip().startswith("|") for text in paragraphs)
    rendered = MarkdownIt("commonmark").enable("table").render(out)
    assert "&lt;b&gt;task&lt;/b&gt; $1 &amp; $2" in rendered and "<b>task</b>" not in rendered
    assert "<strong>pass^2</strong>" in rendered  # the unattended k, marked in the head
    verdicts = out.split("### Safe for 2 unattended runs?")[1].split("###")[0]
    assert [t.type for t in parse_markdown(verdicts)].count("list_item_open") == 5  # one per task


def test_markdown_layout(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = report(capsys, str(results), "--format", "md", "--k", "1,3", "--unattended-runs", "2")
    assert code == 0
    lines = out.splitlines()
    table = lines.index("### Per task") + 2
    assert lines[table] == (
        "| task | provider | n | pass | gamed | err | unsc | pass@1 | 95% CI | pass@2 | pass@3 | **pass^2** | pass^3 | verdict "
        "| +trials | flaky | clean | mean s | p90 s | turns | mean \\$ | \\$/success |"
    )
    assert lines[table + 1].startswith("| :-- | :-- | --: |")
    assert lines[table + 2].startswith(
        "| add-tests | anthropic:claude-agent-sdk | 2 | 1 | \\- | 1 | 0 | 0.500 | 0.095-0.905 |"
    )
    assert (
        lines[table + 4].startswith("| fix-typo | sonnet | 3 | 3 | \\- | 0 | 0 | 1.000 |")
        and "|   |" in lines[table + 4]
    )
    summary = lines[lines.index("### Summary") + 2 :]
    assert all(line.startswith("- ") for line in summary)
    assert summary[-1] == "- **pass^2** (in bold): the chance that all 2 unattended runs between two looks pass."


def test_json_is_indented_and_complete(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = report(capsys, str(results), "--format", "json")[1]
    data = json.loads(out)
    assert set(data) == {
        "provenance", "ks", "unattended_runs", "ci_width", "verdict", "bootstrap", "tasks", "suite", "summary", "gates",
        "cheats",
    }  # fmt: skip
    assert out.startswith('{\n  "provenance": {\n    "source": ')
    assert '\n    {"task": "add-tests", "provider": "anthropic:claude-agent-sdk", "n": 2,' in out  # one line per task


def test_table_and_json_agree(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(report(capsys, str(results), "--format", "json")[1])
    table = report(capsys, str(results))[1]
    assert words(table) == data["summary"]


def test_unknown_format(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        report(capsys, str(results), "--format", "xml")
    assert exit_info.value.code == 2
    assert "invalid choice: 'xml' (choose from" in capsys.readouterr().err


def test_helpers() -> None:
    assert _formats.aligned(["a", "bb"], [["ccc", "d"]], left={0}) == "a    bb\n---  --\nccc   d"
    assert _formats.markdown(["a|b"], [[""]]) == "| a\\|b |\n| :-- |\n|   |"
    assert _formats.md_text("1. *a_b* <x> $1 & ~y~ [z]") == "1\\. \\*a\\_b\\* \\<x\\> \\$1 \\& \\~y\\~ \\[z\\]"
    assert (
        _formats.md_text("# h") == "\\# h" and _formats.md_text("- x") == "\\- x" and _formats.md_text("0.5") == "0.5"
    )
    assert _formats.csv_text(["x", "y"], [[None, 0.1], ["a,b", True]]) == 'x,y\n,0.1\n"a,b",True'
    assert _formats.json_text({"a": [1, {"b": 2}], "c": {}}) == '{\n  "a": [\n    1,\n    {"b": 2}\n  ],\n  "c": {}\n}'
    assert (_formats.p_value(0.0004), _formats.p_value(0.5), _formats.signed(0.25)) == ("4.0e-04", "0.500", "+0.250")
    assert _formats.some(["a", "b", "c"], limit=2) == "a, b and 1 more"
