"""The layout stays readable: small modules, small folders, no import cycle, a docstring contract per package.

import-linter (run by `make lint`) checks the layering between stages; these check what it does not.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

import passhat

PACKAGE = Path(passhat.__file__).resolve().parent
MAX_LINES = 420  # "~400": a module that grows past it is two jobs
MAX_MODULES = 12  # per folder, __init__.py not counted
# Registries: folders of plugins, one module per entry, that grow by a module at a time (a grader type is its
# module). They have no cap; instead every module in one must be an entry (tested below), so no other job hides
# there. Folder -> the attribute every module of it ends with.
REGISTRIES = {PACKAGE / "graders" / "kinds": "KIND"}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _packages() -> list[Path]:
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py"))


@pytest.mark.parametrize("module", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_is_small(module: Path) -> None:
    lines = len(module.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module.relative_to(PACKAGE)} has {lines} lines; split it by job"


@pytest.mark.parametrize("package", _packages(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_folder_is_small(package: Path) -> None:
    modules = [p for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    if package in REGISTRIES:
        return  # test_a_registry_holds_only_its_entries
    assert len(modules) <= MAX_MODULES, f"{package.name}/ has {len(modules)} modules; give a job its own folder"


@pytest.mark.parametrize("registry", sorted(REGISTRIES), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_a_registry_holds_only_its_entries(registry: Path) -> None:
    """An uncapped folder stays one job: each module in it (not starting with `_`) assigns its entry at the top
    level, and holds no helper module (helpers of several entries live beside the folder, as graders/_judges.py)."""
    entry = REGISTRIES[registry]
    for module in sorted(registry.glob("*.py")):
        if module.name == "__init__.py":
            continue
        assert not module.name.startswith("_"), f"{module.relative_to(PACKAGE)}: a helper in a registry folder"
        tree = ast.parse(module.read_text(encoding="utf-8"))
        names = {
            t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)
        }
        assert entry in names, f"{module.relative_to(PACKAGE)}: a module of {registry.name}/ must define {entry}"


@pytest.mark.parametrize(
    "package", [p for p in _packages() if p != PACKAGE], ids=lambda p: str(p.relative_to(PACKAGE.parent))
)
def test_package_says_what_it_is_for(package: Path) -> None:
    """Each stage's __init__ docstring: what it is for, what it may import, what it exports (`__all__`)."""
    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    assert "May import:" in doc and "Export" in doc, f"{package.name}/__init__.py: docstring lacks the contract"
    exported = [
        node for node in tree.body if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"
    ]
    assert exported or package.name == "cli", f"{package.name}/__init__.py: no __all__"


def test_the_package_root_holds_only_its_entry_points() -> None:
    """What every stage stands on lives in common/, a folder that says so; the root keeps the package's entries."""
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py", "__main__.py", "promptfoo.py"]


def test_no_import_cycle() -> None:
    graph = grimp.build_graph("passhat", cache_dir=None)
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if imported != module and graph.chain_exists(importer=imported, imported=module):
                cycles.append(f"{module} -> {imported} -> ... -> {module}")
    assert not cycles, "import cycles:\n" + "\n".join(cycles)
