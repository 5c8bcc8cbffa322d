"""The layering: notes.core depends on nothing above it, and the import graph has no cycle."""

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "notes"
SHARED = ["Settings", "NoteNotFound", "normalize_title", "DEFAULT_LIMIT"]


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the notes package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The notes modules that `name` imports anywhere in its code (functions included, relative resolved)."""

    def existing(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets |= {existing(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.add(full if full in modules else existing(base))
    return {t for t in targets if t and t != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_core_imports_nothing_outside_core():
    wrong = {
        name: sorted(t for t in targets if not (t == "notes.core" or t.startswith("notes.core.")))
        for name, targets in _graph().items()
        if name.startswith("notes.core")
    }
    assert {name: targets for name, targets in wrong.items() if targets} == {}


def test_the_import_graph_has_no_cycle():
    graph = _graph()
    state: dict[str, str] = {}

    def visit(name, trail):
        state[name] = "open"
        for target in sorted(graph.get(name, ())):
            if state.get(target) == "open":
                pytest.fail("import cycle: " + " -> ".join([*trail[trail.index(target):], target]))
            if target not in state:
                visit(target, [*trail, target])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_the_shared_names_are_defined_in_core_model():
    model = importlib.import_module("notes.core.model")
    for shared in SHARED:
        assert hasattr(model, shared), f"notes.core.model has no {shared}"
    for shared in ("Settings", "NoteNotFound", "normalize_title"):
        assert getattr(model, shared).__module__ == "notes.core.model"


def test_the_old_import_paths_still_work():
    model = importlib.import_module("notes.core.model")
    app = importlib.import_module("notes.app")
    cli = importlib.import_module("notes.cli")
    for shared in ("Settings", "NoteNotFound", "normalize_title"):
        assert getattr(app, shared) is getattr(model, shared)
    assert cli.DEFAULT_LIMIT == model.DEFAULT_LIMIT == 5


def test_storage_reports_changes_through_its_callback(tmp_path):
    from notes.core.storage import Storage

    events = []
    storage = Storage(tmp_path, on_change=lambda *event: events.append(event))
    key = storage.save("To Do", "call Bob")
    storage.delete(key)
    assert events == [("saved", "to-do", "call Bob"), ("deleted", "to-do", None)]


def test_the_app_keeps_no_global_current_app():
    app = importlib.import_module("notes.app")
    assert not hasattr(app, "_current")
    assert not hasattr(app, "on_note_changed")


def test_core_works_without_loading_the_app(tmp_path):
    script = f"""
import json, sys
from notes.core.index import Index
from notes.core.storage import Storage
index = Index()
storage = Storage({str(tmp_path)!r}, on_change=lambda event, key, text: index.add(key, text))
storage.save("Core Only", "works alone")
print(json.dumps([index.search("alone"), sorted(m for m in sys.modules if m.startswith("notes"))]))
"""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    found, loaded = json.loads(proc.stdout)
    assert found == ["core-only"]
    assert "notes.app" not in loaded and "notes.cli" not in loaded, loaded
