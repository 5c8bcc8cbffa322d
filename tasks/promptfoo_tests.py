"""Promptfoo test generator: `tests: file://tasks/promptfoo_tests.py:generate_tests`.

One test per folder in tasks/ (set PASSHAT_TASKS=a,b to pick some); logic in passhat.graders.
"""

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def generate_tests(config=None):
    from passhat.common import _cpu_roles  # bench/where_cpu_goes.py; off unless asked

    _cpu_roles.mark("generator")
    from passhat.graders._suite import generate_tests as generate

    return generate(_HERE, _HERE.parent / "assertions")
