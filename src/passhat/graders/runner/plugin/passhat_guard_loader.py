"""Only source runs from the work tree: what passhat's plugin sets up so the test process loads the tree's code from
its source files alone.

- `source_only(tree)`: a path hook that finds modules in the tree's folders by source (and extension modules, which
  the base may have built) but never sourceless bytecode (`mod.pyc` with no `mod.py`). passhat removes the tree's
  `__pycache__/` folders before the run (even unchecked-hash cache files are never read) and the grader's python
  writes none.
- `pytest_addhooks`: pytest's plugin auto-load is off (PYTEST_DISABLE_PLUGIN_AUTOLOAD, set by passhat); this module,
  named in PYTEST_PLUGINS, is loaded where the auto-load would have run and registers the `pytest11` entry points
  of every installed distribution outside the tree, as pytest would (blocked names and loaded ones skipped). A
  `*.dist-info` or `*.egg-info` of the tree names no plugin that loads.

Standard library and pytest only (it runs in the test process). PYTEST_DONT_REWRITE: passhat's hooks import it
before pytest loads it by name, which pytest would otherwise warn about (an error under `filterwarnings = error`).
"""

from __future__ import annotations

import importlib.machinery as machinery
import os
import sys
from pathlib import Path
from typing import Any

TREE_ENV = "PASSHAT_GUARD_TREE"
_TREE = os.path.realpath(os.environ.get(TREE_ENV) or os.getcwd())


def _inside(path: str, tree: str) -> bool:
    try:
        real = os.path.realpath(path or os.getcwd())
    except (OSError, ValueError):
        return False
    return real == tree or real.startswith(tree + os.sep)


def source_only(tree: str) -> None:
    """Install the path hook for `tree` (first in sys.path_hooks) and forget finders already made for it."""
    finder = machinery.FileFinder.path_hook(
        (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
        (machinery.SourceFileLoader, machinery.SOURCE_SUFFIXES),
    )

    def hook(path: str) -> Any:
        if not _inside(path, tree):
            raise ImportError("not in the work tree")
        return finder(path)

    sys.path_hooks.insert(0, hook)
    for path in [p for p in sys.path_importer_cache if _inside(p, tree)]:
        del sys.path_importer_cache[path]


def pytest_addhooks(pluginmanager: Any) -> None:
    """Load the `pytest11` plugins of distributions outside the tree (the venv's), as pytest's auto-load would."""
    import importlib.metadata

    inside: dict[str, bool] = {}  # most distributions share a folder (site-packages): each resolved once
    for dist in list(importlib.metadata.distributions()):
        try:
            where = str(Path(str(dist.locate_file(""))))
        except (OSError, ValueError, TypeError):
            continue
        if where not in inside:
            inside[where] = _inside(where, _TREE)
        if inside[where]:
            continue
        for entry in dist.entry_points:
            if (
                entry.group != "pytest11"
                or pluginmanager.has_plugin(entry.name)
                or pluginmanager.is_blocked(entry.name)
            ):
                continue
            pluginmanager.register(entry.load(), name=entry.name)
