"""`passhat report` on small results files in the shape `promptfoo eval -o results.json` (0.123.1) writes.

Row shapes follow promptfoo 0.123.1's evaluator (`createEvaluateResult`: row metadata is the test's
metadata with the provider's response metadata merged over it; a provider error gives
failureReason 2) and its native `anthropic:claude-agent-sdk` provider (`numTurns` in response.metadata).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest

from passhat.cli import main
from passhat.results._rows import Trial, load_trials

Outcome = Literal["pass", "fail", "error"]
PASSHAT = {"id": "python:passhat/provider.py", "label": "sonnet"}
SDK = {"id": "anthropic:claude-agent-sdk"}  # no label: the id is the provider's name


def make_row(
    outcome: Outcome,
    *,
    provider: dict[str, Any],
    description: str | None = None,
    response_metadata: dict[str, Any] | None = None,
    cost: float | None = 0.1,
    row_cost: bool = True,
    vars: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One promptfoo result row; `cost` goes to response.cost and, if `row_cost`, to the row."""
    error = {
        "pass": None,
        "fail": "Expected the test suite to pass: 2 failed",
        "error": "Claude Agent SDK call failed: API error 529 (overloaded) after 3 retries",
    }[outcome]
    response_metadata = response_metadata or {}
    if outcome == "error":
        response: dict[str, Any] = {"error": error, "cost": cost, "metadata": response_metadata}
    else:
        response = {
            "output": "Done.",
            "cost": cost,
            "tokenUsage": {"prompt": 1200, "completion": 300, "total": 1500},
            "metadata": response_metadata,
        }
    test_case: dict[str, Any] = {"vars": vars or {}, "assert": [{"type": "python"}], "metadata": {}}
    if description is not None:
        test_case["description"] = description
    row: dict[str, Any] = {
        "error": error,
        "failureReason": {"pass": 0, "fail": 1, "error": 2}[outcome],
        "gradingResult": None if outcome == "error" else {"pass": outcome == "pass", "score": 1.0},
        "latencyMs": 2500,
        "metadata": {**test_case["metadata"], **response_metadata},
        "namedScores": {},
        "prompt": {"raw": "Fix it.", "label": "Fix it."},
        "promptIdx": 0,
        "provider": provider,
        "response": response,
        "score": 1.0 if outcome == "pass" else 0.0,
        "success": outcome == "pass",
        "testCase": test_case,
        "vars": vars or {},
    }
    if row_cost:
        row["cost"] = cost
    return row


def passhat_row(
    task: str, outcome: Outcome, *, turns: int | None, cost: float = 0.1, repeat: int = 0
) -> dict[str, Any]:
    """A row from passhat's provider: task_id and num_turns (the Agent SDK's name) in response.metadata."""
    metadata = {"task_id": task, "num_turns": turns, "repeat_index": repeat}
    description = f"{task}: description"
    return make_row(outcome, provider=PASSHAT, description=description, response_metadata=metadata, cost=cost)


def sdk_row(description: str, outcome: Outcome, *, turns: int, **kwargs: Any) -> dict[str, Any]:
    """A row from promptfoo's native anthropic:claude-agent-sdk provider: numTurns, no task_id."""
    metadata = {"numTurns": turns, "durationMs": 41000, "toolCalls": [], "skillCalls": []}
    return make_row(outcome, provider=SDK, description=description, response_metadata=metadata, **kwargs)


