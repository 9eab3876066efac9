"""File-system faults for a CLI subprocess, without root or a small tmpfs (tests and eval/bench_faults.py).

- :func:`file_size_limit`: ``RLIMIT_FSIZE``, so any write past N bytes fails with EFBIG
  ("File too large"), as a write on a full disk fails with ENOSPC; the small files before it succeed.
  (Python ignores SIGXFSZ, so the write raises instead of the signal killing the process.)
- :func:`without_root_override`: permissions as for an ordinary user. A root process ignores a folder's
  missing write bit (CAP_DAC_OVERRIDE); the child drops that capability from its bounding set before
  ``exec``, so ``chmod a-w`` binds it too. For a non-root user it does nothing.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import resource
from collections.abc import Iterator

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH, _CAP_FOWNER = 1, 2, 3


@contextlib.contextmanager
def file_size_limit(n_bytes: int) -> Iterator[None]:
    """No file over ``n_bytes`` may be written inside the block, by this process or the children it starts
    (they inherit the soft limit); the limit is raised back afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (n_bytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def without_root_override() -> None:
    """A ``preexec_fn``: the child obeys file permissions even when run as root (see the module doc)."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH, _CAP_FOWNER):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"cannot drop capability {cap} (needs CAP_SETPCAP): {os.strerror(err)}")


def permissions_bind() -> bool:
    """Whether a read-only folder refuses writes here (:func:`without_root_override` works, or not root)."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o555)
        try:
            r = subprocess.run([sys.executable, "-c", f"open({os.path.join(d, 'x')!r}, 'w')"],
                               preexec_fn=without_root_override, capture_output=True)
        except (OSError, subprocess.SubprocessError):  # the capability could not be dropped
            return False
        finally:
            os.chmod(d, 0o755)
        return r.returncode != 0
