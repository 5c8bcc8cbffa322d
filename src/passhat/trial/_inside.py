"""The first process inside a trial's sandbox: a model port, a seccomp filter, then exec.

Run as `python -I -S _inside.py --socket SOCK --port PORT -- PROGRAM ARGS...` (standalone: the standard
library only, no passhat import, since it runs in the sandbox's own view). It

  1. forks a forwarder that listens on 127.0.0.1:PORT of the trial's own network namespace and relays each
     connection to SOCK, the unix socket of passhat's model proxy outside the sandbox (the only way out).
     The forwarder is made non-dumpable, so the agent (same uid, no capabilities) cannot ptrace it or open
     its file descriptors through /proc;
  2. sets no_new_privs and installs a seccomp filter that makes every later process unable to create a unix
     socket (the host's file sockets stay unreachable), touch kernel keyrings, ptrace, or use io_uring,
     bpf, perf events, userfaultfd, mount or namespace calls (each fails with EPERM);
  3. execs PROGRAM (Claude Code, or a grader's command).
Without --socket it skips step 1 (a grader's run of the agent's code has no network at all).
"""

from __future__ import annotations

import _socket
import ctypes
import os
import struct
import sys

# seccomp constants (linux/seccomp.h, linux/filter.h, linux/audit.h)
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_EPERM = 1
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_AF_UNIX = 1
_X32_BIT = 0x40000000

# (audit arch, socket nr, blocked syscall numbers) per architecture
_ARCHES = {
    "x86_64": (
        0xC000003E,
        41,
        {
            "add_key": 248, "request_key": 249, "keyctl": 250, "ptrace": 101, "process_vm_readv": 310,
            "process_vm_writev": 311, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
            "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "mount": 165, "umount2": 166,
            "pivot_root": 155, "unshare": 272, "setns": 308, "kexec_load": 246, "open_by_handle_at": 304,
        },
    ),
    "aarch64": (
        0xC00000B7,
        198,
        {
            "add_key": 217, "request_key": 218, "keyctl": 219, "ptrace": 117, "process_vm_readv": 270,
            "process_vm_writev": 271, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
            "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "mount": 40, "umount2": 39,
            "pivot_root": 41, "unshare": 97, "setns": 268, "kexec_load": 104, "open_by_handle_at": 265,
        },
    ),
}  # fmt: skip


def seccomp_program(machine: str | None = None) -> bytes:
    """The classic-BPF filter as bytes (struct sock_filter[]): deny the calls above and socket(AF_UNIX, ...)."""
    arch, socket_nr, blocked = _ARCHES[machine or os.uname().machine]
    deny = _RET_ERRNO | _EPERM
    numbers = sorted(blocked.values())
    # layout: 0 load arch | 1 arch? | 2 load nr | 3 x32? | 4.. one jeq per blocked nr | socket jeq | load arg0 |
    #         arg0 == AF_UNIX? | allow | deny
    n = len(numbers)
    allow_at = 4 + n + 3
    deny_at = allow_at + 1
    program = [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ_K, 0, deny_at - 2, arch),  # another ABI than ours: deny
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (_JGE_K, deny_at - 4, 0, _X32_BIT),  # x32 calls: deny
    ]
    for index, number in enumerate(numbers):
        at = 4 + index
        program.append((_JEQ_K, deny_at - at - 1, 0, number))
    at = 4 + n
    program.append((_JEQ_K, 0, allow_at - at - 1, socket_nr))  # socket(): look at the family
    program.append((_LD_W_ABS, 0, 0, 16))  # seccomp_data.args[0], low 32 bits (little-endian)
    at = 4 + n + 2
    program.append((_JEQ_K, deny_at - at - 1, 0, _AF_UNIX))
    program.append((_RET_K, 0, 0, _RET_ALLOW))
    program.append((_RET_K, 0, 0, deny))
    return b"".join(struct.pack("HBBI", *instruction) for instruction in program)


def install_seccomp(program: bytes) -> None:
    """no_new_privs, then the filter for this process and everything it starts."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    buffer = ctypes.create_string_buffer(program)

    class Fprog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    fprog = Fprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def _pipe(source: _socket.socket, sink: _socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for end in (sink, source):
            try:
                end.shutdown(_socket.SHUT_RDWR)
            except OSError:
                pass


def _relay(client: _socket.socket, path: str) -> None:
    import socket
    import threading

    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError as e:
        print("relay", e, file=sys.stderr)
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    back.start()
    _pipe(client, upstream)
    back.join()
    upstream.close()
    client.close()


def _forward(listener_fd: int, path: str) -> None:
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: no ptrace, no /proc/<pid>/fd for the agent
    import socket  # the forwarder's imports: after the fork, off the program's start-up path
    import threading

    listener = socket.socket(fileno=listener_fd)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> None:
    split = argv.index("--")
    options, program = argv[:split], argv[split + 1 :]
    settings = dict(zip(options[::2], options[1::2], strict=True))
    if "--socket" in settings:  # bound before the program starts; connections queue until the forwarder accepts
        listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(settings["--port"])))
        listener.listen(64)
        if os.fork() == 0:
            try:
                _forward(listener.detach(), settings["--socket"])
            finally:
                os._exit(0)
        listener.close()
    install_seccomp(seccomp_program())
    os.execvp(program[0], program)


if __name__ == "__main__":
    main(sys.argv[1:])
