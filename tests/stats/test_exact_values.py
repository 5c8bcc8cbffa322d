"""`within_work` tells from the exact law's values alone, without its probabilities, whether the law is cheap enough
to build (issue 33: a suite too big for the exact bootstrap no longer builds the law, nor all its values, only to
find that out): the same answer as the work estimate of the law itself."""

from __future__ import annotations

import random

import pytest

from passhat.stats import _bootstrap
from passhat.stats._exact import lattice_law, within_work, work
from passhat.stats._suite import _resampled_pmf


@pytest.mark.parametrize("seed", range(5))
def test_within_work_is_the_laws_work_within(seed: int) -> None:
    rng = random.Random(seed)
    tasks = [(n, rng.randint(0, n)) for n in (rng.choice((1, 3, 5, 10, 40)) for _ in range(rng.randint(1, 30)))]
    for k in (1, 3, 5):
        defined = [task for task in tasks if task[0] >= k]
        if defined:
            cells = work(len(defined), lattice_law(defined, k, _resampled_pmf)[1])
            for limit in (cells / 2, cells - 1, cells, cells * 2):
                assert within_work(defined, k, _resampled_pmf, limit) == (cells <= limit)


def test_a_suite_too_big_for_the_exact_law_never_builds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []

    def counted(*args: object) -> object:
        built.append(1)
        return lattice_law(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_bootstrap, "lattice_law", counted)
    big = [(150, 150 - i % 7) for i in range(300)]
    found = _bootstrap.mean_pass_hat_k_bootstrap(big, [1], resamples=200)
    assert found[1] is not None and found[1].method == "monte-carlo" and built == []
    small = [(5, 4), (5, 5), (5, 2)]
    assert _bootstrap.mean_pass_hat_k_bootstrap(small, [1])[1].method == "exact" and built == [1]  # type: ignore[union-attr]


def test_the_verdicts_interval_is_worked_out_once_per_counts() -> None:
    """A report asks the verdict of many tasks with the same (n, c), at several k (issue 33: 2.2 s of a 300k-row
    report went to the same bisections again)."""
    from passhat.stats._intervals import rate_interval
    from passhat.stats._verdict import decide

    rate_interval.cache_clear()
    first = [decide(37, 35, k, 0.9) for k in (1, 3, 5, 10)]
    assert [decide(37, 35, k, 0.9) for k in (1, 3, 5, 10) for _ in range(50)] == [d for d in first for _ in range(50)]
    assert rate_interval.cache_info().misses == 1
