"""The stage contract, in one place: what a stage is to an engine (:class:`StageSpec`), the table of stages
(:data:`STAGES`: each one's entry, declared config keys and the files it reads), the config keys that name files
(:data:`FILE_KEYS`), a stage's signature, and what an engine gives a stage (:class:`StageContext`).

Ground floor (it imports :mod:`fincprg.config`, :mod:`fincprg.layout`, :mod:`fincprg.codehash`, errors and the
version only), so every stage types its ``run(ctx)`` with the :class:`StageContext` protocol; the engines
(:mod:`fincprg.pipeline`) implement it and reach a stage only through its spec, so neither side names the other.
What each stage writes is the artifact table in :mod:`fincprg.layout`. Everything a stage needs from an engine is a
field of its spec, not a branch in the runner:

- ``ray``: its batch work (``ctx.map_batches``) may run on Ray actors with ``engine: ray``;
- ``gpus``: GPUs per Ray actor, as a function of its config (``None`` from it: one when the cluster has one);
- ``llm_actors``: whether, with ``engine: ray``, it sends LLM requests from Ray actors (``ctx.llm_stream``),
  which the build's ``--max-requests`` / ``--max-cost`` budget cannot count;
- ``precheck``: run on the corpus path before OUT is created (a typo leaves nothing behind);
- ``config_check``: run on the stage's config view before OUT is created, for what the config model alone cannot
  check (verify's rule ids live in the verify package, above the config's floor);
- ``source_hash``: the hash of what it reads when it reads no upstream stage (the corpus);
- ``staged``: written beside its folder and swapped in when complete, so a failure keeps the previous output;
- ``estimate``: the stage's free, deterministic part, for ``fincprg estimate`` (``pipeline.runner.estimate_stage``
  runs it in a scratch folder through the same context as a build).

``entry``, ``gpus``, ``llm_actors``, ``precheck``, ``config_check``, ``source_hash`` and ``estimate`` are
``"module:function"`` strings, imported only when the engine needs them.

A stage sees only the config it declares (:class:`ConfigView`); reading any other key raises
:class:`UndeclaredConfigError`. Its signature hashes exactly those keys, its code (the modules it imports,
:mod:`fincprg.codehash`) and its inputs, so a rebuild after any config or code change equals a clean build: a key
a stage can read is a key that invalidates it.
"""
from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from fincprg import layout as L
from fincprg.codehash import code_hash
from fincprg.config import PipelineConfig, strip_runtime
from fincprg.errors import ConfigError
from fincprg.version import __version__

T = TypeVar("T")
# the spec fields naming code whose output the stage's is (config_check only validates, before anything runs)
_CODE_HOOKS = ("entry", "gpus", "llm_actors", "precheck", "source_hash", "estimate")


class UndeclaredConfigError(RuntimeError):
    """A stage read a config key its StageSpec does not declare (a bug: the signature would miss it)."""


