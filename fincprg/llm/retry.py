"""Counts for ``fincprg build --retry-failed``: which failed items were asked again and recovered.

The stages write one ``Failure`` record per item that did not succeed; an item whose kind is
retryable was not cached, so the next run of the stage asks it again. These counts compare the
previous run's failure records (``StageContext.previous_failures``) with this run's.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def failed_ids(failures: Iterable[Any], kinds: Iterable[str] | None = None) -> set[str]:
    """Item ids of failure records (``Failure`` or their JSON dicts), of the given kinds (default all)."""
    wanted = None if kinds is None else set(kinds)
    out = set()
    for f in failures:
        rec = f if isinstance(f, dict) else f.model_dump()
        if wanted is None or rec.get("kind") in wanted:
            out.add(str(rec.get("item_id")))
    return out


def retry_counts(failed_now: set[str], previous: Iterable[Any], kinds: Iterable[str] | None = None,
                 *, retrying: bool = False) -> dict[str, int]:
    """``retryable_failures`` (items a ``--retry-failed`` run would ask again), and, on such a run,
    ``retried`` (items that had failed before) and ``recovered`` (of those, the ones now fine)."""
    out = {"retryable_failures": len(failed_now)}
    if retrying:
        before = failed_ids(previous, kinds)
        out["retried"] = len(before)
        out["recovered"] = len(before - failed_now)
    return out
