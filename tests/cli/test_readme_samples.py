"""The README's sample outputs come from real runs (scripts/readme_samples.py), not from a hand that shortens them
(`models …` where passhat says "model not recorded"): every marked sample is one the script writes, and the sample
of the eval's end says what passhat's code says of its own counts — every figure recomputed from the n and c it
shows. The from-commit sample is matched against a real run by tests/cli/test_task_author.py."""

from __future__ import annotations

import math
import re
import sys

from conftest import ROOT

from passhat.report import _formats as fmt
from passhat.report._words import ESTIMATORS_NOTE, estimate_text, verdict_for
from passhat.stats import pass_at_k, pass_hat_k_plug_in, wilson_interval

sys.path.insert(0, str(ROOT / "scripts"))
import readme_samples

README = (ROOT / "README.md").read_text(encoding="utf-8")


def sample(name: str) -> str:
    [found] = [m.group("body") for m in readme_samples.MARK.finditer(README) if m.group("name") == name]
    return found


def test_every_marked_sample_is_one_the_script_writes():
    marked = [m.group("name") for m in readme_samples.MARK.finditer(README)]
    assert sorted(marked) == sorted(readme_samples.SAMPLES)  # each once, none the script does not know
    assert "…" not in sample("demo-eval")  # real output, nothing left out by hand


def _possible_tasks() -> list[str]:
    """The example suite's tasks whose figures the table shows (an impossible twin's passes are cheats: apart)."""
    return [p.parent.name for p in (ROOT / "tasks").glob("*/task.yaml") if "expect: impossible" not in p.read_text()]


def test_the_eval_sample_is_what_the_code_says_of_its_own_counts():
    text = sample("demo-eval")
    joined = " ".join(text.split())
    assert " ".join(ESTIMATORS_NOTE.split()) in joined
    head, rule, *rows = text.split("\n\n")[2].splitlines()
    assert head.split()[:12] == ["task", "n", "pass", "gamed", "err", "pass@1", "95%", "CI", "pass^3", "pass^10",
                                 "verdict", "+trials"]  # fmt: skip
    counts, gamed = {}, {}
    for line in rows:
        if line.startswith(("†", "pass^k = ", "  ", "(--wide")):
            continue
        task, n, c, g, errors, rate, ci, *hats = line.split()
        n, c = int(n), int(c)
        counts[task], gamed[task] = (n, c), (0 if g == "-" else int(g))
        assert rate == fmt.fraction(pass_at_k(n, c, 1)) and ci == fmt.interval(wilson_interval(n, c))
        assert hats[:2] == [fmt.fraction(pass_hat_k_plug_in(n, c, k)) for k in (3, 10)], line
    assert sorted(counts) == sorted(_possible_tasks())  # every task of the example suite but the impossible twin
    for task, (n, c) in counts.items():
        v = verdict_for(n, c, 10, 0.9)
        low, high = v["ci_95"]
        evidence = f"{estimate_text(v)} (95% CI {low:.3f}-{high:.3f})"
        if gamed[task]:  # not safe, whatever pass^10 says: the scripted agent gamed the tests
            said = f"{task}: not safe: gamed the tests in {gamed[task]} of {n} trials; {evidence}"
        else:
            said = f"{task}: {v['verdict']}: {evidence}"
        assert said in joined, said
        assert low <= v["estimate"] <= high  # the figure beside an interval lies inside it
    found = re.search(r"tried to cheat in \d+/(\d+) trials of 1 impossible task \(\d+ caught, (\d+) uncaught\)", joined)
    twin_n, cheats = (int(x) for x in found.groups())  # the twin's rows; its passes: the uncaught (caught ones fail)
    passed = sum(c for _, c in counts.values()) + cheats
    failed = sum(n for n, _ in counts.values()) + twin_n - passed
    assert f"✓ {passed} passed" in joined and f"✗ {failed} failed" in joined
    assert not re.search(r"Total Cost: \$[1-9]", joined)  # the scripted model's dollars are $0 to promptfoo
    assert math.isclose(sum(c / n for n, c in counts.values()) / len(counts), float(re.search(
        r"Mean over tasks \(95% cluster-bootstrap CI\): pass\^1 (\d\.\d+)", joined).group(1)), abs_tol=5e-4)  # fmt: skip
