"""One build per output folder: an advisory lock on ``OUT/.lock`` that the kernel drops when the holder dies.

A second ``fincprg build`` into the same OUT (a double-click, a retried job) exits at once naming the
holder's pid, instead of interleaving writes with the first one. A killed build leaves no stale lock:
flock is released with the process.
"""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fincprg import layout as L
from fincprg.errors import BuildLockedError


@contextmanager
def build_lock(out: Path) -> Iterator[None]:
    path = out / L.LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise BuildLockedError(
                f"{out} is being written by another fincprg build (pid {holder}); wait for it to finish, "
                "or build into another --out folder") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
