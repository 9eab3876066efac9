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
    if spec.startswith("hier,"):  # hier's options may follow the name directly
        head, arg = "hier", spec[len("hier"):]
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
    elif head == "cards":
        r = CardReranker(BM25(show_progress=sp), scorer=_real_scorer(spec, arg) if arg else None)
    elif head == "borda":
        if arg in ("", "cards", "first"):
            r = BordaRerank(BM25(show_progress=sp), scorer=arg or "cards")
        else:
            r = BordaRerank(BM25(show_progress=sp), scorer=_real_scorer(spec, arg))
    elif head == "hier":
        r = _hier(spec, arg, sp)
    elif head in ("linear", "rubric-point", "rubric-list"):
        from fincprg.evaluate.retrievers.features import FeatureScorer
        from fincprg.evaluate.retrievers.learned import LinearReranker, RubricReranker

        side = build_retriever(arg or "lsa", show_progress=sp)
        if not hasattr(side, "score_all"):
            raise ConfigError(f"retriever spec {spec!r}: the feature side is lsa or dense:MODEL")
        feats = FeatureScorer(side, show_progress=sp)
        r = LinearReranker(feats) if head == "linear" else RubricReranker(feats, listwise=head == "rubric-list")
    elif head == "rewrite":
        from fincprg.evaluate.retrievers.rewrite import RewriteBM25

        mode, _, config = arg.partition(":")
        if mode not in ("", "llm") or (config and mode != "llm"):
            raise ConfigError(f"retriever spec {spec!r}: rewrite (rules) or rewrite:llm[:CONFIG]")
        r = RewriteBM25("llm" if mode else "rules", config or None, show_progress=sp)
    else:
        raise ConfigError(f"unknown retriever spec {spec!r}. Known specs:\n{SPEC_HELP}")
    r.name = spec
    return r


def _real_scorer(spec: str, arg: str) -> object:
    """``ce:MODEL`` -> a cross-encoder scorer; ``llm[:CONFIG]`` -> the LLM group scorer."""
    from fincprg.evaluate.retrievers.scorers import CrossEncoderScorer, LLMGroupScorer

    kind, _, rest = arg.partition(":")
    if kind == "ce":
        return CrossEncoderScorer(_need(rest, spec, "a cross-encoder model"), where=f"retriever {spec}")
    if kind == "llm":
        return LLMGroupScorer(rest or None)
    raise ConfigError(f"retriever spec {spec!r}: the scorer is ce:MODEL or llm[:CONFIG]"
                      + (" (or cards, first)" if spec.startswith("borda") else ""))


_HIER_KEYS = ("docs", "passages", "docs-ce", "passages-ce")


def _hier(spec: str, arg: str, sp: bool) -> Retriever:
    """``hier[:N][,docs=R][,passages=R][,docs-ce=MODEL][,passages-ce=MODEL]``."""
    from fincprg.evaluate.retrievers.hierarchical import Hierarchical

    n_str, *opts = arg.split(",")
    try:
        n = int(n_str) if n_str else 10
    except ValueError:
        raise ConfigError(f"retriever spec {spec!r}: hier:N takes a whole number of reports") from None
    kv: dict[str, str] = {}
    for o in opts:
        key, eq, val = o.partition("=")
        if key not in _HIER_KEYS or not eq or not val:
            raise ConfigError(f"retriever spec {spec!r}: hier options are {', '.join(k + '=' for k in _HIER_KEYS)} "
                              "e.g. hier:10,docs=dense:intfloat/multilingual-e5-small,passages-ce=BAAI/bge-reranker-base")
        kv[key] = val
    stages: dict[str, Retriever | None] = {}
    for key in ("docs", "passages"):
        val = kv.get(key, "bm25")
        if val != "bm25" and not val.startswith(("dense:", "dense-flag:")):
            raise ConfigError(f"retriever spec {spec!r}: {key}= is bm25 or dense:MODEL")
        stages[key] = None if val == "bm25" else build_retriever(val, show_progress=sp)
    return Hierarchical(n_reports=n, show_progress=sp, reports=stages["docs"], passages=stages["passages"],
                        reports_ce=kv.get("docs-ce"), passages_ce=kv.get("passages-ce"))
