"""Promptfoo test generator: `tests: file://tasks/promptfoo_tests.py:generate_tests`.

One test per folder in tasks/ (set PASSHAT_TASKS=a,b to pick some); logic in passhat.tasks.
"""

from pathlib import Path

from passhat.tasks import generate_tests as _generate

_HERE = Path(__file__).resolve().parent


def generate_tests(config=None):
    return _generate(_HERE, _HERE.parent / "assertions")