@dataclass(frozen=True)
class StageSpec:
    """One stage: its entry function, the config keys it may read, the files it reads, what it needs from
    an engine (see the module docstring). What it writes is the artifact table's (:data:`fincprg.layout.ARTIFACTS`).

    ``config_keys`` are sections (``mine``) or dotted keys (``run.seed``). ``reads`` are
    ``(stage, file)`` pairs of upstream outputs; reading an upstream ``manifest.json`` makes that
    stage's signature (not only its output) an input.
    """

    name: str
    entry: str  # "module:function", imported lazily so heavy deps load only when the stage runs
    config_keys: tuple[str, ...]
    reads: tuple[tuple[str, str], ...] = ()
    description: str = ""
    ray: bool = False
    gpus: str | None = None  # "module:function" (config view, RayConfig) -> float | None
    llm_actors: str | None = None  # "module:function" (config view) -> bool
    precheck: str | None = None  # "module:function" (corpus path) -> None, raising the fix
    config_check: str | None = None  # "module:function" (config view) -> None, raising the fix
    source_hash: str | None = None  # "module:function" (corpus path) -> str
    staged: bool = False
    estimate: str | None = None  # "module:function" (context) -> dict, sending nothing

    def __post_init__(self) -> None:
        for stage, name in self.reads:
            L.artifact(stage, name)  # KeyError naming the table: a read of a file no stage writes

    @property
    def dir(self) -> str:
        return L.STAGE_DIRS[self.name]

    @property
    def writes(self) -> tuple[str, ...]:
        """File names in the stage's own folder; a name ending in ``/`` covers a sub-folder."""
        return L.written_by(self.name)

    @property
    def inputs(self) -> tuple[str, ...]:
        """Upstream stages, in pipeline order."""
        used = {s for s, _ in self.reads}
        return tuple(s for s in L.STAGE_DIRS if s in used)

    def writes_file(self, rel: str) -> bool:
        return rel in self.writes or any(w.endswith("/") and rel.startswith(w) for w in self.writes)

    def hook(self, field: str) -> Callable[..., Any] | None:
        """The function a ``"module:function"`` field names (imported now), or None when it is unset."""
        ref = getattr(self, field)
        return None if ref is None else load_ref(ref)

    def modules(self) -> list[str]:
        """The modules its entry and engine hooks name: where its code hash starts (:mod:`fincprg.codehash`)."""
        refs = [getattr(self, h) for h in _CODE_HOOKS]
        return [r.split(":")[0] for r in refs if r]


def load_ref(ref: str) -> Callable[..., Any]:
    """The function ``"module:function"`` names."""
    mod, _, fn = ref.partition(":")
    return getattr(importlib.import_module(mod), fn)


