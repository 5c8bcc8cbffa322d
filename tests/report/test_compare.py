"""`passhat compare`: Fisher's exact test per task, Holm across tasks, a paired suite-level change."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from scipy import stats as scipy_stats
from test_report import write_results
from test_report_figures import trial_row

from passhat import cli
from passhat.report._compare import Side, compare
from passhat.stats._estimators import holm


def rows(spec: dict[str, tuple[int, int]], label: str = "sonnet") -> list[dict]:
    """Rows for {task: (passes, n)} from one provider."""
    out = []
    for task, (c, n) in spec.items():
        out += [trial_row(task, "pass" if i < c else "fail", label=label) for i in range(n)]
    return out


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`passhat compare ARGS` as the CLI runs it: one line on stderr and exit 2 for a PasshatError."""
    code = cli.main(["compare", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def as_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code, out, err = run(capsys, *args, "--format", "json")
    assert (code, err) == (0, "")
    return json.loads(out)


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    base = write_results(tmp_path / "base.json", rows({"a": (3, 10), "b": (7, 10), "c": (5, 10), "gone": (2, 2)}))
    new = write_results(tmp_path / "new.json", rows({"a": (10, 10), "b": (9, 10), "c": (5, 10), "added": (1, 1)}))
    return str(base), str(new)


def test_verdicts(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    data = as_json(capsys, *files)
    a, b, c = data["tasks"]
    # a: 3/10 -> 10/10, Fisher p = 240/77520 = 0.0031 (see test_stats); Holm over 3 tasks: 3 x 0.0031 = 0.0093.
    assert (a["task"], a["change"], a["verdict"]) == ("a", pytest.approx(0.7), "better")
    assert a["p_value"] == pytest.approx(scipy_stats.fisher_exact([[3, 7], [10, 0]]).pvalue)
    assert a["p_holm"] == pytest.approx(3 * 240 / 77520)
    # b: 7/10 -> 9/10, p = 2820/4845 = 0.582: no detectable change at this n.
    assert (b["p_value"], b["verdict"]) == (pytest.approx(2820 / 4845), "no detectable change at n=10")
    assert (c["change"], c["p_value"], c["verdict"]) == (0.0, 1.0, "no detectable change at n=10")
    assert [a["p_holm"], b["p_holm"], c["p_holm"]] == pytest.approx(holm([a["p_value"], b["p_value"], 1.0]))
    assert (data["only_in_base"], data["only_in_new"]) == (["gone"], ["added"])
    suite = data["suite"]
    # paired change = (0.7 + 0.2 + 0) / 3 = 0.3; 3 tasks are fewer than an interval needs (5): none, and why.
    assert (suite["tasks"], suite["mean_change"], suite["better"], suite["worse"]) == (3, pytest.approx(0.3), 1, 0)
    assert (suite["ci_95"], suite["ci_note"]) == (None, "not enough tasks for a 95% interval (3; it needs 5)")


@pytest.fixture
def five(tmp_path: Path) -> tuple[str, str]:
    """Five tasks on both sides: enough for the suite's interval."""
    spec = {"a": (3, 10), "b": (7, 10), "c": (5, 10), "d": (8, 10), "e": (6, 10)}
    base = write_results(tmp_path / "base5.json", rows(spec))
    new = write_results(tmp_path / "new5.json", rows(spec | {"a": (10, 10), "b": (9, 10)}))
    return str(base), str(new)


def test_the_suite_interval_over_five_tasks(five: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    suite = as_json(capsys, *five)["suite"]
    # paired change = (0.7 + 0.2 + 0 + 0 + 0) / 5 = 0.18, inside its interval
    low, high = suite["ci_95"]
    assert (suite["mean_change"], suite["ci_note"]) == (pytest.approx(0.18), None)
    assert low < 0.18 < high


def test_fewer_than_five_tasks_say_so_in_every_format(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    note = "not enough tasks for a 95% interval (3; it needs 5)"
    for form in ("table", "md"):
        out = run(capsys, *files, "--format", form)[1]
        assert f"Mean change in pass rate over tasks: +0.300 ({note})." in out.replace("\\", "")
        assert "95% CI" not in out
    rows_ = list(csv.DictReader(io.StringIO(run(capsys, *files, "--format", "csv")[1])))
    assert {(r["suite_mean_change"], r["suite_low"], r["suite_high"], r["suite_note"]) for r in rows_} == {
        (repr(as_json(capsys, *files)["suite"]["mean_change"]), "", "", note)
    }


def test_single_task_real_change_survives_holm() -> None:
    # One task, so Holm changes nothing: 3/10 -> 10/10 is "better", and the reverse is "worse".
    (better,) = compare([("t", Side(10, 3), Side(10, 10))])
    (worse,) = compare([("t", Side(10, 10), Side(10, 3))])
    (small,) = compare([("t", Side(10, 7), Side(10, 9))])
    assert (better.verdict, better.p_holm) == ("better", pytest.approx(240 / 77520))
    assert worse.verdict == "worse"
    assert small.verdict == "no detectable change at n=10"


def test_holm_can_hide_a_change_among_many_tasks() -> None:
    # 2/10 -> 9/10 alone: Fisher p = 0.0055 < 0.05. Among 10 tasks Holm multiplies the smallest p by 10: 0.055.
    p = scipy_stats.fisher_exact([[2, 8], [9, 1]]).pvalue
    same = [(f"s{i}", Side(10, 5), Side(10, 5)) for i in range(9)]
    (alone,) = compare([("t", Side(10, 2), Side(10, 9))])
    crowd = compare([("t", Side(10, 2), Side(10, 9)), *same])
    assert alone.verdict == "better" and alone.p_value == pytest.approx(p)
    assert crowd[0].p_holm == pytest.approx(10 * p) and crowd[0].verdict == "no detectable change at n=10"


def test_unequal_n_and_unscored() -> None:
    flat, unscored = compare([("t", Side(10, 5), Side(8, 4)), ("u", Side(0, 0, errors=3), Side(10, 10))])
    assert flat.verdict == "no detectable change at n=10 vs 8"
    assert (unscored.verdict, unscored.p_value) == ("not comparable (no scored trials)", None)


def unwrapped(out: str) -> list[str]:
    """The lines of a compare table, each sentence whole again (they wrap at 120 columns, continuations indented)."""
    lines: list[str] = []
    for line in out.splitlines():
        if line.startswith("  ") and lines and lines[-1]:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def test_table(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *files)
    assert (code, err) == (0, "")
    assert max(len(line) for line in out.splitlines()) <= 120  # its summary ran to 143 columns
    lines = unwrapped(out)
    assert lines[:2] == [f"base: {files[0]}", f"new:  {files[1]}"]
    assert lines[3].split() == ["task", "base", "new", "change", "p", "p", "(Holm)", "verdict"]
    assert lines[5].split() == ["a", "3/10", "10/10", "+0.700", "0.003", "0.009", "better"]
    assert lines[6].split()[:6] == ["b", "7/10", "9/10", "+0.200", "0.582", "1.000"]
    assert lines[6].endswith("no detectable change at n=10")
    assert lines[9] == (
        "3 tasks compared: 1 better, 0 worse, 2 with no detectable change "
        "(Fisher's exact test, two-sided, Holm-adjusted, alpha 0.05)."
    )
    assert (
        lines[10]
        == "Mean change in pass rate over tasks: +0.300 (not enough tasks for a 95% interval (3; it needs 5))."
    )
    assert lines[11:] == ["Only in base (not compared): gone.", "Only in new (not compared): added."]


def test_fail_on_worse(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    base, new = files
    assert run(capsys, base, new, "--fail-on-worse")[0] == 0  # better is not worse
    assert run(capsys, new, base)[0] == 0  # worse, but not asked to fail
    code, out, _ = run(capsys, new, base, "--fail-on-worse")
    assert code == 1 and "worse" in out


def test_two_providers_in_one_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    both = rows({"a": (3, 10), "b": (7, 10)}, "terse") + rows({"a": (10, 10), "b": (9, 10)}, "verbose")
    path = write_results(tmp_path / "r.json", both)
    data = as_json(capsys, str(path), "--providers", "terse,verbose")
    verdicts = [(t["task"], t["verdict"]) for t in data["tasks"]]
    assert verdicts == [("a", "better"), ("b", "no detectable change at n=10")]
    assert (data["base"], data["new"]) == (f"{path} [terse]", f"{path} [verbose]")
    # Without --providers, two files with several providers compare each provider with itself.
    other = write_results(tmp_path / "s.json", rows({"a": (3, 10)}, "terse") + rows({"a": (0, 10)}, "verbose"))
    tasks = as_json(capsys, str(path), str(other))["tasks"]
    verdicts = [(t["task"], t["verdict"]) for t in tasks]
    assert verdicts == [("a [terse]", "no detectable change at n=10"), ("a [verbose]", "worse")]


def test_providers_across_two_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --providers A,B with two files: A from the base file, B from the new one (here under other labels).
    base = write_results(tmp_path / "base.json", rows({"a": (3, 10)}, "old") + rows({"a": (0, 10)}, "other"))
    new = write_results(tmp_path / "new.json", rows({"a": (10, 10)}, "new") + rows({"a": (10, 10)}, "other"))
    data = as_json(capsys, str(base), str(new), "--providers", "old,new")
    assert [(t["task"], t["verdict"]) for t in data["tasks"]] == [("a", "better")]
    assert (data["base"], data["new"]) == (f"{base} [old]", f"{new} [new]")


def test_jsonl_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "base.jsonl"
    base.write_text("".join(json.dumps(row) + "\n" for row in rows({"a": (3, 10)})))
    new = write_results(tmp_path / "new.json", rows({"a": (10, 10)}))
    code, out, _ = run(capsys, str(base), str(new), "--format", "csv")
    (row,) = csv.DictReader(io.StringIO(out))
    assert code == 0
    assert (row["task"], row["base_passes"], row["new_passes"], row["verdict"]) == ("a", "3", "10", "better")


def test_markdown(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, *files, "--format", "md")[1]
    assert out.splitlines()[0] == "| task | base | new | change | p | p (Holm) | verdict |"
    assert "| a | 3/10 | 10/10 | +0.700 | 0.003 | 0.009 | better |" in out


def test_seeded_interval(five: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    first = as_json(capsys, *five)["suite"]["ci_95"]
    assert first is not None and as_json(capsys, *five)["suite"]["ci_95"] == first
    assert as_json(capsys, *five, "--seed", "9")["suite"]["ci_95"] != first


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["{base}"], "compare needs two results files (passhat compare BASE.json NEW.json) or one file and "
                     "--providers A,B", id="one-file"),
        pytest.param(["{base}", "--providers", "sonnet,nope"], "no rows from provider 'nope' (--providers); the "
                     "providers in it are: sonnet", id="unknown-provider"),
        pytest.param(["{base}", "{other}"], "no task appears on both sides; compare runs of the same tasks "
                     "(base has a, b, c, gone; new has zzz)", id="no-common-task"),
        pytest.param(["{base}", "{missing}"], "no such file", id="missing-file"),
    ],
)  # fmt: skip
def test_bad_input(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    other = write_results(tmp_path / "other.json", rows({"zzz": (1, 1)}))
    paths = {"base": files[0], "other": str(other), "missing": str(tmp_path / "missing.json")}
    code, out, err = run(capsys, *(arg.format(**paths) for arg in args))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--providers", "a"], "--providers 'a': expected two provider labels, BASE,NEW", id="providers"),
        pytest.param(["--alpha", "5"], "--alpha '5': expected a number between 0 and 1, e.g. 0.05", id="alpha"),
    ],
)
def test_bad_options(files: tuple[str, str], capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run(capsys, files[0], *args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif("compare" not in cli.COMMANDS, reason="cli.py does not list `compare` in COMMANDS")
def test_wired_into_the_cli(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compare", *files, "--fail-on-worse"]) == 0
    assert "1 better" in capsys.readouterr().out


def test_long_task_names_are_cut_to_fit_120_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = [f"a-rather-long-task-name-for-the-compare-table-number-{i:02d}" for i in range(3)]
    base = write_results(tmp_path / "b.json", rows(dict.fromkeys(names, (3, 10))))
    new = write_results(tmp_path / "n.json", rows(dict.fromkeys(names, (9, 10))))
    out = run(capsys, str(base), str(new))[1]
    assert max(len(line) for line in out.splitlines()) <= 120
    shown = [line.split()[0] for line in out.splitlines() if line.startswith("a-rather")]
    assert len(set(shown)) == 3 and all("…" in name for name in shown)  # cut in the middle: still told apart
