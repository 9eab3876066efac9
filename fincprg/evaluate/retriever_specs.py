"""The eval retrievers, registered in :data:`fincprg.registry.RETRIEVERS`: one entry per SPEC head, whose usage
and description are ``fincprg eval --retriever``'s help and whose factory parses the SPEC's argument.

Kept apart from :mod:`fincprg.evaluate.retrievers` so the CLI can show the grammar without importing numpy:
every factory imports its retriever class when it is called. A new retriever is one module plus one
``register_retriever`` call (here for a built-in, anywhere for a user's own).
"""
from __future__ import annotations

import re
from typing import Any

from fincprg.errors import ConfigError
from fincprg.registry import RETRIEVERS

OFFLINE_DEFAULT = ["bm25", "bm25-report", "lsa", "hybrid", "rrf", "cards", "borda", "hier"]


def build(spec: str, *, show_progress: bool = True) -> Any:
    """The retriever a SPEC names: the registered entry of its head, given the rest (see
    :func:`fincprg.evaluate.retrievers.build_retriever`)."""
    spec = spec.strip()
    head, _, arg = spec.partition(":")
    if spec.startswith("hier,"):  # hier's options may follow the name directly
        head, arg = "hier", spec[len("hier"):]
    if head not in RETRIEVERS:
        raise ConfigError(f"unknown retriever spec {spec!r}. Known specs:\n{spec_help()}"
                          "(or register your own: fincprg.register_retriever(name, factory, ...))")
    r = RETRIEVERS.get(head).factory(spec=spec, arg=arg, show_progress=show_progress)
    r.name = spec
    return r


def _build(spec: str, sp: bool) -> Any:
    return build(spec, show_progress=sp)  # specs nest specs (hybrid:0.5:dense:M, rrf:a+b, linear:SIDE...)


def _need(arg: str, spec: str, what: str) -> str:
    if not arg:
        raise ConfigError(f"retriever spec {spec!r} needs {what}, e.g. {spec.rstrip(':')}:BAAI/bge-base-zh-v1.5")
    return arg


def _no_arg(cls_name: str) -> Any:
    def make(*, spec: str, arg: str, show_progress: bool = True) -> Any:
        import fincprg.evaluate.retrievers.lexical as lexical  # noqa: PLC0415

        if arg:
            raise ConfigError(f"retriever spec {spec!r}: {spec.partition(':')[0]} takes no argument")
        return getattr(lexical, cls_name)(show_progress=show_progress)

    return make


def _bm25(sp: bool) -> Any:
    from fincprg.evaluate.retrievers.lexical import BM25  # noqa: PLC0415

    return BM25(show_progress=sp)


def _hybrid(*, spec: str, arg: str, show_progress: bool = True) -> Any:
    from fincprg.evaluate.retrievers.fusion import Hybrid  # noqa: PLC0415

    w_str, _, rest = arg.partition(":")
    try:
        weight = float(w_str) if w_str else 0.75
    except ValueError:
        raise ConfigError(f"retriever spec {spec!r}: weight {w_str!r} is not a number (hybrid:0.75)") from None
    if not 0 <= weight <= 1:
        raise ConfigError(f"retriever spec {spec!r}: the BM25 weight must be within [0, 1]")
    return Hybrid(_bm25(show_progress), _build(rest or "lsa", show_progress), weight)


def _rrf(*, spec: str, arg: str, show_progress: bool = True) -> Any:
    from fincprg.evaluate.retrievers.fusion import RRF  # noqa: PLC0415

    parts = [p for p in (arg or "bm25+lsa").split("+") if p]
    if len(parts) < 2:
        raise ConfigError(f"retriever spec {spec!r}: RRF fuses two or more specs joined by '+', e.g. rrf:bm25+lsa")
    return RRF([_build(p, show_progress) for p in parts])


def _dense(backend: str) -> Any:
    def build(*, spec: str, arg: str, show_progress: bool = True) -> Any:
        from fincprg.evaluate.retrievers.dense import Dense  # noqa: PLC0415

        return Dense(_need(arg, spec, "a model"), backend=backend, show_progress=show_progress)

    return build