def resolve(cfg: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        cfg = getattr(cfg, part)
    return cfg


def declared_config(cfg: PipelineConfig, keys: tuple[str, ...]) -> dict[str, Any]:
    """The declared keys' values as JSON-able data (what the manifest records and the signature hashes)."""
    out = {}
    for k in keys:
        v = resolve(cfg, k)
        out[k] = v.model_dump(mode="json") if isinstance(v, BaseModel) else v
    return out


class ConfigView:
    """Read-only access to the declared part of a PipelineConfig.

    ``view.mine`` returns the real section when ``mine`` is declared; ``view.run`` returns a narrower
    view when only ``run.seed`` is; anything else raises :class:`UndeclaredConfigError`.
    """

    def __init__(self, cfg: Any, keys: tuple[str, ...], stage: str, prefix: str = ""):
        object.__setattr__(self, "_cfg", cfg)
        object.__setattr__(self, "_keys", keys)
        object.__setattr__(self, "_stage", stage)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        path = self._prefix + name
        if any(path == k or path.startswith(k + ".") for k in self._keys):
            return getattr(self._cfg, name)
        if any(k.startswith(path + ".") for k in self._keys):
            return ConfigView(getattr(self._cfg, name), self._keys, self._stage, path + ".")
        raise UndeclaredConfigError(
            f"stage {self._stage!r} read config {path!r}, which its StageSpec does not declare "
            f"(declared: {', '.join(self._keys)}). Add it to config_keys in fincprg/contract.py so "
            "the stage signature covers it; otherwise changing it would not re-run the stage.")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a stage's config is read-only")


class Prepared:
    """A batch function plus the per-process ``setup`` it needs (run once per Ray actor; the local engine
    runs the stage in the process that already did it)."""

    def __init__(self, fn: Callable[[list[Any]], dict[str, Iterable[Any]]], setup: Callable[[], None]) -> None:
        self.fn, self.setup = fn, setup

    def __call__(self, batch: list[Any]) -> dict[str, Iterable[Any]]:
        return self.fn(batch)


class StageContext(Protocol):
    """What an engine gives a stage's ``run(ctx)``: its declared config, its folder, its declared inputs and
    outputs, resume points, and the two loops whose work an engine may move elsewhere (``map_batches``,
    ``llm_stream``). :class:`fincprg.pipeline.context.StageContext` is the one implementation."""

    spec: StageSpec
    out: Path
    config: Any  # a ConfigView of the spec's config_keys
    signature: str
    corpus: Path | None
    show_progress: bool
    cache_dir: Path
    retry_failed: bool
    previous_failures: tuple[dict[str, Any], ...]

    @property
    def build(self) -> L.Build: ...

    @property
    def dir(self) -> Path: ...

    def input_path(self, stage: str, filename: str) -> Path: ...

    def read(self, stage: str, filename: str, model: type[BaseModel] | None = None) -> Iterator[Any]: ...

    def output(self, filename: str) -> Path: ...

    def record_used(self, **used: Any) -> None:
        """Record in the manifest what the stage actually used (a backend's default threshold, the model)."""

    def committed_batches(self, batch_size: int) -> int: ...

    def step_done(self, step: str) -> bool: ...

    def commit_step(self, step: str) -> None: ...

    def progress(self, it: Iterable[T], total: int | None = None, desc: str = "") -> Iterator[T]: ...

    def map_batches(self, items: Iterable[T], fn: Callable[[list[T]], dict[str, Iterable[BaseModel]]], *,
                    outputs: tuple[str, ...], batch_size: int, total: int | None = None, desc: str = "",
                    skipped: bool = False, source: tuple[str, str] | None = None) -> dict[str, int]: ...

    def llm_stream(self, items: Iterable[Any], *, local: Any, worker: Callable[[Any], Any], llm: Any,
                   stats_out: dict[str, Any]) -> Iterator[Any]: ...


# --- the table of stages ---------------------------------------------------------------------------------------

# What a stage needs from an engine (ray, gpus, llm_actors, precheck, source_hash, staged, estimate) is a field
# here, pointing into the stage's own package (module docstring). The runner and the Ray engine read only these.
STAGES: tuple[StageSpec, ...] = (
    StageSpec(L.INGEST, "fincprg.ingest.stage:run", ("ingest", "run.sample_reports", "run.seed"), (),
              "read JSONL/CSV/txt/PDF reports into Report records (PDFs by layout); rejects go to rejected.jsonl; optional sample",
              precheck="fincprg.ingest.readers:require_corpus", source_hash="fincprg.ingest.walk:corpus_hash"),
    StageSpec(L.CHUNK, "fincprg.chunking.stage:run", ("chunk",), ((L.INGEST, L.REPORTS),),
              "clean and cut ~500-char passages and ~100-char sentences", ray=True),
    StageSpec(L.GENERATE, "fincprg.generate.stage:run", ("generate", "finance", "llm"),
              ((L.INGEST, L.REPORTS), (L.CHUNK, L.PASSAGES), (L.CHUNK, L.SENTENCES)),
              "one query tree per passage (passage + sentence queries), completion, direct qrels; report-level queries",
              ray=True, llm_actors="fincprg.generate.stage:uses_llm_actors"),
    StageSpec(L.TOPICS, "fincprg.topics.stage:run", ("topics", "finance", "llm", "run.seed"),
              ((L.INGEST, L.REPORTS), (L.INGEST, L.EXTRA_TITLES)),
              "industry + title + time clustering, topic intents and subqueries, industry subtrees",
              estimate="fincprg.topics.stage:estimate_inputs"),
    StageSpec(L.VERIFY, "fincprg.verify.stage:run", ("verify", "finance", "llm"),
              ((L.INGEST, L.REPORTS), (L.INGEST, L.EXTRA_TITLES), (L.CHUNK, L.PASSAGES), (L.CHUNK, L.SENTENCES),
               (L.GENERATE, L.QUERIES), (L.GENERATE, L.QRELS), (L.GENERATE, L.REPORT_QUERIES),
               (L.GENERATE, L.REPORT_QRELS), (L.TOPICS, L.QUERIES), (L.TOPICS, L.TREE), (L.TOPICS, L.ASSIGNMENTS)),
              "keep or drop every query with a reason: subject, answerability, related companies, round trip",
              ray=True, config_check="fincprg.verify.rules:check_disable"),
    StageSpec(L.MINE, "fincprg.mine.stage:run", ("mine", "run.seed"),
              ((L.INGEST, L.REPORTS), (L.CHUNK, L.PASSAGES), (L.CHUNK, L.SENTENCES), (L.VERIFY, L.QUERIES),
               (L.VERIFY, L.QRELS), (L.TOPICS, L.TREE), (L.TOPICS, L.ASSIGNMENTS)),
              "reranker query-pair traversal in local spaces, veto, positive propagation",
              ray=True, gpus="fincprg.mine.stage:ray_gpus"),
    # staged: a failed export (full disk, read-only OUT) keeps the previous dataset. Not the resumable stages:
    # their committed batches live in their folder
    StageSpec(L.EXPORT, "fincprg.export.stage:run", ("export",),
              ((L.INGEST, L.REPORTS), (L.CHUNK, L.PASSAGES), (L.VERIFY, L.QUERIES), (L.VERIFY, L.QRELS),
               (L.TOPICS, L.TREE), (L.TOPICS, L.ASSIGNMENTS), (L.MINE, L.QRELS),
               # the card names the config, signature and what was used of every stage that produced the data
               *((s, L.MANIFEST) for s in (L.INGEST, L.CHUNK, L.GENERATE, L.TOPICS, L.VERIFY, L.MINE))),
              "BEIR/MTEB qrels per subset and split, FlagEmbedding train file, dataset card", staged=True),
)
STAGE_BY_NAME = {s.name: s for s in STAGES}


# Config keys whose value is a file the stage reads (a user's prompt template, a stock table): the signature
# hashes the file's content instead of its path, so editing the file re-runs the stage and moving it does not.
FILE_KEYS = ("ingest.extra_titles", "generate.prompt_file", "generate.rewrite.prompt_file", "topics.intents.prompt_file",
             "finance.stock_table", "topics.classifier.stock_table")
# keys whose setting is not always a path: the function giving the file it names ("bundled" the shipped table, "none"
# no file), as a "module:function" string like a spec's hooks (the ground floor imports no library)
_SETTING_FILE = {"finance.stock_table": "fincprg.finance.stocks:table_path",
                 "topics.classifier.stock_table": "fincprg.finance.stocks:table_path"}


def file_hashes(spec: StageSpec, cfg: PipelineConfig) -> dict[str, str]:
    """``{dotted key: sha256 of the file}`` for the set FILE_KEYS the stage declares."""
    out = {}
    for key in FILE_KEYS:
        if not any(key == k or key.startswith(k + ".") for k in spec.config_keys):
            continue
        setting = resolve(cfg, key)
        path = load_ref(_SETTING_FILE[key])(setting) if key in _SETTING_FILE else setting
        if path is None:
            continue
        p = Path(path)
        if p.is_dir():
            raise ConfigError(f"{key}: {path!r} is a folder; give the file itself")
        if not p.is_file():
            raise ConfigError(f"{key}: the file {path!r} does not exist (give a path relative to the working "
                              "folder, or an absolute one)")
        out[key] = "sha256:" + hashlib.sha256(p.read_bytes()).hexdigest()[:16]
    return out


def _hashed_config(spec: StageSpec, cfg: PipelineConfig) -> dict[str, Any]:
    """The declared config with every set FILE_KEYS path replaced by its file's content hash."""
    data = declared_config(cfg, spec.config_keys)
    for key, digest in file_hashes(spec, cfg).items():
        top = next(k for k in spec.config_keys if key == k or key.startswith(k + "."))
        if key == top:
            data[top] = digest
            continue
        *parents, last = key[len(top) + 1:].split(".")
        node = data[top]
        for part in parents:
            node = node[part]
        node[last] = digest
    return data


def signature(spec: StageSpec, cfg: PipelineConfig, input_hashes: dict[str, str]) -> str:
    """hash(stage, version, code, the declared config minus runtime-only knobs (files by content), input hashes)."""
    payload = {"stage": spec.name, "version": __version__, "code": code_hash(spec),
               "config": strip_runtime(_hashed_config(spec, cfg)), "inputs": input_hashes}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


__all__ = ["FILE_KEYS", "STAGES", "STAGE_BY_NAME", "ConfigView", "Prepared", "StageContext", "StageSpec",
           "UndeclaredConfigError", "declared_config", "file_hashes", "load_ref", "resolve", "signature"]
