"""`passhat report --format html`: one self-contained page whose every figure is report_data's, exactly.

The page is parsed here with html.parser (tests/test_e2e_report_html.py renders it in Chromium). Each figure
is an element with data-figure="TASK|PROVIDER|NAME" and data-value = the JSON of the value in `--format json`,
so the check is equality after json.loads, no rounding. Also: `-o` writes atomically, `--db` adds the drift
plot, and the progress line on a terminal.
"""

from __future__ import annotations

import io
import json
import os
import threading
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from test_report import report, suite_rows, write_results
from test_report_figures import trial_row

from passhat.cli import main
from passhat.report._plots import _ticks
from passhat.report._tables import columns
from passhat.report.totals import _parallel
from passhat.results import _progress
from passhat.results._progress import Counted, Progress, for_file

ODD = '<script>alert("odd & co")</script>'  # a user's task name: must come back as text, never as markup
TASK_FIELDS = (
    "n", "passes", "errors", "unscored", "pass_rate", "wilson_95", "flaky", "clean_exit_rate", "mean_duration_ms",
    "p90_duration_ms", "mean_turns", "mean_cost_usd", "cost_per_success_usd", "tier", "gamed",
)  # fmt: skip


def html_rows() -> list[dict[str, Any]]:
    # suite_rows: add-tests 1/2 (+1 infra error, SDK provider), bump-version 6/10, fix-typo 3/3 (sonnet).
    # ODD (tier "medium", sonnet): 2 passes, 1 fail at $0.10 each: $0.30 / 2 passes = $0.15 per success.
    rows = suite_rows()
    rows += [trial_row(ODD, outcome, tier="medium") for outcome in ("pass", "fail", "pass")]
    for row in rows[-3:]:  # ODD's graders looked for gaming and found none: the table has the gamed column
        row["namedScores"] = {**(row.get("namedScores") or {}), "gamed": 0.0}
    return rows


def expected_figures(data: dict[str, Any]) -> dict[str, Any]:
    """Every figure the page may show, by its data-figure name, from the `--format json` report."""
    want: dict[str, Any] = {}
    for t in data["tasks"]:
        at = f"{t['task']}|{t['provider']}|"
        want.update({at + name: t[name] for name in TASK_FIELDS})
        for field in ("pass_at_k", "pass_hat_k"):
            want.update({f"{at}{field}.{k}": value for k, value in t[field].items()})
        want.update(
            {
                f"{at}verdict.verdict": t["verdict"]["verdict"],
                f"{at}verdict.ci_95": t["verdict"]["ci_95"],
                f"{at}verdict.estimate": t["verdict"]["estimate"],
                f"{at}verdict.runs_to_decide": t["verdict"]["runs_to_decide"],
            }
        )
        for i, reason in enumerate(t["infra_error_reasons"]):
            want.update({f"{at}infra_error_reasons.{i}.{key}": reason[key] for key in ("reason", "count")})
    for p in data["suite"]["providers"]:
        at = f"(suite)|{p['provider']}|"
        want.update(
            {at + name: p[name] for name in ("tasks", "all_pass", "flaky", "never_pass", "errors", "gamed", "icc1")}
        )
        for k, f in p["mean_pass_hat_k"].items():
            want.update({f"{at}mean_pass_hat_k.{k}.mean": f["mean"], f"{at}mean_pass_hat_k.{k}.ci_95": f["ci_95"]})
    for g in data["gates"]:
        want.update({f"(gate)|{g['gate']}|passed": g["passed"], f"(gate)|{g['gate']}|failures": g["failures"]})
    want.update({"(report)||unattended_runs": data["unattended_runs"],
                 "(report)||bootstrap.resamples": data["bootstrap"]["resamples"],
                 "(report)||bootstrap.seed": data["bootstrap"]["seed"],
                 "(report)||verdict.k": data["verdict"]["k"], "(report)||verdict.threshold": data["verdict"]["threshold"],
                 "(report)||verdict.reach": data["verdict"]["reach"],
                 **{f"(report)||provenance.{key}": value for key, value in data["provenance"].items()}})  # fmt: skip
    for s in (data.get("history") or {}).get("series", []):
        for b in s["batches"]:
            want[f"{s['task']}|{s['provider']}|history.{b['eval_id']}.mean"] = b["mean"]
    for d in data.get("judge") or []:
        at = f"{d['task']}|{d['provider']}|judge.{d['judge']}.{d['judge_version']}."
        want.update({at + name: d[name] for name in ("scored", "unscored", "mean_score", "passes")})
    return want


