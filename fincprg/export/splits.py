"""Deterministic, leak-free train/test split.

Rules (also written into the dataset card):

1. **Reports move as units.** A unit is one report (``split_unit="report"``), or every report
   whose title fell in one leaf topic cluster (``"leaf"``) or one largest same-industry subtree
   (``"subtree"``). Titles in the outlier topic ``t-1`` and reports without a topic assignment
   are single-report units. Units are ordered by ``sha256(seed, unit id)`` and taken into test
   until about ``test_fraction`` of the reports are in test, so the split is deterministic,
   sized as configured, and no report is in both splits.
2. **Topic queries move by cluster.** Every intent/topic query of one topic node (its
   ``source_ids[0]``) goes to one split: the split holding most of that node's reports
   (ties and nodes without reports: the node id's hash).
3. **A label lives in the split of its passage.** A qrel (query, passage) is kept in split S
   only when the query is in S *and* the passage's report is in S. Mined labels that cross
   splits (a test topic query whose positive sits in a train report, a passage query mined
   across reports of one industry) are dropped and counted, so training never sees a test
   passage as a positive and the test labels never point into the training reports.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Literal

SPLITS: tuple[str, str] = ("train", "test")
OUTLIER_TOPIC = "t-1"
SplitUnit = Literal["report", "leaf", "subtree"]


def unit_hash(seed: int, key: str) -> float:
    """A stable number in [0, 1) for ``key`` under ``seed`` (same on every machine and run)."""
    digest = hashlib.sha256(f"{seed}\0{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def report_units(
    report_ids: Iterable[str], assignments: Mapping[str, Mapping[str, Any]], unit: SplitUnit
) -> dict[str, str]:
    """Map each report id to the id of the unit it moves with."""
    key = {"leaf": "leaf_topic", "subtree": "subtree_topic"}.get(unit)
    out: dict[str, str] = {}
    for rid in report_ids:
        topic = assignments.get(rid, {}).get(key) if key else None
        # Outliers share topic "t-1" without being a cluster: keep them apart.
        out[rid] = f"topic:{topic}" if topic and topic != OUTLIER_TOPIC else f"report:{rid}"
    return out


def split_units(unit_sizes: Mapping[str, int], seed: int, test_fraction: float) -> dict[str, str]:
    """Assign units to train/test so that about ``test_fraction`` of the reports land in test.

    Units are visited in hash order; one is skipped when taking it would overshoot the target
    by more than it closes the gap, or would leave train empty (unless the fraction is 1).
    If that leaves test empty, the smallest unit that keeps train non-empty goes to test, so
    with 0 < fraction < 1 and at least two units both splits are non-empty.
    """
    total = sum(unit_sizes.values())
    target = round(total * test_fraction)
    if 0 < test_fraction < 1 and total >= 2:
        target = min(max(target, 1), total - 1)
    order = sorted(unit_sizes, key=lambda u: (unit_hash(seed, u), u))
    test: set[str] = set()
    taken = 0
    for u in order:
        if taken >= target:
            break
        size = unit_sizes[u]
        if taken + size - target > target - taken:
            continue
        if test_fraction < 1 and taken + size >= total:
            continue
        test.add(u)
        taken += size
    if not test and target > 0:
        fits = [u for u in order if test_fraction >= 1 or unit_sizes[u] < total]
        if fits:
            test.add(min(fits, key=lambda u: unit_sizes[u]))  # min() keeps hash order among equals
    return {u: ("test" if u in test else "train") for u in unit_sizes}


def split_reports(
    report_ids: Iterable[str],
    assignments: Mapping[str, Mapping[str, Any]],
    *,
    unit: SplitUnit,
    seed: int,
    test_fraction: float,
) -> dict[str, str]:
    """Report id -> "train" | "test" (rule 1 of the module docstring)."""
    units = report_units(report_ids, assignments, unit)
    sizes = Counter(units.values())
    unit_split = split_units(sizes, seed, test_fraction)
    return {rid: unit_split[u] for rid, u in units.items()}


def topic_reports(nodes: Mapping[str, Mapping[str, Any]]) -> dict[str, set[str]]:
    """Topic id -> report ids under it (its own ``title_ids`` plus every descendant's)."""
    memo: dict[str, set[str]] = {}

    def collect(tid: str, seen: frozenset[str]) -> set[str]:
        if tid in memo:
            return memo[tid]
        node = nodes.get(tid, {})
        ids = set(node.get("title_ids") or ())
        for child in node.get("children") or ():
            if child in nodes and child not in seen:  # guard against a malformed cyclic tree
                ids |= collect(child, seen | {child})
        memo[tid] = ids
        return ids

    for tid in nodes:
        collect(tid, frozenset({tid}))
    return memo


def split_topics(
    topic_ids: Iterable[str],
    nodes: Mapping[str, Mapping[str, Any]],
    report_split: Mapping[str, str],
    *,
    seed: int,
    test_fraction: float,
) -> dict[str, str]:
    """Topic id -> split (rule 2): the majority split of the node's reports."""
    under = topic_reports(nodes)
    out: dict[str, str] = {}
    for tid in topic_ids:
        votes = Counter(report_split[r] for r in under.get(tid, ()) if r in report_split)
        if votes["train"] != votes["test"]:
            out[tid] = "train" if votes["train"] > votes["test"] else "test"
        else:
            out[tid] = "test" if unit_hash(seed, f"topic:{tid}") < test_fraction else "train"
    return out