def write_results(path: Path, rows: list[Any], *, version: object = 3) -> Path:
    for index, row in enumerate(rows):
        if isinstance(row, dict):
            row.setdefault("testIdx", index)
    data = {
        "evalId": "eval-abc-2025-01-01T00:00:00",
        "results": {"version": version, "timestamp": "2025-01-01T00:00:00.000Z", "results": rows, "stats": {}},
        "config": {"description": "passhat test suite"},
        "shareableUrl": None,
        "metadata": {"promptfooVersion": "0.123.1"},
    }
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def suite_rows() -> list[dict[str, Any]]:
    # bump-version (passhat provider, label "sonnet"): 6 pass (4 turns), 4 fail (8 turns) at $0.10,
    # and 1 infra error at $0.05.
    rows = [passhat_row("bump-version", "pass", turns=4, repeat=i) for i in range(6)]
    rows += [passhat_row("bump-version", "fail", turns=8, repeat=6 + i) for i in range(4)]
    rows.append(passhat_row("bump-version", "error", turns=None, cost=0.05, repeat=10))
    # fix-typo: 3 passes, 3 turns, $0.20 each.
    rows += [passhat_row("fix-typo", "pass", turns=3, cost=0.2, repeat=i) for i in range(3)]
    # add-tests (native SDK provider): 1 pass ($0.30), 1 fail ($0.50 in response.cost only),
    # 1 infra error ($0, numTurns 1): promptfoo's cost 0 on an error row, so its cost is unknown, not $0.
    rows.append(sdk_row("add-tests", "pass", turns=5, cost=0.3))
    rows.append(sdk_row("add-tests", "fail", turns=7, cost=0.5, row_cost=False))
    rows.append(sdk_row("add-tests", "error", turns=1, cost=0.0))
    return rows