def _rerank(scorer: str) -> Any:
    def build(*, spec: str, arg: str, show_progress: bool = True) -> Any:
        from fincprg.evaluate.retrievers.dense import CrossEncoderRerank  # noqa: PLC0415

        return CrossEncoderRerank(_need(arg, spec, "a cross-encoder model"), _bm25(show_progress), backend=scorer,
                                  show_progress=show_progress)

    return build


def _real_scorer(spec: str, arg: str) -> object:
    """``ce:MODEL`` -> a cross-encoder scorer; ``llm[:CONFIG]`` -> the LLM group scorer."""
    from fincprg.evaluate.retrievers.scorers import CrossEncoderScorer, LLMGroupScorer  # noqa: PLC0415

    kind, _, rest = arg.partition(":")
    if kind == "ce":
        return CrossEncoderScorer(_need(rest, spec, "a cross-encoder model"), where=f"retriever {spec}")
    if kind == "llm":
        return LLMGroupScorer(rest or None)
    raise ConfigError(f"retriever spec {spec!r}: the scorer is ce:MODEL or llm[:CONFIG]"
                      + (" (or cards, first)" if spec.startswith("borda") else ""))


def _cards(*, spec: str, arg: str, show_progress: bool = True) -> Any:
    from fincprg.evaluate.retrievers.cards import CardReranker  # noqa: PLC0415

    return CardReranker(_bm25(show_progress), scorer=_real_scorer(spec, arg) if arg else None)


def _borda(*, spec: str, arg: str, show_progress: bool = True) -> Any:
    from fincprg.evaluate.retrievers.borda import BordaRerank  # noqa: PLC0415

    scorer = (arg or "cards") if arg in ("", "cards", "first") else _real_scorer(spec, arg)
    return BordaRerank(_bm25(show_progress), scorer=scorer)


_HIER_KEYS = ("docs", "passages", "docs-ce", "passages-ce")


def _hier(*, spec: str, arg: str, show_progress: bool = True) -> Any:
    """``hier[:N][,docs=R][,passages=R][,docs-ce=MODEL][,passages-ce=MODEL]``."""
    from fincprg.evaluate.retrievers.hierarchical import Hierarchical  # noqa: PLC0415

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
    stages: dict[str, Any] = {}
    for key in ("docs", "passages"):
        val = kv.get(key, "bm25")
        if val != "bm25" and not val.startswith(("dense:", "dense-flag:")):
            raise ConfigError(f"retriever spec {spec!r}: {key}= is bm25 or dense:MODEL")
        stages[key] = None if val == "bm25" else _build(val, show_progress)
    return Hierarchical(n_reports=n, show_progress=show_progress, reports=stages["docs"],
                        passages=stages["passages"], reports_ce=kv.get("docs-ce"), passages_ce=kv.get("passages-ce"))


def _features(kind: str) -> Any:
    def build(*, spec: str, arg: str, show_progress: bool = True) -> Any:
        from fincprg.evaluate.retrievers.features import FeatureScorer  # noqa: PLC0415
        from fincprg.evaluate.retrievers.learned import LinearReranker, RubricReranker  # noqa: PLC0415

        side = _build(arg or "lsa", show_progress)
        if not hasattr(side, "score_all"):
            raise ConfigError(f"retriever spec {spec!r}: the feature side is lsa or dense:MODEL")
        feats = FeatureScorer(side, show_progress=show_progress)
        return LinearReranker(feats) if kind == "linear" else RubricReranker(feats, listwise=kind == "rubric-list")

    return build


def _rewrite(*, spec: str, arg: str, show_progress: bool = True) -> Any:
    from fincprg.evaluate.retrievers.rewrite import RewriteBM25  # noqa: PLC0415

    mode, _, config = arg.partition(":")
    if mode not in ("", "llm") or (config and mode != "llm"):
        raise ConfigError(f"retriever spec {spec!r}: rewrite (rules) or rewrite:llm[:CONFIG]")
    return RewriteBM25("llm" if mode else "rules", config or None, show_progress=show_progress)