def assert_figures_match(shown: dict[str, list[Any]], data: dict[str, Any]) -> None:
    """Every figure on the page equals the JSON report's; every task figure of the table is on the page."""
    want = expected_figures(data)
    unknown = sorted(set(shown) - set(want))
    assert not unknown, f"figures on the page that the JSON report does not have: {unknown}"
    wrong = {name: (values, want[name]) for name, values in shown.items() if any(v != want[name] for v in values)}
    assert not wrong, f"page vs JSON: {wrong}"
    tiers = any(t["tier"] for t in data["tasks"])
    needed = {
        name for name in want if name.split("|")[0] not in ("(report)",) and (tiers or not name.endswith("|tier"))
    }
    missing = sorted(needed - set(shown))
    assert not missing, f"figures of the JSON report missing on the page: {missing}"


class Page(HTMLParser):
    """The figures (data-figure -> JSON-decoded data-values), the per-task table's cells and the page's text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.figures: dict[str, list[Any]] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self.text: list[str] = []
        self.tags: list[str] = []
        self._table: str | None = None
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append(tag)
        if "data-figure" in found and "data-value" in found:
            self.figures.setdefault(found["data-figure"] or "", []).append(json.loads(found["data-value"] or ""))
        if tag == "table":
            self._table = found.get("id") or ""
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def html_and_json(capsys: pytest.CaptureFixture[str], path: Path, out: Path, *args: str) -> tuple[Page, dict]:
    code, stdout, _ = report(capsys, str(path), "--format", "html", "-o", str(out), *args)
    assert stdout == ""  # -o: the page went to the file
    data = json.loads(report(capsys, str(path), "--format", "json", *args)[1])
    return Page(out.read_text(encoding="utf-8")), data


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_results(tmp_path / "results.json", html_rows())


def test_every_figure_is_the_json_reports(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page, data = html_and_json(capsys, results, tmp_path / "report.html", "--unattended-runs", "3")
    assert_figures_match(page.figures, data)
    # bump-version 6/10: pass^3 = (6/10)^3 = 27/125, shown as 0.216 and carried exactly.
    assert page.figures["bump-version|sonnet|pass_hat_k.3"] == [27 / 125] * 2  # the table and the pass^k plot
    assert page.figures["fix-typo|sonnet|cost_per_success_usd"] == [pytest.approx(0.2)] * 2  # table, cost bars
    # add-tests: n=2 < k=3: undefined, null in the page as in the JSON, and written "n<k" in the plot, not a 0.
    assert page.figures["add-tests|anthropic:claude-agent-sdk|pass_hat_k.3"] == [None, None]
    for line in data["summary"]:
        assert line in "".join(page.text)


def test_the_tables_have_the_cells_of_the_table_format(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, data = html_and_json(capsys, results, tmp_path / "report.html", "--unattended-runs", "3")
    head, rows, _ = columns(data, 3)  # what `--format table --wide` lays out
    main, more = page.tables["tasks"], page.tables["tasks-more"]  # the columns split in two, names in both
    assert [row[0] for row in main] == [row[0] for row in more] == ["task", *(row[0] for row in rows)]
    assert main[0] == [
        "task",
        "provider",
        "tier",
        "n",
        "pass",
        "gamed",
        "err",
        "pass@1",
        "95% CI",
        "pass^3*",
        "pass^5",
        "pass^10",
        "verdict",
        "$/success",
    ]  # "pass^3*": the unattended k, marked; +trials and flaky in the second table (the page fits 1400 px)
    more_head = [
        "task",
        "provider",
        "unsc",
        "pass@3",
        "pass@5",
        "pass@10",
        "+trials",
        "flaky",
        "clean",
        "mean s",
        "p90 s",
        "turns",
        "mean $",
    ]
    assert more[0] == more_head
    for shown in (main, more):
        picked = [head.index(name) for name in shown[0]]
        assert shown[1:] == [[row[i] for i in picked] for row in rows]


def test_task_names_are_text_not_markup(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    page, _ = html_and_json(capsys, results, out)
    raw = out.read_text(encoding="utf-8")
    assert "<script" not in raw  # escaped everywhere: table, plots' labels and titles, attributes
    assert "&lt;script&gt;alert(&quot;odd &amp; co&quot;)&lt;/script&gt;" in raw
    assert ODD in [row[0] for row in page.tables["tasks"]]  # and read back as the name itself
    assert f"{ODD} [sonnet]" in [row[0] for row in page.tables["verdict"]]  # two providers: named
    assert f"{ODD}|sonnet|cost_per_success_usd" in page.figures  # $0.30 / 2 passes
    assert page.figures[f"{ODD}|sonnet|cost_per_success_usd"] == [pytest.approx(0.15)] * 2


def test_self_contained_and_accessible(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    page, data = html_and_json(capsys, results, out, "--gate", "pass^3>=0.5")
    raw = out.read_text(encoding="utf-8")
    for outside in ("http:", "https:", "//", "src=", "href=", "<script", "<link", "@import", "url("):
        assert outside not in raw.replace("</", "<"), outside  # no request, no script, no font to fetch
    assert raw.startswith("<!doctype html>") and "<title>passhat report" in raw
    assert {"h1", "h2", "table", "caption", "svg", "title", "desc"} <= set(page.tags)
    assert 'th scope="col"' in raw and 'th scope="row"' in raw
    assert page.tags.count("svg") >= 3  # pass rate, a pass^k panel per task, cost
    # Each plot mark has a <title>: every circle, bar and interval opens one right after itself.
    marks = raw.count("<circle") + raw.count("<rect") + raw.count('<g class="ci"')
    assert marks and raw.count("<title>") >= marks
    assert page.figures["(gate)|pass^3>=0.5|passed"] == [False] and data["gates"][0]["passed"] is False


def test_output_is_written_whole_even_when_a_gate_fails(results: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "report.html"
    out.write_text("old report")
    code, stdout, err = report(capsys, str(results), "--format", "html", "-o", str(out), "--gate", "pass^3>=0.5")
    assert (code, stdout) == (1, "")  # the gate fails, the page says which, on file
    assert "gate failed: pass^3>=0.5" in err and "FAILS" in out.read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    code, stdout, _ = report(capsys, str(results), "--format", "csv", "-o", str(tmp_path / "r.csv"))
    assert (code, stdout) == (0, "") and (tmp_path / "r.csv").read_text().startswith("task,provider,tier,n,")


def test_output_into_a_missing_folder(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, err = report(capsys, str(results), "--format", "html", "-o", str(tmp_path / "no" / "r.html"))
    assert (code, stdout) == (2, "")
    assert err == (f"passhat: error: -o {tmp_path / 'no' / 'r.html'}: cannot write the report (No such file or "
                   "directory); check that its folder exists and is writable\n")  # fmt: skip


def test_html_goes_to_stdout_without_o(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = report(capsys, str(results), "--format", "html")
    assert code == 0 and stdout.startswith("<!doctype html>") and stdout.endswith("</html>\n")


# --- the drift plot: --db ---------------------------------------------------------------------------------------


def eval_file(path: Path, eval_id: str, when: str, scores: dict[str, list[float]]) -> Path:
    """A results file of one eval: task -> each trial's score (0..1); a trial passes at score >= 0.5."""
    rows = []
    for task, values in scores.items():
        for repeat, score in enumerate(values):
            row = trial_row(task, "pass" if score >= 0.5 else "fail")
            row["metadata"]["repeat_index"] = repeat
            row["score"] = score
            rows.append(row)
    write_results(path, rows)
    data = json.loads(path.read_text())
    data["evalId"], data["results"]["timestamp"] = eval_id, when
    path.write_text(json.dumps(data, indent=2))
    return path


