"""`passhat report --gate`: exit 1 when a gate fails (naming the gate and the tasks), 2 for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_report import report, write_results
from test_report_figures import suite_of, trial_row

from passhat.common._errors import PasshatError
from passhat.report._gates import parse_gate

# steady 10/10; shaky 8/10; short 3/3 (n=3 < 7).
SPEC = {"steady": (10, 10, "simple"), "shaky": (8, 10, "simple"), "short": (3, 3, "medium")}


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_results(tmp_path / "results.json", suite_of(SPEC))


def gate(capsys: pytest.CaptureFixture[str], path: Path, *gates: str) -> tuple[int, list[str]]:
    args = [arg for text in gates for arg in ("--gate", text)]
    code, _, err = report(capsys, str(path), *args)
    return code, err.splitlines()


@pytest.mark.parametrize(
    ("text", "code", "line"),
    [
        # pass^7 = (c/n)^7: steady 1; shaky (8/10)^7 = 0.2097; short n=3 < 7: undefined fails the gate.
        pytest.param(
            "pass^7>=0.9", 1,
            "passhat: gate failed: pass^7>=0.9: shaky = 0.210; short undefined (n=3 < k=7)", id="pass-hat-k",
        ),
        # pass^2: shaky (8/10)^2 = 0.64; short 1.
        pytest.param("pass^2 >= 0.6", 0, "passhat: gate passed: pass^2 >= 0.6", id="pass-hat-k-holds"),
        # pass@3: shaky 1 - C(2,3)/C(10,3) = 1; short 1; steady 1.
        pytest.param("pass@3==1", 0, "passhat: gate passed: pass@3==1", id="pass-at-k"),
        # mean pass^3 over all three (n >= 3): (1 + (8/10)^3 + 1) / 3 = (2 + 0.512) / 3 = 0.837.
        pytest.param(
            "mean_pass^3>0.9", 1, "passhat: gate failed: mean_pass^3>0.9: mean pass^3 = 0.837", id="mean-pass-hat-k"
        ),
        pytest.param("mean_pass^3>0.8", 0, "passhat: gate passed: mean_pass^3>0.8", id="mean-holds"),
        pytest.param("mean_pass^20>=0", 1, "passhat: gate failed: mean_pass^20>=0: undefined (no task has n >= 20)",
                     id="mean-undefined"),
        pytest.param("flaky<=0", 1, "passhat: gate failed: flaky<=0: 1 flaky: shaky (8/10)", id="flaky"),
        pytest.param("flaky<=2", 0, "passhat: gate passed: flaky<=2", id="flaky-holds"),
        pytest.param("errors==0", 0, "passhat: gate passed: errors==0", id="errors"),
        pytest.param("pass_rate>=0.9", 1, "passhat: gate failed: pass_rate>=0.9: shaky = 0.800", id="pass-rate"),
        pytest.param("clean_exit>=1", 0, "passhat: gate passed: clean_exit>=1", id="clean-exit"),
    ],
)  # fmt: skip
def test_gates(results: Path, capsys: pytest.CaptureFixture[str], text: str, code: int, line: str) -> None:
    assert gate(capsys, results, text) == (code, [line])


def test_several_gates_one_failing(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = gate(capsys, results, "flaky<=2", "pass^7>=0.9")
    assert code == 1
    assert lines[0] == "passhat: gate passed: flaky<=2"
    assert lines[1].startswith("passhat: gate failed: pass^7>=0.9: ")


def test_errors_and_clean_exit_gates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = suite_of({"a": (2, 2, "simple")}) + [
        trial_row("a", "error", status="infra_error"),
        trial_row("b", "pass", status="timeout"),
        trial_row("c", "pass", status=None, is_error=None),
    ]
    path = write_results(tmp_path / "r.json", rows)
    assert gate(capsys, path, "errors<1") == (1, ["passhat: gate failed: errors<1: 1 infra error: a (1)"])
    # a: 2 clean of 2 (the infra error is not scored); b: 0 of 1; c: reports no health -> fails with the reason.
    assert gate(capsys, path, "clean_exit>=0.5") == (
        1,
        ["passhat: gate failed: clean_exit>=0.5: b = 0; c undefined (the provider reports no is_error/status)"],
    )


def test_gates_per_provider(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [trial_row("a", "pass" if i < 5 else "fail", label="terse") for i in range(10)]
    rows += [trial_row("a", "pass", label="verbose") for i in range(10)]
    path = write_results(tmp_path / "r.json", rows)
    assert gate(capsys, path, "flaky==0") == (1, ["passhat: gate failed: flaky==0: terse: 1 flaky: a (5/10)"])
    assert gate(capsys, path, "pass^1>0.6") == (1, ["passhat: gate failed: pass^1>0.6: a [terse] = 0.500"])


def test_gate_results_in_json(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = report(capsys, str(results), "--format", "json", "--k", "1", "--gate", "pass^7>=0.9")
    data = json.loads(out)  # stdout stays clean JSON; the gate lines go to stderr
    assert code == 1
    assert data["ks"] == [1, 7]  # the gate's k is computed even though --k did not ask for it
    assert data["gates"] == [
        {"gate": "pass^7>=0.9", "passed": False, "failures": ["shaky = 0.210", "short undefined (n=3 < k=7)"]}
    ]


FIX = (
    "write METRIC OP NUMBER, e.g. --gate 'pass^7>=0.9' or --gate 'flaky<=2' (metrics: pass^K, pass@K, "
    "mean_pass^K, flaky, errors, pass_rate, clean_exit; ops: >= > <= < ==)"
)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("pass^7", "no comparison operator", id="no-op"),
        pytest.param(">=0.9", "no metric before the operator", id="no-metric"),
        pytest.param("pass^7=0.9", "unknown operator '='", id="single-equals"),
        pytest.param("pass^7=>0.9", "unknown operator '=>'", id="arrow"),
        pytest.param("pass^x>=0.9", "pass^ needs a positive whole k, as in pass^7", id="k-not-a-number"),
        pytest.param("pass^0>=0.9", "pass^ needs a positive whole k, as in pass^7", id="k-zero"),
        pytest.param("pass@>=0.9", "pass@ needs a positive whole k, as in pass@7", id="k-missing"),
        pytest.param("speed>=0.9", "unknown metric 'speed'", id="unknown-metric"),
        pytest.param("pass^7>=high", "'high' is not a number", id="not-a-number"),
        pytest.param("pass^7>=", "'' is not a number", id="no-number"),
        pytest.param("pass^7>=90", "pass^7 is a rate between 0 and 1, and 90 is not", id="percent"),
        pytest.param("flaky<=-1", "flaky is a count, and -1 is negative", id="negative-count"),
    ],
)
def test_bad_gate_text(results: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str) -> None:
    code, out, err = report(capsys, str(results), "--gate", text)
    assert (code, out) == (2, "")
    assert err == f"passhat: error: --gate {text!r}: {problem}; {FIX}\n"


def test_bad_gate_before_reading_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = report(capsys, str(tmp_path / "missing.json"), "--gate", "bogus")
    assert code == 2 and err.startswith("passhat: error: --gate 'bogus'")


def test_bad_input_is_still_2_with_gates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = report(capsys, str(tmp_path / "missing.json"), "--gate", "flaky<=2")
    assert code == 2 and "no such file" in err


def test_parse_gate() -> None:
    parsed = parse_gate("  mean_pass^10 >= 0.75 ")
    fields = (parsed.metric, parsed.k, parsed.op, parsed.threshold, parsed.name)
    assert fields == ("mean_pass^", 10, ">=", 0.75, "mean_pass^10")
    with pytest.raises(PasshatError):
        parse_gate("")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        # shaky is 8/10. pass@1 = 1 - C(2,1)/C(10,1) = 8/10 exactly: it holds at 0.8. The float product form gave
        # 0.7999999999999999 and failed this gate.
        pytest.param("pass@1>=0.8", 0, id="pass-at-1-at-exactly-8-of-10"),
        pytest.param("pass_rate>=0.8", 0, id="pass-rate-at-exactly-8-of-10"),
        pytest.param("pass@1>0.8", 1, id="not-above"),
        # pass^2 = (8/10)^2 = 16/25 exactly; in floats 0.8 ** 2 = 0.6400000000000001, which would pass > 0.64: the
        # comparison is of the exact fraction with the number as written.
        pytest.param("pass^2>=0.64", 0, id="exact-above-a-decimal"),
        pytest.param("pass^2>0.64", 1, id="exact-not-below"),
        # mean pass^3 = (1 + 64/125 + 1) / 3 = 314/375 = 0.837333...; the 16-digit decimal is below it
        pytest.param("mean_pass^3>=0.8373333333333333", 0, id="mean-exact"),
        pytest.param("mean_pass^3<=0.8373333333333333", 1, id="mean-exact-not-below"),
    ],
)
def test_gates_compare_exact_fractions(results: Path, capsys: pytest.CaptureFixture[str], text: str, code: int) -> None:
    assert gate(capsys, results, text)[0] == code


def test_a_gate_needs_a_finite_number(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for text in ("flaky<=nan", "errors<=inf"):
        code, lines = gate(capsys, results, text)
        assert code == 2 and "is not a number" in lines[0], lines
