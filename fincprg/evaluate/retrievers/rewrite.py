"""Query rewriting ablation: BM25 over rewritten queries.

* ``rewrite`` (rules, offline): question words and courtesies are dropped
  (:data:`fincprg.finance.lexicon.QUESTION`) and every metric the query names (:func:`fincprg.finance.extract`)
  is expanded with its canonical name and the synonyms of :data:`fincprg.finance.METRIC_SYNONYMS` it does not
  already contain (营收 -> 营业收入, 营业总收入, ...).
* ``rewrite:llm[:CONFIG]``: ``prompts/search_rewrite.<lang>.j2`` through the LLM client (see
  :mod:`fincprg.evaluate.retrievers.scorers` for CONFIG); an answer without a non-empty ``query`` is not
  cached and the original query is searched (counted in ``rewrite_failed``).
"""
from __future__ import annotations

import re

from fincprg.evaluate.retrievers.base import Results
from fincprg.evaluate.retrievers.lexical import BM25
from fincprg.finance.lexicon import QUESTION


def rule_rewrite(query: str) -> str:
    """The offline rewrite: question words out, metric synonyms in."""
    from fincprg.finance import METRIC_SYNONYMS, extract

    core = re.sub(r"\s+", " ", QUESTION.sub(" ", query)).strip() or query
    extra = []
    for metric in sorted(extract(query).metrics):
        extra += [s for s in METRIC_SYNONYMS.get(metric, (metric,)) if s not in core and s not in extra]
    return " ".join([core, *extra])


def parse_rewrite(text: str | None) -> str | None:
    from fincprg.llm import JSONParseError, parse_json

    try:
        obj = parse_json(text)
    except JSONParseError:
        return None
    q = obj.get("query") if isinstance(obj, dict) else None
    return q.strip() if isinstance(q, str) and q.strip() else None


class RewriteBM25:
    """BM25 searched with rewritten queries (``mode``: ``rules`` or ``llm``)."""

    def __init__(self, mode: str = "rules", config: str | None = None, language: str = "zh",
                 show_progress: bool = True, name: str | None = None):
        if mode not in ("rules", "llm"):
            raise ValueError(f"rewrite mode {mode!r}: rules or llm")
        self.mode, self.config, self.language, self.show_progress = mode, config, language, show_progress
        self.name = name or ("rewrite" if mode == "rules" else "rewrite:llm")
        self.bm25 = BM25(show_progress=show_progress)
        self.stats: dict[str, float] = {}
        self.rewritten: dict[str, str] = {}

    def fit(self, corpus: dict[str, dict]) -> None:
        self.bm25.fit(corpus)

    def rewrite(self, queries: dict[str, str]) -> dict[str, str]:
        if self.mode == "rules":
            return {q: rule_rewrite(t) for q, t in queries.items()}
        from fincprg.evaluate.retrievers.scorers import llm_client
        from fincprg.llm import load_prompt

        prompt = load_prompt("search_rewrite", self.language)
        client = llm_client(self.config)
        qids = list(queries)
        results = client.chat_many([prompt.render(query=queries[q]) for q in qids], desc="llm rewrite",
                                   progress=self.show_progress, accept=lambda i, r: parse_rewrite(r.text) is not None)
        out, failed = {}, 0
        for q, r in zip(qids, results):
            new = parse_rewrite(r.text) if r.ok else None
            failed += new is None
            out[q] = new or queries[q]
        s = client.stats
        self.stats = {"rewrite_failed": float(failed), "llm_requests": float(s["requests"]),
                      "llm_cache_hits": float(s["cache_hits"])}
        client.close()
        return out

    def search(self, queries: dict[str, str], k: int) -> Results:
        self.rewritten = self.rewrite(queries)
        changed = sum(self.rewritten[q] != queries[q] for q in queries)
        self.stats["rewritten_fraction"] = changed / len(queries) if queries else 0.0
        return self.bm25.search(self.rewritten, k)