@pytest.fixture
def history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """Three evals appended with `passhat drift`; the last one is the report's results file."""
    db = tmp_path / "history.db"
    evals = [
        ("eval-1", "2025-01-01T00:00:00.000Z", {"alpha": [0.8, 0.9, 0.7], "beta": [1.0, 1.0]}),
        ("eval-2", "2025-01-02T00:00:00.000Z", {"alpha": [0.6, 0.7, 0.5], "beta": [1.0, 0.9]}),
        ("eval-3", "2025-01-03T00:00:00.000Z", {"alpha": [0.4, 0.5, 0.3]}),  # beta not run this time
    ]
    for eval_id, when, scores in evals:
        path = eval_file(tmp_path / f"{eval_id}.json", eval_id, when, scores)
        assert main(["drift", str(path), "--db", str(db)]) == 0
    capsys.readouterr()
    return path, db


def test_db_adds_the_pass_rate_per_eval(history: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    results, db = history
    page, data = html_and_json(capsys, results, tmp_path / "report.html", "--db", str(db))
    assert_figures_match(page.figures, data)
    # alpha passes at score >= 0.5: 3/3, then 3/3 (0.6, 0.7, 0.5), then 1/3 (only 0.5) — the pass rate, what the
    # verdict is about (the scores' means would be 0.8, 0.6, 0.4). beta is not in eval-3, so not in the report:
    # only the report's own (task, provider) pairs are read from the history.
    (alpha,) = data["history"]["series"]
    assert (data["history"]["metric"], alpha["task"], alpha["judge_version"]) == ("pass", "alpha", "none")
    assert [(b["eval_id"], b["n"]) for b in alpha["batches"]] == [("eval-1", 3), ("eval-2", 3), ("eval-3", 3)]
    assert [b["mean"] for b in alpha["batches"]] == [1.0, 1.0, pytest.approx(1 / 3)]
    assert page.figures["alpha|sonnet|history.eval-2.mean"] == [alpha["batches"][1]["mean"]]
    assert "plot-history-0" in (tmp_path / "report.html").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--db", "{db}"], "--db {db}: the score history is shown by --format html (a plot) or json; "
                     "pass one of them", id="table-format"),
        pytest.param(["--format", "html", "--db", "{tmp}/none.db"], "--db {tmp}/none.db: no such file; `passhat "
                     "drift results.json --db {tmp}/none.db` appends an eval to the history, or drop --db",
                     id="missing-db"),
    ],
)  # fmt: skip
def test_db_refused(history: tuple[Path, Path], tmp_path: Path, capsys, args: list[str], message: str) -> None:
    results, db = history
    code, stdout, err = report(capsys, str(results), *(a.format(db=db, tmp=tmp_path) for a in args))
    assert (code, stdout) == (2, "")
    assert err == f"passhat: error: {message.format(db=db, tmp=tmp_path)}\n"
    assert not (tmp_path / "none.db").exists()  # a report never starts a history


