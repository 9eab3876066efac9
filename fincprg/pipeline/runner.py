"""Linear, in-process stage runner with signature checkpoints and batch-level resume.

Each stage writes to ``OUT/<dir>/`` and finishes by writing ``manifest.json``. The
signature is hash(stage name, version, config sections, input hashes). A stage whose
manifest carries the current signature is skipped; a stage with a ``_progress.json``
of the current signature resumes after its last committed batch.

Map stages (``ctx.map_batches``) call a pure ``fn(batch) -> {output_file: records}``;
the same function can run in a Ray ``map_batches`` later because it touches no files.
"""
from __future__ import annotations

import importlib
import logging
import os
import platform
import shutil
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from fincprg.version import __version__
from fincprg.config import PipelineConfig, section_hash
from fincprg.errors import InputError
from fincprg.ingest.readers import require_corpus
from fincprg.pipeline.io import JsonlAppender, atomic_write_json, hash_files, read_jsonl

log = logging.getLogger(__name__)
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

MANIFEST = "manifest.json"
PROGRESS = "_progress.json"
FAILURES = "failures.jsonl"  # a stage's Failure records; --retry-failed reads the previous ones
# Test hook for kill/resume guarantees: "stage:N" SIGKILLs the process after batch N's
# lines are fsynced but before its progress is committed (the worst moment).
KILL_ENV = "FINCPRG_KILL_AFTER"


@dataclass(frozen=True)
class StageSpec:
    name: str
    entry: str  # "module:function", imported lazily so heavy deps load only when the stage runs
    inputs: tuple[str, ...]
    config_keys: tuple[str, ...]
    dirname: str | None = None
    description: str = ""

    @property
    def dir(self) -> str:
        return self.dirname or self.name


STAGES: tuple[StageSpec, ...] = (
    StageSpec("ingest", "fincprg.ingest.stage:run", (), ("ingest",),
              description="read JSONL/CSV/txt reports into Report records; rejects go to rejected.jsonl"),
    StageSpec("chunk", "fincprg.chunking.stage:run", ("ingest",), ("chunk",),
              description="clean and cut ~500-char passages and ~100-char sentences"),
    StageSpec("generate", "fincprg.generate.stage:run", ("ingest", "chunk"), ("generate", "llm"),
              description="one query tree per passage (passage + sentence queries), completion, direct qrels"),
    StageSpec("topics", "fincprg.topics.stage:run", ("ingest",), ("topics", "llm"),
              description="industry + title + time clustering, topic intents and subqueries, industry subtrees"),
    StageSpec("mine", "fincprg.mine.stage:run", ("ingest", "chunk", "generate", "topics"), ("mine",),
              description="reranker query-pair traversal in local spaces, veto, positive propagation"),
    StageSpec("export", "fincprg.export.stage:run", ("ingest", "chunk", "generate", "topics", "mine"),
              ("export",), dirname="dataset",
              description="BEIR/MTEB qrels per subset and split, FlagEmbedding train file, dataset card"),
)
STAGE_BY_NAME = {s.name: s for s in STAGES}


