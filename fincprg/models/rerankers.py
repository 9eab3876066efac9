"""Neural pair scorers ("rerankers") behind one Protocol, shared by mining and eval reranking.

- ``flag``: FlagEmbedding ``FlagReranker`` (bge-reranker-v2-m3 in the paper), ``normalize=True``
  so scores are sigmoids in [0, 1] and the paper's 0.99 threshold means what it means there.
- ``cross-encoder``: sentence-transformers ``CrossEncoder`` with ``num_labels=1`` and an explicit
  sigmoid activation (same scale as the FlagReranker path).

All scores are "how likely text b is the same information need as (or answers) text a" in [0, 1].
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from fincprg.models.device import resolve_device
from fincprg.models.load import load_cross_encoder, load_flag_reranker

BGE_THRESHOLD = 0.99  # paper §4.2 with bge-reranker-v2-m3 and normalize=True


@runtime_checkable
class Reranker(Protocol):
    """Scores (text_a, text_b) pairs; higher = more likely equivalent."""

    name: str
    default_threshold: float

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Return one score in [0, 1] per pair, in order."""
        ...


class FlagRerankerBackend:
    """FlagEmbedding ``FlagReranker`` (cross-encoder, e.g. BAAI/bge-reranker-v2-m3)."""

    name = "flag"
    default_threshold = BGE_THRESHOLD

    def __init__(self, model: str, *, batch_size: int = 64, fp16: bool = True, device: str | None = None,
                 where: str = "mine.reranker.model", alternative: str | None = "mine.reranker.backend=lexical"):
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self.model_id = model
        self._model = load_flag_reranker(model, where=where, device=self.device, fp16=fp16,
                                         batch_size=batch_size, alternative=alternative)

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

    def __init__(self, model: str, *, batch_size: int = 64, fp16: bool = True, device: str | None = None,
                 where: str = "mine.reranker.model", alternative: str | None = "mine.reranker.backend=lexical"):
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self.model_id = model
        self._model = load_cross_encoder(model, where=where, device=self.device, fp16=fp16, alternative=alternative)

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        out = self._model.predict([list(p) for p in pairs], batch_size=self.batch_size,
                                  show_progress_bar=False, convert_to_numpy=True)
        return [float(x) for x in np.asarray(out, dtype=np.float64).reshape(-1)]