def words(out: str) -> list[str]:
    """The summary in words of a `--format table` report (after the source, the verdict and the table), each
    sentence on one line again (the report wraps them at 120 columns, continuations indented)."""
    lines: list[str] = []
    for line in out.split("\n\n")[3].splitlines():
        if line.startswith("  ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["report", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "results.json", suite_rows())
    code, out, err = report(capsys, str(path), "--format", "json", "--k", "1,3")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["ks"] == [1, 3]
    add_tests, bump, typo = data["tasks"]
    new_keys = {
        "tier", "pass_rate", "wilson_95", "clean_exit_rate", "health_reported", "mean_duration_ms",
        "p90_duration_ms", "runs_needed", "undefined_k", "unscored", "duplicate_repeats", "missing_repeats",
        "interrupted_repeats", "cost_known", "scripted_model", "models", "infra_error_reasons", "verdict",
        "named_scores", "gamed", "scanned",
    }  # fmt: skip
    old = {key: value for key, value in add_tests.items() if key not in new_keys}

    # n=2 (infra error excluded), c=1. pass@1 = pass^1 = 1/2; k=3 > n=2: undefined, null.
    assert old == {
        "task": "add-tests",  # testCase.description: the SDK provider sets no task_id
        "provider": "anthropic:claude-agent-sdk",  # no label: the id
        "n": 2,
        "passes": 1,
        "errors": 1,
        "pass_at_k": {"1": 0.5, "3": None},
        "pass_hat_k": {"1": 0.5, "3": None},
        "flaky": True,
        # (0.30 + 0.50) / 2 trials with a known cost; not / 3: the error row's $0 is promptfoo's, not a price
        "mean_cost_usd": pytest.approx(0.4),
        "cost_per_success_usd": pytest.approx(0.8),  # (0.30 + 0.50) / 1 pass; the infra error is out
        "mean_turns": 6.0,  # (5 + 7) / 2; the infra error's turn is not the agent's
    }
    # 1/2: Wilson [0.0945, 0.9055] (scipy's binomtest(1, 2).proportion_ci(method="wilson")); rate 1/2 needs
    # N >= 24 z² = 92.2 trials for a width of 0.2 -> 91 more. latencyMs 2500 on every row; no health reported.
    assert {key: add_tests[key] for key in new_keys} == {
        "tier": None,
        "pass_rate": 0.5,
        "wilson_95": [pytest.approx(0.0945312, abs=1e-6), pytest.approx(0.9054688, abs=1e-6)],
        "clean_exit_rate": None,
        "health_reported": 0,
        "mean_duration_ms": 2500.0,
        "p90_duration_ms": 2500.0,
        "runs_needed": 91,
        "undefined_k": [3],
        "unscored": 0,
        "duplicate_repeats": [],  # the native SDK provider records no repeat index: nothing to check
        "missing_repeats": [],
        "interrupted_repeats": [],  # no call cut off by Ctrl+C
        "cost_known": 2,
        "scripted_model": False,
        "models": [],
        "infra_error_reasons": [
            {"reason": "Claude Agent SDK call failed: API error 529 (overloaded) after 3 retries", "count": 1}
        ],
        # k = 3, the largest --k. 1/2: Clopper-Pearson [1 - sqrt(0.975), sqrt(0.975)] (the Beta(1, 2) and Beta(2, 1)
        # quantiles), cubed [2.0e-6, 0.9627]: it holds 0.9, not yet decided; at the rate 1/2, one more trial
        # (1.5 of 3) brings the top below 0.9. Trials used: 2 scored + 1 infra error. The estimate is undefined
        # at n=2 < k=3, as the column's pass^3 (never (1/2)^3 from two trials). The next 3 runs all pass with
        # chance E[p^3] under Beta(2, 2): (2 x 3 x 4) / (4 x 5 x 6) = 1/5.
        "verdict": {"verdict": "not enough trials to say", "k": 3, "threshold": 0.9, "estimate": None,
                    "estimator": "(c/n)^k", "passes": 1, "n": 2, "interval": "clopper-pearson", "trials_used": 3,
                    "ci_95": [pytest.approx((1 - 0.975**0.5) ** 3, rel=1e-6), pytest.approx(0.975**1.5, rel=1e-6)],
                    "runs_to_decide": 1, "next_runs_all_pass": pytest.approx(1 / 5), "prior": "Beta(1, 1)"},
        "named_scores": {},  # the native SDK provider's rows carry no namedScores
        "gamed": 0,  # no row has the named score `gamed`: nothing looked for gaming ...
        "scanned": 0,  # ... so the table shows "-", not 0
    }  # fmt: skip
    # n=10, c=6. pass@3 = 1 - C(4,3)/C(10,3) = 1 - 4/120; pass^3 = (6/10)^3 = 0.216.
    assert {key: value for key, value in bump.items() if key not in new_keys} == {
        "task": "bump-version",  # response.metadata.task_id wins over testCase.description
        "provider": "sonnet",  # label over id
        "n": 10,
        "passes": 6,
        "errors": 1,
        "pass_at_k": {"1": pytest.approx(0.6), "3": pytest.approx(116 / 120)},
        "pass_hat_k": {"1": pytest.approx(0.6), "3": pytest.approx(0.6**3)},  # (c/n)^k, the verdict's
        "flaky": True,
        "mean_cost_usd": pytest.approx(1.05 / 11),  # (10 x 0.10 + 0.05) / 11
        "cost_per_success_usd": pytest.approx(1.0 / 6),  # 10 x 0.10 / 6 passes
        "mean_turns": pytest.approx(5.6),  # (6 x 4 + 4 x 8) / 10 = 56/10
    }
    # 6/10: Wilson [0.3127, 0.8318]; at rate 0.6 the width is 0.2006 at N=88 and 0.1995 at N=89 -> 79 more.
    assert bump["wilson_95"] == [pytest.approx(0.3126738, abs=1e-6), pytest.approx(0.8318197, abs=1e-6)]
    assert (bump["runs_needed"], bump["undefined_k"]) == (79, [])
    # n=3, c=3: every figure is 1; $0.60 / 3 passes = $0.20. Not flaky: no runs needed.
    assert {key: value for key, value in typo.items() if key not in new_keys} == {
        "task": "fix-typo",
        "provider": "sonnet",
        "n": 3,
        "passes": 3,
        "errors": 0,
        "pass_at_k": {"1": 1.0, "3": 1.0},
        "pass_hat_k": {"1": 1.0, "3": 1.0},
        "flaky": False,
        "mean_cost_usd": pytest.approx(0.2),
        "cost_per_success_usd": pytest.approx(0.2),
        "mean_turns": 3.0,
    }
    assert (typo["runs_needed"], typo["wilson_95"][1]) == (None, 1.0)
    suite = data["suite"]
    assert {key: suite[key] for key in ("tasks", "flaky", "errors", "mean_pass_hat_k", "undefined_k")} == {
        "tasks": 3,
        "flaky": ["add-tests", "bump-version"],
        "errors": 2,
        # k=1: (0.5 + 0.6 + 1.0) / 3 = 0.7; k=3: add-tests undefined, ((6/10)^3 + 1) / 2 = 0.608.
        "mean_pass_hat_k": {"1": pytest.approx(0.7), "3": pytest.approx(0.608)},
        "undefined_k": {"1": [], "3": ["add-tests"]},
    }
    sdk, sonnet = suite["providers"]
    assert (sdk["provider"], sdk["tasks"], sdk["flaky"], sdk["errors"], sdk["icc1"]) == (
        "anthropic:claude-agent-sdk", 1, ["add-tests"], 1, None,  # one task: no ICC
    )  # fmt: skip
    assert sdk["mean_pass_hat_k"]["3"] == {"mean": None, "ci_95": None, "ci_note": None, "tasks": 0,
                                           "undefined": ["add-tests"], "ci_method": None, "resamples": 0,
                                           "mc_error": 0.0}  # fmt: skip
    # sonnet: bump-version 6/10 and fix-typo 3/3. ICC: N=13, g=2, grand 9/13; MSB = 10(0.6 - 9/13)² +
    # 3(4/13)² = 0.085207 + 0.284024 = 0.369231 (g-1 = 1); MSW = (6 x 4/10) / (13 - 2) = 0.218182;
    # n0 = 13 - (100 + 9)/13 = 4.615385; ICC = 0.151049 / (0.369231 + 3.615385 x 0.218182) = 0.151049 / 1.158065
    # = 0.130435 (= 3/23): mostly luck, the flaky task's 6/10 is most of the variance.
    assert sonnet["icc1"] == pytest.approx(3 / 23)
    assert sonnet["mean_pass_hat_k"]["1"]["mean"] == pytest.approx(0.8)
    assert sonnet["mean_pass_hat_k"]["1"]["tasks"] == 2
    # Two tasks: the bootstrap law is computed whole, no resampling (stats/_exact.py), but 2 tasks are fewer than
    # an interval needs (5): none is shown, and the note says why.
    assert sonnet["mean_pass_hat_k"]["1"] == {
        "mean": pytest.approx(0.8), "ci_95": None, "ci_note": "not enough tasks for a 95% interval (2; it needs 5)",
        "tasks": 2, "undefined": [], "ci_method": "exact", "resamples": 0, "mc_error": 0.0,
    }  # fmt: skip
    assert data["bootstrap"]["resamples"] is None  # as many as the bounds need (see --resamples)
    assert data["summary"] and data["gates"] == []
    assert data["provenance"] == {
        "source": str(path), "eval_id": "eval-abc-2025-01-01T00:00:00", "date": "2025-01-01T00:00:00.000Z",
        "promptfoo_version": "0.123.1", "description": "passhat test suite", "repeat": None, "repeats_seen": 11,
        "providers": [], "models": [], "scripted_model": False, "rounds": None,
        "models_answered": [], "claude_code_versions": [], "agent_sdk_versions": [],  # no row records what ran
    }  # fmt: skip


def test_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "results.json", suite_rows())
    code, out, err = report(capsys, str(path), "--k", "1,3", "--wide")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    top = lines.index("")  # where the figures come from, then the verdict
    assert " ".join(line.strip() for line in lines[:top]) == (
        f"passhat report of {path}: eval eval-abc-2025-01-01T00:00:00; 2025-01-01T00:00:00.000Z; promptfoo "
        "0.123.1; 11 repeats; model not recorded."
    )
    at = lines.index("", top + 1) + 1
    assert lines[at].split() == [
        "task", "provider", "n", "pass", "gamed", "err", "unsc", "pass@1", "95%", "CI", "pass@3", "pass^3",
        "verdict", "+trials", "flaky", "clean", "mean", "s", "p90", "s", "turns", "mean", "$", "$/success",
    ]  # fmt: skip
    rows = {line.split()[0]: line.split() for line in lines[at + 2 : at + 5]}
    # n=2, c=1, gamed "-" (no row says whether gaming was looked for), 1 error; pass@3 and pass^3 undefined (n<k),
    # not 0; no health reported ("-");
    # latencyMs 2500 -> 2.5 s; mean $ over the 2 trials with a known cost; 91 more trials for a 0.2-wide interval.
    assert rows["add-tests"] == [
        "add-tests", "anthropic:claude-agent-sdk", "2", "1", "-", "1", "0", "0.500", "0.095-0.905", "n<k", "n<k",
        "undecided", "1", "flaky", "-", "2.5", "2.5", "6.0", "$0.4000", "$0.8000",
    ]  # fmt: skip
    # n=10, c=6: pass@3 = 1 - C(4,3)/C(10,3) = 1 - 4/120 = 0.967; pass^3 = (6/10)^3 = 0.216, not safe;
    # mean $ = 1.05/11 = 0.0955 (the error row's $0.05 is the provider's); $/success = 1.00/6 = 0.1667.
    assert rows["bump-version"] == [
        "bump-version", "sonnet", "10", "6", "-", "1", "0", "0.600", "0.313-0.832", "0.967", "0.216",
        "not", "safe", "flaky", "-", "2.5", "2.5", "5.6", "$0.0955", "$0.1667",
    ]  # fmt: skip
    assert rows["fix-typo"] == [
        "fix-typo", "sonnet", "3", "3", "-", "0", "0", "1.000", "0.439-1.000", "1.000", "1.000",
        "undecided", "103", "-", "2.5", "2.5", "3.0", "$0.2000", "$0.2000",
    ]  # fmt: skip
    words = lines[lines.index("", at) + 1 :]
    sdk, sonnet = "anthropic:claude-agent-sdk: ", "sonnet: "
    assert (
        words[0] == f"{sdk}0 of 1 tasks pass every trial; 1 is flaky: add-tests (1/2). 1 infra error excluded from n."
    )
    assert words[2] == f"{sonnet}1 of 2 tasks is 3/3; 1 is flaky: bump-version (6/10). 1 infra error excluded from n."
    # 2 tasks: the means, and no interval (an interval needs 5 tasks): said once for every k.
    assert (
        words[3]
        == f"{sonnet}Mean over tasks: pass^1 0.800, pass^3 0.608 (not enough tasks for a 95% interval (2; it needs 5))."
    )
    assert words[4] == (
        f"{sonnet}ICC(1) = 0.13: about 13% of the pass/fail variance is which task it is, 87% is trial-to-trial luck."
    )
    # Summary lines wrap at 120 columns, each continuation indented.
    assert words[5:] == [
        "Pass-rate interval width (not the verdict: +trials says what would decide it): for a 95% interval of c/n at most 0.2",
        "  wide, if the observed rate holds: add-tests [anthropic:claude-agent-sdk] 1/2 needs 91 more (n=93), bump-version",
        "  [sonnet] 6/10 needs 79 more (n=89).",
        "Infra errors, add-tests [anthropic:claude-agent-sdk] (1 of 3 trials): 1x Claude Agent SDK call failed: API error 529",
        "  (overloaded) after 3 retries.",
        "Infra errors, bump-version [sonnet] (1 of 11 trials): 1x Claude Agent SDK call failed: API error 529 (overloaded) after",
        "  3 retries.",
        "Note: pass^3 is undefined (n<k) for 1 task/provider pair: add-tests [anthropic:claude-agent-sdk] (n=2); run at least 3",
        "  trials per task (promptfoo --repeat 3) or lower --k.",
    ]
    assert max(len(line) for line in lines if not line.startswith(("task ", "-----", "add-", "bump", "fix-"))) <= 120


