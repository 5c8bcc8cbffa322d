"""Path globs as users write them in task.yaml: `*` within a folder, `**` across folders, `?` one char.

Any character but `/` is part of a name, a newline too: `tests/**` matches every file under tests/.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

# What counts as "the task's tests" when a tests grader names no `protected` globs.
DEFAULT_PROTECTED = (
    "tests/**",
    "test/**",
    "**/tests/**",
    "**/test/**",
    "**/__tests__/**",
    "**/test_*.py",
    "**/*_test.py",
    "**/conftest.py",
    "**/*.test.js",
    "**/*.test.mjs",
    "**/*.test.cjs",
    "**/*.test.ts",
    "**/*.spec.js",
    "**/*.spec.ts",
)


@functools.lru_cache(maxsize=256)
def _compile(glob: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif glob[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return re.compile(out + r"\Z", re.DOTALL)  # a file name may hold a newline


def matches(path: str, globs: Iterable[str]) -> bool:
    return any(_compile(glob).match(path) for glob in globs)
