"""git, run the same way everywhere: no user or system config, fixed identity, bytes out, bounded.

The trees passhat runs git in after a trial are the agent's: the work tree belongs to the trial's uid
(`safe.directory`), and nothing in them may make git run code (hooks, fsmonitor) or run forever.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import IO

_CONFIG = {"safe.directory": "*", "core.hooksPath": os.devnull, "core.fsmonitor": "false"}
_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "passhat",
    "GIT_AUTHOR_EMAIL": "passhat@localhost",
    "GIT_COMMITTER_NAME": "passhat",
    "GIT_COMMITTER_EMAIL": "passhat@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_CONFIG_COUNT": str(len(_CONFIG)),
    **{f"GIT_CONFIG_KEY_{i}": key for i, key in enumerate(_CONFIG)},
    **{f"GIT_CONFIG_VALUE_{i}": value for i, value in enumerate(_CONFIG.values())},
}
DEFAULT_TIMEOUT_S = 600.0


class GitError(Exception):
    pass


class GitOutputTooLargeError(GitError):
    pass


def git(
    cwd: Path,
    *args: str,
    input: bytes | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_output: int | None = None,
) -> bytes:
    """stdout of `git ARGS` in cwd; GitError if it fails, runs past timeout_s, or prints more than max_output."""
    env = {**os.environ, **_ENV}
    proc = subprocess.Popen(
        ["git", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    timer = threading.Timer(timeout_s, proc.kill)
    timer.start()
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(proc.stderr.read() if proc.stderr else b""), daemon=True)
    reader.start()
    try:
        if input is not None and proc.stdin is not None:
            threading.Thread(target=_feed, args=(proc.stdin, input), daemon=True).start()
        chunks: list[bytes] = []
        size = 0
        stdout = proc.stdout
        while stdout is not None and (chunk := stdout.read(1 << 16)):
            size += len(chunk)
            if max_output is not None and size > max_output:
                proc.kill()
                proc.wait()
                msg = f"git {' '.join(args)} in {cwd}: output over {max_output} bytes"
                raise GitOutputTooLargeError(msg)
            chunks.append(chunk)
        code = proc.wait()
    finally:
        timer.cancel()
        reader.join(timeout=5)
        for stream in (proc.stdout, proc.stderr, proc.stdin):
            if stream is not None:
                stream.close()
    if code != 0:
        why = b"".join(errors).decode(errors="replace").strip() or f"exit {code}"
        if code == -9:
            why = f"killed after {timeout_s:g} s"
        msg = f"git {' '.join(args)} in {cwd} failed: {why}"
        raise GitError(msg)
    return b"".join(chunks)


def _feed(stdin: IO[bytes], data: bytes) -> None:
    try:
        stdin.write(data)
        stdin.close()
    except OSError:
        pass
