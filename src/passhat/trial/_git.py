"""git, run the same way everywhere: no user or system config, fixed identity, bytes out."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "passhat",
    "GIT_AUTHOR_EMAIL": "passhat@localhost",
    "GIT_COMMITTER_NAME": "passhat",
    "GIT_COMMITTER_EMAIL": "passhat@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


class GitError(Exception):
    pass


def git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    env = {**os.environ, **_ENV}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, input=input, capture_output=True)
    if proc.returncode != 0:
        msg = f"git {' '.join(args)} in {cwd} failed: {proc.stderr.decode(errors='replace').strip()}"
        raise GitError(msg)
    return proc.stdout
