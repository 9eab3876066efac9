"""Localised traversal spaces (paper §4.2) and the paper's pair-count cost model (§7.1).

Three kinds of space:

- **sentence**: one space per report; its sentence queries are scored against each other,
  except pairs whose two queries come from the same passage (``groups`` = passage id).
- **passage**: one space per largest industry subtree (``assignments.subtree_topic`` of the
  query's report); its passage queries are scored against each other. Reports without an
  assignment (titles the topics stage dropped) are in no passage space: there is no subtree
  to localise them in, and pooling them would create one arbitrary cross-industry space.
  They are counted as ``passage_queries_unassigned``. Outlier titles (HDBSCAN leaf ``t-1``) form
  one space per industry (``t-1/<industry>``), and a space above ``mine.max_space_queries`` is cut
  into windows of whole reports, so passage pairs grow linearly beyond that size.
- **topic**: one space per topic node that has subqueries; bipartite: its topic subqueries
  (left) against the passage queries of the reports whose titles lie in that node's subtree
  (``Topic.title_ids``, right).

Direction (``mine.direction``): ``both`` scores (a, b) and (b, a) as separate pairs
(rerankers are asymmetric); ``one`` scores each unordered pair once, with a = the query that
comes first in the space (the subquery in the topic space).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from fincprg.records import Query, Topic

SpaceKind = Literal["sentence", "passage", "topic"]
KINDS: tuple[SpaceKind, ...] = ("sentence", "passage", "topic")


@dataclass(frozen=True)
class Space:
    """One local space: square (``right`` empty) or bipartite (topic space)."""

    kind: SpaceKind
    key: str  # report id, subtree topic id, or topic id
    left: tuple[str, ...]
    right: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()  # square spaces: group of each left query; same-group pairs are skipped

    @property
    def bipartite(self) -> bool:
        return bool(self.right)


def _passage_of(q: Query) -> str:
    return q.source_ids[0] if q.source_ids else q.id


def sentence_spaces(queries: Iterable[Query]) -> list[Space]:
    """One space per report over its sentence queries; groups are the source passages."""
    by_report: dict[str, list[Query]] = defaultdict(list)
    for q in queries:
        if q.level == "sentence":
            by_report[q.report_id or _passage_of(q).split("#", 1)[0]].append(q)
    out = []
    for rid in sorted(by_report):
        qs = sorted(by_report[rid], key=lambda q: q.id)
        if len({_passage_of(q) for q in qs}) < 2:
            continue  # a single-passage report has no cross-passage pair
        out.append(Space("sentence", rid, tuple(q.id for q in qs), groups=tuple(_passage_of(q) for q in qs)))
    return out


def window_space(space: Space, cap: int) -> list[Space]:
    """Cut a sentence space of more than ``cap`` queries into windows of whole consecutive passages.

    A huge report (a 50 MB PDF dump) would otherwise make one space of n^2 pairs; windows bound the
    work and memory per space to cap^2, at the price of the pairs across windows (counted by the stage).
    A single passage larger than ``cap`` stays whole (its queries are never paired with each other).
    """
    if len(space.left) <= cap or not space.groups:
        return [space]
    windows: list[list[int]] = [[]]
    start = 0
    for i in range(1, len(space.left) + 1):
        if i == len(space.left) or space.groups[i] != space.groups[start]:  # a passage block ends at i
            if windows[-1] and len(windows[-1]) + (i - start) > cap:
                windows.append([])
            windows[-1].extend(range(start, i))
            start = i
    return [Space(space.kind, f"{space.key}@w{k}", tuple(space.left[j] for j in w),
                  groups=tuple(space.groups[j] for j in w))
            for k, w in enumerate(windows) if len({space.groups[j] for j in w}) >= 2]


OUTLIERS = "t-1"  # HDBSCAN's outlier leaf: titles that joined no topic


def passage_spaces(queries: Iterable[Query], subtree_of_report: Mapping[str, str],
                   industry_of_report: Mapping[str, str | None] | None = None,
                   cap: int | None = None) -> tuple[list[Space], int, int]:
    """One space per industry subtree over its passage queries; returns (spaces, unassigned, windowed).

    Outlier titles (leaf ``t-1``) share no topic, so they are not one space (that space would hold
    about half of a corpus and grow quadratically); they are localised by their own industry instead,
    key ``t-1/<industry>``. A space of more than ``cap`` queries is cut into windows of whole
    consecutive reports, like a huge report's sentence space.
    """
    industry_of_report = industry_of_report or {}
    by_tree: dict[str, list[str]] = defaultdict(list)
    unassigned = 0
    for q in queries:
        if q.level != "passage":
            continue
        tree = subtree_of_report.get(q.report_id or "")
        if tree is None:
            unassigned += 1
            continue
        if tree == OUTLIERS:
            tree = f"{OUTLIERS}/{industry_of_report.get(q.report_id or '') or 'unknown'}"
        by_tree[tree].append(q.id)
    spaces, windowed = [], 0
    for t, ids in sorted(by_tree.items()):
        ids.sort()
        if cap is not None and len(ids) > cap:
            windowed += 1
            spaces += [Space("passage", f"{t}@w{k}", w) for k, w in enumerate(_report_windows(ids, cap)) if len(w) >= 2]
        elif len(ids) >= 2:
            spaces.append(Space("passage", t, tuple(ids)))
    return spaces, unassigned, windowed


def _report_windows(ids: list[str], cap: int) -> list[tuple[str, ...]]:
    """Consecutive windows of at most ``cap`` passage queries that never split a report (``qp:<report>#p<k>``);
    a report larger than ``cap`` stays whole."""
    windows: list[list[str]] = [[]]
    start = 0
    report = [i.rsplit("#", 1)[0] for i in ids]
    for i in range(1, len(ids) + 1):
        if i == len(ids) or report[i] != report[start]:
            if windows[-1] and len(windows[-1]) + (i - start) > cap:
                windows.append([])
            windows[-1].extend(ids[start:i])
            start = i
    return [tuple(w) for w in windows]


def topic_spaces(queries: Iterable[Query], nodes: Mapping[str, Topic]) -> list[Space]:
    """One bipartite space per topic node: its subqueries x passage queries of its titles' reports."""
    subqs: dict[str, list[str]] = defaultdict(list)
    pq_by_report: dict[str, list[str]] = defaultdict(list)
    for q in queries:
        if q.level == "topic" and q.source_ids:
            subqs[q.source_ids[0]].append(q.id)
        elif q.level == "passage" and q.report_id:
            pq_by_report[q.report_id].append(q.id)
    out = []
    for tid in sorted(subqs):
        node = nodes.get(tid)
        if node is None:
            continue
        right = sorted(p for rid in set(node.title_ids) for p in pq_by_report.get(rid, ()))
        if right:
            out.append(Space("topic", tid, tuple(sorted(subqs[tid])), right=tuple(right)))
    return out


def space_sizes(space: Space) -> tuple[int, int, int]:
    """(n_left, n_right, same-group ordered pairs) — everything the cost model needs."""
    same = sum(m * (m - 1) for m in Counter(space.groups).values()) if space.groups else 0
    return len(space.left), len(space.right), same


def expected_pairs(spaces: Iterable[Space], direction: Literal["both", "one"]) -> dict[str, int]:
    """Pairs the full traversal scores, per space kind (paper §7.1 cost model).

    Square space of n queries: n(n-1) ordered pairs (``both``) or n(n-1)/2 (``one``), minus the
    pairs of queries from the same passage in the sentence space. Bipartite topic space of m
    subqueries and p passage queries: 2mp (``both``) or mp (``one``).
    """
    out = dict.fromkeys(KINDS, 0)
    for s in spaces:
        n, p, same = space_sizes(s)
        if s.bipartite:
            pairs = n * p * (2 if direction == "both" else 1)
        else:
            ordered = n * (n - 1) - same
            pairs = ordered if direction == "both" else ordered // 2
        out[s.kind] += pairs
    return out


def base_mask(space: Space, rows: slice, direction: str, reverse: bool = False) -> np.ndarray:
    """Boolean (rows x columns) mask of the pairs the traversal scores in a row block.

    For a bipartite space ``reverse`` selects the (right, left) direction.
    """
    if space.bipartite:
        n_rows = len(space.right if reverse else space.left)
        n_cols = len(space.left if reverse else space.right)
        idx = range(n_rows)[rows]
        return np.ones((len(idx), n_cols), dtype=bool)
    n = len(space.left)
    idx = np.arange(n)[rows]
    cols = np.arange(n)
    mask = idx[:, None] != cols[None, :]
    if direction == "one":
        mask &= cols[None, :] > idx[:, None]
    if space.groups:
        g = np.asarray(space.groups, dtype=object)
        mask &= g[idx][:, None] != g[None, :]
    return mask
