"""Loaders for every kind of model fincprg uses, with one cache and one error type.

A model is a local folder or a hub id. Loaded models are kept per process, keyed by kind, id,
device and precision, so two retrievers (or a stage and its prefilter) share one copy.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from fincprg.errors import BackendError, MissingDependencyError
from fincprg.models.device import resolve_device, use_half

log = logging.getLogger(__name__)
T = TypeVar("T")

_CACHE: dict[tuple[Any, ...], Any] = {}


class ModelLoadError(BackendError):
    """A model could not be loaded; the message names the config key (or option) to change."""


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def load_error(model: str, where: str, e: BaseException, alternative: str | None = None) -> ModelLoadError:
    """The one message for a failed load: what, why, and how to fix it."""
    if Path(model).is_file():
        hint = (f"{model} is a file, not a model folder: pass the folder that holds it ({Path(model).parent}) "
                "with its config.json and tokenizer files")
    elif Path(model).exists():
        hint = f"{model} is a folder but not a loadable model (it needs config.json, weights and tokenizer files)"
    elif _offline():
        hint = (f"{model!r} is not a local folder and HF_HUB_OFFLINE=1 allows only models already in the "
                "HF cache; pass a local folder")
    else:
        hint = f"{model!r} is neither a local folder nor a reachable hub id; pass a local folder or check the id"
    alt = f", or use {alternative}" if alternative else ""
    return ModelLoadError(f"cannot load model for {where}: {hint} ({type(e).__name__}: {e}). "
                          f"Set {where} to a model folder{alt}.")


@contextmanager
def _guard(model: str, where: str, package: str, alternative: str | None) -> Iterator[None]:
    try:
        yield
    except ImportError as e:
        raise MissingDependencyError(package, where, alternative=alternative) from e
    except (MissingDependencyError, ModelLoadError):
        raise
    except Exception as e:  # noqa: BLE001 - hub and IO errors come in many types
        raise load_error(model, where, e, alternative) from e


def _cached(key: tuple[Any, ...], build: Callable[[], T]) -> T:
    if key not in _CACHE:
        _CACHE[key] = build()
        log.info("loaded %s %s on %s%s", key[0], key[1], key[2], " (fp16)" if key[3] else "")
    return _CACHE[key]


def load_sentence_transformer(model: str, *, where: str, device: str | None = None, fp16: bool = False,
                              alternative: str | None = None, shared: bool = True) -> Any:
    """A ``SentenceTransformer`` (``where`` names the config key or option, e.g. ``topics.embedder.model``).

    ``shared=False`` returns a new instance, outside the per-process cache: training changes the
    weights in place, and the cached copy must stay the model that the id names (e.g. for the
    "before" row of ``fincprg train``'s table).
    """
    dev = resolve_device(device)
    half = use_half(dev, fp16)

    def build() -> Any:
        with _guard(model, where, "sentence-transformers", alternative):
            from sentence_transformers import SentenceTransformer  # noqa: PLC0415

            m = SentenceTransformer(model, device=dev)
            return m.half() if half else m

    if not shared:
        return build()
    return _cached(("sentence-transformers", model, dev, half), build)


def load_cross_encoder(model: str, *, where: str, device: str | None = None, fp16: bool = False,
                       alternative: str | None = None) -> Any:
    """A sentence-transformers ``CrossEncoder`` with one logit and an explicit sigmoid.

    The explicit Sigmoid makes the score scale independent of the saved config's default activation,
    equal to ``FlagReranker(normalize=True)``.
    """
    dev = resolve_device(device)
    half = use_half(dev, fp16)

    def build() -> Any:
        with _guard(model, where, "sentence-transformers", alternative):
            import torch  # noqa: PLC0415
            from sentence_transformers import CrossEncoder  # noqa: PLC0415

            m = CrossEncoder(model, device=dev, num_labels=1, activation_fn=torch.nn.Sigmoid())
            if half:
                m.model.half()
            return m

    return _cached(("cross-encoder", model, dev, half), build)


def load_flag_reranker(model: str, *, where: str, device: str | None = None, fp16: bool = True,
                       batch_size: int = 64, alternative: str | None = None) -> Any:
    """FlagEmbedding ``FlagReranker`` (e.g. bge-reranker-v2-m3)."""
    dev = resolve_device(device)
    half = use_half(dev, fp16)

    def build() -> Any:
        with _guard(model, where, "FlagEmbedding", alternative):
            from FlagEmbedding import FlagReranker  # noqa: PLC0415

            return FlagReranker(model, use_fp16=half, devices=dev, batch_size=batch_size)

    return _cached(("flag-reranker", model, dev, half, batch_size), build)


def folder_pooling(model: str) -> str:
    """``mean`` or ``cls`` from a local sentence-transformers folder's pooling config; ``cls`` otherwise (BGE)."""
    for cfg in sorted(Path(model).glob("*_Pooling/config.json")) if Path(model).is_dir() else []:
        try:
            c = json.loads(cfg.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if c.get("pooling_mode") == "mean" or c.get("pooling_mode_mean_tokens"):  # sentence-transformers 5 / 2-4
            return "mean"
    return "cls"


def load_flag_embedder(model: str, *, where: str, device: str | None = None, fp16: bool = True,
                       alternative: str | None = None) -> Any:
    """FlagEmbedding ``FlagModel`` (a BGE-style bi-encoder); a local sentence-transformers folder's pooling
    mode (e5: mean) is passed on, since FlagModel would otherwise pool the CLS token."""
    dev = resolve_device(device)
    half = use_half(dev, fp16)

    def build() -> Any:
        with _guard(model, where, "FlagEmbedding", alternative):
            from FlagEmbedding import FlagModel  # noqa: PLC0415

            return FlagModel(model, use_fp16=half, devices=dev, pooling_method=folder_pooling(model))

    return _cached(("flag-embedder", model, dev, half), build)


def load_sequence_classifier(model: str, *, where: str, device: str | None = None,
                             alternative: str | None = None) -> tuple[Any, Any, str]:
    """``(tokenizer, model, device)`` of a transformers sequence classifier, in eval mode on ``device``."""
    dev = resolve_device(device)

    def build() -> tuple[Any, Any, str]:
        with _guard(model, where, "transformers", alternative):
            from transformers import AutoModelForSequenceClassification, AutoTokenizer  # noqa: PLC0415

            tok = AutoTokenizer.from_pretrained(model)
            m = AutoModelForSequenceClassification.from_pretrained(model)
            m.to(dev).eval()
            return tok, m, dev

    return _cached(("sequence-classifier", model, dev, False), build)


def clear_cache() -> None:
    """Forget loaded models and their memoised encodings (tests that rewrite a model folder in place)."""
    from fincprg.models.memo import MEMO  # noqa: PLC0415 - numpy only when clearing

    _CACHE.clear()
    MEMO.clear()