@dataclass
class StageContext:
    spec: StageSpec
    out: Path
    config: PipelineConfig
    signature: str
    corpus: Path | None = None
    show_progress: bool = True
    counts: dict[str, Any] = field(default_factory=dict)
    # --retry-failed: the stage re-runs because its last run left retryable failures; these are
    # that run's failure records (read before its folder was cleared), for the "recovered" count
    retry_failed: bool = False
    previous_failures: tuple[dict[str, Any], ...] = ()

    @property
    def dir(self) -> Path:
        return self.out / self.spec.dir

    @property
    def cache_dir(self) -> Path:
        c = self.config.run.cache_dir
        return Path(c) if c else self.out / ".cache"

    def input_path(self, stage: str, filename: str) -> Path:
        p = self.out / STAGE_BY_NAME[stage].dir / filename
        if not p.exists():
            raise InputError(f"{p} is missing; run `fincprg build` so that stage '{stage}' runs first")
        return p

    def read(self, stage: str, filename: str, model: type[M]) -> Iterator[M]:
        return read_jsonl(self.input_path(stage, filename), model)

    def progress(self, it: Iterable[T], total: int | None = None, desc: str = "") -> Iterator[T]:
        from tqdm.auto import tqdm

        return iter(tqdm(it, total=total, desc=desc or self.spec.name, disable=not self.show_progress,
                         leave=False, dynamic_ncols=True))

    def map_batches(
        self,
        items: Iterable[T],
        fn: Callable[[list[T]], dict[str, Iterable[BaseModel]]],
        *,
        outputs: tuple[str, ...],
        batch_size: int,
        total: int | None = None,
        desc: str = "",
    ) -> dict[str, int]:
        """Run ``fn`` over batches of ``items``, appending its records to ``outputs`` resumably.

        ``items`` must be deterministic; batch boundaries depend only on ``batch_size``
        (a runtime key), and output bytes do not, so resuming gives identical files.
        """
        prog_path = self.dir / PROGRESS
        state = _load_json(prog_path)
        done, offsets = 0, {}
        if state and state.get("signature") == self.signature and state.get("batch_size") == batch_size:
            done, offsets = state["batches_done"], state["offsets"]
            log.info("%s: resuming after %d committed batches", self.spec.name, done)
        writers = {o: JsonlAppender(self.dir / o, truncate_to=offsets.get(o, 0)) for o in outputs}
        kill_at = _kill_point(self.spec.name)
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=desc or self.spec.name, disable=not self.show_progress,
                   leave=False, dynamic_ncols=True)
        try:
            for idx, batch in enumerate(_batched(items, batch_size)):
                if idx < done:
                    bar.update(len(batch))
                    continue
                result = fn(batch)
                unknown = set(result) - set(outputs)
                if unknown:
                    raise RuntimeError(f"stage {self.spec.name} returned undeclared outputs {sorted(unknown)}")
                for name, recs in result.items():
                    for r in recs:
                        writers[name].write(r)
                offsets = {name: w.commit() for name, w in writers.items()}
                if kill_at is not None and idx + 1 == kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)
                atomic_write_json(prog_path, {"signature": self.signature, "batch_size": batch_size,
                                              "batches_done": idx + 1, "offsets": offsets})
                bar.update(len(batch))
        finally:
            bar.close()
            for w in writers.values():
                w.close()
        return {o: _count_lines(self.dir / o) for o in outputs}


