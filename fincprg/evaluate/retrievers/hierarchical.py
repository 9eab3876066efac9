"""Hierarchical retrieval: find the reports first, then the passages inside the top reports.

Stage 1 indexes one pseudo-document per report: its title and opening passage (the passage with the
lowest ``#p<order>``, or the first one seen). Stage 2 scores passages with BM25 and keeps those of the
top ``n_reports`` reports, ranked by ``passage + λ · report`` (both min-max normalised per query).
When a corpus has no report structure every document is its own report, and the method reduces to
title + opening-text retrieval re-scored by full-text BM25.

HiREC's setting (a dense retriever and a cross-encoder at each stage) is the options
``docs=dense:MODEL`` / ``passages=dense:MODEL`` (either stage retrieved by a bi-encoder instead of BM25)
and ``docs-ce=MODEL`` / ``passages-ce=MODEL``: a cross-encoder reranks the top ``3·N`` (at least 30)
reports and keeps N, or reranks the top :data:`PASSAGE_CE_POOL` passages of stage 2, whose order is
then the cross-encoder's alone (the rest follow, in stage-2 order).
"""
from __future__ import annotations

import re

from fincprg.evaluate.retrievers.base import Results, Retriever, ranked
from fincprg.evaluate.retrievers.fusion import minmax
from fincprg.evaluate.retrievers.lexical import BM25, report_of

_ORDER = re.compile(r"#p(\d+)$")
PASSAGE_CE_POOL = 100


def _order(doc_id: str, fallback: int) -> int:
    m = _ORDER.search(doc_id)
    return int(m.group(1)) if m else fallback


class Hierarchical:
    """Reports by title + opening passage, then passages within the top reports; BM25 at both stages
    unless ``reports``/``passages`` (any retriever, e.g. Dense) and the cross-encoders are given."""

    def __init__(self, n_reports: int = 10, report_weight: float = 0.5, name: str | None = None,
                 show_progress: bool = True, reports: Retriever | None = None, passages: Retriever | None = None,
                 reports_ce: str | None = None, passages_ce: str | None = None):
        self.n_reports, self.report_weight = n_reports, report_weight
        self.name = name or "hier"
        self.passages = passages or BM25(show_progress=show_progress)
        self.reports = reports or BM25(show_progress=show_progress)
        if reports_ce:
            from fincprg.evaluate.retrievers.dense import CrossEncoderRerank

            self.reports = CrossEncoderRerank(reports_ce, self.reports, pool=max(3 * n_reports, 30),
                                              show_progress=show_progress, name=f"{self.name} docs-ce")
        self.passage_ce = None
        if passages_ce:
            from fincprg.evaluate.retrievers.scorers import CrossEncoderScorer

            self.passage_ce = CrossEncoderScorer(passages_ce, where=f"retriever {self.name} passages-ce")

    def fit(self, corpus: dict[str, dict]) -> None:
        self.corpus = corpus
        self.passages.fit(corpus)
        members: dict[str, list[tuple[int, str]]] = {}
        for i, (d, doc) in enumerate(corpus.items()):
            members.setdefault(report_of(d, doc), []).append((_order(d, i), d))
        self.members = {r: [d for _, d in sorted(v)] for r, v in members.items()}
        pseudo = {}
        for r, docs in self.members.items():
            opening = corpus[docs[0]]
            title = opening.get("title") or ""
            pseudo[r] = {"title": title, "text": opening.get("text") or ""}
        self.reports.fit(pseudo)

    def search(self, queries: dict[str, str], k: int) -> Results:
        report_runs = self.reports.search(queries, self.n_reports)
        passage_runs = self.passages.search(queries, max(k, 1000))
        out: Results = {}
        for q in queries:
            rep = minmax(report_runs.get(q, {}))
            allowed = {d: r for r in rep for d in self.members[r]}
            psg = minmax({d: s for d, s in passage_runs.get(q, {}).items() if d in allowed})
            # passages of a top report that BM25 missed still rank, on their report's score alone
            scores = {d: psg.get(d, 0.0) + self.report_weight * rep[r] for d, r in allowed.items()}
            order = ranked(scores)
            if self.passage_ce is not None and order:
                head = order[:PASSAGE_CE_POOL]
                ce = self.passage_ce.score(queries[q], head, self.corpus)
                # the cross-encoder's [0, 1] scores lifted above the tail, which keeps its stage-2 order
                scores = {d: 2.0 + s for d, s in zip(head, ce)}
                scores.update({d: 1.0 - i * 1e-6 for i, d in enumerate(order[PASSAGE_CE_POOL:])})
                order = ranked(scores)
            out[q] = {d: scores[d] for d in order[:k]}
        return out
