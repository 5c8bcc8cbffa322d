"""The folder passhat puts on the tests grader's PYTHONPATH (read-only in its sandbox): passhat's pytest plugin,
`passhat_runner_guard` (a shim pytest loads by name) and its hooks, `passhat_guard_hooks`, top-level modules of
the command's pytest — never imported by passhat itself.

May import: the standard library and pytest (it runs in the process of the code under test, not in passhat's).
Exports: nothing (the plugin is found by module name, `-p passhat_runner_guard`).
"""

__all__ = list[str]()  # nothing: the plugin is loaded by name
