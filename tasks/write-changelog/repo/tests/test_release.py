"""Release checks: the version is the same everywhere, and the changelog has an entry for it."""

import re
import tomllib
from pathlib import Path

import tinyconf

ROOT = Path(__file__).resolve().parent.parent


def _project_version():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_versions_agree():
    assert _project_version() == tinyconf.__version__


def test_version_is_1_3_0():
    assert tinyconf.__version__ == "1.3.0"


def test_changelog_has_a_section_for_the_version():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[{re.escape(tinyconf.__version__)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M)


def test_changelog_newest_first():
    versions = re.findall(r"^## \[(\d+)\.(\d+)\.(\d+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)
    as_tuples = [tuple(map(int, v)) for v in versions]
    assert as_tuples == sorted(as_tuples, reverse=True)
