"""`passhat report --gate 'pass^7>=0.9'`: thresholds a CI job can fail on. Pure: no I/O.

Grammar: METRIC OP NUMBER, OP one of >= > <= < ==. Per task (every task of every provider must
satisfy it): pass^K, pass@K, pass_rate, clean_exit; an undefined value (n < k, no scored trial,
no health reported) fails the gate and says why. Per provider (each provider's suite): mean_pass^K,
flaky (count of flaky tasks), errors (count of infra errors).

Comparisons are exact: the value as a fraction of whole numbers (8/10; pass^3 = (6/10)^3, the pass^k the report
prints) against the NUMBER as written, in decimal (0.8 = 4/5), so `pass@1>=0.8` holds at 8/10 and `pass^3<0.216`
fails at 6/10 ((6/10)^3 = 0.216 exactly).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from passhat.common._errors import PasshatError
from passhat.report._summary import ProviderSuite, TaskSummary
from passhat.stats._estimators import pass_at_k_exact, pass_hat_k_plug_in_exact
from passhat.stats._suite import mean_pass_hat_k_exact

_OPS: dict[str, Callable[[Fraction, Fraction], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    ">": operator.gt,
    "<": operator.lt,
}
_GATE = re.compile(r"\s*(?P<metric>[A-Za-z_^@0-9]+?)\s*(?P<op>>=|<=|==|=>|=<|>|<|=|!=)\s*(?P<number>\S*)\s*")
_K_METRIC = re.compile(r"(?P<name>mean_pass\^|pass\^|pass@)(?P<k>\d*)")
_PLAIN = ("flaky", "errors", "pass_rate", "clean_exit")
_RATES = ("pass^", "pass@", "mean_pass^", "pass_rate", "clean_exit")
_FIX = (
    "write METRIC OP NUMBER, e.g. --gate 'pass^7>=0.9' or --gate 'flaky<=2' "
    "(metrics: pass^K, pass@K, mean_pass^K, flaky, errors, pass_rate, clean_exit; ops: >= > <= < ==)"
)


@dataclass(frozen=True)
class Gate:
    text: str
    metric: str  # "pass^", "pass@", "mean_pass^" (with k), or one of _PLAIN
    k: int | None
    op: str
    threshold: float
    exact: Fraction  # the NUMBER as written, exactly

    @property
    def name(self) -> str:
        return f"{self.metric}{self.k}" if self.k is not None else self.metric


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures


def _bad(text: str, problem: str) -> PasshatError:
    return PasshatError(f"--gate {text!r}: {problem}; {_FIX}")


def parse_gate(text: str) -> Gate:
    """A Gate from its text; PasshatError naming the gate and the fix otherwise."""
    match = _GATE.fullmatch(text)
    if match is None:
        has_op = any(op in text for op in "<>=")
        raise _bad(text, "no metric before the operator" if has_op else "no comparison operator")
    metric, op, number = match["metric"], match["op"], match["number"]
    if op in ("=", "=>", "=<", "!="):
        raise _bad(text, f"unknown operator {op!r}")
    k = None
    k_match = _K_METRIC.fullmatch(metric)
    if k_match is not None:
        metric, digits = k_match["name"], k_match["k"]
        if not digits or int(digits) < 1:
            raise _bad(text, f"{metric} needs a positive whole k, as in {metric}7")
        k = int(digits)
    elif metric.startswith(("mean_pass^", "pass^", "pass@")):
        prefix = next(p for p in ("mean_pass^", "pass^", "pass@") if metric.startswith(p))
        raise _bad(text, f"{prefix} needs a positive whole k, as in {prefix}7")
    elif metric not in _PLAIN:
        raise _bad(text, f"unknown metric {metric!r}")
    try:
        exact = Fraction(number)
    except (ValueError, ZeroDivisionError):  # also "nan", "inf" and "1/0": a gate needs a finite number
        raise _bad(text, f"{number!r} is not a number") from None
    threshold = float(exact)
    if metric in _RATES and not 0 <= threshold <= 1:
        raise _bad(text, f"{metric}{k or ''} is a rate between 0 and 1, and {number} is not")
    if metric not in _RATES and threshold < 0:
        raise _bad(text, f"{metric} is a count, and {number} is negative")
    return Gate(text.strip(), metric, k, op, threshold, exact)


def _label(summary: TaskSummary, several: bool) -> str:
    return f"{summary.task} [{summary.provider}]" if several else summary.task


def _task_value(gate: Gate, s: TaskSummary) -> tuple[Fraction | None, str]:
    """The task's exact value for a per-task gate, or None and why it is undefined."""
    if gate.metric in ("pass^", "pass@") and gate.k is not None:
        estimator = pass_hat_k_plug_in_exact if gate.metric == "pass^" else pass_at_k_exact
        return estimator(s.n, s.passes, gate.k), f"undefined (n={s.n} < k={gate.k})"
    if gate.metric == "pass_rate":
        return (Fraction(s.passes, s.n) if s.n else None), "undefined (no scored trials)"
    rate = Fraction(s.clean_exits, s.health_reported) if s.health_reported else None
    return rate, "undefined (the provider reports no is_error/status)"


def _format(value: Fraction) -> str:
    return f"{value}" if value.denominator == 1 else f"{float(value):.3f}"


def evaluate(gate: Gate, suites: Sequence[ProviderSuite]) -> GateResult:
    """Which tasks or providers fail `gate`, each as a short phrase."""
    holds = _OPS[gate.op]
    several = len(suites) > 1
    failures: list[str] = []
    for suite in suites:
        prefix = f"{suite.provider}: " if several else ""
        if gate.metric == "mean_pass^" and gate.k is not None:
            mean = mean_pass_hat_k_exact([(s.n, s.passes) for s in suite.tasks], gate.k)
            if mean is None:
                failures.append(f"{prefix}undefined (no task has n >= {gate.k})")
            elif not holds(mean, gate.exact):
                failures.append(f"{prefix}mean pass^{gate.k} = {float(mean):.3f}")
        elif gate.metric == "flaky":
            flaky = suite.flaky
            if not holds(Fraction(len(flaky)), gate.exact):
                names = ", ".join(f"{s.task} ({s.passes}/{s.n})" for s in flaky)
                failures.append(f"{prefix}{len(flaky)} flaky" + (f": {names}" if names else ""))
        elif gate.metric == "errors":
            if not holds(Fraction(suite.errors), gate.exact):
                names = ", ".join(f"{s.task} ({s.errors})" for s in suite.tasks if s.errors)
                count = f"{suite.errors} infra error" + ("" if suite.errors == 1 else "s")
                failures.append(f"{prefix}{count}" + (f": {names}" if names else ""))
        else:
            for s in suite.tasks:
                value, why = _task_value(gate, s)
                if value is None:
                    failures.append(f"{_label(s, several)} {why}")
                elif not holds(value, gate.exact):
                    failures.append(f"{_label(s, several)} = {_format(value)}")
    return GateResult(gate, tuple(failures))


def gate_ks(gates: Sequence[Gate]) -> set[int]:
    """The ks the gates need computed."""
    return {gate.k for gate in gates if gate.k is not None}


def describe(result: GateResult) -> str:
    """One line for stderr."""
    if result.passed:
        return f"passhat: gate passed: {result.gate.text}"
    return f"passhat: gate failed: {result.gate.text}: " + "; ".join(result.failures)
