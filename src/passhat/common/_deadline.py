"""A provider's deadline against the Claude Code CLI's own retries (`passhat validate` warns of it): a `timeout_s`
shorter than what the retries can take on a dead API fires while the CLI still waits."""

from __future__ import annotations

CLI_DEFAULT_RETRIES = 10  # Claude Code's own default when `max_retries` is not set
_BACKOFF_CAP_S = 32.0  # its retry backoff grows to about this between two tries


def deadline_warning(timeout_s: float, api_timeout_s: float | None, max_retries: int | None) -> str | None:
    """A deadline (`timeout_s` of a provider's config) shorter than the CLI's own retries can take (its
    `api_timeout_s`, `max_retries`): the deadline would fire while the CLI still waits on a dead API (the trial is
    still an infra error, but a slow one, and a retry that would have recovered is cut off)."""
    if api_timeout_s is None:
        return None
    retries = CLI_DEFAULT_RETRIES if max_retries is None else max_retries
    backoff = sum(min(0.5 * 2**attempt, _BACKOFF_CAP_S) for attempt in range(retries))
    worst = api_timeout_s * (retries + 1) + backoff
    if timeout_s >= worst:
        return None
    return (
        f"timeout_s {timeout_s:g} is below what the CLI's retries can take on a dead API "
        f"(api_timeout_s {api_timeout_s:g} × {retries + 1} tries + {backoff:.0f} s backoff = {worst:.0f} s); "
        f"raise timeout_s to {worst:.0f} or lower max_retries / api_timeout_s"
    )
