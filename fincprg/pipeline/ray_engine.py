"""engine: ray - the map stages' pure batch functions run by Ray, with the same bytes as the local engine.

- CPU map stages (chunk, template generation, mine): a Ray Data pipeline over the stage's batches.
  A stage that reads a JSONL file is *partitioned input*: each row of the Ray dataset is one batch's
  byte range of that file, read by the actor, so the driver never holds the corpus text. Other
  stages ship their batches pickled. Actors (``ray.actors``, or one per CPU) run ``fn`` with
  ``preserve_order``, and return each batch's JSONL lines, serialised exactly as the local writer
  does; the driver appends and commits them per batch as the local engine does, so checkpoints,
  resume and kill points are the same.
- LLM streams (query generation): async actors (``ray.llm_actors``), ``llm.concurrency`` split across them, one
  shared rate-limit actor (``llm.requests_per_minute`` / ``tokens_per_minute``), the same SQLite
  answer cache (a path every actor can open: one machine, or a shared file system on a cluster).

A ``fn`` may carry a ``setup()`` method (see :class:`fincprg.contract.Prepared`): actors call it once before
their first batch, for process state the driver set up for itself (e.g. company names registered with jieba).

It names no stage: what runs in an actor is the stage's own function (a batch ``fn``, or the LLM ``worker``
factory it passes to ``ctx.llm_stream``), and a stage's GPU need comes from its spec.
"""
from __future__ import annotations

import collections
import logging
import pickle
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from fincprg.config import RayConfig
from fincprg.errors import ConfigError
from fincprg.io import batch_lines

log = logging.getLogger(__name__)

BatchLines = dict[str, list[str]]  # output file -> its JSONL lines for one batch (without newlines)


def connect(cfg: RayConfig) -> Any:
    """Start or join Ray once per process (``ray.address``); returns the ``ray`` module."""
    try:
        import ray
    except ImportError:
        raise ConfigError("engine: ray needs Ray: pip install 'fincprg[ray]' (or set engine: local)") from None
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "ignore_reinit_error": True,
                                  "configure_logging": False}
        if cfg.address:
            check_address(cfg.address)
            kwargs["address"] = cfg.address
        elif cfg.num_cpus:
            kwargs["num_cpus"] = cfg.num_cpus
        if not log.isEnabledFor(logging.DEBUG):  # Ray Data logs every dataset execution at INFO
            for name in ("ray", "ray.data"):
                logging.getLogger(name).setLevel(logging.WARNING)
        try:
            ray.init(**kwargs)
        except ConnectionError as e:
            raise ConfigError(f"could not connect to the Ray cluster at ray.address={cfg.address!r}: {e}") from None
        log.info("ray: %s", {k: v for k, v in ray.cluster_resources().items() if k in ("CPU", "GPU", "memory")})
    return ray


def check_address(address: str) -> None:
    """Fail in seconds, not minutes, on a cluster address nobody answers (Ray retries for minutes)."""
    import socket

    if address == "auto":
        return  # Ray finds the local cluster itself, or says there is none
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"ray.address={address!r}: expected 'auto', 'HOST:PORT' or 'ray://HOST:PORT'")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise ConfigError(f"ray.address={address!r}: nothing answers there ({e}); start the cluster with "
                          "`ray start --head`, or leave ray.address unset to start a local Ray") from None


def actor_gpus(cfg: RayConfig, wanted: float | None) -> float:
    """GPUs per actor: what the stage's spec asked for (``spec.gpus``), or for None one per actor when the
    cluster has GPUs."""
    if wanted is not None:
        return wanted
    return 1.0 if connect(cfg).cluster_resources().get("GPU", 0) >= 1 else 0.0


