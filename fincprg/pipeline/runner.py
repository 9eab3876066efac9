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
import shutil
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from fincprg import layout as L
from fincprg.config import PipelineConfig, RayConfig
from fincprg.errors import ConfigError
from fincprg.ingest.readers import require_corpus
from fincprg.llm.budget import Budget, BudgetExceeded, BuildStopped, use_budget
from fincprg.llm.client import price_for
from fincprg.pipeline.contract import (
    STAGE_BY_NAME,
    STAGES,
    ConfigView,
    StageSpec,
    declared_config,
    file_hashes,
    signature,
)
from fincprg.pipeline.io import JsonlAppender, atomic_write_json, batch_lines, count_lines, hash_files, read_jsonl
from fincprg.pipeline.io import discard_staging, staging_dir, swap_in
from fincprg.pipeline.lock import build_lock
from fincprg.pipeline.outputs import check_outputs, corpus_hash, output_files, versions

log = logging.getLogger(__name__)
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

# Test hook for kill/resume guarantees: "stage:N" SIGKILLs the process after batch N's
# lines are fsynced but before its progress is committed (the worst moment), or, in a stage
# that commits named steps, right after step N, in the work that follows it; "stage:0" kills
# any stage after its body returned, before its manifest is written.
KILL_ENV = "FINCPRG_KILL_AFTER"
# the stages whose batch work engine: ray moves to Ray actors; the others always run in this process
RAY_STAGES = frozenset({"chunk", "generate", "mine"})
# stages written beside their folder and swapped in when complete: a failed export (full disk, read-only
# OUT) keeps the previous dataset. Not the resumable stages: their committed batches live in the folder
SWAPPED_STAGES = frozenset({L.EXPORT})

__all__ = ["STAGES", "STAGE_BY_NAME", "StageContext", "StageOutcome", "StageSpec", "run_pipeline", "stage_status"]


