"""Where a training run's memory goes (issue 49: e5-small at batch 32 within 4 GB on CPU).

The run records its RSS and peak after each phase (``fincprg_train.json``'s ``memory_gb``): the rows (and the
teacher's rankings), the student model, training. A phase whose peak jumps names what to shrink.
"""
from __future__ import annotations

import logging
import os
from typing import Any

log = logging.getLogger(__name__)


def memory_mark(info: dict[str, Any], phase: str) -> None:
    """Record the process's RSS now and its peak so far after ``phase`` (``info["memory_gb"]``): where a run's
    memory goes, phase by phase (issue 49 bounds e5-small at batch 32 to 4 GB)."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20  # KB on Linux
    now = None
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            now = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 30
    except (OSError, ValueError, IndexError):
        pass  # not Linux: the peak alone
    info.setdefault("memory_gb", {})[phase] = {"rss": round(now, 3) if now is not None else None,
                                               "peak": round(peak, 3)}
    log.info("train: memory after %s: RSS %s GB, peak %.2f GB", phase, f"{now:.2f}" if now is not None else "?", peak)
