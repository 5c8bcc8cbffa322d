"""The notes application: ties storage and search together."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from notes.core.index import Index
from notes.core.storage import Storage


@dataclass(frozen=True)
class Settings:
    """Where and how notes are written."""

    extension: str = ".txt"
    encoding: str = "utf-8"
    max_title_length: int = 40


class NoteNotFound(KeyError):
    """No note has this title."""

    def __str__(self) -> str:
        return f"no note titled {self.args[0]!r}"


def normalize_title(title: str, max_length: int = 40) -> str:
    """The key a title is stored under: lowercase words joined by dashes, at most `max_length` characters.

    >>> normalize_title("  My First Note! ")
    'my-first-note'
    """
    key = "-".join(re.findall(r"[a-z0-9]+", title.lower()))[:max_length].strip("-")
    if not key:
        raise ValueError(f"title {title!r} has no letters or digits")
    return key


_current: NotesApp | None = None  # the app whose index follows the storage's changes


def on_note_changed(event: str, key: str, text: str | None) -> None:
    """Called by Storage after every save ("saved", key, text) and delete ("deleted", key, None)."""
    if _current is None:
        return
    if event == "saved":
        _current.index.add(key, f"{key}\n{text}")
    else:
        _current.index.remove(key)


class NotesApp:
    """Add, read, remove and search the notes kept in `root`."""

    def __init__(self, root: str | Path, settings: Settings | None = None) -> None:
        global _current
        self.settings = settings or Settings()
        self.storage = Storage(root, self.settings)
        self.index = Index()
        for key in self.storage.keys():
            self.index.add(key, f"{key}\n{self.storage.load(key)}")
        _current = self

    def add(self, title: str, body: str) -> str:
        return self.storage.save(title, body)

    def get(self, title: str) -> str:
        return self.storage.load(self._key(title))

    def remove(self, title: str) -> None:
        self.storage.delete(self._key(title))

    def titles(self) -> list[str]:
        return self.storage.keys()

    def search(self, query: str, limit: int | None = None) -> list[str]:
        return self.index.search(query, limit)

    def _key(self, title: str) -> str:
        return normalize_title(title, self.settings.max_title_length)
