"""The verify manifest's counts in reading order: the build summary (``fincprg/verify/summary.py``), the dataset
card and the HTML report print them. On the ground floor because a stage (export) and a tool (report) read
another stage's manifest; what they read is its data on disk, not its code."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from fincprg.records import QueryLevel

LEVELS: tuple[str, ...] = get_args(QueryLevel)  # sentence, passage, topic, intent


def ordered_levels(counts: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The manifest's per-level counts in :data:`LEVELS` order (a manifest stores its keys sorted by name)."""
    return sorted((counts.get("levels") or {}).items(),
                  key=lambda kv: LEVELS.index(kv[0]) if kv[0] in LEVELS else len(LEVELS))


def ordered_reasons(counts: Mapping[str, Any]) -> list[tuple[str, int]]:
    """The manifest's drop reasons, most frequent first (ties by name)."""
    return sorted((counts.get("reasons") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