@dataclass
class StageContext:
    """What a stage gets: its declared config (a :class:`ConfigView`), its folder, its declared inputs.

    ``config`` may be given as the whole PipelineConfig; it is narrowed to the spec's keys here, so
    tests that build a context by hand get the same guard as the runner.
    """

    spec: StageSpec
    out: Path
    config: Any
    signature: str
    corpus: Path | None = None
    show_progress: bool = True
    counts: dict[str, Any] = field(default_factory=dict)
    cache_dir: Path = None  # type: ignore[assignment] - default OUT/.cache (run.cache_dir), set below
    # --retry-failed: the stage re-runs because its last run left retryable failures; these are
    # that run's failure records (read before its folder was cleared), for the "recovered" count
    retry_failed: bool = False
    previous_failures: tuple[dict[str, Any], ...] = ()
    # where map stages run (config ``engine`` / ``ray``; never part of a signature: same bytes either way)
    engine: str = "local"
    ray: RayConfig = field(default_factory=RayConfig)
    staging: Path | None = None  # SWAPPED_STAGES: the folder beside the stage's own that the runner swaps in

    def __post_init__(self) -> None:
        if isinstance(self.config, PipelineConfig):
            self.engine, self.ray = self.config.engine, self.config.ray
            if self.cache_dir is None and self.config.run.cache_dir:
                self.cache_dir = Path(self.config.run.cache_dir)
            self.config = ConfigView(self.config, self.spec.config_keys, self.spec.name)
        if self.cache_dir is None:
            self.cache_dir = self.build.cache_dir

    @property
    def build(self) -> L.Build:
        return L.Build(self.out)

    @property
    def dir(self) -> Path:
        return self.staging or self.out / self.spec.dir

    def input_path(self, stage: str, filename: str) -> Path:
        if (stage, filename) not in self.spec.reads:
            raise RuntimeError(f"stage {self.spec.name!r} reads {stage}/{filename}, which its StageSpec does not "
                               "declare; add it to reads in fincprg/pipeline/contract.py")
        return self.build.require(stage, filename)

    def read(self, stage: str, filename: str, model: type[M]) -> Iterator[M]:
        return read_jsonl(self.input_path(stage, filename), model)

    def output(self, filename: str) -> Path:
        """Path of one of this stage's declared outputs, or of a scratch file (a name starting with ".":
        kept across a resume, never hashed; the runner deletes it once the stage's manifest is written)."""
        if not (filename.startswith(".") or self.spec.writes_file(filename)):
            raise RuntimeError(f"stage {self.spec.name!r} writes {filename}, which its StageSpec does not declare")
        return self.dir / filename

    def _committed(self, batch_size: int) -> tuple[int, dict[str, int]]:
        state = _load_json(self.dir / L.PROGRESS)
        if state and state.get("signature") == self.signature and state.get("batch_size") == batch_size:
            return state["batches_done"], state["offsets"]
        return 0, {}

    def committed_batches(self, batch_size: int) -> int:
        """Batches an earlier, killed run of this stage committed (the resume point of ``map_batches``)."""
        return self._committed(batch_size)[0]

    def step_done(self, step: str) -> bool:
        """Whether an earlier, killed run of this stage (same signature) committed ``step``."""
        state = _load_json(self.dir / L.PROGRESS) or {}
        return state.get("signature") == self.signature and step in state.get("steps", [])

    def commit_step(self, step: str) -> None:
        """Record that ``step``'s files are complete, so a resumed run skips it (global stages)."""
        state = _load_json(self.dir / L.PROGRESS) or {}
        steps = state.get("steps", []) if state.get("signature") == self.signature else []
        atomic_write_json(self.dir / L.PROGRESS, {"signature": self.signature, "steps": [*steps, step]})
        if _kill_point(self.spec.name) == len(steps) + 1:
            os.kill(os.getpid(), signal.SIGKILL)  # test hook: killed in the work that follows step N

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
        skipped: bool = False,
        source: tuple[str, str, type[BaseModel]] | None = None,
    ) -> dict[str, int]:
        """Run ``fn`` over batches of ``items``, appending its records to ``outputs`` resumably.

        ``items`` must be deterministic; batch boundaries depend only on ``batch_size``
        (a runtime key), and output bytes do not, so resuming gives identical files.
        ``skipped``: the caller already left out the ``committed_batches(batch_size)`` committed
        batches (a streaming stage that must not even start work on them); such a stream is run here,
        in this process, whatever the engine.
        ``source``: ``(stage, file, Model)`` when ``items`` are that declared JSONL input, record by
        record; with engine: ray each batch is then read by the actor from its byte range of the file.
        """
        prog_path = self.dir / L.PROGRESS
        done, offsets = self._committed(batch_size)
        if done:
            log.info("%s: resuming after %d committed batches", self.spec.name, done)
        writers = {o: JsonlAppender(self.output(o), truncate_to=offsets.get(o, 0)) for o in outputs}
        kill_at = _kill_point(self.spec.name)
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=desc or self.spec.name, disable=not self.show_progress,
                   leave=False, dynamic_ncols=True)
        bar.update(min(done * batch_size, total or 0))
        if self.engine == "ray" and not skipped:
            results = self._ray_batches(items, fn, batch_size, done, source)
        else:
            results = self._local_batches(items, fn, batch_size, done, skipped)
        try:
            for idx, (lines, n_items) in enumerate(results, start=done):
                unknown = set(lines) - set(outputs)
                if unknown:
                    raise RuntimeError(f"stage {self.spec.name} returned undeclared outputs {sorted(unknown)}")
                for name, recs in lines.items():
                    for line in recs:
                        writers[name].write_line(line)
                offsets = {name: w.commit() for name, w in writers.items()}
                if kill_at is not None and idx + 1 == kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)
                atomic_write_json(prog_path, {"signature": self.signature, "batch_size": batch_size,
                                              "batches_done": idx + 1, "offsets": offsets})
                bar.update(n_items)
        finally:
            bar.close()
            for w in writers.values():
                w.close()
        return {o: count_lines(self.dir / o) for o in outputs}

    def _local_batches(self, items: Iterable[T], fn: Callable[[list[T]], dict[str, Iterable[BaseModel]]],
                       batch_size: int, done: int, skipped: bool) -> Iterator[tuple[dict[str, list[str]], int]]:
        for idx, batch in enumerate(_batched(items, batch_size), start=done if skipped else 0):
            if idx >= done:
                yield batch_lines(fn(batch)), len(batch)

    def _ray_batches(self, items: Iterable[T], fn: Callable[[list[T]], dict[str, Iterable[BaseModel]]],
                     batch_size: int, done: int, source: tuple[str, str, type[BaseModel]] | None,
                     ) -> Iterator[tuple[dict[str, list[str]], int]]:
        from fincprg.pipeline import ray_engine

        gpus = ray_engine.mine_gpus(self.ray, self.config.mine.reranker.backend) if self.spec.name == "mine" else 0.0
        if source is not None:
            stage, filename, model = source
            path = self.input_path(stage, filename)
            payloads = ray_engine.line_ranges(path, batch_size, skip=done)
            src: tuple[str, str] | None = (str(path), f"{model.__module__}:{model.__name__}")
        else:
            payloads = ray_engine.payloads(b for i, b in enumerate(_batched(items, batch_size)) if i >= done)
            src = None
        for lines in ray_engine.map_batches(fn, payloads, self.ray, source=src, gpus=gpus):
            yield lines, batch_size


