"""Promptfoo test generator: `tests: file://tasks/promptfoo_tests.py:generate_tests`.

One test per folder in tasks/ (set PASSHAT_TASKS=a,b to pick some); logic in passhat.suite.
"""

from pathlib import Path

from passhat import suite

_HERE = Path(__file__).resolve().parent


def generate_tests(config=None):
    return suite.generate_tests(_HERE, _HERE.parent / "assertions")
