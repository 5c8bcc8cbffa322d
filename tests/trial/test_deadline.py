"""A trial's deadline fits inside Promptfoo's per-call limit on a Python provider (`timeout`, ms; else
$REQUEST_TIMEOUT_MS; else 300 s), which books a call still running as an error row and lets it run on: a
timeout_s that would not end (and be recorded) 30 s before that limit is refused, saying which `timeout` to add."""

from __future__ import annotations

import pytest

from passhat.common._errors import PasshatError
from passhat.trial._limits import deadline


def test_without_timeout_s_the_deadline_is_what_promptfoos_limit_leaves(monkeypatch):
    monkeypatch.delenv("REQUEST_TIMEOUT_MS", raising=False)
    assert deadline({}) == 270  # Promptfoo's default 300 s less the time to stop and record the trial
    assert deadline({"timeout": 900_000}) == 600  # the default deadline when the limit has room
    monkeypatch.setenv("REQUEST_TIMEOUT_MS", "400000")
    assert deadline({}) == 370


def test_a_deadline_past_promptfoos_limit_is_refused_with_the_fix(monkeypatch):
    monkeypatch.delenv("REQUEST_TIMEOUT_MS", raising=False)
    with pytest.raises(PasshatError, match=r"'timeout_s': 600: .*its default, 300 s.*add `timeout: 630000`"):
        deadline({"timeout_s": 600})
    with pytest.raises(PasshatError, match=r"'timeout': 600000: .*give at least 630000"):
        deadline({"timeout_s": 600, "timeout": 600_000})
    monkeypatch.setenv("REQUEST_TIMEOUT_MS", "120000")
    with pytest.raises(PasshatError, match=r"REQUEST_TIMEOUT_MS=120000.*lower timeout_s to 90"):
        deadline({"timeout_s": 100})


def test_a_deadline_that_fits_stands(monkeypatch):
    monkeypatch.delenv("REQUEST_TIMEOUT_MS", raising=False)
    assert deadline({"timeout_s": 240}) == 240
    assert deadline({"timeout_s": 600, "timeout": 630_000}) == 600
    with pytest.raises(PasshatError, match="'timeout_s': 0"):
        deadline({"timeout_s": 0})
    with pytest.raises(PasshatError, match=r"'timeout': 300: .*rename it to timeout_s"):
        deadline({"timeout": 300})  # meant as seconds: no time left for any trial