# --- plots' arithmetic ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("top", "ticks", "end"),
    [
        pytest.param(0.8, [0, 0.2, 0.4, 0.6, 0.8], 0.8, id="0.8: step 0.2"),  # 0.8 / 4 = 0.2
        pytest.param(0.17, [0, 0.05, 0.1, 0.15, 0.2], 0.2, id="0.17: step 0.05"),  # 0.0425 -> 0.05
        pytest.param(3.1, [0, 1, 2, 3, 4], 4, id="3.1: step 1"),  # 0.775 -> 1
        pytest.param(0.0021, [0, 0.001, 0.002, 0.003], 0.003, id="small"),  # 0.000525 -> 0.001
    ],
)
def test_cost_axis_ticks(top: float, ticks: list[float], end: float) -> None:
    got, got_end = _ticks(top)
    assert got == pytest.approx(ticks) and got_end == pytest.approx(end) and got_end >= top


# --- the progress line ------------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_redraws_at_most_ten_times_a_second() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(out, 200 << 20, "r.json", clock=clock)
    progress.add(10 << 20)  # the first read draws at once
    clock.now = 0.05
    progress.add(10 << 20)  # 50 ms later: not redrawn
    clock.now = 0.1
    progress.add(80 << 20)  # 100 ms after the last draw: redrawn, 100 of 200 MB
    progress.elsewhere = lambda: 100 << 20  # the other half's reader is done too
    clock.now = 0.25
    progress.show()
    progress.close()
    assert out.getvalue().split("\r\x1b[K") == [
        "", "reading r.json: 10 / 200 MB (5%)", "reading r.json: 100 / 200 MB (50%)",
        "reading r.json: 200 / 200 MB (100%)", "",  # erased at the end: the report starts on a clean line
    ]  # fmt: skip


