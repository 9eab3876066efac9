"""Query-pair scorers ("rerankers") behind one Protocol.

Backends:
- ``flag``: FlagEmbedding ``FlagReranker`` (bge-reranker-v2-m3 in the paper), ``normalize=True``
  so scores are sigmoids in [0, 1] and the paper's 0.99 threshold means what it means there.
- ``cross-encoder``: sentence-transformers ``CrossEncoder`` with ``num_labels=1`` and an explicit
  sigmoid activation (same scale as the FlagReranker path).
- ``lexical``: the offline default (:mod:`fincprg.mine.lexical`), a character n-gram TF-IDF
  cosine blended with agreement of finance fields. Its threshold is documented there.

All scores are "how likely query b is the same information need as query a" in [0, 1].
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from fincprg.errors import BackendError, ConfigError, MissingDependencyError

if TYPE_CHECKING:
    from fincprg.config import RerankerConfig
    from fincprg.mine.facts import FactsCache

log = logging.getLogger(__name__)

BGE_THRESHOLD = 0.99  # paper §4.2 with bge-reranker-v2-m3 and normalize=True


@runtime_checkable
class Reranker(Protocol):
    """Scores (query_a, query_b) text pairs; higher = more likely equivalent."""

    name: str
    default_threshold: float

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Return one score in [0, 1] per pair, in order."""
        ...


@runtime_checkable
class BlockScorer(Protocol):
    """A reranker that can also score a whole block of texts at once (a len(a) x len(b) matrix)."""

    def prepare(self, texts: Sequence[str]) -> None:
        """Fit/encode the full text inventory once (e.g. IDF over every query of the build)."""
        ...

    def rows(self, texts: Sequence[str]) -> np.ndarray:
        """Inventory row ids of ``texts`` (texts not yet prepared are prepared first)."""
        ...

    def score_rows(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """Score matrix (len(ia) x len(ib)) for inventory rows."""
        ...

    def score_block(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Score matrix (len(a) x len(b)) for texts: ``score_rows(rows(a), rows(b))``."""
        ...


def cuda_available() -> bool:
    """Whether torch sees a CUDA device (False when torch is missing)."""
    try:
        import torch  # noqa: PLC0415

        return bool(torch.cuda.is_available())
    except ImportError:  # pragma: no cover - torch is a core dependency of the model backends
        return False


def resolve_device(device: str | None) -> str:
    """``device`` when set, else ``cuda`` when available, else ``cpu`` (shared with fincprg.evaluate)."""
    if device:
        return device
    return "cuda" if cuda_available() else "cpu"


class FlagRerankerBackend:
    """FlagEmbedding ``FlagReranker`` (cross-encoder, e.g. BAAI/bge-reranker-v2-m3)."""

    name = "flag"
    default_threshold = BGE_THRESHOLD

    def __init__(self, model: str, *, batch_size: int = 64, fp16: bool = True, device: str | None = None):
        try:
            from FlagEmbedding import FlagReranker  # noqa: PLC0415 - heavy (torch, transformers)
        except ImportError as e:
            raise MissingDependencyError("FlagEmbedding", "mine.reranker.backend=flag",
                                         alternative="mine.reranker.backend=lexical") from e
        self.device = resolve_device(device)
        on_gpu = self.device.startswith("cuda")
        self.batch_size = batch_size
        self.model_id = model
        try:
            # fp16 only on GPU: on CPU half precision is slow and lossy (GUIDE pitfalls).
            self._model = FlagReranker(model, use_fp16=bool(fp16 and on_gpu), devices=self.device,
                                       batch_size=batch_size)
        except OSError as e:
            raise BackendError(f"cannot load reranker {model!r}: {e}; pass a local folder in "
                               "mine.reranker.model or unset HF_HUB_OFFLINE to download") from e

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        out = self._model.compute_score([list(p) for p in pairs], normalize=True, batch_size=self.batch_size)
        if isinstance(out, (float, int)):  # a single pair comes back as a bare float
            out = [out]
        return [float(x) for x in out]


class CrossEncoderBackend:
    """sentence-transformers ``CrossEncoder`` with one logit and a sigmoid on top."""

    name = "cross-encoder"
    default_threshold = BGE_THRESHOLD

    def __init__(self, model: str, *, batch_size: int = 64, fp16: bool = True, device: str | None = None):
        try:
            import torch  # noqa: PLC0415
            from sentence_transformers import CrossEncoder  # noqa: PLC0415
        except ImportError as e:
            raise MissingDependencyError("sentence-transformers", "mine.reranker.backend=cross-encoder",
                                         alternative="mine.reranker.backend=lexical") from e
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self.model_id = model
        try:
            # An explicit Sigmoid makes the scale independent of the saved config's default activation.
            self._model = CrossEncoder(model, device=self.device, num_labels=1, activation_fn=torch.nn.Sigmoid())
        except OSError as e:
            raise BackendError(f"cannot load cross-encoder {model!r}: {e}; pass a local folder in "
                               "mine.reranker.model or unset HF_HUB_OFFLINE to download") from e
        if fp16 and self.device.startswith("cuda"):
            self._model.model.half()

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        out = self._model.predict([list(p) for p in pairs], batch_size=self.batch_size,
                                  show_progress_bar=False, convert_to_numpy=True)
        return [float(x) for x in np.asarray(out, dtype=np.float64).reshape(-1)]


def make_reranker(cfg: RerankerConfig, facts: FactsCache | None = None, workers: int = 1) -> Reranker:
    """Build the configured backend (``mine.reranker``)."""
    if cfg.backend == "lexical":
        from fincprg.mine.lexical import LexicalReranker  # noqa: PLC0415

        return LexicalReranker(facts=facts, workers=workers)
    if not cfg.model:
        raise ConfigError(f"mine.reranker.model: backend {cfg.backend!r} needs a model (local path or hub id, "
                          "e.g. BAAI/bge-reranker-v2-m3), or set mine.reranker.backend=lexical")
    cls = FlagRerankerBackend if cfg.backend == "flag" else CrossEncoderBackend
    return cls(cfg.model, batch_size=cfg.batch_size, fp16=cfg.fp16, device=cfg.device)


def threshold_for(cfg: RerankerConfig, reranker: Reranker) -> float:
    """``mine.reranker.threshold`` if set, else the backend's documented default."""
    return float(cfg.threshold) if cfg.threshold is not None else float(reranker.default_threshold)
