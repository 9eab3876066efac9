"""Linear, in-process stage runner with signature checkpoints and batch-level resume.

Each stage writes to ``OUT/<dir>/`` and finishes by writing ``manifest.json``. The
signature is hash(stage name, version, config sections, input hashes). A stage whose
manifest carries the current signature is skipped; a stage with a ``_progress.json``
of the current signature resumes after its last committed batch.

Map stages (``ctx.map_batches``) call a pure ``fn(batch) -> {output_file: records}``;
the same function can run in a Ray ``map_batches`` later because it touches no files.
What a stage gets (:class:`StageContext`, ``map_batches``) is in :mod:`fincprg.pipeline.context`.

The runner names no stage: it walks :data:`~fincprg.contract.STAGES` and does what each spec asks
(a pre-check on the corpus, a corpus hash, a staged folder, the engine's limits on LLM actors).
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.config import PipelineConfig
from fincprg.contract import (STAGE_BY_NAME, STAGES, ConfigView, StageSpec, declared_config, file_hashes, load_ref,
                              signature)
from fincprg.errors import ConfigError, InputError
from fincprg.io import (atomic_write_json, discard_staging, hash_files, read_jsonl, recover_staging, staging_dir,
                        swap_in)
from fincprg.llm.budget import Budget, BudgetExceeded, BuildStopped, use_budget
from fincprg.llm.client import price_for
from fincprg.pipeline.context import StageContext, _kill_point
from fincprg.pipeline.lock import build_lock
from fincprg.pipeline.outputs import check_outputs, output_files, versions

log = logging.getLogger(__name__)

__all__ = ["STAGES", "STAGE_BY_NAME", "StageContext", "StageOutcome", "StageSpec", "estimate_stage", "run_pipeline",
           "stage_status"]


def _input_hashes(spec: StageSpec, corpus: Path, done: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Output hashes of the stages ``spec`` reads; a read manifest adds that stage's signature."""
    if not spec.inputs:
        source_hash = spec.hook("source_hash")
        if source_hash is None:
            raise RuntimeError(f"stage {spec.name!r} reads no upstream stage and its spec names no source_hash")
        return {"corpus": source_hash(corpus)}
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
    _check_out_outside(corpus, out)
    for spec in STAGES:  # checked before OUT is created, so a typo leaves nothing behind
        if (precheck := spec.hook("precheck")) is not None:
            precheck(corpus)
        if (config_check := spec.hook("config_check")) is not None:
            config_check(ConfigView(cfg, spec.config_keys, spec.name))
    _check_budget(cfg, budget)
    out.mkdir(parents=True, exist_ok=True)
    with build_lock(out), use_budget(budget):
        return _run_stages(corpus, out, cfg, upto=upto, force=force, show_progress=show_progress, budget=budget,
                           retry_failed=retry_failed)


def _check_out_outside(corpus: Path, out: Path) -> None:
    """OUT inside a corpus folder would be read as reports by the next build (its JSONL files are tables) and
    the dataset overwritten from them, so it is refused before anything is written."""
    if not corpus.is_dir():
        return
    c, o = corpus.resolve(), out.resolve()
    if o == c or c in o.parents:
        raise InputError(f"the output folder {out} is inside the corpus folder {corpus}, so a later build would read "
                         "its files as reports; choose an output folder outside the corpus (e.g. -o "
                         f"{c.parent / (c.name + '-build')})")


def _check_budget(cfg: PipelineConfig, budget: Budget | None) -> None:
    if budget is not None and budget.max_cost_usd is not None and price_for(cfg.llm.model, cfg.llm.prices) is None:
        raise ConfigError(f"--max-cost needs a price for llm.model={cfg.llm.model!r}: add it to llm.prices, e.g. "
                          f"--set 'llm.prices={{{cfg.llm.model}: {{input: 2.5, output: 10.0}}}}' (USD per 1M tokens)")
    if budget is None or not budget.limited or cfg.engine != "ray":
        return
    actors = [s.name for s in STAGES if (uses := s.hook("llm_actors")) and uses(ConfigView(cfg, s.config_keys, s.name))]
    if actors:
        raise ConfigError(f"--max-requests/--max-cost are enforced by engine: local only (Ray's LLM actors in "
                          f"{', '.join(actors)} do not share the build's budget); drop the limit or use "
                          "--set engine=local")


