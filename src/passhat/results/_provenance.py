"""Where a report's figures come from: the eval's id and date, promptfoo's version, the repeat count, the models,
and what ran the trials (the model ids that answered, the Claude Code and Agent SDK versions the rows record).

Promptfoo 0.123's `-o results.json` wraps the rows: {"evalId", "results": {"timestamp", ...}, "config":
{"description", "providers"}, "metadata": {"promptfooVersion", "evaluationCreatedAt"}, "runtimeOptions":
{"repeat"}}. `collector(store)` is the scanner's `on_member`: it keeps those few values (plain data, so a
forked reader can send them back) and nothing else of the wrapper. A JSONL file has no wrapper: only the rows'
own models and repeat indexes say anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from passhat.results._scan import OnMember


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _providers(value: object) -> list[dict[str, str | None]]:
    """Each configured provider's id, label and model (`config.model`), from the eval's config."""
    found = []
    for provider in value if isinstance(value, list) else []:
        if isinstance(provider, str):
            found.append({"id": provider, "label": None, "model": None})
        elif isinstance(provider, dict):
            config = provider.get("config")
            config = config if isinstance(config, dict) else {}
            found.append({"id": _text(provider.get("id")), "label": _text(provider.get("label")),
                          "model": _text(config.get("model"))})  # fmt: skip
    return found


def collector(store: dict[str, Any]) -> OnMember:
    """An `on_member` for the scanner that fills `store` with the wrapper's provenance fields."""

    def keep(where: tuple[str, ...], value: object) -> None:
        if where == ("evalId",):
            store["eval_id"] = _text(value)
        elif where == ("results", "timestamp"):
            store["timestamp"] = _text(value)
        elif where == ("metadata",) and isinstance(value, dict):
            store["promptfoo_version"] = _text(value.get("promptfooVersion"))
            store["created"] = _text(value.get("evaluationCreatedAt"))
        elif where == ("runtimeOptions",) and isinstance(value, dict):
            repeat = value.get("repeat")
            store["repeat"] = repeat if isinstance(repeat, int) and not isinstance(repeat, bool) else None
        elif where == ("passhat",) and isinstance(value, dict):  # `passhat eval --until-decided`'s combined file
            store["rounds"] = value.get("rounds") if isinstance(value.get("rounds"), list) else None
        elif where == ("config",) and isinstance(value, dict):
            store["description"] = _text(value.get("description"))
            store["providers"] = _providers(value.get("providers"))

    return keep


def provenance(
    store: dict[str, Any],
    source: str,
    models: Iterable[str],
    repeats_seen: int | None,
    scripted: bool = False,
    ran: Iterable[tuple[str, str]] = (),
) -> dict[str, Any]:
    """The report's provenance: what `store` kept, the source file, the models the rows name, whether any row
    ran against the scripted model (metadata scripted_model), and what ran the rows (`ran`: ("model" |
    "claude_code" | "agent_sdk", value) pairs, as report.totals._tally.ran_by makes them), each sorted."""
    configured = [p["model"] for p in store.get("providers") or [] if p.get("model")]
    seen: dict[str, set[str]] = {"model": set(), "claude_code": set(), "agent_sdk": set()}
    for kind, value in ran:
        seen[kind].add(value)
    return {
        "source": source,
        "eval_id": store.get("eval_id"),
        "date": store.get("created") or store.get("timestamp"),
        "promptfoo_version": store.get("promptfoo_version"),
        "description": store.get("description"),
        "repeat": store.get("repeat"),
        "repeats_seen": repeats_seen,  # 1 + the largest repeat index in the rows (the provider echoes it)
        "providers": store.get("providers") or [],
        "models": sorted(set(models) | set(configured)),
        "scripted_model": scripted,
        "rounds": store.get("rounds"),  # the rounds of `passhat eval --until-decided`, or None
        "models_answered": sorted(seen["model"]),  # the model ids that answered (rows' metadata models)
        "claude_code_versions": sorted(seen["claude_code"], key=_version_order),
        "agent_sdk_versions": sorted(seen["agent_sdk"], key=_version_order),
    }


def _version_order(version: str) -> tuple[tuple[int, str], ...]:
    """2.1.9 before 2.1.10: numbers by value, anything else by text."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in version.replace("-", ".").split("."))
