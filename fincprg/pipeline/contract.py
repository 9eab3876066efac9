"""The table of stages: each stage's spec (what it reads: config keys and files; what it needs from an engine)
and its signature. The contract itself, what a spec is and what an engine gives a stage, is one module,
:mod:`fincprg.spec` (ground floor, so the stages can read it); this module only fills it in and is not re-exported
from it. What each stage writes is the artifact table in :mod:`fincprg.layout`.

A stage sees only the config it declares (:class:`fincprg.spec.ConfigView`); reading any other key raises
:class:`fincprg.spec.UndeclaredConfigError`. Its signature hashes exactly those keys, its code (the modules it imports,
:mod:`fincprg.pipeline.codehash`) and its inputs, so a rebuild after any config or code change equals a
clean build: a key a stage can read is a key that invalidates it.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.config import PipelineConfig, strip_runtime
from fincprg.errors import ConfigError
from fincprg.finance.stocks import table_path
from fincprg.pipeline.codehash import code_hash
from fincprg.spec import StageSpec, declared_config, resolve
from fincprg.version import __version__

__all__ = ["FILE_KEYS", "STAGES", "STAGE_BY_NAME", "file_hashes", "signature"]

# What a stage needs from an engine (ray, gpus, llm_actors, precheck, source_hash, staged, estimate) is a field
# here, pointing into the stage's own package: see fincprg/spec.py. The runner and the Ray engine read only these.
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
# keys whose setting is not always a path: the file it names ("bundled" the shipped table, "none" no file)
_SETTING_FILE = {"finance.stock_table": table_path, "topics.classifier.stock_table": table_path}


def file_hashes(spec: StageSpec, cfg: PipelineConfig) -> dict[str, str]:
    """``{dotted key: sha256 of the file}`` for the set FILE_KEYS the stage declares."""
    out = {}
    for key in FILE_KEYS:
        if not any(key == k or key.startswith(k + ".") for k in spec.config_keys):
            continue
        path = _SETTING_FILE.get(key, lambda v: v)(resolve(cfg, key))
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
