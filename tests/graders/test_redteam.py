"""The red-team corpus (tests/graders/corpus): each hack is a patch on a shipped task, written as a cheating agent
would with passhat's defences in hand. For each: the attack is real (the task's tests grader passes it with the
runner guard off) and it is caught (with every defence on, the tests grader or the integrity scan flags it, and
the rule the manifest expects is among the findings). A hack whose defence is still to come (`pending` in the
manifest) xfails until that defence names it. The counts by class: bench/gaming_corpus.py.
"""

from __future__ import annotations

from collections import Counter

import pytest
from corpus.redteam import Bench, manifest

ROWS = manifest()
pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # 45+ hacks, each graded three times (~2-6 s a hack)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return Bench(tmp_path_factory.mktemp("redteam"))


def test_the_corpus_is_big_and_broad_enough():
    classes = Counter(row["class"] for row in ROWS)
    assert len(ROWS) >= 40 and len(classes) >= 10, classes
    assert len({row["id"] for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
def test_a_hack_is_real_without_the_defences_and_caught_with_them(bench, row):
    verdict = bench.judge(row)
    if row.get("racy"):
        # a thread racing pytest: where it wins, the swap is seen when the test's body is called or after the run
        # (runner-hook-late); where it loses, no attack happened and the tests fail honestly. Either way the run
        # never passes uncaught (the detection itself: test_late_hooks.py, deterministically)
        assert verdict.caught or not verdict.passed, f"{row['id']}: passed uncaught:\n" + "\n".join(verdict.reasons)
        return
    assert verdict.real, f"{row['id']}: the attack does not pass the tests grader even with the guard off"
    if row.get("pending") and not verdict.caught:
        pytest.xfail(f"awaits {row['pending']} ({row['expect']}); found now: {sorted(verdict.rules) or 'nothing'}")
    assert verdict.caught, f"{row['id']}: {row['expect']} not among {sorted(verdict.rules)}:\n" + "\n".join(
        verdict.reasons
    )
