"""Promptfoo test generator: `tests: file://tasks/promptfoo_tests.py:generate_tests`.

One test per folder in tasks/ (set PASSHAT_TASKS=a,b to pick some); logic in passhat.graders.
"""

from pathlib import Path

from passhat.graders import generate_tests as _generate

_HERE = Path(__file__).resolve().parent


def generate_tests(config=None):
    return _generate(_HERE, _HERE.parent / "assertions")