def _n_actors(ray: Any, cfg: RayConfig, gpus: float) -> int:
    if cfg.actors:
        return cfg.actors
    res = ray.cluster_resources()
    if gpus:
        return max(1, int(res.get("GPU", 0) // gpus))
    return max(1, int(res.get("CPU", 1)))


class _BatchActor:
    """One Ray Data actor: unpickles the stage function once, then maps batch descriptors to JSONL lines."""

    def __init__(self, fn_blob: bytes, source: tuple[str, str] | None) -> None:
        self.fn = pickle.loads(fn_blob)  # written by ray.cloudpickle: pickle imports what it refers to
        if hasattr(self.fn, "setup"):
            self.fn.setup()
        self.source = source
        if source is not None:
            import importlib

            mod, name = source[1].rsplit(":", 1)
            self.model = getattr(importlib.import_module(mod), name)

    def _batch(self, row_payload: Any) -> list[Any]:
        if self.source is None:
            return pickle.loads(row_payload)
        start, end = (int(x) for x in row_payload.split(b":"))
        with open(self.source[0], "rb") as f:
            f.seek(start)
            data = f.read(end - start)
        return [self.model.model_validate_json(line) for line in data.splitlines() if line.strip()]

    def __call__(self, rows: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        outs = [pickle.dumps(batch_lines(self.fn(self._batch(p)))) for p in rows["payload"]]
        return {"index": rows["index"], "out": np.array(outs, dtype=object)}


def line_ranges(path: Path, batch_size: int, skip: int) -> list[bytes]:
    """Byte ranges ``b"start:end"`` of each batch of ``batch_size`` non-empty lines, after ``skip`` batches."""
    out: list[bytes] = []
    start = pos = n = 0
    with open(path, "rb") as f:
        for line in f:
            pos += len(line)
            if line.strip():
                n += 1
                if n == batch_size:
                    out.append(f"{start}:{pos}".encode())
                    start, n = pos, 0
    if n:
        out.append(f"{start}:{pos}".encode())
    return out[skip:]


def map_batches(fn: Callable[[list[Any]], dict[str, Iterable[Any]]], payloads: list[bytes], cfg: RayConfig, *,
                source: tuple[str, str] | None = None, gpus: float = 0.0) -> Iterator[BatchLines]:
    """Each batch's JSONL lines, in batch order, computed by a pool of Ray Data actors.

    ``payloads``: one per batch, a pickled list of items, or with ``source=(jsonl_path, "module:Model")`` a
    ``b"start:end"`` byte range of that file (see :func:`line_ranges`).
    """
    ray = connect(cfg)
    import numpy as np
    import ray.cloudpickle as cloudpickle

    if not payloads:
        return
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True  # batches come back in input order: deterministic files
    ctx.enable_progress_bars = False
    n = min(_n_actors(ray, cfg, gpus), len(payloads))
    ds = ray.data.from_items([{"index": i, "payload": p} for i, p in enumerate(payloads)],
                             override_num_blocks=len(payloads))
    kwargs: dict[str, Any] = {"num_gpus": gpus} if gpus else {"num_cpus": 1}
    mapped = ds.map_batches(_BatchActor, batch_size=1, concurrency=n, batch_format="numpy",
                            fn_constructor_args=(cloudpickle.dumps(fn), source), **kwargs)
    want = 0
    for row in mapped.iter_rows():
        if int(row["index"]) != want:  # preserve_order is what makes the files deterministic: never trust silently
            raise RuntimeError(f"ray returned batch {row['index']} where batch {want} was due")
        want += 1
        yield pickle.loads(row["out"])


def payloads(batches: Iterable[list[Any]]) -> list[bytes]:
    return [pickle.dumps(b) for b in batches]


# -- LLM generation ---------------------------------------------------------------------------------

class _LLMActor:
    """Async actor: one LLM client (its share of llm.concurrency) and the stage's worker for a whole stage."""

    def __init__(self, blob: bytes, limiter: Any) -> None:
        from fincprg.llm import LLMClient
        from fincprg.llm.ratelimit import RemoteLimiter

        worker, llm_cfg, cache_dir = pickle.loads(blob)  # ray.cloudpickle: imports the worker's module
        client = LLMClient(llm_cfg, cache_dir, limiter=RemoteLimiter(limiter) if limiter is not None else None)
        self.generator = worker(client)

    async def generate(self, item: Any) -> Any:
        return await self.generator.agenerate_one(item)

    def stats(self) -> dict[str, Any]:
        return self.generator.client.stats

    async def close(self) -> None:
        await self.generator.client.aclose()


def llm_stream(items: Iterable[Any], worker: Callable[[Any], Any], llm_cfg: Any, cache_dir: Path, cfg: RayConfig,
               stats_out: dict[str, Any]) -> Iterator[Any]:
    """One result per item, in order, from ``ray.llm_actors`` async actors, each running ``worker(client)``
    (an object with ``async agenerate_one(item)`` and ``client``); ``stats_out`` gets the actors' summed client
    stats when the stream ends."""
    ray = connect(cfg)
    import ray.cloudpickle as cloudpickle

    from fincprg.llm.ratelimit import RateLimiter

    n = cfg.llm_actors
    per = max(1, -(-llm_cfg.concurrency // n))  # ceil: the cluster keeps llm.concurrency requests in flight
    limiter = None
    if llm_cfg.requests_per_minute or llm_cfg.tokens_per_minute:
        limiter = ray.remote(num_cpus=0)(RateLimiter).remote(llm_cfg.requests_per_minute, llm_cfg.tokens_per_minute)
    blob = cloudpickle.dumps((worker, llm_cfg.model_copy(update={"concurrency": per}), str(cache_dir)))
    actor_cls = ray.remote(num_cpus=0, max_concurrency=per + 1)(_LLMActor)
    actors = [actor_cls.remote(blob, limiter) for _ in range(n)]
    window = max(4 * llm_cfg.concurrency, 64)
    ahead: collections.deque[Any] = collections.deque()
    try:
        for i, item in enumerate(items):
            ahead.append(actors[i % n].generate.remote(item))
            if len(ahead) >= window:
                yield ray.get(ahead.popleft())
        while ahead:
            yield ray.get(ahead.popleft())
    finally:
        for ref in ahead:
            ray.cancel(ref)
        for ref in ahead:  # collect each outcome: Ray prints an unretrieved error's traceback (a refused key: all)
            try:
                ray.get(ref, timeout=30)
            except Exception:  # noqa: BLE001 - cancelled, or the error the consumer already raised
                pass
        stats = ray.get([a.stats.remote() for a in actors])
        ray.get([a.close.remote() for a in actors])
        for a in actors:
            ray.kill(a)
        if limiter is not None:
            ray.kill(limiter)
        for s in stats:
            for k, v in s.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    stats_out[k] = round(stats_out.get(k, 0) + v, 6)
                else:
                    stats_out[k] = v
