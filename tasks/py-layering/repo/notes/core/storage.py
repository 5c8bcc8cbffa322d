"""Notes as text files in one folder, one file per note, named after the note's key."""

from __future__ import annotations

from pathlib import Path

# Settings, normalize_title, NoteNotFound and on_note_changed live in notes.app; that module imports us too,
# so this must stay a plain module import (the names are looked up when called, once both are loaded).
from notes import app


class Storage:
    def __init__(self, root: str | Path, settings: app.Settings | None = None) -> None:
        self.root = Path(root)
        self.settings = settings or app.Settings()
        self.root.mkdir(parents=True, exist_ok=True)

    def save(self, title: str, body: str) -> str:
        """Write the note; return its key."""
        key = app.normalize_title(title, self.settings.max_title_length)
        self._path(key).write_text(body, encoding=self.settings.encoding)
        app.on_note_changed("saved", key, body)
        return key

    def load(self, key: str) -> str:
        path = self._path(key)
        if not path.is_file():
            raise app.NoteNotFound(key)
        return path.read_text(encoding=self.settings.encoding)

    def delete(self, key: str) -> None:
        path = self._path(key)
        if not path.is_file():
            raise app.NoteNotFound(key)
        path.unlink()
        app.on_note_changed("deleted", key, None)

    def keys(self) -> list[str]:
        suffix = self.settings.extension
        return sorted(p.name[: -len(suffix)] for p in self.root.glob(f"*{suffix}") if p.is_file())

    def _path(self, key: str) -> Path:
        return self.root / f"{key}{self.settings.extension}"
