"""Retrievers behind one interface (``fit(corpus)`` / ``search(queries, k)``), built from SPEC strings.

SPEC grammar (what ``fincprg eval --retriever`` accepts): see
:data:`fincprg.evaluate.retriever_specs.SPEC_HELP`.
"""
from __future__ import annotations

from fincprg.errors import ConfigError
from fincprg.evaluate.retriever_specs import OFFLINE_DEFAULT, SPEC_HELP
from fincprg.evaluate.retrievers.base import Results, Retriever, UsesQueryMeta, tokenize

__all__ = ["Results", "Retriever", "UsesQueryMeta", "build_retriever", "default_specs", "tokenize", "SPEC_HELP"]


def default_specs(has_report_queries: bool = True) -> list[str]:
    """The offline baselines; ``bm25-report`` only when queries carry a report_id (else it equals bm25)."""
    return [s for s in OFFLINE_DEFAULT if has_report_queries or s != "bm25-report"]


def _need(arg: str, spec: str, what: str) -> str:
    if not arg:
        raise ConfigError(f"retriever spec {spec!r} needs {what}, e.g. {spec.rstrip(':')}:BAAI/bge-base-zh-v1.5")
    return arg


def build_retriever(spec: str, *, show_progress: bool = True) -> Retriever:
    """Build a retriever from a SPEC string (grammar: :data:`SPEC_HELP`).

    Raises:
        ConfigError: unknown name or a malformed argument; the message shows the grammar.
    """
    from fincprg.evaluate.retrievers.borda import BordaRerank
    from fincprg.evaluate.retrievers.cards import CardReranker
    from fincprg.evaluate.retrievers.dense import CrossEncoderRerank, Dense
    from fincprg.evaluate.retrievers.fusion import RRF, Hybrid
    from fincprg.evaluate.retrievers.hierarchical import Hierarchical
    from fincprg.evaluate.retrievers.lexical import BM25, LSA, PerReportBM25

    spec = spec.strip()
    head, _, arg = spec.partition(":")
    sp = show_progress
    r: Retriever
    if head == "bm25" and not arg:
        r = BM25(show_progress=sp)
    elif head == "bm25-report" and not arg:
        r = PerReportBM25(show_progress=sp)
    elif head == "lsa" and not arg:
        r = LSA(show_progress=sp)
    elif head == "hybrid":
        w_str, _, rest = arg.partition(":")
        try:
            weight = float(w_str) if w_str else 0.75
        except ValueError:
            raise ConfigError(f"retriever spec {spec!r}: weight {w_str!r} is not a number (hybrid:0.75)") from None
        if not 0 <= weight <= 1:
            raise ConfigError(f"retriever spec {spec!r}: the BM25 weight must be within [0, 1]")
        r = Hybrid(BM25(show_progress=sp), build_retriever(rest or "lsa", show_progress=sp), weight)
    elif head == "rrf":
        parts = [p for p in (arg or "bm25+lsa").split("+") if p]
        if len(parts) < 2:
            raise ConfigError(f"retriever spec {spec!r}: RRF fuses two or more specs joined by '+', e.g. rrf:bm25+lsa")
        r = RRF([build_retriever(p, show_progress=sp) for p in parts])
    elif head in ("dense", "dense-flag"):
        r = Dense(_need(arg, spec, "a model"), backend="flag" if head == "dense-flag" else "sentence-transformers",
                  show_progress=sp)
    elif head in ("rerank", "rerank-flag"):
        r = CrossEncoderRerank(_need(arg, spec, "a cross-encoder model"), BM25(show_progress=sp),
                               backend="flag" if head == "rerank-flag" else "sentence-transformers",
                               show_progress=sp)
    elif head == "cards" and not arg:
        r = CardReranker(BM25(show_progress=sp))
    elif head == "borda":
        if arg not in ("", "cards", "first"):
            raise ConfigError(f"retriever spec {spec!r}: the Borda scorer is 'cards' or 'first'")
        r = BordaRerank(BM25(show_progress=sp), scorer=arg or "cards")
    elif head == "hier":
        try:
            n = int(arg) if arg else 10
        except ValueError:
            raise ConfigError(f"retriever spec {spec!r}: hier:N takes a whole number of reports") from None
        r = Hierarchical(n_reports=n, show_progress=sp)
    else:
        raise ConfigError(f"unknown retriever spec {spec!r}. Known specs:\n{SPEC_HELP}")
    r.name = spec
    return r