def test_table_words_one_provider(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [passhat_row("fix-typo", "pass", turns=3, repeat=i) for i in range(3)]
    rows += [passhat_row("bump-version", "pass", turns=3, repeat=i) for i in range(6)]
    rows += [passhat_row("bump-version", "fail", turns=3, repeat=6 + i) for i in range(4)]
    rows += [passhat_row("bump-version", "error", turns=None, repeat=10)]
    path = write_results(tmp_path / "results.json", rows)
    code, out, _ = report(capsys, str(path), "--k", "1")
    assert code == 0
    words = out.split("\n\n")[3].splitlines()  # after the source, the verdict and the table
    assert words[0] == "1 of 2 tasks is 3/3; 1 is flaky: bump-version (6/10). 1 infra error excluded from n."
    rerun = next(i for i, line in enumerate(words) if line.startswith("Pass-rate interval width"))
    assert words[rerun : rerun + 2] == [
        "Pass-rate interval width (not the verdict: +trials says what would decide it): for a 95% interval of c/n at most 0.2",
        "  wide, if the observed rate holds: bump-version 6/10 needs 79 more (n=89).",
    ]


@pytest.mark.parametrize(
    ("row", "task"),
    [
        pytest.param(
            make_row("pass", provider=PASSHAT, description="desc", response_metadata={"task_id": "from-response"}),
            "from-response",
            id="response-metadata",
        ),
        pytest.param(
            {**make_row("pass", provider=PASSHAT, description="desc"), "metadata": {"task_id": "from-row"}},
            "from-row",
            id="row-metadata",
        ),
        pytest.param(make_row("pass", provider=PASSHAT, description="desc"), "desc", id="description"),
        pytest.param(
            make_row("pass", provider=PASSHAT, vars={"repo": "a", "issue": 3}),
            '{"issue": 3, "repo": "a"}',
            id="vars-sorted",
        ),
    ],
)
def test_task_id_sources(tmp_path: Path, row: dict[str, Any], task: str) -> None:
    (trial,) = load_trials(write_results(tmp_path / "results.json", [row]))
    assert trial.task == task


def test_trial_fields(tmp_path: Path) -> None:
    rows = [passhat_row("fix-typo", "fail", turns=9, cost=0.25, repeat=2), sdk_row("x", "error", turns=1, cost=0.0)]
    failed, errored = load_trials(write_results(tmp_path / "results.json", rows))
    assert failed == Trial(
        task="fix-typo",
        provider="sonnet",
        repeat_index=2,
        passed=False,
        infra_error=False,
        error="Expected the test suite to pass: 2 failed",
        cost_usd=0.25,
        turns=9,
        latency_ms=2500.0,
        tier=None,
        duration_ms=2500.0,  # latencyMs
        clean_exit=None,  # no is_error / status in the metadata
        test_index=0,  # the row's testIdx
    )
    assert (errored.passed, errored.infra_error, errored.turns, errored.repeat_index) == (False, True, 1, None)
    assert errored.error is not None and errored.error.startswith("Claude Agent SDK call failed")


def _row_with(**fields: Any) -> dict[str, Any]:
    return {**make_row("pass", provider=PASSHAT, description="t"), **fields}


BAD_INPUTS = [
    pytest.param(
        None,
        "no such file. A paused eval (Ctrl+C) writes it when it ends: `promptfoo eval --resume` finishes it",
        id="missing-file",
    ),
    pytest.param("", "file is empty", id="empty-file"),
    pytest.param("  \n", "file is empty", id="blank-file"),
    pytest.param('{"results": {"version": 3,', "not valid JSON at line 1, column 27", id="truncated-json"),
    pytest.param('{"a": 1}\n{"b": 2}\n', "not valid JSON at line 2, column 1", id="jsonl"),
    pytest.param("[]", "the top level is []; expected an object", id="top-level-array"),
    pytest.param({"evalId": "x"}, "results is missing; expected an object", id="no-results"),
    pytest.param({"results": "x"}, 'results is "x"; expected an object', id="results-string"),
    pytest.param({"results": {"version": 3}}, "results.results is missing; expected an array", id="no-rows"),
    pytest.param({"results": {"version": 3, "results": {}}}, "results.results is {}", id="rows-object"),
    pytest.param({"results": {"version": 3, "results": []}}, "results.results is []", id="no-trials"),
    pytest.param(
        {"results": {"version": 2, "results": []}},
        "results.version is 2; expected 3 (passhat reads the results format of promptfoo 0.123)",
        id="version-2",
    ),
    pytest.param({"results": {"results": []}}, "results.version is missing", id="no-version"),
    pytest.param([7], "results.results[0] is 7; expected an object", id="row-not-object"),
    pytest.param(
        [_row_with(success="yes")], 'results.results[0].success is "yes"; expected true or false', id="success"
    ),
    pytest.param([{"failureReason": 0}], "results.results[0].success is missing", id="no-success"),
    pytest.param(
        [_row_with(), _row_with(), _row_with(), _row_with(failureReason=7)],
        "results.results[3].failureReason is 7; expected 0 (ok), 1 (assertion failed) or 2 (error)",
        id="failure-reason",
    ),
    pytest.param([_row_with(failureReason=[1])], "results.results[0].failureReason is [1]", id="failure-reason-list"),
    pytest.param([_row_with(error=5)], "results.results[0].error is 5; expected a string or null", id="error-type"),
    pytest.param([_row_with(provider=None)], "results.results[0].provider is null", id="provider-null"),
    pytest.param([_row_with(provider={"label": ""})], "results.results[0].provider is", id="provider-no-id"),
    pytest.param([_row_with(cost="0.1")], 'results.results[0].cost is "0.1"; expected a finite number', id="cost"),
    pytest.param([_row_with(latencyMs=True)], "results.results[0].latencyMs is true", id="latency"),
    pytest.param([_row_with(response=[])], "results.results[0].response is []; expected an object", id="response"),
    pytest.param([_row_with(metadata="m")], 'results.results[0].metadata is "m"', id="metadata"),
    pytest.param(
        [_row_with(response={"metadata": {"numTurns": "3"}})],
        'results.results[0].response.metadata.numTurns is "3"; expected a non-negative integer',
        id="num-turns",
    ),
    pytest.param(
        [_row_with(latencyMs=None, response={"metadata": {"duration_ms": "5"}})],
        'results.results[0].response.metadata.duration_ms is "5"; expected a finite number or null',
        id="duration",
    ),
    pytest.param(
        [_row_with(metadata={"task_id": 12})],
        "results.results[0].metadata.task_id is 12; expected a non-empty string",
        id="task-id",
    ),
    pytest.param([_row_with(testCase={"vars": {}}, vars=["a"])], 'results.results[0].vars is ["a"]', id="vars"),
]


@pytest.mark.parametrize(("content", "message"), BAD_INPUTS)
def test_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: object, message: str) -> None:
    path = tmp_path / "results.json"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    elif isinstance(content, list):
        write_results(path, content)
    elif isinstance(content, dict):
        path.write_text(json.dumps(content), encoding="utf-8")
    code, out, err = report(capsys, str(path), "--format", "json")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"passhat: error: {path}: "), err
    assert message in err
    assert "Traceback" not in err


def test_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = report(capsys, str(tmp_path))
    assert code == 2
    assert err == (
        f"passhat: error: {tmp_path}: is a directory; pass the results.json file written by `promptfoo eval -o`\n"
    )


def test_bad_input_message_says_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "results.json", [], version=2)
    _, _, err = report(capsys, str(path))
    assert err == (
        f"passhat: error: {path}: results.version is 2; expected 3 (passhat reads the results format of "
        "promptfoo 0.123); re-run `npx promptfoo eval -o results.json` with the promptfoo pinned in "
        "package.json (0.123) and pass that file\n"
    )
