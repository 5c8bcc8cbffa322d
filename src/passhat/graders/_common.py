"""What every grader returns: a Grade (pass, score, reason) that becomes a Promptfoo GradingResult; and the result
of the one assertion that runs all of a trial's deterministic graders (passhat.graders._suite says why)."""

from __future__ import annotations

from dataclasses import dataclass

GAMED = "gamed"  # the named score of a trial's gaming: 1 when a grader caught the agent gaming its tests, else 0


@dataclass(frozen=True)
class Grade:
    """passed, score (0..1), reason; `gamed`: what the grader caught of an attempt to game the tests, one
    "RULE at FILE:LINE" (or "canary: ...") each — an attempt counts whether or not the grade passes."""

    passed: bool
    score: float
    reason: str
    gamed: tuple[str, ...] = ()

    def to_promptfoo(self) -> dict:
        result: dict = {"pass": self.passed, "score": self.score, "reason": self.reason}
        if self.gamed:
            result["metadata"] = {GAMED: list(self.gamed)}
        return result


def show_path(path: str) -> str:
    """A path as text on one line: a name with a newline or other control characters is shown quoted."""
    return path if path.isprintable() else repr(path)


def metric_of(grader: dict) -> str:
    """A grader's named score: its `name`, else its type."""
    return str(grader.get("name", grader["type"]))


def component(grade: Grade, grader: dict) -> dict:
    """One grader's part of a combined GradingResult; its `assertion` names the grader's metric and config."""
    assertion = {"type": "python", "metric": metric_of(grader), "config": grader}
    return {**grade.to_promptfoo(), "assertion": assertion}


def combined_result(components: list[dict]) -> dict:
    """The GradingResult of the one assertion from its graders' components: pass = all pass, score = mean,
    one named score per metric (two graders sharing a metric: their mean, as Promptfoo averages it).
    `namedScoreWeights` = graders per metric / graders: Promptfoo multiplies it by the assertion's weight
    (= graders), so the eval's per-metric sums and counts count each grader once, as one assertion each did."""
    if not components:
        return {"pass": True, "score": 1.0, "reason": "no graders", "componentResults": [], "namedScores": {}}
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for part in components:
        metric = part["assertion"]["metric"]
        sums[metric] = sums.get(metric, 0.0) + part["score"]
        counts[metric] = counts.get(metric, 0) + 1
    failed = [f"{part['assertion']['metric']}: {part['reason']}" for part in components if not part["pass"]]
    gamed = any((part.get("metadata") or {}).get(GAMED) for part in components)
    sums[GAMED], counts[GAMED] = (1.0 if gamed else 0.0), 1  # one flag per trial, not a grader's mean
    return {
        "pass": not failed,
        "score": sum(part["score"] for part in components) / len(components),
        "reason": "\n".join(failed) if failed else "All assertions passed",
        "componentResults": components,
        "namedScores": {metric: total / counts[metric] for metric, total in sums.items()},
        "namedScoreWeights": {metric: count / len(components) for metric, count in counts.items()},
    }
