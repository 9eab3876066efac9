"""What a stage is to an engine (:class:`StageSpec`) and what an engine gives a stage (:class:`StageContext`).

Ground floor: imports only :mod:`fincprg.config`, :mod:`fincprg.layout` and :mod:`fincprg.io`. The stages
program against the :class:`StageContext` protocol; the engines (:mod:`fincprg.pipeline`) implement it and
reach a stage only through its spec, so neither side names the other. Everything a stage needs from an
engine is a field of its spec, not a branch in the runner:

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

``gpus``, ``llm_actors``, ``precheck``, ``config_check``, ``source_hash`` and ``estimate`` are ``"module:function"`` strings, imported only
when the engine needs them, like ``entry``.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from fincprg import layout as L
from fincprg.config import PipelineConfig

T = TypeVar("T")


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
            f"(declared: {', '.join(self._keys)}). Add it to config_keys in fincprg/pipeline/contract.py so "
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


__all__ = ["ConfigView", "Prepared", "StageContext", "StageSpec", "UndeclaredConfigError",
           "declared_config", "load_ref", "resolve"]