_R = RETRIEVERS.register
_R("bm25", _no_arg("BM25"), description="BM25 (bm25s) over jieba + finance-dictionary tokens")
_R("bm25-report", _no_arg("PerReportBM25"), description="BM25 inside the query's own report (queries.jsonl report_id)")
_R("lsa", _no_arg("LSA"), description="TF-IDF + TruncatedSVD, 64 dims, L2-normalised")
_R("hybrid", _hybrid, usage="hybrid[:W[:SPEC]]",
   description="min-max W·BM25 + (1−W)·SPEC; W = 0.75, SPEC = lsa (or e.g. dense:MODEL)")
_R("rrf", _rrf, usage="rrf[:SPEC+SPEC+...]", description="reciprocal rank fusion, k = 60; default bm25+lsa")
_R("dense", _dense("sentence-transformers"), usage="dense:MODEL", gpu=True, needs_model=True,
   description="sentence-transformers bi-encoder (local folder or hub id)")
_R("dense-flag", _dense("flag"), usage="dense-flag:MODEL", gpu=True, needs_model=True,
   description="FlagEmbedding FlagModel bi-encoder (e.g. BAAI/bge-base-zh-v1.5)")
_R("rerank", _rerank("cross-encoder"), usage="rerank:MODEL", gpu=True, needs_model=True,
   description="cross-encoder over the BM25 top 100 (sentence-transformers CrossEncoder)")
_R("rerank-flag", _rerank("flag"), usage="rerank-flag:MODEL", gpu=True, needs_model=True,
   description="the same with FlagEmbedding FlagReranker (normalize=True)")
_R("cards", _cards, usage="cards[:ce:MODEL|:llm[:CONFIG]]",
   description="finance-card reranker over BM25, fused with RRF (card alignment, or a cross-encoder or LLM score)")
_R("borda", _borda, usage="borda[:cards|first|ce:MODEL|llm[:CONFIG]]",
   description="bootstrap round-robin Borda over the BM25 top 30 (group scorer)")
_R("hier", _hier, usage="hier[:N][,OPT...]",
   description="hierarchical: top N reports (10) by title + opening passage, then passages; OPT = docs=R, "
               "passages=R (R = bm25, the default, or dense:MODEL), docs-ce=MODEL, passages-ce=MODEL (a "
               "cross-encoder reranks that stage)")
_R("linear", _features("linear"), usage="linear[:SIDE]",
   description="logistic regression over joint query-document features of the hybrid top 200 (SIDE = lsa or "
               "dense:MODEL); trained on the folder's train qrels, else 5-fold cross-fitted on the evaluated ones")
_R("rubric-point", _features("rubric-point"), usage="rubric-point[:SIDE]",
   description="fixed weighted formula over those features, each candidate on its own")
_R("rubric-list", _features("rubric-list"), usage="rubric-list[:SIDE]",
   description="the same formula after min-max normalising each feature over the query's candidates")
_R("rewrite", _rewrite, usage="rewrite[:llm[:CONFIG]]",
   description="BM25 over rewritten queries: rules (question words out, metric synonyms in) or the LLM")


def spec_help() -> str:
    """Every registered retriever's usage and description, one a line (built-ins and a user's own)."""
    return "".join(f"    {e.spec.ljust(max(26, len(e.spec) + 2))}{e.description}\n" for e in RETRIEVERS)


def __getattr__(name: str) -> str:
    if name == "SPEC_HELP":  # computed: it lists retrievers registered after this module loaded too
        return spec_help()
    raise AttributeError(name)


def cli_help() -> str:
    """The registered retrievers on one line, for ``--retriever`` (the CLI reflows whitespace)."""
    entries = [re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in spec_help().splitlines() if line.strip()]
    grammar = " | ".join(": ".join(e) for e in entries)
    return (f"Retriever SPEC, repeatable. {grammar}. MODEL is a local folder or a hub id; CONFIG is a pipeline "
            "YAML whose llm section is used (default: the bundled offline one). "
            f"Default: {', '.join(OFFLINE_DEFAULT)} (bm25-report only when queries carry a report_id).")
