"""The ground floor every stage stands on: small modules of the stdlib's kind that any stage may import and that
import no stage.

    _errors      the one exception module (PasshatError: one line on stderr, exit 2)
    _lock        one process at a time on a file (fcntl.flock), for every shared cache
    _endpoint    the model endpoint seen from outside every sandbox, and when to give up on it
    _budget      the eval's dollar budget, one ledger across workers and nodes
    _fake_route  the scripted model's routes and tokens (the server and the harness both speak them)
    _cpu_roles   role markers for bench/where_cpu_goes.py (off unless PASSHAT_CPU_ROLES is set)
    _deadline    a provider's deadline against the Claude Code CLI's own retries

May import: nothing of passhat's but its own modules.
Exports: its modules; import the one you need (`from passhat.common._errors import PasshatError`).
"""

from __future__ import annotations

__all__ = ["_budget", "_cpu_roles", "_deadline", "_endpoint", "_errors", "_fake_route", "_lock"]
