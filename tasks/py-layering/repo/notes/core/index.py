"""An in-memory word index over the notes: which notes contain every word of a query."""

from __future__ import annotations

import re
from collections import defaultdict


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


class Index:
    def __init__(self) -> None:
        self._notes: dict[str, set[str]] = {}
        self._postings: defaultdict[str, set[str]] = defaultdict(set)

    def add(self, key: str, text: str) -> None:
        self.remove(key)
        self._notes[key] = words(text)
        for word in self._notes[key]:
            self._postings[word].add(key)

    def remove(self, key: str) -> None:
        for word in self._notes.pop(key, set()):
            self._postings[word].discard(key)

    def search(self, query: str, limit: int | None = None) -> list[str]:
        """Keys of the notes holding every word of `query`, sorted; at most `limit` (default: the CLI's)."""
        from notes.cli import DEFAULT_LIMIT  # imported here: notes.cli imports notes.app, which imports us

        wanted = words(query)
        if not wanted:
            return []
        found = set.intersection(*(self._postings.get(word, set()) for word in wanted))
        return sorted(found)[: DEFAULT_LIMIT if limit is None else limit]
