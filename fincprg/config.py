"""Pipeline configuration: one pydantic model per stage, loaded from YAML with dotted overrides.

Unknown keys are errors (``extra="forbid"``) and every error names its dotted path,
e.g. ``chunk.passage_chars: Input should be a valid integer``.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from fincprg.config_sections import (  # noqa: F401 - re-exported: `from fincprg.config import X` keeps working
    BoilerplateConfig,
    ClassifierConfig,
    ClusterConfig,
    DedupConfig,
    EasinessConfig,
    EmbedderConfig,
    ExportConfig,
    IntentConfig,
    MineConfig,
    NegativesConfig,
    NegativesRerankerConfig,
    PrefilterConfig,
    RerankerConfig,
    ReportLevelConfig,
    Section,
    Time2VecConfig,
    TitleEmbedderConfig,
    TopicsConfig,
    VetoConfig,
)
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


def _known(v: list[str], allowed: tuple[str, ...] | list[str], what: str) -> list[str]:
    """``v`` unchanged when every name is in ``allowed``; else a ValueError listing the choices."""
    bad = [r for r in v if r not in allowed]
    if bad:
        raise ValueError(f"unknown {what}(s) {bad}; choose from {', '.join(allowed)}")
    return v


class RunConfig(Section):
    seed: int = 42
    cache_dir: str | None = None  # default: OUT/.cache
    show_progress: bool = True
    # build from this many reports only (`--limit N`): a reproducible sample, stratified by industry and
    # year, drawn by ingest before chunking (None = every report)
    sample_reports: int | None = Field(None, ge=1)


# PDF layout cleaning (fincprg/ingest/pdf_layout.py); a removed span's rule is "pdf_" + the name
PDF_RULES = ("header", "page_number", "sidebar", "table", "caption", "toc", "disclaimer")


class IngestConfig(Section):
    # auto: by extension (.jsonl, .csv, .json array; a directory of them, else of .txt/.md/.pdf files, one
    # report each; a PDF is read by its layout: fincprg/ingest/pdf.py)
    format: Literal["auto", "jsonl", "csv", "json", "txt", "pdf"] = "auto"
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
    # a file (.jsonl/.csv/.json) of report titles without bodies - a broker's catalogue, East Money's listings - in the
    # corpus' formats (title, date, industry, company, stock_code; no text needed): they join the topic
    # clustering, so topics and their intents see the market the corpus sits in; they get no passages or queries
    extra_titles: str | None = None
    # PDF layout rules to switch off, so their text stays in the body (README, "Input formats"; PDF_RULES above);
    # left out of the dump when empty, so a config that switches off nothing keeps its signature
    pdf_disable: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)

    @field_validator("fields")
    @classmethod
    def _known_targets(cls, v: dict[str, str]) -> dict[str, str]:
        for src, dst in v.items():
            if dst not in REPORT_FIELDS:
                raise ValueError(f"{src!r} maps to {dst!r}, which is not a Report field; "
                                 f"use one of {', '.join(REPORT_FIELDS)}")
        return v

    @field_validator("pdf_disable")
    @classmethod
    def _known_pdf_rules(cls, v: list[str]) -> list[str]:
        return sorted(set(_known(v, PDF_RULES, "PDF rule")))  # one order: the same rules off, the same signature

    @field_validator("encoding")
    @classmethod
    def _known_codec(cls, v: str) -> str:
        from fincprg.io import text_codec  # ValueError names the fix

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


CHUNK_RULES = ("noise", "table", "disclaimer", "analyst_intro", "sidebar", "contact", "url", "caption", "quality")


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
        return _known(v, CHUNK_RULES, "rule")


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
    # your own Jinja template (variables: sentences, title; reask: error, n), hashed into signature and provenance
    prompt_file: str | None = None
    language: Literal["zh", "en"] = "zh"
    reask: int = Field(1, ge=0)  # re-ask once with the validation error
    complete: bool = True  # query completion (§3.1.3)
    rewrite: RewriteConfig = Field(default_factory=RewriteConfig)
    report: ReportLevelConfig = Field(default_factory=ReportLevelConfig)
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
    # title industries when topics.classifier.stock_table is unset. "bundled": the 5,806 A-share stocks
    # shipped in fincprg/finance/data (CC-BY-4.0, AFAN-LIFE/macropage); "none", "" or null: no table;
    # else the path of your own CSV (its content is hashed into the stage signatures)
    stock_table: str | None = "bundled"


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
    # rule ids to switch off (`fincprg rules` lists them); left out of the dump when empty, so a config
    # that disables nothing keeps the manifest and the signature it had before the registry
    disable: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    top_k: int = Field(10, ge=1)  # round trip: an own passage must rank in the top k of the whole corpus
    # ambiguous: this many unrelated reports score within ambiguous_margin (relative) of the own passage
    ambiguous_reports: int = Field(5, ge=1)
    ambiguous_margin: float = Field(0.05, ge=0, lt=1)
    judge: VerifyJudgeConfig = Field(default_factory=VerifyJudgeConfig)
    dense: VerifyDenseConfig = Field(default_factory=VerifyDenseConfig)
    # queries per rule-check batch (a Ray task with engine: ray) and per BM25 scoring batch (runtime only); a
    # BM25 batch's partial sums are the search's largest arrays: 128 held 16x verify at 1.43 GB against 1.57 GB
    # with 256, in the same time
    batch_size: int = Field(128, ge=1)

    @field_validator("disable")
    @classmethod
    def _one_order(cls, v: list[str]) -> list[str]:
        # a set: [risk, vague] and [vague, vague, risk] give one signature (unknown ids: the spec's config_check)
        return sorted(set(v))


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
    """engine: ray - where the map stages (chunk, generate, verify's rules, mine) run. Output bytes never depend on it."""

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
    # local: one process; ray: chunk, generate, verify's rules and mine as Ray Data / Ray actor pipelines (same bytes)
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
    try:  # safe_load: a !!python/... tag is refused here, never constructed
        node[parts[-1]] = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as e:
        why = " ".join(str(getattr(e, "problem", None) or e).split())
        raise ConfigError(f"--set {key.strip()}: the value {raw!r} is not valid YAML ({why}); write a plain value, "
                          f"quote a string (--set '{key.strip()}=\"...\"') or write a list as [a, b]") from None


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
