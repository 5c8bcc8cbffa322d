"""The proxy's rule for giving up on the upstream (passhat/common/_endpoint.py), outcome by outcome: refusals in a row end
the trial as infra before the model answered anything; after an answer, only when passhat's own probe is refused
too (the agent could have crafted the refused requests); a 401/403 counts only as the upstream said it."""

from __future__ import annotations

import pytest

from passhat.common._endpoint import REFUSED_IN_A_ROW, Probe
from passhat.trial._proxy import Witness

REFUSED = "unreachable: ConnectionRefusedError: [Errno 111] Connection refused"


def witness(outcomes: list[str], check: Probe | None = None) -> Witness:
    seen = Witness(upstream="http://127.0.0.1:9", fix="start it with `--secret-file`")
    if check is not None:
        seen.check = lambda: check
    for outcome in outcomes:
        seen.finish(seen.start("/v1/messages"), outcome)
    return seen


@pytest.mark.parametrize(
    ("outcomes", "gives_up"),
    [
        pytest.param([REFUSED] * REFUSED_IN_A_ROW, True, id="refused-connections-in-a-row"),
        pytest.param(["403"] * REFUSED_IN_A_ROW, True, id="credential-refused-in-a-row"),
        pytest.param([REFUSED, "401", REFUSED], True, id="mixed-refusals"),
        pytest.param([REFUSED] * (REFUSED_IN_A_ROW - 1), False, id="too-few"),
        pytest.param([REFUSED, "529", REFUSED], False, id="a-5xx-breaks-the-row"),
        pytest.param(["429"] * 5, False, id="rate-limits-are-the-clis-to-retry"),
    ],
)
def test_refusals_in_a_row_before_any_answer_end_the_trial(outcomes: list[str], gives_up: bool) -> None:
    seen = witness(outcomes)
    assert seen.ended.is_set() is gives_up and (seen.gave_up is not None) is gives_up
    if gives_up:
        assert "http://127.0.0.1:9" in str(seen.gave_up)


def test_a_refused_credential_names_the_status_and_the_fix() -> None:
    seen = witness(["403"] * REFUSED_IN_A_ROW)
    assert (
        seen.gave_up
        == "the model API at http://127.0.0.1:9 refused the credential (HTTP 403); start it with `--secret-file`"
    )


def test_after_an_answer_the_agents_own_403s_do_not_end_the_trial_while_passhat_is_answered() -> None:
    """The agent can send requests through the proxy once the model answered: refused ones are not evidence
    while passhat's own probe (with the real credential) is answered."""
    seen = witness(["200", *["403"] * REFUSED_IN_A_ROW], check=Probe(None, found="answers"))
    assert seen.gave_up is None and not seen.ended.is_set()
    assert seen.infra_evidence() is None and seen.unreachable() is None


def test_after_an_answer_refusals_end_the_trial_when_passhats_probe_is_refused_too() -> None:
    """A credential revoked or expired mid-session: passhat's own request is refused as well."""
    refused = Probe("http://127.0.0.1:9 refused the credential (HTTP 401); renew it", auth=True)
    seen = witness(["200", *["401"] * REFUSED_IN_A_ROW], check=refused)
    assert seen.ended.is_set() and "HTTP 401" in str(seen.gave_up) and "passhat's own probe too" in str(seen.gave_up)


def test_one_401_after_answers_is_infra_evidence_only_when_confirmed() -> None:
    assert witness(["200", "401"], check=Probe(None)).infra_evidence() is None
    confirmed = witness(["200", "401"], check=Probe("refused (HTTP 401)", auth=True)).infra_evidence()
    assert confirmed is not None and "refused the credential (HTTP 401)" in confirmed


def test_a_trial_refused_from_the_start_was_never_answered() -> None:
    why = witness(["403"]).unreachable()
    assert why is not None and "none answered" in why and "refused the credential (HTTP 403)" in why


# --- how a reply ended, as the proxy reads its events (trial/spend/_reading.py) ---------------------


@pytest.mark.parametrize(
    ("last", "failed"),
    [
        pytest.param("overloaded: overloaded_error: Overloaded", True, id="overloaded-mid-stream"),
        pytest.param("upstream error: api_error: Internal server error", True, id="api-error-mid-stream"),
        pytest.param("rate limited: rate_limit_error: slow down", True, id="rate-limited-mid-stream"),
        pytest.param("cut: the event stream ended before message_stop", True, id="cut"),
        pytest.param("unreadable: content-encoding 'compress'", True, id="unreadable"),
        pytest.param("stream error: invalid_request_error: bad", False, id="the-requests-own-error"),
        pytest.param("200", False, id="answered"),
    ],
)
def test_a_stream_ended_by_an_upstream_failure_is_infra_evidence(last: str, failed: bool) -> None:
    seen = witness(["200", last])
    evidence = seen.infra_evidence()
    assert (evidence is not None) is failed
    if failed:
        assert evidence == f"the model API failed 1 time(s); last: {last}"
    assert (witness([last]).unreachable() is not None) is failed  # the only request: was it answered?


def test_a_reply_passhat_cannot_read_ends_the_trial_at_once() -> None:
    seen = Witness(upstream="http://127.0.0.1:9")
    seen.unreadable(seen.start("/v1/messages"), "unreadable: content-encoding 'compress'")
    assert seen.ended.is_set() and seen.requests[0][2] == "unreadable: content-encoding 'compress'"
    assert str(seen.gave_up).startswith(
        "passhat could not read the model API's reply from http://127.0.0.1:9 (unreadable: content-encoding"
    )
