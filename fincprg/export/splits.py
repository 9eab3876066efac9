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
   (ties and nodes without reports: the node id's hash). On a small corpus the hash may put
   every labelled topic node's reports in train, leaving the topic test set empty; so when at
   least two nodes have labelled topic queries and none would keep a label in test, the
   smallest such node (fewest reports to move; ties: hash) moves to test with every unit
   holding its reports or its labels' reports, and other test units go back to train while
   that brings the test share closer to ``test_fraction`` (``ensure_topic_test``).
3. **A label lives in the split of its passage.** A qrel (query, passage) is kept in split S
   only when the query is in S *and* the passage's report is in S. Mined labels that cross
   splits (a test topic query whose positive sits in a train report, a passage query mined
   across reports of one industry) are dropped and counted, so training never sees a test
   passage as a positive and the test labels never point into the training reports.
"""
from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from fincprg.records import Topic, TopicAssignment

log = logging.getLogger(__name__)
SPLITS: tuple[str, str] = ("train", "test")
OUTLIER_TOPIC = "t-1"
SplitUnit = Literal["report", "leaf", "subtree"]


def unit_hash(seed: int, key: str) -> float:
    """A stable number in [0, 1) for ``key`` under ``seed`` (same on every machine and run)."""
    digest = hashlib.sha256(f"{seed}\0{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def report_units(
    report_ids: Iterable[str], assignments: Mapping[str, TopicAssignment], unit: SplitUnit
) -> dict[str, str]:
    """Map each report id to the id of the unit it moves with."""
    key = {"leaf": "leaf_topic", "subtree": "subtree_topic"}.get(unit)
    out: dict[str, str] = {}
    for rid in report_ids:
        a = assignments.get(rid)
        topic = getattr(a, key) if key and a is not None else None
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
    assignments: Mapping[str, TopicAssignment],
    *,
    unit: SplitUnit,
    seed: int,
    test_fraction: float,
    nodes: Mapping[str, Topic] | None = None,
    topic_labels: Mapping[str, set[str]] | None = None,
) -> dict[str, str]:
    """Report id -> "train" | "test" (rule 1 of the module docstring).

    With ``nodes`` (topic tree) and ``topic_labels`` (labelled topic node id -> report ids of
    its topic queries' labelled passages), ``ensure_topic_test`` then keeps topic labels in test.
    """
    units = report_units(report_ids, assignments, unit)
    sizes = Counter(units.values())
    unit_split = split_units(sizes, seed, test_fraction)
    if nodes is not None and topic_labels and 0 < test_fraction < 1:
        unit_split = ensure_topic_test(units, unit_split, nodes, topic_labels, seed=seed,
                                       test_fraction=test_fraction)
    return {rid: unit_split[u] for rid, u in units.items()}


def _topic_labels_in(split: str, report_split: Mapping[str, str], topic_split: Mapping[str, str],
                     topic_labels: Mapping[str, set[str]]) -> set[str]:
    """Labelled topic nodes whose node sits in ``split`` with at least one label surviving there."""
    return {t for t, rids in topic_labels.items()
            if topic_split.get(t) == split and any(report_split.get(r) == split for r in rids)}


def ensure_topic_test(
    units: Mapping[str, str],
    unit_split: Mapping[str, str],
    nodes: Mapping[str, Topic],
    topic_labels: Mapping[str, set[str]],
    *,
    seed: int,
    test_fraction: float,
) -> dict[str, str]:
    """Move one labelled topic node to test when the hash split left the topic test set empty.

    Args:
        units: report id -> unit id.
        unit_split: unit id -> split, from ``split_units``.
        nodes: topic tree nodes (id -> node dict with ``title_ids``/``children``).
        topic_labels: labelled topic node id -> report ids of its labels' passages.
        seed, test_fraction: as for ``split_units``.

    Returns the (possibly) changed unit split. Nothing changes when fewer than two nodes are
    labelled, when some topic label already survives in test, or when no move keeps a
    surviving topic label in train too (the train side must not lose the topic subset).
    """
    topics = sorted(topic_labels)
    if len(topics) < 2:
        return dict(unit_split)
    under = topic_reports(nodes)  # once: every candidate move re-splits the topics against it

    def evaluate(us: Mapping[str, str]) -> tuple[set[str], set[str]]:
        rs = {r: us[u] for r, u in units.items()}
        ts = split_topics(topics, nodes, rs, seed=seed, test_fraction=test_fraction, under=under)
        return (_topic_labels_in("train", rs, ts, topic_labels), _topic_labels_in("test", rs, ts, topic_labels))

    if evaluate(unit_split)[1]:
        return dict(unit_split)
    sizes = Counter(units.values())
    best = _cheapest_move(topics, units, unit_split, under, topic_labels, evaluate, sizes, seed)
    if best is None:
        return dict(unit_split)
    moved, locked = best
    out = {u: ("test" if u in locked else s) for u, s in unit_split.items()}
    _give_back(out, locked, sizes, round(sum(sizes.values()) * test_fraction), seed)
    log.info("export split: moved topic node %s to test (no topic label would otherwise be in test)", moved)
    return out


def _cheapest_move(topics: list[str], units: Mapping[str, str], unit_split: Mapping[str, str],
                   under: Mapping[str, set[str]], topic_labels: Mapping[str, set[str]],
                   evaluate: Callable[[Mapping[str, str]], tuple[set[str], set[str]]], sizes: Mapping[str, int],
                   seed: int) -> tuple[str, set[str]] | None:
    """The topic node to move to test, and the units that go with it: among the moves that put the node's labels in
    test and keep some topic label in train, the one moving fewest reports (ties: hash, then id)."""
    best: tuple[tuple[int, float, str], set[str]] | None = None
    for t in topics:
        need = {units[r] for r in under.get(t, set()) | set(topic_labels[t]) if r in units}
        if not need:
            continue
        trial = {u: ("test" if u in need else s) for u, s in unit_split.items()}
        train_ok, test_ok = evaluate(trial)
        if t not in test_ok or not train_ok:
            continue
        cost = sum(sizes[u] for u in need if unit_split[u] != "test")
        key = (cost, unit_hash(seed, f"topic:{t}"), t)
        if best is None or key < best[0]:
            best = (key, need)
    return None if best is None else (best[0][2], best[1])


def _give_back(out: dict[str, str], locked: set[str], sizes: Mapping[str, int], target: int, seed: int) -> None:
    """Give back other test units (hash order) to train while that brings the test share closer to ``target``."""
    taken = sum(sizes[u] for u, s in out.items() if s == "test")
    for u in sorted((u for u, s in out.items() if s == "test" and u not in locked),
                    key=lambda u: (unit_hash(seed, u), u)):
        if abs(taken - sizes[u] - target) < abs(taken - target):
            out[u] = "train"
            taken -= sizes[u]


def topic_reports(nodes: Mapping[str, Topic]) -> dict[str, set[str]]:
    """Topic id -> report ids under it (its own ``title_ids`` plus every descendant's)."""
    memo: dict[str, set[str]] = {}

    def collect(tid: str, seen: frozenset[str]) -> set[str]:
        if tid in memo:
            return memo[tid]
        node = nodes.get(tid)
        ids = set(node.title_ids) if node else set()
        for child in node.children if node else ():
            if child in nodes and child not in seen:  # guard against a malformed cyclic tree
                ids |= collect(child, seen | {child})
        memo[tid] = ids
        return ids

    for tid in nodes:
        collect(tid, frozenset({tid}))
    return memo


def split_topics(
    topic_ids: Iterable[str],
    nodes: Mapping[str, Topic],
    report_split: Mapping[str, str],
    *,
    seed: int,
    test_fraction: float,
    under: Mapping[str, set[str]] | None = None,
) -> dict[str, str]:
    """Topic id -> split (rule 2): the majority split of the node's reports.

    ``under`` is ``topic_reports(nodes)`` when the caller already has it (computed here otherwise).
    """
    if under is None:
        under = topic_reports(nodes)
    out: dict[str, str] = {}
    for tid in topic_ids:
        votes = Counter(report_split[r] for r in under.get(tid, ()) if r in report_split)
        if votes["train"] != votes["test"]:
            out[tid] = "train" if votes["train"] > votes["test"] else "test"
        else:
            out[tid] = "test" if unit_hash(seed, f"topic:{tid}") < test_fraction else "train"
    return out
