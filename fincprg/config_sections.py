"""The config sections of the model-backed stages (topics, mine, export), generate's report level and
:class:`Section`, their base.

Split from :mod:`fincprg.config` (which re-exports every name here) to keep each module short. A ``backend``
key names an entry of a registry (:mod:`fincprg.registry`): its allowed values are whatever is registered,
built-ins and a user's own alike, and an unknown one is an error that lists them.
"""
from __future__ import annotations

import datetime as dt
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from fincprg.registry import KINDS, PAIR_SCORERS


def registered(kind: str, default: str, *, also: tuple[str, ...] = ()) -> Any:
    """A ``backend`` field whose value must be a name registered in ``fincprg.registry.KINDS[kind]`` (or ``also``)."""
    return Field(default, json_schema_extra={"registry": kind, "also": list(also)})


def _number_only(annotation: Any) -> bool:
    """``annotation`` is int or float (or one of them or None), so a boolean is no value of it."""
    args = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
    args = tuple(a for a in args if a is not type(None))
    return bool(args) and all(a in (int, float) for a in args)


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_for_a_number(cls, v: Any, info: ValidationInfo) -> Any:
        # pydantic's lax mode reads true as 1 and 1.0: `run.seed=true` or a YAML `yes` would pass as a number
        field = cls.model_fields.get(info.field_name or "")
        if isinstance(v, bool) and field is not None and _number_only(field.annotation):
            raise ValueError("a boolean (true/false/yes/no) where a number is expected; write the number")
        return v

    @field_validator("*")
    @classmethod
    def _registered(cls, v: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        extra = field.json_schema_extra if field is not None else None
        if isinstance(extra, dict) and "registry" in extra:
            return KINDS[str(extra["registry"])].check(v, tuple(extra.get("also") or ()))  # type: ignore[arg-type]
        return v


class ClassifierConfig(Section):
    backend: str = registered("classifier", "lexicon")  # fincprg.registry.CLASSIFIERS
    model: str | None = None  # FinBERT2-IC-style sequence classifier (local path or hub id)
    # CSV mapping stock codes (and short names) to industries (CITIC, Shenwan, East Money or Tushare names,
    # e.g. Tushare's stock_basic.csv); used before the classifier for titles that carry a code or company.
    # null: finance.stock_table's (by default the bundled table); "none" or "": no table for topics alone;
    # "bundled" or a path: that table for topics alone
    stock_table: str | None = None
    batch_size: int = 32


class EmbedderConfig(Section):
    backend: str = registered("embedder", "lsa")  # fincprg.registry.EMBEDDERS
    model: str | None = None
    dim: int = 128
    batch_size: int = 64


class TitleEmbedderConfig(EmbedderConfig):
    # weight of the CITIC one-hot appended to title vectors (ignored for backend "classifier",
    # whose hidden states already separate industries); 0 turns it off
    industry_weight: float = Field(0.5, ge=0)
    # LSA size and randomized-SVD power iterations: 64 d / 3 iterations cost a quarter of 128 d / 5 on
    # 48k titles at the same topic purity (eval/README.md, topics)
    dim: int = 64
    svd_iter: int = Field(3, ge=1)


class Time2VecConfig(Section):
    # scale of the 6-d time block (norm <= weight) next to the unit-norm title embedding; 1.0 made
    # PCA/HDBSCAN cluster East Money titles mostly by date (purity 7%), 0.3 keeps topic first
    weight: float = Field(0.3, ge=0)
    reference_date: dt.date | None = None  # default: earliest title date


class ClusterConfig(Section):
    # "bertopic": a BERTopic fitted on fincprg's clusters (its c-TF-IDF, keywords and hierarchy), saved to
    # topics/bertopic/ for BERTopic.load; needed for nr_topics. "native": the same c-TF-IDF and Ward hierarchy
    # computed by fincprg, without importing BERTopic (~6-10 s of imports) and with no saved model
    engine: Literal["native", "bertopic"] = "bertopic"
    min_cluster_size: int = Field(5, ge=2)
    # HDBSCAN per industry (each title's CITIC industry; industries too small for two clusters are
    # pooled): topics stay inside one industry, and 48k titles cluster in seconds; off = one global run
    by_industry: bool = True
    umap: bool = False  # global run only (by_industry false)
    n_neighbors: int = 15
    n_components: int = 5
    # give HDBSCAN outliers the topic with the nearest centroid (cosine); the titles moved are marked
    # (assignments.jsonl "reassigned")
    reduce_outliers: bool = True
    # "industry": only topics of the title's own industry (else it stays an outlier); "all": any topic
    outlier_scope: Literal["industry", "all"] = "industry"
    outlier_threshold: float = Field(0.5, ge=-1, le=1)  # least cosine (whole title vector) to the centroid for a move
    nr_topics: int | None = None  # engine "bertopic" only: BERTopic merges topics down to this many
    # HDBSCAN's min_samples (None = min_cluster_size); lower = fewer outliers
    min_samples: int | None = None
    cluster_selection_method: Literal["eom", "leaf"] = "eom"
    # PCA to this many dims before HDBSCAN (per industry when by_industry, else once, when umap is off;
    # 0 = no reduction): HDBSCAN's kd-tree is slow in ~100 dims
    pca_components: int = Field(8, ge=0)
    workers: int = 1  # HDBSCAN core_dist_n_jobs of the global run (runtime only)


class IntentConfig(Section):
    backend: Literal["templates", "llm"] = "templates"
    prompt: str = "topic_intent"
    # your own Jinja template (variables: keywords, titles, industry, max_intents, max_subqueries; reask: error)
    prompt_file: str | None = None
    language: Literal["zh", "en"] = "zh"
    max_titles: int = 10
    max_keywords: int = 10
    max_subqueries: int = 5
    max_intents: int = Field(3, ge=1)


class TopicsConfig(Section):
    min_title_chars: int = 5
    classifier: ClassifierConfig = Field(default_factory=ClassifierConfig)
    embedder: TitleEmbedderConfig = Field(default_factory=TitleEmbedderConfig)
    time2vec: Time2VecConfig = Field(default_factory=Time2VecConfig)
    cluster: ClusterConfig = Field(default_factory=ClusterConfig)
    intents: IntentConfig = Field(default_factory=IntentConfig)
    dominance: float = Field(2 / 3, gt=0, le=1)
    # BERTopic HTML plots: "bertopic" (visualize_topics/visualize_hierarchy, simple fallback when
    # there are too few topics), "simple" (fast plotly charts), "none"
    viz: Literal["bertopic", "simple", "none"] = "bertopic"


class RerankerConfig(Section):
    backend: str = registered("pair_scorer", "lexical")  # fincprg.registry.PAIR_SCORERS
    model: str | None = None
    threshold: float | None = None  # default: the backend's own (0.99 for BGE, lexical documents its own)
    batch_size: int = 64
    fp16: bool = True  # used only on GPU
    device: str | None = None


class PrefilterConfig(Section):
    enabled: bool = False
    top_k: int = 20
    embedder: EmbedderConfig = Field(default_factory=EmbedderConfig)
    # sentence-transformers embedder device ("cpu", "cuda"...); default: mine.reranker.device, else auto
    device: str | None = None


class VetoConfig(Section):
    enabled: bool = True
    company: bool = True
    period: bool = True
    metric: bool = True  # both name metrics and none is shared (营业收入 vs 毛利率)
    numbers: bool = True  # includes the figures of the queries' source sentences/passages
    topic: bool = True  # topic space: an industry subquery needs an industry passage, a company one its company's; same period


class BoilerplateConfig(Section):
    enabled: bool = True
    min_reports: int = 3  # a sentence seen in this many reports is boilerplate


class MineConfig(Section):
    spaces: list[Literal["sentence", "passage", "topic"]] = Field(
        default_factory=lambda: ["sentence", "passage", "topic"]
    )
    direction: Literal["both", "one"] = "both"
    reranker: RerankerConfig = Field(default_factory=RerankerConfig)
    prefilter: PrefilterConfig = Field(default_factory=PrefilterConfig)
    veto: VetoConfig = Field(default_factory=VetoConfig)
    boilerplate: BoilerplateConfig = Field(default_factory=BoilerplateConfig)
    # a report's sentence space (or a subtree's passage space) with more queries than this is cut into
    # windows of whole consecutive passages (reports); pairs across windows are not scored, and counted.
    # Bounds time and memory on huge reports and keeps passage mining linear in the corpus beyond the cap
    max_space_queries: int = Field(2000, ge=2)
    # pairs below this score (and below the threshold) are only counted in the histogram, not written
    keep_min_score: float = Field(0.85, ge=0, le=1)
    batch_size: int = Field(64, ge=1)  # spaces per scoring batch (the unit a Ray map_batches would get)
    workers: int = Field(2, ge=1)  # processes for finance-fact extraction of the query texts (runtime only)


class NegativesRerankerConfig(Section):
    """A cross-encoder that rescores the retrieved candidates; margins and max_score then use its scores."""

    backend: str = registered("pair_scorer", "none", also=("none",))  # none, or a PAIR_SCORERS entry
    model: str | None = None  # local path or hub id (bge-reranker-v2-m3 style, scores in [0, 1])
    batch_size: int = 64
    fp16: bool = True
    device: str | None = None

    @model_validator(mode="after")
    def _model_needed(self) -> NegativesRerankerConfig:
        if self.backend != "none" and PAIR_SCORERS.get(self.backend).needs_model and not self.model:
            raise ValueError(f"backend {self.backend!r} needs export.negatives.reranker.model (a local path or hub id)")
        return self


class NegativesConfig(Section):
    # none: no mining; rows get n random training passages (FlagEmbedding cannot read an empty neg list)
    method: Literal["bm25", "dense", "none"] = "bm25"
    n: int = Field(7, ge=1)
    model: str | None = None  # for method=dense: sentence-transformers local path or hub id
    batch_size: int = 64  # dense encoding batch size (runtime only)
    device: str | None = None
    # Guards against false negatives (unlabelled positives), as in sentence-transformers' mine_hard_negatives.
    # Scores are the reranker's when one is set, else the retriever's (BM25 or cosine).
    range_min: int = Field(0, ge=0)  # skip this many top-ranked candidates (the likeliest hidden positives)
    range_max: int | None = Field(None, ge=1)  # take negatives only from the top range_max candidates
    margin: float | None = Field(None, ge=0)  # keep a candidate only if score <= best positive's score - margin
    relative_margin: float | None = Field(None, ge=0, lt=1)  # ... and score <= best positive's score * (1 - m)
    max_score: float | None = None  # drop candidates scoring above this
    reranker: NegativesRerankerConfig = Field(default_factory=NegativesRerankerConfig)


class DedupConfig(Section):
    """Near-duplicate queries within each level: exact Jaccard of character n-grams (see export/dedup.py)."""

    enabled: bool = True
    # Jaccard similarity at or above which two queries are one; lower values merge template-framed queries
    # that differ in one key word (「原奶」 vs 「业绩」 in the same long frame)
    threshold: float = Field(0.9, gt=0, le=1)
    ngram: int = Field(2, ge=1, le=8)  # character n-grams (punctuation and spacing ignored)


class EasinessConfig(Section):
    """Lexical overlap of each query with its positive passage (a query that copies its passage is too easy)."""

    # drop labelled queries whose overlap (share of the query's char bigrams or jieba tokens found in its most
    # overlapping positive passage) is at least this; None keeps every query and only reports the distribution
    max_overlap: float | None = Field(None, ge=0, le=1)
    measure: Literal["bigram", "token"] = "bigram"


class ExportConfig(Section):
    test_fraction: float = Field(0.2, ge=0, le=1)
    seed: int = 42
    # Unit that moves between splits as a whole: a report, or every report of one leaf topic
    # cluster / largest same-industry subtree (outlier titles, topic "t-1", stay single reports).
    # Coarser units keep more cross-report mined labels inside one split (fewer dropped).
    split_unit: Literal["report", "leaf", "subtree"] = "leaf"
    negatives: NegativesConfig = Field(default_factory=NegativesConfig)
    dedup: DedupConfig = Field(default_factory=DedupConfig)
    easiness: EasinessConfig = Field(default_factory=EasinessConfig)
    flagembedding: bool = True
    hf: bool = True


class ReportLevelConfig(Section):
    """Report-level queries (beyond the paper): what a report answers as a whole, from its title's claim or,
    untitled, its lead; positives are the report's passages (the one stating it graded 2, the others 1)."""

    enabled: bool = True
    max_queries: int = Field(2, ge=1)  # per report
    prompt: str = "report_query"  # generate.backend: llm; variables: title, lead, subject, period, max_queries