def _run_stages(corpus: Path, out: Path, cfg: PipelineConfig, *, upto: str | None, force: bool,
                show_progress: bool | None, budget: Budget | None = None, retry_failed: bool = False) -> list[StageOutcome]:
    show = cfg.run.show_progress if show_progress is None else show_progress
    outcomes: list[StageOutcome] = []
    done: dict[str, dict[str, Any]] = {}  # stage -> {"signature", "output_hash"} of this build
    for spec in STAGES:  # before any manifest is read: a stage skipped below must not keep a killed run's leftovers
        if spec.staged:
            recover_staging(out / spec.dir)
    for spec in STAGES:
        inputs = _input_hashes(spec, corpus, done)
        sig = signature(spec, cfg, inputs)
        stage_dir = out / spec.dir
        manifest = L.load_json(stage_dir / L.MANIFEST)
        retry = bool(retry_failed and manifest and manifest.get("signature") == sig
                     and (manifest.get("counts") or {}).get("retryable_failures"))
        if not force and not retry and manifest and manifest.get("signature") == sig:
            done[spec.name] = {"signature": sig, "output_hash": manifest["output_hash"]}
            outcomes.append(StageOutcome(spec.name, "skipped", 0.0, manifest.get("counts", {})))
            log.info("%s: up to date (signature %s), skipped", spec.name, sig)
        else:
            failures = stage_dir / L.FAILURES
            previous = tuple(read_jsonl(failures)) if retry and failures.is_file() else ()
            prog = L.load_json(stage_dir / L.PROGRESS)
            resumed = bool(not force and prog and prog.get("signature") == sig)
            staged = spec.staged
            if not resumed and not staged and stage_dir.exists():
                shutil.rmtree(stage_dir)
            work_dir = staging_dir(stage_dir) if staged else stage_dir
            work_dir.mkdir(parents=True, exist_ok=True)
            (work_dir / L.MANIFEST).unlink(missing_ok=True)
            ctx = StageContext(spec, out, cfg, sig, corpus=corpus, show_progress=show, retry_failed=retry,
                               previous_failures=previous, staging=work_dir if staged else None)
            fn = load_ref(spec.entry)
            t0 = time.perf_counter()
            try:
                counts = fn(ctx) or {}
                secs = time.perf_counter() - t0
                if _kill_point(spec.name) == 0:
                    os.kill(os.getpid(), signal.SIGKILL)  # test hook "stage:0": every file written, no manifest yet
                out_hash = _seal(spec, work_dir, cfg, sig, inputs, counts, ctx.used)
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
          counts: dict[str, Any], used: dict[str, Any]) -> str:
    """Check a finished stage's files, write its manifest (which marks it complete) and drop its resume
    state; returns the output hash. ``used``: what the stage recorded with ``ctx.record_used``."""
    check_outputs(spec, work_dir)
    (work_dir / L.PROGRESS).unlink(missing_ok=True)
    out_hash = hash_files(output_files(work_dir), work_dir)
    atomic_write_json(work_dir / L.MANIFEST, {
        "stage": spec.name, "signature": sig, "inputs": inputs, "output_hash": out_hash,
        "config": declared_config(cfg, spec.config_keys),
        **({"files": files} if (files := file_hashes(spec, cfg)) else {}),
        "counts": counts, **({"used": used} if used else {}), "engine": cfg.engine if spec.ray else "local",
        "versions": versions(),  # no wall or clock time: two builds of one input are byte-identical
    })
    for scratch in work_dir.glob(".*"):  # resume state of a killed run, needed until the manifest exists
        if scratch.is_file():
            scratch.unlink()
    return out_hash


def _stopped(e: BudgetExceeded, spec: StageSpec, ctx: StageContext, outcomes: list[StageOutcome],
             budget: Budget | None) -> BuildStopped:
    """The clean stop at a limit: what is kept, and how to go on."""
    prog = L.load_json(ctx.dir / L.PROGRESS) or {}
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
        m = L.load_json(d / L.MANIFEST)
        p = L.load_json(d / L.PROGRESS)
        status = "complete" if m else ("partial" if p else "missing")
        rows.append({"stage": spec.name, "dir": spec.dir, "status": status,
                     "signature": (m or p or {}).get("signature"),
                     "counts": (m or {}).get("counts", {}),
                     "batches_done": (p or {}).get("batches_done"), "description": spec.description})
    return rows


def estimate_stage(spec: StageSpec, out: Path, cfg: PipelineConfig, *, show_progress: bool = False) -> dict[str, Any]:
    """Run ``spec``'s ``estimate`` hook (its free part, sending nothing) in ``out``, which holds the stage's
    inputs, through the same context a build gives the stage; nothing is sealed or skipped."""
    hook = spec.hook("estimate")
    if hook is None:
        raise RuntimeError(f"stage {spec.name!r} has no estimate hook in its spec")
    ctx = StageContext(spec, out, cfg, "estimate", show_progress=show_progress)
    ctx.dir.mkdir(parents=True, exist_ok=True)
    return dict(hook(ctx))