def test_progress_only_on_a_terminal_and_for_big_files(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(60 << 20)  # sparse: 60 MB of size, no disk
    assert for_file(big, io.StringIO(), tty=False) is None  # a CI log: never
    assert for_file(big, io.StringIO()) is None  # StringIO.isatty() is False
    assert for_file(tmp_path / "small.json", Terminal()) is None  # cannot be sized: the read says why
    assert isinstance(for_file(big, Terminal()), Progress)
    assert for_file(big, Terminal(), minimum=61 << 20) is None
    quiet = Progress(io.StringIO(), 10, "x")
    quiet.close()
    assert quiet.stream.getvalue() == ""  # nothing drawn, nothing erased


def test_counted_reads_add_up_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(b'{"i": %d}\n' % i for i in range(1000)))
    seen: list[int] = []
    with path.open("rb") as raw:
        assert len(list(Counted(raw, seen.append, step=1000))) == 1000
    assert sum(seen) == path.stat().st_size and len(seen) < 20  # lines told in batches of >= 1000 bytes
    seen.clear()
    with path.open("rb") as raw:
        counted = Counted(raw, seen.append)
        counted.seek(5)
        assert counted.read(10) == path.read_bytes()[5:15] and seen == [10] and counted.tell() == 15


@pytest.mark.parametrize("two_parts", [False, True], ids=["one-pass", "two-processes"])
def test_progress_counts_every_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_parts: bool) -> None:
    if two_parts and (threading.active_count() > 1 or (os.cpu_count() or 1) < 2):
        pytest.skip("two-process reads are off with one CPU or while threads run (an earlier test left one)")
    path = write_results(tmp_path / "results.json", [trial_row(f"t{i % 5}", "pass") for i in range(300)])
    monkeypatch.setattr(_parallel, "PARALLEL_BYTES", 0 if two_parts else 1 << 40)
    progress = Progress(io.StringIO(), path.stat().st_size, "results.json", clock=Clock())
    wrapper: dict[str, Any] = {}
    groups = _parallel.fold_file(path, progress, wrapper)
    assert sum(g.n for g in groups.values()) == 300
    # The wrapper's provenance is read whichever process reads which half (evalId before the rows, metadata after).
    assert (wrapper["eval_id"], wrapper["promptfoo_version"]) == ("eval-abc-2025-01-01T00:00:00", "0.123.1")
    assert progress.done + progress.elsewhere() == path.stat().st_size  # head here + tail in the child
    if two_parts:
        assert 0 < progress.done < path.stat().st_size  # the head was read here, the tail in the child


def test_report_shows_progress_on_a_terminal_only(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passhat.report._report import run_report

    monkeypatch.setattr(_progress, "MIN_BYTES", 0)
    out, err = io.StringIO(), Terminal()
    assert run_report(results, (1, 3), "json", out, err=err) == 0
    assert err.getvalue().startswith(f"\r\x1b[Kreading {results.name}: 0 / 0 MB")
    assert err.getvalue().endswith("\r\x1b[K")  # erased before anything else is said
    quiet = io.StringIO()
    assert run_report(results, (1, 3), "json", io.StringIO(), err=quiet) == 0
    assert quiet.getvalue() == ""


def test_the_page_has_the_llm_judges_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The table, md and JSON reports had the judge's scores per criterion; the page had none."""
    from test_report_formats import judged_rows

    path = write_results(tmp_path / "results.json", judged_rows())
    page, data = html_and_json(capsys, path, tmp_path / "report.html")
    assert_figures_match(page.figures, data)
    (judged,) = data["judge"]
    # write-changelog: two judged trials, 0.8 and 0.6: mean 0.7, both passed
    assert (judged["task"], judged["mean_score"], judged["passes"]) == ("write-changelog", pytest.approx(0.7), 2)
    at = f"write-changelog|{judged['provider']}|judge.judge.12304a252ea0."
    assert page.figures[at + "mean_score"] == [judged["mean_score"]] and page.figures[at + "passes"] == [2]
    html = (tmp_path / "report.html").read_text()
    assert '<h2 id="judge">LLM judge</h2>' in html and "instruction_following 0.70, coherence 1.00" in html