def _batched(items: Iterable[T], n: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for it in items:
        batch.append(it)
        if len(batch) >= n:
            yield batch
            batch = []
    if batch:
        yield batch


def _count_lines(p: Path) -> int:
    with open(p, "rb") as f:
        return sum(1 for _ in f)


def _load_json(p: Path) -> dict[str, Any] | None:
    import json

    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


def _kill_point(stage: str) -> int | None:
    spec = os.environ.get(KILL_ENV, "")
    if ":" in spec:
        name, n = spec.split(":", 1)
        if name == stage:
            return int(n)
    return None


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"fincprg": __version__, "python": platform.python_version()}
    for pkg in ("pydantic", "jieba", "numpy", "scikit-learn", "openai", "torch", "transformers",
                "sentence-transformers", "FlagEmbedding", "bertopic"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def output_files(stage_dir: Path) -> list[Path]:
    """Data files whose bytes define a stage's output hash.

    HTML views are left out: plotly writes random element ids, and a re-drawn chart must not
    invalidate every later stage.
    """
    return [p for p in stage_dir.rglob("*") if p.is_file() and p.name not in (MANIFEST, PROGRESS)
            and not p.name.startswith(".") and p.suffix != ".html"]


def corpus_hash(corpus: Path) -> str:
    """Hash of the corpus bytes (``run_pipeline`` has already checked that it exists)."""
    if corpus.is_file():
        return hash_files([corpus], corpus.parent)
    return hash_files([p for p in corpus.rglob("*") if p.is_file() and not p.name.startswith(".")], corpus)


def code_hash(spec: StageSpec) -> str:
    """Hash of the code a stage's output depends on: its own package plus the shared finance
    knowledge and records, so editing a stage re-runs it (and, through changed outputs, what follows)."""
    root = Path(__file__).resolve().parents[1]
    pkg = root / spec.entry.split(":")[0].split(".")[1]
    files = [*pkg.rglob("*.py"), *(root / "finance").rglob("*"), root / "records.py"]
    return hash_files([f for f in files if f.is_file() and "__pycache__" not in f.parts], root)


def signature(spec: StageSpec, cfg: PipelineConfig, input_hashes: dict[str, str]) -> str:
    import hashlib
    import json

    payload = {"stage": spec.name, "version": __version__, "code": code_hash(spec),
               "config": section_hash(cfg, spec.config_keys), "inputs": input_hashes}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class StageOutcome:
    name: str
    status: str  # "ran" | "resumed" | "retried" | "skipped"
    seconds: float
    counts: dict[str, Any]


def read_manifest(out: Path, stage: str) -> dict[str, Any] | None:
    return _load_json(out / STAGE_BY_NAME[stage].dir / MANIFEST)


def run_pipeline(
    corpus: Path,
    out: Path,
    cfg: PipelineConfig,
    *,
    upto: str | None = None,
    force: bool = False,
    show_progress: bool | None = None,
    retry_failed: bool = False,
) -> list[StageOutcome]:
    """Run every stage in order (up to ``upto``), skipping or resuming by signature.

    ``retry_failed`` re-runs a complete stage whose manifest counts ``retryable_failures`` (LLM
    answers that failed validation or never came): its valid answers come from the LLM cache and
    only the failed items are sent again, so its output equals a run where they had succeeded.
    """
    require_corpus(corpus)  # checked before OUT is created, so a typo leaves nothing behind
    out.mkdir(parents=True, exist_ok=True)
    show = cfg.run.show_progress if show_progress is None else show_progress
    outcomes: list[StageOutcome] = []
    output_hashes: dict[str, str] = {}
    for spec in STAGES:
        inputs = ({"corpus": corpus_hash(corpus)} if not spec.inputs
                  else {s: output_hashes[s] for s in spec.inputs})
        sig = signature(spec, cfg, inputs)
        stage_dir = out / spec.dir
        manifest = _load_json(stage_dir / MANIFEST)
        retry = bool(retry_failed and manifest and manifest.get("signature") == sig
                     and (manifest.get("counts") or {}).get("retryable_failures"))
        if not force and not retry and manifest and manifest.get("signature") == sig:
            output_hashes[spec.name] = manifest["output_hash"]
            outcomes.append(StageOutcome(spec.name, "skipped", 0.0, manifest.get("counts", {})))
            log.info("%s: up to date (signature %s), skipped", spec.name, sig)
        else:
            failures = stage_dir / FAILURES
            previous = tuple(read_jsonl(failures)) if retry and failures.is_file() else ()
            prog = _load_json(stage_dir / PROGRESS)
            resumed = bool(not force and prog and prog.get("signature") == sig)
            if not resumed and stage_dir.exists():
                shutil.rmtree(stage_dir)
            stage_dir.mkdir(parents=True, exist_ok=True)
            (stage_dir / MANIFEST).unlink(missing_ok=True)
            ctx = StageContext(spec, out, cfg, sig, corpus=corpus, show_progress=show, retry_failed=retry,
                               previous_failures=previous)
            mod_name, fn_name = spec.entry.split(":")
            fn = getattr(importlib.import_module(mod_name), fn_name)
            t0 = time.perf_counter()
            counts = fn(ctx) or {}
            secs = time.perf_counter() - t0
            (stage_dir / PROGRESS).unlink(missing_ok=True)
            out_hash = hash_files(output_files(stage_dir), stage_dir)
            atomic_write_json(stage_dir / MANIFEST, {
                "stage": spec.name, "signature": sig, "inputs": inputs, "output_hash": out_hash,
                "config": {k: getattr(cfg, k).model_dump(mode="json") for k in spec.config_keys},
                "counts": counts, "seconds": round(secs, 3), "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "versions": _versions(),
            })
            output_hashes[spec.name] = out_hash
            status = "retried" if retry else "resumed" if resumed else "ran"
            outcomes.append(StageOutcome(spec.name, status, secs, counts))
            log.info("%s: %s in %.1fs %s", spec.name, status, secs, counts)
        if upto and spec.name == upto:
            break
    return outcomes


def stage_status(out: Path) -> list[dict[str, Any]]:
    """Status of every stage in ``out``: complete, partial (resumable) or missing."""
    rows = []
    for spec in STAGES:
        d = out / spec.dir
        m = _load_json(d / MANIFEST)
        p = _load_json(d / PROGRESS)
        status = "complete" if m else ("partial" if p else "missing")
        rows.append({"stage": spec.name, "dir": spec.dir, "status": status,
                     "signature": (m or p or {}).get("signature"),
                     "seconds": (m or {}).get("seconds"), "counts": (m or {}).get("counts", {}),
                     "batches_done": (p or {}).get("batches_done"), "description": spec.description})
    return rows
