"""Pipeline configuration: one pydantic model per stage, loaded from YAML with dotted overrides.

Unknown keys are errors (``extra="forbid"``) and every error names its dotted path,
e.g. ``chunk.passage_chars: Input should be a valid integer``.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from fincprg.errors import ConfigError
from fincprg.records import Report

# The Report fields an input column can map onto (ingest.fields targets): all but the bookkeeping ones.
REPORT_FIELDS: tuple[str, ...] = tuple(k for k in Report.model_fields if k not in ("source", "meta"))

# Keys that change speed, not output: they are left out of stage signatures,
# so tuning them never invalidates a checkpoint.
RUNTIME_KEYS = frozenset(
    {"batch_size", "concurrency", "timeout", "max_retries", "show_progress", "workers", "device",
     "requests_per_minute", "tokens_per_minute", "engine", "ray"}
)


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class RunConfig(Section):
    seed: int = 42
    cache_dir: str | None = None  # default: OUT/.cache
    show_progress: bool = True
    # build from this many reports only (`--limit N`): a reproducible sample, stratified by industry and
    # year, drawn by ingest before chunking (None = every report)
    sample_reports: int | None = Field(None, ge=1)


class IngestConfig(Section):
    # auto: by extension (.jsonl, .csv, .json array; a directory of them, else of .txt/.md files)
    format: Literal["auto", "jsonl", "csv", "json", "txt"] = "auto"
    # input field name -> Report field, e.g. {"研报标题": "title", "发布日期": "date"}; wins over the
    # built-in aliases (标题/title, 内容/正文/content/text, 日期/publish_date, 股票代码/code, ...)
    fields: dict[str, str] = Field(default_factory=dict)
    # auto: a UTF-8/16/32 byte-order mark, else UTF-8 or GBK/GB18030 by majority; or any Python codec name
    # (gb18030, big5, utf-16-le, cp1252...), checked with codecs.lookup
    encoding: str = "auto"
    skip_empty: bool = True  # reject (and record) reports with no text instead of failing
    on_duplicate_id: Literal["reject", "error"] = "reject"
    # a present date that is not one (Infinity, NaN, 1e308, "2024-13-45", an object): null keeps the report
    # with date=None and the raw value in meta._bad_date, counted as dates_unparsed; reject rejects it
    on_bad_date: Literal["reject", "null"] = "null"
    # a report without a title is kept (bottom-up generation needs none; topics and company
    # completion from the title skip it); true rejects it as "missing_title"
    require_title: bool = False

    @field_validator("fields")
    @classmethod
    def _known_targets(cls, v: dict[str, str]) -> dict[str, str]:
        for src, dst in v.items():
            if dst not in REPORT_FIELDS:
                raise ValueError(f"{src!r} maps to {dst!r}, which is not a Report field; "
                                 f"use one of {', '.join(REPORT_FIELDS)}")
        return v

    @field_validator("encoding")
    @classmethod
    def _known_codec(cls, v: str) -> str:
        from fincprg.ingest.decode import text_codec  # ValueError names the fix

        return v if v == "auto" else text_codec(v)

    @field_validator("on_bad_date", mode="before")
    @classmethod
    def _yaml_null(cls, v: Any) -> Any:
        return "null" if v is None else v  # YAML reads `on_bad_date: null` as None


class QualityConfig(Section):
    backend: Literal["heuristic", "transformers", "none"] = "heuristic"
    model: str | None = None  # local path or hub id of a BERT sequence classifier (label 1 = low quality)
    threshold: float = Field(0.5, ge=0, le=1)  # drop a passage when P(low quality) > threshold
    max_length: int = Field(512, gt=0)  # tokens per passage for the transformers backend
    batch_size: int = 32
    device: str | None = None  # transformers backend: "cpu", "cuda"... (default: cuda when available)

    @model_validator(mode="after")
    def _model_needed(self) -> QualityConfig:
        if self.backend == "transformers" and not self.model:
            raise ValueError("backend 'transformers' needs chunk.quality.model (a local folder or hub id of a "
                             "BERT sequence classifier whose label 1 = low quality)")
        return self


CHUNK_RULES = ("noise", "table", "disclaimer", "analyst_intro", "contact", "url", "caption", "quality")


class ChunkConfig(Section):
    passage_chars: int = Field(500, gt=20)  # target; a passage is never longer than 1.5x this
    sentence_chars: int = Field(100, gt=5)  # target; a sentence chunk is never longer than 1.5x this
    min_passage_chars: int = Field(40, ge=0)  # shorter leftovers are merged, else removed as rule "short"
    rules: list[str] = Field(default_factory=lambda: list(CHUNK_RULES))
    quality: QualityConfig = Field(default_factory=QualityConfig)
    batch_size: int = 32

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, v: list[str]) -> list[str]:
        bad = [r for r in v if r not in CHUNK_RULES]
        if bad:
            raise ValueError(f"unknown rule(s) {bad}; choose from {', '.join(CHUNK_RULES)}")
        return v


class LLMConfig(Section):
    """The one LLM client every call goes through (cache, retries, accounting)."""

    base_url: str = "http://localhost:8000/v1"
    model: str = "gpt-4o"
    api_key_env: str = "OPENAI_API_KEY"  # name of the env var holding the key; the key itself is never stored
    concurrency: int = Field(16, ge=1)
    max_retries: int = Field(4, ge=0)
    timeout: float = Field(60.0, gt=0)
    temperature: float = 0.0
    max_tokens: int | None = 2048
    json_mode: bool = True  # send response_format={"type": "json_object"}
    cache: bool = True
    # client-side rate limit (None = none): requests are paced so a provider's limits are never hit; with
    # engine: ray one limit is shared by every LLM actor of the cluster
    requests_per_minute: float | None = Field(None, gt=0)
    tokens_per_minute: float | None = Field(None, gt=0)  # prompt tokens estimated from the text, + max_tokens
    # USD per 1M tokens: {"gpt-4o": {"input": 2.5, "output": 10.0}}
    prices: dict[str, dict[str, float]] = Field(
        default_factory=lambda: {"gpt-4o": {"input": 2.5, "output": 10.0}}
    )


class RewriteConfig(Section):
    """LLM rewrite of queries that copy their passage (generate.backend: llm only)."""

    enabled: bool = False
    # a query whose overlap with its passage (share of its char bigrams / jieba tokens found in the
    # passage) is at least this is rewritten; the rewrite is kept only if it keeps every entity and period
    max_overlap: float = Field(0.8, ge=0, le=1)
    measure: Literal["bigram", "token"] = "bigram"
    prompt: str = "query_rewrite"
    prompt_file: str | None = None  # your own Jinja template; variables: query, passage, title


class GenerateConfig(Section):
    backend: Literal["templates", "llm"] = "templates"
    prompt: str = "hierarchical_query"
    # your own Jinja template instead of the bundled one (variables: sentences, title; reask: error, n);
    # its content is hashed into the stage signature and query provenance
    prompt_file: str | None = None
    language: Literal["zh", "en"] = "zh"
    reask: int = Field(1, ge=0)  # re-ask once with the validation error
    complete: bool = True  # query completion (§3.1.3)
    rewrite: RewriteConfig = Field(default_factory=RewriteConfig)
    batch_size: int = 64


    @model_validator(mode="after")
    def _rewrite_needs_llm(self) -> GenerateConfig:
        if self.rewrite.enabled and self.backend != "llm":
            raise ValueError("generate.rewrite.enabled needs generate.backend: llm (the offline templates have no "
                             "rewriter; use export.easiness.max_overlap to filter easy queries instead)")
        return self


class FinanceConfig(Section):
    # CSV of listed stocks (code, short name, industry; e.g. Tushare's stock_basic.csv). Names the
    # companies a report body mentions (an untitled report's subject, verify's subject check) and gives
    # title industries when topics.classifier.stock_table is unset
    stock_table: str | None = None


class ClassifierConfig(Section):
    backend: Literal["lexicon", "transformers"] = "lexicon"
    model: str | None = None  # FinBERT2-IC-style sequence classifier (local path or hub id)
    # CSV mapping stock codes (and short names) to industries (CITIC, Shenwan, East Money or Tushare names,
    # e.g. Tushare's stock_basic.csv); used before the classifier for titles that carry a code or company
    stock_table: str | None = None
    batch_size: int = 32


class EmbedderConfig(Section):
    backend: Literal["lsa", "sentence-transformers", "classifier"] = "lsa"
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
    # "native": fincprg's c-TF-IDF and Ward hierarchy (BERTopic's algorithm, without importing BERTopic);
    # "bertopic": a fitted BERTopic model (its plotly figures for viz "bertopic"; needed for nr_topics)
    engine: Literal["native", "bertopic"] = "native"
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


class VerifyJudgeConfig(Section):
    """An LLM reads each query that passed the rule checks with its source and says whether it is answered."""

    backend: Literal["none", "llm"] = "none"
    prompt: str = "verify_judge"
    language: Literal["zh", "en"] = "zh"
    max_source_chars: int = Field(1500, ge=100)  # source text shown to the judge (passage, or the topic's titles)


class VerifyDenseConfig(Section):
    """The round trip also with a bi-encoder (local folder or hub id; its query/passage prompts are used)."""

    model: str | None = None  # e.g. the folder `fincprg models import-e5` writes; None: character BM25 only
    batch_size: int = 32
    device: str | None = None  # cpu, cuda...; default cuda when available


VerifyCheck = Literal["subject", "answer", "related", "round_trip"]
VERIFY_CHECKS: tuple[str, ...] = get_args(VerifyCheck)


class VerifyConfig(Section):
    """Keep or drop each generated query (every level, either generator) with a reason; see fincprg/verify."""

    # subject: names the source's company/industry; answer: metric, direction, period, forecast as the source
    # reads; related: an intent pairs related companies; round_trip: retrieves its own source (char BM25)
    checks: list[VerifyCheck] = Field(
        default_factory=lambda: list(VERIFY_CHECKS))
    top_k: int = Field(10, ge=1)  # round trip: an own passage must rank in the top k of the whole corpus
    # ambiguous: this many unrelated reports score within ambiguous_margin (relative) of the own passage
    ambiguous_reports: int = Field(5, ge=1)
    ambiguous_margin: float = Field(0.05, ge=0, lt=1)
    judge: VerifyJudgeConfig = Field(default_factory=VerifyJudgeConfig)
    dense: VerifyDenseConfig = Field(default_factory=VerifyDenseConfig)
    batch_size: int = Field(256, ge=1)  # queries per BM25 scoring batch (runtime only)


class RerankerConfig(Section):
    backend: Literal["lexical", "flag", "cross-encoder"] = "lexical"
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

    backend: Literal["none", "flag", "cross-encoder"] = "none"
    model: str | None = None  # local path or hub id (bge-reranker-v2-m3 style, scores in [0, 1])
    batch_size: int = 64
    fp16: bool = True
    device: str | None = None

    @model_validator(mode="after")
    def _model_needed(self) -> NegativesRerankerConfig:
        if self.backend != "none" and not self.model:
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


class EstimateConfig(Section):
    """How `fincprg estimate` counts tokens and time (read by no stage: changing it re-runs nothing)."""

    # the model's tokenizer: a HuggingFace tokenizer.json (or a folder holding one), or "tiktoken:<encoding>";
    # None = chars_per_token. `fincprg estimate --probe N` measures the ratio from the server's answers instead
    tokenizer: str | None = None
    chars_per_token: float = Field(1.2, gt=0)  # rough for Chinese with GPT-4o-class tokenizers; state your own
    query_chars: int = Field(20, ge=1)  # expected length of one generated query (completion tokens, no probe)
    latency_s: float = Field(5.0, gt=0)  # seconds per request when not measured by --probe
    reask_share: float = Field(0.0, ge=0, le=1)  # share of answers expected to be re-asked (measured by --probe)


class RayConfig(Section):
    """engine: ray - where the map stages (chunk, generate, mine) run. Output bytes never depend on it."""

    # None: start a local Ray instance; "auto" or "ray://host:10001": connect to an existing cluster
    address: str | None = None
    num_cpus: int | None = Field(None, ge=1)  # CPUs of a local instance (None: all)
    # actors per CPU stage (None: the cluster's CPUs); each holds its stage's models once
    actors: int | None = Field(None, ge=1)
    # GPUs per mining actor (None: 1 when the cluster has GPUs and mine.reranker is a neural model, else 0);
    # > 0 puts the reranker on GPU actors, each loading the model on its own GPU
    mine_gpus_per_actor: float | None = Field(None, ge=0)
    llm_actors: int = Field(4, ge=1)  # async LLM actors; llm.concurrency is split across them


class PipelineConfig(Section):
    # local: one process; ray: chunk, generate and mine as Ray Data / Ray actor pipelines (same bytes)
    engine: Literal["local", "ray"] = "local"
    ray: RayConfig = Field(default_factory=RayConfig)
    run: RunConfig = Field(default_factory=RunConfig)
    ingest: IngestConfig = Field(default_factory=IngestConfig)
    finance: FinanceConfig = Field(default_factory=FinanceConfig)
    chunk: ChunkConfig = Field(default_factory=ChunkConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
    topics: TopicsConfig = Field(default_factory=TopicsConfig)
    verify: VerifyConfig = Field(default_factory=VerifyConfig)
    mine: MineConfig = Field(default_factory=MineConfig)
    export: ExportConfig = Field(default_factory=ExportConfig)
    estimate: EstimateConfig = Field(default_factory=EstimateConfig)


def _format_validation(err: ValidationError, origin: str) -> str:
    lines = [f"invalid configuration ({origin}):"]
    for e in err.errors():
        path = ".".join(str(p) for p in e["loc"])
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown key; check the spelling against `fincprg build --help` and the README's config reference"
        lines.append(f"  {path}: {msg} (got {e.get('input')!r})")
    return "\n".join(lines)


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """Apply ``a.b.c=value`` to a nested dict; the value is parsed as YAML (so 3, true, [a, b] work)."""
    if "=" not in assignment:
        raise ConfigError(f"override {assignment!r} must look like key.path=value, e.g. chunk.passage_chars=400")
    key, raw = assignment.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise ConfigError(f"override {assignment!r} has an empty key")
    node = data
    for i, p in enumerate(parts[:-1]):
        nxt = node.setdefault(p, {})
        if not isinstance(nxt, dict):
            raise ConfigError(f"{'.'.join(parts[: i + 1])}: is a value, not a section; cannot set {key}")
        node = nxt
    node[parts[-1]] = yaml.safe_load(raw) if raw.strip() else ""


def bundled_pipeline(name: str = "offline") -> Path:
    """Path of a shipped pipeline YAML (``offline``, ``paper``): inside the wheel, else the repo's
    ``pipelines/`` folder (editable installs), so the default does not depend on the working folder."""
    from importlib.resources import files

    packaged = files("fincprg") / "pipelines" / f"{name}.yaml"
    if packaged.is_file():
        return Path(str(packaged))
    repo = Path(__file__).resolve().parents[1] / "pipelines" / f"{name}.yaml"
    if repo.is_file():
        return repo
    raise ConfigError(f"pipeline {name!r} is not shipped with this install (looked in fincprg/pipelines and {repo.parent})")


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> PipelineConfig:
    """Load a pipeline config from YAML (``None``: the models' defaults) and apply dotted overrides.

    The CLI and :func:`fincprg.build` pass :func:`bundled_pipeline` ("offline") when no path is given.
    """
    data: dict[str, Any] = {}
    origin = "defaults"
    if path is not None:
        p = Path(path)
        if not p.exists():
            raise ConfigError(f"config file {p} does not exist; see pipelines/ for examples")
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"config file {p} is not valid YAML: {e}") from e
        if not isinstance(data, dict):
            raise ConfigError(f"config file {p} must hold a mapping of sections (run, ingest, chunk, ...)")
        origin = str(p)
    for a in overrides or []:
        apply_override(data, a)
    if overrides:
        origin += " + --set overrides"
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_format_validation(e, origin)) from None


def strip_runtime(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: strip_runtime(v) for k, v in sorted(obj.items()) if k not in RUNTIME_KEYS}
    if isinstance(obj, list):
        return [strip_runtime(v) for v in obj]
    return obj


def section_hash(cfg: PipelineConfig, keys: tuple[str, ...]) -> str:
    """Hash the named config sections, ignoring runtime-only knobs."""
    payload = {k: strip_runtime(getattr(cfg, k).model_dump(mode="json")) for k in keys if k not in RUNTIME_KEYS}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
