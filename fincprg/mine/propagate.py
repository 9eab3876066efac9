"""Positive propagation: equivalent queries share their positives (paper §4.2).

An accepted, un-vetoed ordered pair (a, b) says "b asks what a asks", so a gains the source
passages of b (b's direct qrels; a passage query is equivalent to its passage, which is how a
topic subquery gains the passage of an equivalent passage query). Under ``direction=both``
the reverse gain needs the reverse pair (b, a) to be accepted too, since the reranker is
asymmetric; under ``direction=one`` each unordered pair was scored once and the gain goes both
ways. Passages a query already has (direct or mined earlier) are skipped; when several
equivalents bring the same passage, the highest score wins (ties: smallest ``via`` id).
Output is sorted by (query id, passage id).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from fincprg.records import Qrel, ScoredPair


def propagate(pairs: Iterable[ScoredPair], direct: Iterable[Qrel], direction: str = "both") -> list[Qrel]:
    """Mined qrels (relevance 1, provenance "mined", score, via) from accepted pairs."""
    positives: dict[str, set[str]] = defaultdict(set)
    for q in direct:
        if q.relevance > 0:
            positives[q.query_id].add(q.passage_id)
    best: dict[tuple[str, str], tuple[float, str]] = {}

    def gain(a: str, b: str, score: float) -> None:
        for pid in positives.get(b, ()):
            if pid in positives.get(a, ()):
                continue
            key = (a, pid)
            cur = best.get(key)
            if cur is None or score > cur[0] or (score == cur[0] and b < cur[1]):
                best[key] = (score, b)

    for p in pairs:
        if not p.accepted or p.veto:
            continue
        gain(p.query_a, p.query_b, p.score)
        if direction == "one":
            gain(p.query_b, p.query_a, p.score)
    return [Qrel(query_id=q, passage_id=pid, relevance=1, provenance="mined", score=s, via=via)
            for (q, pid), (s, via) in sorted(best.items())]
