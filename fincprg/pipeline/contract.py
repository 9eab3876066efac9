"""The stage contract: what each stage reads (config keys and files), what it writes, and its signature.

A stage sees only the config it declares (:class:`ConfigView`); reading any other key raises
:class:`UndeclaredConfigError`. Its signature hashes exactly those keys, its code and its inputs, so
a rebuild after any config change equals a clean build: a key a stage can read is a key that
invalidates it.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from fincprg import layout as L
from fincprg.config import PipelineConfig, strip_runtime
from fincprg.errors import ConfigError
from fincprg.pipeline.io import hash_files
from fincprg.version import __version__


class UndeclaredConfigError(RuntimeError):
    """A stage read a config key its StageSpec does not declare (a bug: the signature would miss it)."""


@dataclass(frozen=True)
class StageSpec:
    """One stage: its entry function, the config keys it may read, the files it reads and writes.

    ``config_keys`` are sections (``mine``) or dotted keys (``run.seed``). ``reads`` are
    ``(stage, file)`` pairs of upstream outputs; reading an upstream ``manifest.json`` makes that
    stage's signature (not only its output) an input. ``writes`` are file names in the stage's own
    folder; a name ending in ``/`` covers a sub-folder.
    """

    name: str
    entry: str  # "module:function", imported lazily so heavy deps load only when the stage runs
    config_keys: tuple[str, ...]
    reads: tuple[tuple[str, str], ...]
    writes: tuple[str, ...]
    description: str = ""

    @property
    def dir(self) -> str:
        return L.STAGE_DIRS[self.name]

    @property
    def inputs(self) -> tuple[str, ...]:
        """Upstream stages, in pipeline order."""
        used = {s for s, _ in self.reads}
        return tuple(s for s in L.STAGE_DIRS if s in used)

    def writes_file(self, rel: str) -> bool:
        return rel in self.writes or any(w.endswith("/") and rel.startswith(w) for w in self.writes)


STAGES: tuple[StageSpec, ...] = (
    StageSpec(L.INGEST, "fincprg.ingest.stage:run", ("ingest", "run.sample_reports", "run.seed"), (),
              (L.REPORTS, L.REJECTED),
              "read JSONL/CSV/txt reports into Report records; rejects go to rejected.jsonl; optional sample"),
    StageSpec(L.CHUNK, "fincprg.chunking.stage:run", ("chunk",), ((L.INGEST, L.REPORTS),),
              (L.PASSAGES, L.SENTENCES, L.REMOVED, L.CHUNK_STATS),
              "clean and cut ~500-char passages and ~100-char sentences"),
    StageSpec(L.GENERATE, "fincprg.generate.stage:run", ("generate", "finance", "llm"),
              ((L.INGEST, L.REPORTS), (L.CHUNK, L.PASSAGES), (L.CHUNK, L.SENTENCES)),
              (L.QUERIES, L.QRELS, L.FAILURES, L.HIERARCHY),
              "one query tree per passage (passage + sentence queries), completion, direct qrels"),
    StageSpec(L.TOPICS, "fincprg.topics.stage:run", ("topics", "finance", "llm", "run.seed"), ((L.INGEST, L.REPORTS),),
              (L.TITLES, L.TREE, L.ASSIGNMENTS, L.QUERIES, L.FAILURES, L.TOPICS_HTML, L.HIERARCHY_HTML),
              "industry + title + time clustering, topic intents and subqueries, industry subtrees"),
    StageSpec(L.VERIFY, "fincprg.verify.stage:run", ("verify", "finance", "llm"),
              ((L.INGEST, L.REPORTS), (L.CHUNK, L.PASSAGES), (L.CHUNK, L.SENTENCES), (L.GENERATE, L.QUERIES),
               (L.GENERATE, L.QRELS), (L.TOPICS, L.QUERIES), (L.TOPICS, L.TREE), (L.TOPICS, L.ASSIGNMENTS)),
              (L.QUERIES, L.QRELS, L.DROPPED),
              "keep or drop every query with a reason: subject, answerability, related companies, round trip"),
    StageSpec(L.MINE, "fincprg.mine.stage:run", ("mine", "run.seed"),
              ((L.INGEST, L.REPORTS), (L.CHUNK, L.PASSAGES), (L.CHUNK, L.SENTENCES), (L.VERIFY, L.QUERIES),
               (L.VERIFY, L.QRELS), (L.TOPICS, L.TREE), (L.TOPICS, L.ASSIGNMENTS)),
              (L.PAIRS, L.QRELS, L.HISTOGRAM),
              "reranker query-pair traversal in local spaces, veto, positive propagation"),
    StageSpec(L.EXPORT, "fincprg.export.stage:run", ("export",),
              ((L.INGEST, L.REPORTS), (L.CHUNK, L.PASSAGES), (L.VERIFY, L.QUERIES), (L.VERIFY, L.QRELS),
               (L.TOPICS, L.TREE), (L.TOPICS, L.ASSIGNMENTS), (L.MINE, L.QRELS),
               # the card names the config and signature of every stage that produced the data
               *((s, L.MANIFEST) for s in (L.INGEST, L.CHUNK, L.GENERATE, L.TOPICS, L.VERIFY, L.MINE))),
              (L.CORPUS, L.QUERIES, L.QRELS_DIR + "/", L.TRAIN_FILE, L.HF_DIR + "/", L.CARD),
              "BEIR/MTEB qrels per subset and split, FlagEmbedding train file, dataset card"),
)
STAGE_BY_NAME = {s.name: s for s in STAGES}


def _resolve(cfg: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        cfg = getattr(cfg, part)
    return cfg


def declared_config(cfg: PipelineConfig, keys: tuple[str, ...]) -> dict[str, Any]:
    """The declared keys' values as JSON-able data (what the manifest records and the signature hashes)."""
    out = {}
    for k in keys:
        v = _resolve(cfg, k)
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
            f"(declared: {', '.join(self._keys)}). Add it to config_keys in fincprg/pipeline/contract.py so "
            "the stage signature covers it; otherwise changing it would not re-run the stage.")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a stage's config is read-only")


def code_hash(spec: StageSpec) -> str:
    """Hash of the code a stage's output depends on: its own package plus the shared finance
    knowledge, models and records, so editing a stage re-runs it (and, through changed outputs, what follows)."""
    root = Path(__file__).resolve().parents[1]
    pkg = root / spec.entry.split(":")[0].split(".")[1]
    files = [*pkg.rglob("*.py"), *(root / "finance").rglob("*"), *(root / "models").rglob("*.py"),
             root / "records.py"]
    return hash_files([f for f in files if f.is_file() and "__pycache__" not in f.parts], root)


# Config keys whose value is a file the stage reads (a user's prompt template): the signature hashes the
# file's content instead of its path, so editing the template re-runs the stage and moving it does not.
FILE_KEYS = ("generate.prompt_file", "generate.rewrite.prompt_file", "topics.intents.prompt_file")


def file_hashes(spec: StageSpec, cfg: PipelineConfig) -> dict[str, str]:
    """``{dotted key: sha256 of the file}`` for the set FILE_KEYS the stage declares."""
    out = {}
    for key in FILE_KEYS:
        if not any(key == k or key.startswith(k + ".") for k in spec.config_keys):
            continue
        path = _resolve(cfg, key)
        if path is None:
            continue
        p = Path(path)
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
