"""What a stage gets from the runner: :class:`StageContext` (the implementation of
:class:`fincprg.contract.StageContext`), its declared config, inputs and outputs, and ``map_batches``, the
resumable batch loop (local or on Ray) that map stages run their pure ``fn`` in.

It knows a stage only through its spec: whether its batches may go to Ray (``spec.ray``), how many GPUs
an actor wants (``spec.gpus``), which record type a file holds (the artifact table). The build loop that
creates one context per stage, checks signatures and writes manifests is :mod:`fincprg.pipeline.runner`.
"""
from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from fincprg import layout as L
from fincprg.config import PipelineConfig, RayConfig
from fincprg.contract import ConfigView, StageSpec
from fincprg.io import JsonlAppender, atomic_write_json, batch_lines, count_lines

log = logging.getLogger(__name__)
T = TypeVar("T")

# Test hook for kill/resume guarantees: "stage:N" SIGKILLs the process after batch N's
# lines are fsynced but before its progress is committed (the worst moment), or, in a stage
# that commits named steps, right after step N, in the work that follows it; "stage:0" kills
# any stage after its body returned, before its manifest is written.
KILL_ENV = "FINCPRG_KILL_AFTER"


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
    staging: Path | None = None  # spec.staged: the folder beside the stage's own that the runner swaps in
    # what the stage actually used (``record_used``): the manifest's "used", read back by the card and the audit
    used: dict[str, Any] = field(default_factory=dict)

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
                               "declare; add it to reads in fincprg/contract.py")
        return self.build.require(stage, filename)

    def read(self, stage: str, filename: str, model: type[BaseModel] | None = None) -> Iterator[Any]:
        """A declared input's records, typed as the artifact table says (``model``, when given, must agree)."""
        want = L.artifact(stage, filename).record
        if model is not None and model is not want:
            raise RuntimeError(f"stage {self.spec.name!r} reads {stage}/{filename} as {model.__name__}; the artifact "
                               f"table (fincprg/layout.py) says {getattr(want, '__name__', 'plain JSON')}")
        return L.read_records(self.input_path(stage, filename), stage, filename)

    def record_used(self, **used: Any) -> None:
        """Record what the stage actually used (a backend's default threshold, the model it loaded) in its
        manifest's ``used``: the card, the audit and the report read it from there, not from the config."""
        self.used.update(used)

    def output(self, filename: str) -> Path:
        """Path of one of this stage's declared outputs, or of a scratch file (a name starting with ".":
        kept across a resume, never hashed; the runner deletes it once the stage's manifest is written)."""
        if not (filename.startswith(".") or self.spec.writes_file(filename)):
            raise RuntimeError(f"stage {self.spec.name!r} writes {filename}, which its StageSpec does not declare")
        return self.dir / filename

    def _committed(self, batch_size: int) -> tuple[int, dict[str, int]]:
        state = L.load_json(self.dir / L.PROGRESS)
        if state and state.get("signature") == self.signature and state.get("batch_size") == batch_size:
            return state["batches_done"], state["offsets"]
        return 0, {}

    def committed_batches(self, batch_size: int) -> int:
        """Batches an earlier, killed run of this stage committed (the resume point of ``map_batches``)."""
        return self._committed(batch_size)[0]

    def step_done(self, step: str) -> bool:
        """Whether an earlier, killed run of this stage (same signature) committed ``step``."""
        state = L.load_json(self.dir / L.PROGRESS) or {}
        return state.get("signature") == self.signature and step in state.get("steps", [])

    def commit_step(self, step: str) -> None:
        """Record that ``step``'s files are complete, so a resumed run skips it (global stages)."""
        state = L.load_json(self.dir / L.PROGRESS) or {}
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
        source: tuple[str, str] | None = None,
    ) -> dict[str, int]:
        """Run ``fn`` over batches of ``items``, appending its records to ``outputs`` resumably.

        ``items`` must be deterministic; batch boundaries depend only on ``batch_size``
        (a runtime key), and output bytes do not, so resuming gives identical files.
        ``skipped``: the caller already left out the ``committed_batches(batch_size)`` committed
        batches (a streaming stage that must not even start work on them); such a stream is run here,
        in this process, whatever the engine.
        ``source``: ``(stage, file)`` when ``items`` are that declared JSONL input, record by record; with
        engine: ray each batch is then read by the actor from its byte range of the file.
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
        if self.engine == "ray" and self.spec.ray and not skipped:
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
                     batch_size: int, done: int, source: tuple[str, str] | None,
                     ) -> Iterator[tuple[dict[str, list[str]], int]]:
        from fincprg.pipeline import ray_engine

        wants = self.spec.hook("gpus")
        gpus = ray_engine.actor_gpus(self.ray, wants(self.config, self.ray)) if wants else 0.0
        if source is not None:
            stage, filename = source
            model = L.artifact(stage, filename).record
            assert model is not None, f"{stage}/{filename} holds no record type to read batches of"
            path = self.input_path(stage, filename)
            payloads = ray_engine.line_ranges(path, batch_size, skip=done)
            src: tuple[str, str] | None = (str(path), f"{model.__module__}:{model.__name__}")
        else:
            payloads = ray_engine.payloads(b for i, b in enumerate(_batched(items, batch_size)) if i >= done)
            src = None
        for lines in ray_engine.map_batches(fn, payloads, self.ray, source=src, gpus=gpus):
            yield lines, batch_size

    def llm_stream(self, items: Iterable[Any], *, local: Any, worker: Callable[[Any], Any], llm: Any,
                   stats_out: dict[str, Any]) -> Iterator[Any]:
        """One LLM result per item, in order: ``local.stream(items)`` in this process, or with engine: ray
        (a stage whose spec sets ``llm_actors``) from async Ray actors, each running ``worker(client)``'s
        ``agenerate_one`` with its share of ``llm.concurrency``; ``stats_out`` gets their summed client stats."""
        uses_actors = self.spec.hook("llm_actors")  # a function of the config, as _check_budget asks it
        if self.engine == "ray" and uses_actors is not None and uses_actors(self.config):
            from fincprg.pipeline import ray_engine

            return ray_engine.llm_stream(items, worker, llm, self.cache_dir, self.ray, stats_out)
        return local.stream(items)


def _batched(items: Iterable[T], n: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for it in items:
        batch.append(it)
        if len(batch) >= n:
            yield batch
            batch = []
    if batch:
        yield batch


def _kill_point(stage: str) -> int | None:
    spec = os.environ.get(KILL_ENV, "")
    if ":" in spec:
        name, n = spec.split(":", 1)
        if name == stage:
            return int(n)
    return None


