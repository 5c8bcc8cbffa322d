"""`passhat report`: health, duration, tier, the suite in words, --unattended-runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_report import PASSHAT, Outcome, make_row, report, words, write_results

from passhat.results._rows import load_trials


def trial_row(
    task: str,
    outcome: Outcome,
    *,
    tier: str | None = "simple",
    status: str | None = "ok",
    is_error: bool | None = False,
    latency: float | None = 1000,
    duration_ms: int | None = None,
    label: str = "sonnet",
    test_metadata_only: bool = False,
) -> dict[str, Any]:
    """A row from passhat's provider, shaped as promptfoo 0.123 writes it: the test's metadata (task_id, tier)
    in testCase.metadata and merged into the row's metadata with the provider's trial record."""
    record: dict[str, Any] = {"task_id": task, "num_turns": 4}
    if status is not None:
        record["status"] = status
    if is_error is not None:
        record["is_error"] = is_error
    if duration_ms is not None:
        record["duration_ms"] = duration_ms
    row = make_row(outcome, provider={**PASSHAT, "label": label}, description=task, response_metadata=record)
    test_meta = {"task_id": task} if tier is None else {"task_id": task, "tier": tier}
    row["testCase"]["metadata"] = test_meta
    row["metadata"] = dict(test_meta) if test_metadata_only else {**test_meta, **record}
    row["latencyMs"] = latency
    return row


def test_health_duration_and_tier(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        trial_row("a", "pass", latency=1000),
        trial_row("a", "pass", latency=2000),
        trial_row("a", "fail", latency=3000, status="timeout"),  # an agent failure, not a clean exit
        trial_row("a", "pass", latency=10_000, is_error=True),  # passed, but the CLI reported an error
        trial_row("a", "error", latency=500, status="infra_error"),  # infra error: out of n and of health
        trial_row("b", "pass", tier="medium", latency=None, duration_ms=4000, status=None, is_error=None),
        trial_row("b", "fail", tier="medium", latency=None, duration_ms=8000, status=None, is_error=None),
    ]
    data = json.loads(report(capsys, str(write_results(tmp_path / "r.json", rows)), "--format", "json")[1])
    a, b = data["tasks"]
    # a: n=4 (the infra error is out), c=3; clean exits 2 of 4 (one timeout, one is_error);
    # durations 1, 2, 3, 10 s: mean 4 s, p90 = the ceil(0.9 x 4) = 4th smallest = 10 s.
    assert (a["n"], a["passes"], a["errors"], a["tier"]) == (4, 3, 1, "simple")
    assert (a["clean_exit_rate"], a["health_reported"]) == (0.5, 4)
    assert (a["mean_duration_ms"], a["p90_duration_ms"]) == (4000.0, 10_000.0)
    # b: no latencyMs, so metadata duration_ms; no status / is_error, so health unknown (not "unclean").
    assert (b["tier"], b["mean_duration_ms"], b["p90_duration_ms"]) == ("medium", 6000.0, 8000.0)
    assert (b["clean_exit_rate"], b["health_reported"]) == (None, 0)
    tiers = data["suite"]["providers"][0]["tiers"]
    assert [(t["tier"], t["tasks"], t["flaky"], t["mean_pass_hat_k"]["1"]) for t in tiers] == [
        ("simple", 1, 1, 0.75),
        ("medium", 1, 1, 0.5),  # simple | medium | complex | very-complex order, not alphabetical
    ]


def test_tier_from_test_case_metadata(tmp_path: Path) -> None:
    row = trial_row("a", "pass", tier="complex", test_metadata_only=True)
    row["metadata"] = {}
    (trial,) = load_trials(write_results(tmp_path / "r.json", [row]))
    assert trial.tier == "complex"


def test_bad_tier(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = trial_row("a", "pass")
    row["metadata"]["tier"] = 3
    code, _, err = report(capsys, str(write_results(tmp_path / "r.json", [row])))
    assert code == 2
    assert "results.results[0].metadata.tier is 3; expected a non-empty string such as simple" in err


def suite_of(spec: dict[str, tuple[int, int, str]]) -> list[dict[str, Any]]:
    """Rows for {task: (passes, n, tier)}."""
    rows = []
    for task, (c, n, tier) in spec.items():
        rows += [trial_row(task, "pass" if i < c else "fail", tier=tier) for i in range(n)]
    return rows


SUITE = {
    **{f"t{i:02d}": (10, 10, "simple" if i < 12 else "complex") for i in range(18)},
    "flaky-one": (6, 10, "complex"),
    "flaky-two": (9, 10, "medium"),
}


def test_suite_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "r.json", suite_of(SUITE))
    code, out, _ = report(capsys, str(path), "--k", "1,3")
    assert code == 0
    said = words(out)
    assert said[0] == "18 of 20 tasks are 10/10; 2 are flaky: flaky-one (6/10), flaky-two (9/10). No infra errors."
    # mean pass^1 = (18 + 0.6 + 0.9) / 20 = 0.975; pass^3 = (18 + 0.6^3 + 0.9^3) / 20 = 0.94725.
    assert said[1].startswith("Mean over tasks (95% cluster-bootstrap CI): pass^1 0.975 (")
    assert "pass^3 0.947 (" in said[1]
    assert said[2].startswith("ICC(1) = ")
    assert said[3] == (
        "By tier: simple: 12 tasks, 12 all-pass, 0 flaky, pass^1 1.000, pass^3 1.000; "
        "medium: 1 task, 0 all-pass, 1 flaky, pass^1 0.900, pass^3 0.729; "
        "complex: 7 tasks, 6 all-pass, 1 flaky, pass^1 0.943, pass^3 0.888."
    )  # complex: (6 + 0.6)/7 = 0.943; (6 + 0.6^3)/7 = 0.888
    assert said[4].startswith("Pass-rate interval width (not the verdict: +trials says what would decide it)")
    assert "flaky-one 6/10 needs 79 more (n=89)" in said[4]


def test_never_passing_and_unscored_tasks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = suite_of({"ok": (3, 3, "simple"), "broken": (0, 3, "simple")}) + [trial_row("down", "error")]
    code, out, _ = report(capsys, str(write_results(tmp_path / "r.json", rows)), "--k", "1")
    assert code == 0
    assert words(out)[0] == (
        "1 of 3 tasks is 3/3; none is flaky; 1 never passes: broken (0/3); 1 had no scored trial: down. "
        "1 infra error excluded from n."
    )


def test_unattended_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = {"steady": (10, 10, "simple"), "shaky": (8, 10, "simple"), "short": (5, 5, "simple")}
    path = write_results(tmp_path / "r.json", suite_of(spec))
    code, out, _ = report(capsys, str(path), "--k", "1,3", "--unattended-runs", "7", "--wide")
    assert code == 0
    lines = out.splitlines()
    head = next(line for line in lines if line.startswith("task ")).split()
    assert "pass^7*" in head and "pass@7" in head  # added to the ks and marked
    # shaky: pass^7 = (8/10)^7 = 0.2097; short: n=5 < 7, undefined, shown, not capped.
    shaky = next(line.split() for line in lines if line.startswith("shaky"))
    assert shaky[head.index("pass^7*") - 1] == "0.210"  # (-1: the "95% CI" header is two words)
    said = words(out)
    assert any(line.startswith("Unattended, 7 runs between looks: mean pass^7 0.605 (") for line in said)
    # expected failing tasks over 7 runs: (1 - 1) + (1 - 0.8^7) = 0.79 of the 2 tasks with n >= 7
    assert any("expect 0.8 of 2 tasks to fail at least once in 7 runs." in line for line in said)
    assert any(line.startswith("Note: pass^7 is undefined (n<k) for 1 task: short (n=5)") for line in said)
    assert lines[-1] == "* pass^7 (marked): the chance that all 7 unattended runs between two looks pass."
    data = json.loads(report(capsys, str(path), "--format", "json", "--unattended-runs", "7")[1])
    assert data["ks"] == [1, 3, 5, 7, 10] and data["unattended_runs"] == 7
    assert [t["task"] for t in data["tasks"]] == ["shaky", "short", "steady"]
    assert data["tasks"][0]["pass_hat_k"]["7"] == 2097152 / 10**7  # (8/10)^7 exactly, rounded once


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--unattended-runs", "0"], "--unattended-runs '0': expected a positive whole number, e.g. 7", id="runs-0"
        ),
        pytest.param(
            ["--ci-width", "1.5"], "--ci-width '1.5': expected a number between 0 and 1, e.g. 0.2", id="width"
        ),
        pytest.param(["--k", "0"], "every k must be a positive integer", id="k"),
    ],
)
def test_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    path = write_results(tmp_path / "r.json", suite_of({"a": (1, 1, "simple")}))
    with pytest.raises(SystemExit) as exit_info:
        report(capsys, str(path), *args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_ci_width_changes_runs_needed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 5/10 at width 0.1: N >= 99 z² = 380.3 -> 381 trials, 371 more (see test_stats).
    path = write_results(tmp_path / "r.json", suite_of({"a": (5, 10, "simple")}))
    data = json.loads(report(capsys, str(path), "--format", "json", "--ci-width", "0.1")[1])
    assert (data["tasks"][0]["runs_needed"], data["ci_width"]) == (371, 0.1)


def test_bootstrap_seed_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "r.json", suite_of(SUITE))

    def interval(*args: str) -> list[float]:
        data = json.loads(report(capsys, str(path), "--format", "json", *args)[1])
        return data["suite"]["providers"][0]["mean_pass_hat_k"]["3"]["ci_95"]

    assert interval() == interval("--seed", "0")  # seeded: the same every run
    assert interval("--resamples", "500", "--seed", "4") == interval("--resamples", "500", "--seed", "4")
