"""Hierarchical retrieval: find the reports first, then the passages inside the top reports.

Stage 1 indexes one pseudo-document per report: its title and opening passage (the passage with the
lowest ``#p<order>``, or the first one seen). Stage 2 scores passages with BM25 and keeps those of the
top ``n_reports`` reports, ranked by ``passage + λ · report`` (both min-max normalised per query).
When a corpus has no report structure every document is its own report, and the method reduces to
title + opening-text retrieval re-scored by full-text BM25.
"""
from __future__ import annotations

import re

from fincprg.evaluate.retrievers.base import Results, ranked
from fincprg.evaluate.retrievers.fusion import minmax
from fincprg.evaluate.retrievers.lexical import BM25, report_of

_ORDER = re.compile(r"#p(\d+)$")


def _order(doc_id: str, fallback: int) -> int:
    m = _ORDER.search(doc_id)
    return int(m.group(1)) if m else fallback


class Hierarchical:
    """Reports by title + opening passage (BM25), then passages within the top reports (BM25)."""

    def __init__(self, n_reports: int = 10, report_weight: float = 0.5, name: str | None = None,
                 show_progress: bool = True):
        self.n_reports, self.report_weight = n_reports, report_weight
        self.name = name or "hier"
        self.passages = BM25(show_progress=show_progress)
        self.reports = BM25(show_progress=show_progress)

    def fit(self, corpus: dict[str, dict]) -> None:
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
            out[q] = {d: scores[d] for d in ranked(scores)[:k]}
        return out
