"""Where the afterAll hook's text goes: promptfoo's own stdout, written to directly, when that is safe.

Promptfoo reads a Python hook's stdout as its control channel (what is printed there is dropped) and logs its
stderr line by line as warnings: yellow on a terminal, blank lines dropped, a line that starts with "debug" or
"info" filed under that level (so a task called debug-parser would vanish from the table). The verdict is a
report, not a warning, so the hook writes to the stdout of the promptfoo process itself (its parent; Linux
`/proc/<pid>/fd/1`, opened anew) when that is a terminal, a pipe (CI logs, `| tee`), or a file opened for
appending (`>>`). A file opened by `>` is not: promptfoo's next write would land at its own offset, over ours.
Anywhere else (another OS, a wrapper process between promptfoo and Python) the text goes to stderr, through
promptfoo's log, every line still there.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import TextIO, cast

O_APPEND = 0o2000  # Linux's flag bits, as /proc/<pid>/fdinfo shows them (octal)


def _appending(pid: int, fd: int) -> bool:
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as info:
            for line in info:
                if line.startswith("flags:"):
                    return bool(int(line.split()[1], 8) & O_APPEND)
    except (OSError, ValueError, IndexError):
        pass
    return False


def promptfoo_stdout(pid: int | None = None) -> TextIO | None:
    """The stdout of process `pid` (default: the parent, promptfoo) opened for writing, or None when writing to it
    directly is not safe or not possible."""
    pid = os.getppid() if pid is None else pid
    path = f"/proc/{pid}/fd/1"
    try:
        target = os.stat(path)
        ours = os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    if (target.st_dev, target.st_ino) == (ours.st_dev, ours.st_ino):
        return None  # our own stdout: the pipe promptfoo reads (and drops) a hook's prints from
    if stat.S_ISCHR(target.st_mode) or stat.S_ISFIFO(target.st_mode):
        mode = "w"
    elif stat.S_ISREG(target.st_mode) and _appending(pid, 1):
        mode = "a"
    else:
        return None
    try:
        return cast(TextIO, open(path, mode, encoding="utf-8", errors="replace"))  # the caller closes it
    except OSError:
        return None


def show(text: str, pid: int | None = None) -> str:
    """Write `text` where promptfoo's user reads it; say where ("stdout" or "stderr")."""
    out = promptfoo_stdout(pid)
    if out is None:
        print(text, file=sys.stderr, flush=True)
        return "stderr"
    with out:
        out.write(text if text.endswith("\n") else text + "\n")
    return "stdout"
