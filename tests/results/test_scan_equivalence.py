"""Every figure of `passhat report --format json` stays what the reader before msgspec computed.

The expected outputs in tests/results/data/equivalence/ were captured by running this module as a script
(`python tests/results/test_scan_equivalence.py --capture`) on the code as it was before the reader was
rewritten (see tests/results/data/README.md); the figures are compared as parsed JSON, exactly (floats
included). Inputs: promptfoo's own golden file (tests/report/data), the same rows as JSONL, and files
from `varied_rows` (every row shape the reader handles) in promptfoo's pretty layout, compact, and JSONL,
at 2,000 rows and (e2e, slow to write) 100,000 rows.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
import varied_rows

from passhat import cli

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "data" / "equivalence"
GOLDEN = HERE.parent / "report" / "data" / "ctrl-c-then-resume" / "results.json"


def as_jsonl(source: Path, dest: Path) -> Path:
    """The rows of a promptfoo results.json, one per line (what `-o results.jsonl` holds)."""
    rows = json.loads(source.read_text(encoding="utf-8"))["results"]["results"]
    dest.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return dest


Maker = Callable[[Path], Path]
SMALL: dict[str, Maker] = {
    "ctrl-c-then-resume.json": lambda d: GOLDEN,
    "ctrl-c-then-resume.jsonl": lambda d: as_jsonl(GOLDEN, d / "results.jsonl"),
    "varied-2000.json": lambda d: varied_rows.write_json(d / "results.json", 2000),
    "varied-2000-compact.json": lambda d: varied_rows.write_json(d / "results.json", 2000, indent=None),
    "varied-2000.jsonl": lambda d: varied_rows.write_jsonl(d / "results.jsonl", 2000),
}
BIG: dict[str, Maker] = {
    "varied-100000.json": lambda d: varied_rows.write_json(d / "results.json", 100_000, tasks=60),
    "varied-100000.jsonl": lambda d: varied_rows.write_jsonl(d / "results.jsonl", 100_000, tasks=60),
}


def report_figures(path: Path) -> dict:
    """`passhat report PATH --format json`, parsed; the source path (a temporary folder) made its file name."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["report", str(path), "--format", "json"])
    assert (code, err.getvalue()) == (0, "")
    figures = json.loads(out.getvalue())
    figures["provenance"]["source"] = path.name
    return figures


ADDED_SECTIONS = ("cheats",)  # report sections added after the capture (none of these files has an impossible task)
ADDED_SINCE = ("named_scores", "gamed", "scanned")  # per-task figures added after the capture: tested on their own
SUITE_ADDED_SINCE = ("gamed", "scanned")  # the same, in `suite` and in each of its providers
# The verdict's interval changed on purpose after the capture (Wilson -> Clopper-Pearson, issue 26; checked in
# tests/report/test_report_verdict.py): what the reader gives it (n, passes, the estimate from them) is still
# compared here.
VERDICT_FROM_READER = ("k", "threshold", "estimate", "estimator", "passes", "n")
# pass^k changed on purpose after the capture (C(c,k)/C(n,k) -> (c/n)^k, undefined when n < k: issue 31; checked in
# tests/report and tests/stats): figures of (n, passes), which are still compared here, left out on both sides.
CHANGED_SINCE = ("pass_hat_k", "summary", "mean_pass_hat_k", "tiers", "figures", "estimate")


def _reader_part(figures: dict) -> dict:
    figures["verdict"] = {key: figures["verdict"][key] for key in ("k", "threshold")}
    figures["provenance"].pop("rounds", None)  # added since: the rounds of `passhat eval --until-decided`
    for added in ("models_answered", "claude_code_versions", "agent_sdk_versions"):  # added since: what ran
        figures["provenance"].pop(added, None)
    for task in figures.get("tasks", []):
        task["verdict"] = {key: task["verdict"][key] for key in VERDICT_FROM_READER}
    for judged in figures.get("judge") or []:
        judged.pop("scripted", None)  # added since: a judge of the scripted model says so
    return figures


def _unchanged(figures: dict) -> dict:
    for part in [figures, figures.get("suite", {}), *figures.get("suite", {}).get("providers", []),
                 *figures.get("tasks", []), *(t["verdict"] for t in figures.get("tasks", []))]:  # fmt: skip
        for key in CHANGED_SINCE:
            part.pop(key, None)
    return figures


def check(name: str, make: Maker, folder: Path) -> None:
    expected = _unchanged(_reader_part(json.loads((EXPECTED / name).read_text(encoding="utf-8"))))
    actual = _unchanged(_reader_part(report_figures(make(folder))))
    for task in actual.get("tasks", []):
        for key in ADDED_SINCE:
            task.pop(key)
    for key in ADDED_SECTIONS:
        assert actual.pop(key)["tasks"] == []
    suite = actual.get("suite", {})
    for part in [suite, *suite.get("providers", [])]:
        for key in SUITE_ADDED_SINCE:
            part.pop(key)
    assert actual.keys() == expected.keys()
    for key in expected:  # one key at a time: a difference names the part of the report it is in
        assert actual[key] == expected[key], key


@pytest.mark.parametrize("name", sorted(SMALL))
def test_figures_are_unchanged(name: str, tmp_path: Path) -> None:
    check(name, SMALL[name], tmp_path)


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(BIG))
def test_figures_of_100000_rows_are_unchanged(name: str, tmp_path: Path) -> None:
    check(name, BIG[name], tmp_path)


def test_the_generated_files_are_the_captured_ones(tmp_path: Path) -> None:
    """The expected figures hold only for the same bytes: the generator must not drift (a changed row shape
    would fail the comparison for the wrong reason, or pass it by luck)."""
    made = varied_rows.write_json(tmp_path / "results.json", 2000)
    digest = (EXPECTED / "varied-2000.sha256").read_text(encoding="utf-8").strip()
    assert hashlib.sha256(made.read_bytes()).hexdigest() == digest


def capture(folder: Path) -> None:
    """Write the expected figures (and the 2,000-row file's digest) with the code as it is now."""
    EXPECTED.mkdir(parents=True, exist_ok=True)
    for name, make in {**SMALL, **BIG}.items():
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            path = make(Path(tmp))
            figures = report_figures(path)
            if name == "varied-2000.json":
                (EXPECTED / "varied-2000.sha256").write_text(hashlib.sha256(path.read_bytes()).hexdigest() + "\n")
        (EXPECTED / name).write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"captured {name}", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:] != ["--capture"]:
        sys.exit("usage: python tests/results/test_scan_equivalence.py --capture")
    capture(Path(tempfile.gettempdir()))
