"""IR metrics with pytrec_eval (trec_eval's own code): Recall@{1,5,10,100}, nDCG@10, MRR@10, MAP@100.

MRR@10: trec_eval's ``recip_rank`` has no cut-off, so each run is first truncated to its top 10 in
trec_eval's own order (score descending, ties by doc id descending) and ``recip_rank`` is computed on
that; a query whose first relevant document sits below rank 10 scores 0.

Averages are over every query in the qrels that has a relevant document (relevance > 0); a query the
retriever returned nothing for scores 0 on every metric (pytrec_eval alone would skip it).
"""
from __future__ import annotations

from collections.abc import Iterable

METRICS = ("R@1", "R@5", "R@10", "R@100", "nDCG@10", "MRR@10", "MAP@100")
_TREC = {"R@1": "recall_1", "R@5": "recall_5", "R@10": "recall_10", "R@100": "recall_100",
         "nDCG@10": "ndcg_cut_10", "MAP@100": "map_cut_100"}


def trec_order(run: dict[str, float]) -> list[str]:
    """Doc ids in trec_eval's ranking order: score descending, ties broken by doc id descending."""
    return [d for d, _ in sorted(run.items(), key=lambda x: (x[1], x[0]), reverse=True)]


def truncate(run: dict[str, dict[str, float]], n: int) -> dict[str, dict[str, float]]:
    return {q: {d: docs[d] for d in trec_order(docs)[:n]} for q, docs in run.items()}


def per_query(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Every metric in ``METRICS`` for every judged query (missing runs score 0)."""
    import pytrec_eval

    judged = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items()
              if any(r > 0 for r in docs.values())}
    run = {q: {d: float(s) for d, s in docs.items()} for q, docs in run.items() if q in judged and docs}
    ev = pytrec_eval.RelevanceEvaluator(judged, {"recall.1,5,10,100", "ndcg_cut.10", "map_cut.100"})
    base = ev.evaluate(run)
    rr = pytrec_eval.RelevanceEvaluator(judged, {"recip_rank"}).evaluate(truncate(run, 10))
    out: dict[str, dict[str, float]] = {}
    for q in judged:
        if q in base:
            row = {m: float(base[q][t]) for m, t in _TREC.items()}
            row["MRR@10"] = float(rr[q]["recip_rank"])
        else:
            row = {m: 0.0 for m in METRICS}
        out[q] = {m: row[m] for m in METRICS}
    return out


def mean(rows: Iterable[dict[str, float]], metrics: tuple[str, ...] = METRICS) -> dict[str, float]:
    rows = list(rows)
    if not rows:
        return {m: float("nan") for m in metrics}
    return {m: sum(r[m] for r in rows) / len(rows) for m in metrics}


def evaluate(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    """Mean of each metric over the judged queries, plus ``n`` (the number of queries)."""
    pq = per_query(qrels, run)
    out = mean(pq.values())
    out["n"] = float(len(pq))
    return out


def pool_recall(qrels: dict[str, dict[str, int]], pool: dict[str, dict[str, float]]) -> float:
    """Share of relevant documents a reranker's candidate pool contains (averaged over judged queries)."""
    vals = []
    for q, docs in qrels.items():
        rel = {d for d, r in docs.items() if r > 0}
        if rel:
            vals.append(len(rel & set(pool.get(q, {}))) / len(rel))
    return sum(vals) / len(vals) if vals else float("nan")
