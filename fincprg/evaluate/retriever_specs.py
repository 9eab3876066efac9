"""The retriever SPEC grammar and offline defaults, kept apart from :mod:`fincprg.evaluate.retrievers`
so the CLI can show them without importing numpy (importing that package's ``specs`` submodule would
still run its ``__init__``)."""
from __future__ import annotations

import re

SPEC_HELP = """\
    bm25                      BM25 (bm25s) over jieba + finance-dictionary tokens
    bm25-report               BM25 inside the query's own report (queries.jsonl report_id)
    lsa                       TF-IDF + TruncatedSVD, 64 dims, L2-normalised
    hybrid[:W[:SPEC]]         min-max W·BM25 + (1−W)·SPEC; W = 0.75, SPEC = lsa (or e.g. dense:MODEL)
    rrf[:SPEC+SPEC+...]       reciprocal rank fusion, k = 60; default bm25+lsa
    dense:MODEL               sentence-transformers bi-encoder (local folder or hub id)
    dense-flag:MODEL          FlagEmbedding FlagModel bi-encoder (e.g. BAAI/bge-base-zh-v1.5)
    rerank:MODEL              cross-encoder over the BM25 top 100 (sentence-transformers CrossEncoder)
    rerank-flag:MODEL         the same with FlagEmbedding FlagReranker (normalize=True)
    cards[:ce:MODEL|:llm[:CONFIG]]  finance-card reranker over BM25, fused with RRF (card alignment, or a cross-encoder or LLM score)
    borda[:cards|first|ce:MODEL|llm[:CONFIG]]  bootstrap round-robin Borda over the BM25 top 30 (group scorer)
    hier[:N][,OPT...]         hierarchical: top N reports (10) by title + opening passage, then passages; OPT = docs=R, passages=R (R = bm25, the default, or dense:MODEL), docs-ce=MODEL, passages-ce=MODEL (a cross-encoder reranks that stage)
    linear[:SIDE]             logistic regression over joint query-document features of the hybrid top 200 (SIDE = lsa or dense:MODEL); trained on the folder's train qrels, else 5-fold cross-fitted on the evaluated ones
    rubric-point[:SIDE]       fixed weighted formula over those features, each candidate on its own
    rubric-list[:SIDE]        the same formula after min-max normalising each feature over the query's candidates
    rewrite[:llm[:CONFIG]]    BM25 over rewritten queries: rules (question words out, metric synonyms in) or the LLM
"""

OFFLINE_DEFAULT = ["bm25", "bm25-report", "lsa", "hybrid", "rrf", "cards", "borda", "hier"]


def cli_help() -> str:
    """SPEC_HELP on one line, for ``--retriever`` (the CLI reflows whitespace)."""
    entries = [re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in SPEC_HELP.splitlines() if line.strip()]
    grammar = " | ".join(": ".join(e) for e in entries)
    return (f"Retriever SPEC, repeatable. {grammar}. MODEL is a local folder or a hub id; CONFIG is a pipeline "
            "YAML whose llm section is used (default: the bundled offline one). "
            f"Default: {', '.join(OFFLINE_DEFAULT)} (bm25-report only when queries carry a report_id).")