def _batched(items: Iterable[T], n: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for it in items:
        batch.append(it)
        if len(batch) >= n:
            yield batch
            batch = []
    if batch:
        yield batch


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


def _input_hashes(spec: StageSpec, corpus: Path, done: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Output hashes of the stages ``spec`` reads; a read manifest adds that stage's signature."""
    if not spec.inputs:
        return {"corpus": corpus_hash(corpus)}
    out = {s: done[s]["output_hash"] for s in spec.inputs}
    out.update({f"{s}.signature": done[s]["signature"] for s, f in spec.reads if f == L.MANIFEST})
    return out


@dataclass
class StageOutcome:
    name: str
    status: str  # "ran" | "resumed" | "retried" | "skipped"
    seconds: float
    counts: dict[str, Any]


def read_manifest(out: Path, stage: str) -> dict[str, Any] | None:
    return L.Build(out).manifest(stage)


def run_pipeline(
    corpus: Path,
    out: Path,
    cfg: PipelineConfig,
    *,
    upto: str | None = None,
    force: bool = False,
    show_progress: bool | None = None,
    retry_failed: bool = False,
    budget: Budget | None = None,
) -> list[StageOutcome]:
    """Run every stage in order (up to ``upto``), skipping or resuming by signature.

    Holds ``OUT/.lock`` throughout: a second build into the same folder fails at once.
    ``retry_failed`` re-runs a complete stage whose manifest counts ``retryable_failures`` (LLM
    answers that failed validation or never came): its valid answers come from the LLM cache and
    only the failed items are sent again, so its output equals a run where they had succeeded.

    Args:
        budget: limits on LLM requests and cost (``--max-requests``, ``--max-cost``). At a limit the build
            raises :class:`BuildStopped`: finished stages keep their manifests, the running stage its
            committed batches, and the same call without the limit resumes there.
    """
    require_corpus(corpus)  # checked before OUT is created, so a typo leaves nothing behind
    if budget is not None and budget.max_cost_usd is not None and price_for(cfg.llm.model, cfg.llm.prices) is None:
        raise ConfigError(f"--max-cost needs a price for llm.model={cfg.llm.model!r}: add it to llm.prices, e.g. "
                          f"--set 'llm.prices={{{cfg.llm.model}: {{input: 2.5, output: 10.0}}}}' (USD per 1M tokens)")
    if budget is not None and budget.limited and cfg.engine == "ray" and cfg.generate.backend == "llm":
        raise ConfigError("--max-requests/--max-cost are enforced by engine: local only (Ray's LLM actors do not "
                          "share the build's budget); drop the limit or use --set engine=local")
    out.mkdir(parents=True, exist_ok=True)
    with build_lock(out), use_budget(budget):
        return _run_stages(corpus, out, cfg, upto=upto, force=force, show_progress=show_progress, budget=budget,
                           retry_failed=retry_failed)


def _run_stages(corpus: Path, out: Path, cfg: PipelineConfig, *, upto: str | None, force: bool,
                show_progress: bool | None, budget: Budget | None = None, retry_failed: bool = False) -> list[StageOutcome]:
    show = cfg.run.show_progress if show_progress is None else show_progress
    outcomes: list[StageOutcome] = []
    done: dict[str, dict[str, Any]] = {}  # stage -> {"signature", "output_hash"} of this build
    for spec in STAGES:
        inputs = _input_hashes(spec, corpus, done)
        sig = signature(spec, cfg, inputs)
        stage_dir = out / spec.dir
        manifest = _load_json(stage_dir / L.MANIFEST)
        retry = bool(retry_failed and manifest and manifest.get("signature") == sig
                     and (manifest.get("counts") or {}).get("retryable_failures"))
        if not force and not retry and manifest and manifest.get("signature") == sig:
            done[spec.name] = {"signature": sig, "output_hash": manifest["output_hash"]}
            outcomes.append(StageOutcome(spec.name, "skipped", 0.0, manifest.get("counts", {})))
            log.info("%s: up to date (signature %s), skipped", spec.name, sig)
        else:
            failures = stage_dir / L.FAILURES
            previous = tuple(read_jsonl(failures)) if retry and failures.is_file() else ()
            prog = _load_json(stage_dir / L.PROGRESS)
            resumed = bool(not force and prog and prog.get("signature") == sig)
            staged = spec.name in SWAPPED_STAGES
            if not resumed and not staged and stage_dir.exists():
                shutil.rmtree(stage_dir)
            work_dir = staging_dir(stage_dir) if staged else stage_dir
            work_dir.mkdir(parents=True, exist_ok=True)
            (work_dir / L.MANIFEST).unlink(missing_ok=True)
            ctx = StageContext(spec, out, cfg, sig, corpus=corpus, show_progress=show, retry_failed=retry,
                               previous_failures=previous, staging=work_dir if staged else None)
            mod_name, fn_name = spec.entry.split(":")
            fn = getattr(importlib.import_module(mod_name), fn_name)
            t0 = time.perf_counter()
            try:
                counts = fn(ctx) or {}
                secs = time.perf_counter() - t0
                if _kill_point(spec.name) == 0:
                    os.kill(os.getpid(), signal.SIGKILL)  # test hook "stage:0": every file written, no manifest yet
                out_hash = _seal(spec, work_dir, cfg, sig, inputs, counts, secs)
                if staged:
                    swap_in(work_dir, stage_dir)
            except BudgetExceeded as e:
                raise _stopped(e, spec, ctx, outcomes, budget) from None
            except BaseException:
                # the previous folder is untouched; a half-written one (the stage, or the manifest on a full
                # disk) must not fill the disk
                if staged:
                    discard_staging(stage_dir)
                raise
            done[spec.name] = {"signature": sig, "output_hash": out_hash}
            status = "retried" if retry else "resumed" if resumed else "ran"
            outcomes.append(StageOutcome(spec.name, status, secs, counts))
            log.info("%s: %s in %.1fs %s", spec.name, status, secs, counts)
        if upto and spec.name == upto:
            break
    return outcomes


def _seal(spec: StageSpec, work_dir: Path, cfg: PipelineConfig, sig: str, inputs: dict[str, str],
          counts: dict[str, Any], secs: float) -> str:
    """Check a finished stage's files, write its manifest (which marks it complete) and drop its resume
    state; returns the output hash."""
    check_outputs(spec, work_dir)
    (work_dir / L.PROGRESS).unlink(missing_ok=True)
    out_hash = hash_files(output_files(work_dir), work_dir)
    atomic_write_json(work_dir / L.MANIFEST, {
        "stage": spec.name, "signature": sig, "inputs": inputs, "output_hash": out_hash,
        "config": declared_config(cfg, spec.config_keys),
        **({"files": files} if (files := file_hashes(spec, cfg)) else {}),
        "counts": counts, "engine": cfg.engine if spec.name in RAY_STAGES else "local",
        "seconds": round(secs, 3), "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "versions": versions(),
    })
    for scratch in work_dir.glob(".*"):  # resume state of a killed run, needed until the manifest exists
        if scratch.is_file():
            scratch.unlink()
    return out_hash


def _stopped(e: BudgetExceeded, spec: StageSpec, ctx: StageContext, outcomes: list[StageOutcome],
             budget: Budget | None) -> BuildStopped:
    """The clean stop at a limit: what is kept, and how to go on."""
    prog = _load_json(ctx.dir / L.PROGRESS) or {}
    kept = (f"{prog['batches_done']} batches committed" if prog.get("batches_done")
            else f"steps committed: {', '.join(prog['steps'])}" if prog.get("steps") else "nothing committed yet")
    msg = (f"build stopped in stage {spec.name!r}: {e}. Finished stages and the answers already received are kept "
           f"({spec.name}: {kept}; every answer is in the LLM cache). Run the same command again with a higher "
           "limit, or without it, to resume where it stopped.")
    return BuildStopped(msg, stage=spec.name, outcomes=outcomes, spent=budget.summary() if budget else {})


def stage_status(out: Path) -> list[dict[str, Any]]:
    """Status of every stage in ``out``: complete, partial (resumable) or missing."""
    rows = []
    for spec in STAGES:
        d = out / spec.dir
        m = _load_json(d / L.MANIFEST)
        p = _load_json(d / L.PROGRESS)
        status = "complete" if m else ("partial" if p else "missing")
        rows.append({"stage": spec.name, "dir": spec.dir, "status": status,
                     "signature": (m or p or {}).get("signature"),
                     "seconds": (m or {}).get("seconds"), "counts": (m or {}).get("counts", {}),
                     "batches_done": (p or {}).get("batches_done"), "description": spec.description})
    return rows
