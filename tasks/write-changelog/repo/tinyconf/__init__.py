"""tinyconf: small `key = value` configuration files with [sections] and dotted lookups."""

from __future__ import annotations

import os

__version__ = "1.2.0"
__all__ = ["get", "load", "parse"]


def parse(text: str) -> dict:
    """`[section]` headers and `key = value` lines → nested dicts; `#` starts a comment."""
    config: dict = {}
    section = config
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section = config.setdefault(line[1:-1].strip(), {})
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"not a `key = value` line: {raw!r}")
        section[key.strip()] = value.strip()
    return config


def load(path: str, env_prefix: str | None = None) -> dict:
    """Read a config file; with `env_prefix`, PREFIX_SECTION_KEY variables override section.key."""
    with open(path, encoding="utf-8") as handle:
        config = parse(handle.read())
    if env_prefix:
        for name, value in os.environ.items():
            if name.startswith(env_prefix + "_"):
                section, _, key = name[len(env_prefix) + 1 :].lower().partition("_")
                if key:
                    config.setdefault(section, {})[key] = value
    return config


def get(config: dict, dotted: str, default: object = None) -> object:
    """`get(config, "db.host")`; the default when any part is missing."""
    node: object = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node
