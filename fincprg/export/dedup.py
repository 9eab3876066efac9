"""Near-duplicate queries within each level (ragas#1682: 15 of 20 generated questions were identical).

Similarity is the exact Jaccard of character n-grams (``export.dedup.ngram``, punctuation and spacing
ignored), found with prefix filtering (Bayardo et al., "Scaling up all pairs similarity search",
WWW 2007): every pair at or above the threshold is found, none is guessed. MinHash would
only approximate the same Jaccard, and with thresholds as high as 0.85 on 10-40 character queries the
prefixes are one or two n-grams long, so the exact join is fast (111k queries in seconds) and
needs no new dependency. At the default 0.9 on bigrams, queries that differ in punctuation, spacing or
one character of a long query are merged; a lower threshold also merges an inserted 的 (about 0.85 on
a 20-character query), but then long template frames that differ in one key word merge too.

Two queries whose finance facts differ (:func:`fincprg.finance.extract`: company, period, metric,
numbers, direction) are never duplicates: 「2023年三季度营收」 and 「2023年前三季度营收」, or 「营收增长的原因」
and 「营收下降的原因」, share most n-grams but ask different questions.

Within a level, queries are taken in id order; a query similar to one already kept is removed and
*stands for* the first such one (:func:`first_kept_matches`: only kept queries are indexed, so a group of
k near-identical queries costs k probes, not the k² pairs of an all-pairs search): its labels move to the kept query as ``mined`` labels (``via`` = the removed
id; a near-identical question has the same answers, which is mining's own rule for equal texts), and
its children point to the kept query as their parent.
"""
from __future__ import annotations

import math
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from fincprg.finance import FinanceFacts, extract
from fincprg.records import Qrel, Query


@lru_cache(maxsize=200_000)
def _facts(text: str) -> FinanceFacts:
    return extract(text)


def grams(text: str, n: int) -> frozenset[str]:
    s = "".join(c.lower() for c in text if not c.isspace() and not unicodedata.category(c).startswith("P"))
    if len(s) <= n:
        return frozenset([s]) if s else frozenset()
    return frozenset(s[i:i + n] for i in range(len(s) - n + 1))


def _rarest_first(texts: Sequence[str], n: int) -> tuple[list[frozenset[str]], list[list[str]]]:
    """Each text's n-gram set, and the set as a list ordered rarest gram first (the prefix-filter order)."""
    sets = [grams(t, n) for t in texts]
    freq = Counter(g for s in sets for g in s)
    rank = {g: r for r, g in enumerate(sorted(freq, key=lambda g: (freq[g], g)))}
    return sets, [sorted(s, key=rank.__getitem__) for s in sets]


def _prefix(toks: list[str], threshold: float) -> list[str]:
    """The prefix of a rarest-first gram list: two sets with Jaccard >= threshold share a prefix gram."""
    return toks[:len(toks) - math.ceil(threshold * len(toks)) + 1]


def _similarity(a: frozenset[str], b: frozenset[str], threshold: float) -> float | None:
    if min(len(a), len(b)) < threshold * max(len(a), len(b)):
        return None  # sizes alone rule it out
    sim = len(a & b) / len(a | b)
    return sim if sim >= threshold else None


def first_kept_matches(texts: Sequence[str], threshold: float, n: int = 3) -> list[tuple[int, float] | None]:
    """Greedy near-duplicate removal in text order: for each text, ``None`` when it is kept, else
    ``(i, similarity)`` of the first kept text ``i`` before it with Jaccard(n-grams) >= threshold and the same
    finance facts (it is then removed).

    Equal to taking, from all similar pairs ``(i, j)``, the smallest kept ``i`` paired with each text, but only
    kept texts enter the prefix index: a removed text is never a candidate again, so k copies of one
    question cost k probes instead of k² pairs.
    """
    sets, ordered = _rarest_first(texts, n)
    index: dict[str, list[int]] = defaultdict(list)
    out: list[tuple[int, float] | None] = []
    for j, toks in enumerate(ordered):
        prefix = _prefix(toks, threshold)
        match = None
        for i in sorted({i for g in prefix for i in index.get(g, ())}):  # kept texts only, first one wins
            sim = _similarity(sets[i], sets[j], threshold)
            if sim is not None and _facts(texts[i]) == _facts(texts[j]):
                match = (i, round(sim, 4))
                break
        out.append(match)
        if match is None:
            for g in prefix:
                index[g].append(j)
    return out


def dedup_queries(queries: Sequence[Query], qrels: Sequence[Qrel], *, threshold: float, ngram: int = 3,
                  examples: int = 5) -> tuple[list[Query], list[Qrel], dict[str, Any]]:
    """Remove near-duplicates within each level (see the module docstring).

    Returns:
        (kept queries in input order, qrels with the removed queries' labels moved, a summary
        ``{"threshold", "ngram", "removed": {level: n}, "examples": [[kept text, removed text, sim]],
        "labels_moved": n}``).
    """
    by_level: dict[str, list[Query]] = defaultdict(list)
    for q in queries:
        by_level[q.level].append(q)
    stands_for: dict[str, tuple[str, float]] = {}  # removed id -> (kept id, similarity)
    removed: Counter[str] = Counter()
    shown: list[list[Any]] = []
    for level, qs in sorted(by_level.items()):
        qs = sorted(qs, key=lambda q: q.id)
        for j, match in enumerate(first_kept_matches([q.text for q in qs], threshold, ngram)):
            if match is None:
                continue
            stands_for[qs[j].id] = (qs[match[0]].id, match[1])
            removed[level] += 1
            if len(shown) < examples:
                shown.append([qs[match[0]].text, qs[j].text, match[1]])
    summary: dict[str, Any] = {"threshold": threshold, "ngram": ngram, "removed": dict(sorted(removed.items())),
                               "examples": shown, "labels_moved": 0}
    if not stands_for:
        return list(queries), list(qrels), summary

    def target(qid: str | None) -> str | None:
        while qid in stands_for:  # a removed parent's parent may be removed too
            qid = stands_for[qid][0]
        return qid

    out_q = [q if q.parent_id not in stands_for else q.model_copy(update={"parent_id": target(q.parent_id)})
             for q in queries if q.id not in stands_for]
    have = {(r.query_id, r.passage_id) for r in qrels if r.query_id not in stands_for}
    out_r = [r for r in qrels if r.query_id not in stands_for]
    for r in qrels:
        if r.query_id in stands_for:
            kept_id = target(r.query_id)
            if (kept_id, r.passage_id) in have:
                continue
            have.add((kept_id, r.passage_id))
            out_r.append(Qrel(query_id=kept_id, passage_id=r.passage_id, relevance=r.relevance, provenance="mined",
                              score=stands_for[r.query_id][1], via=r.query_id))
            summary["labels_moved"] += 1
    return out_q, out_r, summary
