"""Neural pair scorers ("rerankers") behind one Protocol, shared by mining and eval reranking.

- ``flag``: FlagEmbedding ``FlagReranker`` (bge-reranker-v2-m3 in the paper), ``normalize=True``
  so scores are sigmoids in [0, 1] and the paper's 0.99 threshold means what it means there.
- ``cross-encoder``: sentence-transformers ``CrossEncoder`` with ``num_labels=1`` and an explicit
  sigmoid activation (same scale as the FlagReranker path).

Both are registered in :data:`fincprg.registry.PAIR_SCORERS` (the offline ``lexical`` one in
:mod:`fincprg.mine.lexical`); mining, export's negatives guard and eval's ``rerank`` specs build them from there.

All scores are "how likely text b is the same information need as (or answers) text a" in [0, 1].
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from fincprg.config_sections import RerankerConfig
from fincprg.models.device import resolve_device
from fincprg.models.load import load_cross_encoder, load_flag_reranker
from fincprg.registry import PAIR_SCORERS

BGE_THRESHOLD = 0.99  # paper §4.2 with bge-reranker-v2-m3 and normalize=True


@runtime_checkable
class Reranker(Protocol):
    """Scores (text_a, text_b) pairs; higher = more likely equivalent."""

    name: str
    default_threshold: float

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Return one score in [0, 1] per pair, in order."""
        ...


class _ModelReranker:
    """A neural cross-encoder loaded through :mod:`fincprg.models.load` (eagerly, so a bad model id fails at
    stage start, naming its config key).

    Pickling drops the model and keeps the configured device: a Ray actor that unpickles the scorer
    loads the model again, on its own device (a GPU actor gets the GPU the driver may not have).
    """

    name = "model"
    default_threshold = BGE_THRESHOLD

    def __init__(self, model: str, *, batch_size: int = 64, fp16: bool = True, device: str | None = None,
                 where: str = "mine.reranker.model", alternative: str | None = "mine.reranker.backend=lexical"):
        self.configured_device, self.fp16, self.where, self.alternative = device, fp16, where, alternative
        self.batch_size = batch_size
        self.model_id = model
        self.device = resolve_device(device)
        self._model = self._load()

    def _load(self) -> Any:
        raise NotImplementedError

    def _predict(self, pairs: list[list[str]]) -> Any:
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_model"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.device = resolve_device(self.configured_device)
        self._model = None

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        if self._model is None:
            self._model = self._load()
        out = self._predict([list(p) for p in pairs])
        if isinstance(out, (float, int)):  # FlagReranker returns a single pair's score as a bare float
            out = [out]
        return [float(x) for x in np.asarray(out, dtype=np.float64).reshape(-1)]


class FlagRerankerBackend(_ModelReranker):
    """FlagEmbedding ``FlagReranker`` (cross-encoder, e.g. BAAI/bge-reranker-v2-m3)."""

    name = "flag"

    def _load(self) -> Any:
        return load_flag_reranker(self.model_id, where=self.where, device=self.device, fp16=self.fp16,
                                  batch_size=self.batch_size, alternative=self.alternative)

    def _predict(self, pairs: list[list[str]]) -> Any:
        return self._model.compute_score(pairs, normalize=True, batch_size=self.batch_size)


class CrossEncoderBackend(_ModelReranker):
    """sentence-transformers ``CrossEncoder`` with one logit and a sigmoid on top."""

    name = "cross-encoder"

    def _load(self) -> Any:
        return load_cross_encoder(self.model_id, where=self.where, device=self.device, fp16=self.fp16,
                                  alternative=self.alternative)

    def _predict(self, pairs: list[list[str]]) -> Any:
        return self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True)


def _factory(cls: type[_ModelReranker]) -> Any:
    def build(model: str, *, batch_size: int = 64, fp16: bool = True, device: str | None = None,
              where: str = "mine.reranker.model", alternative: str | None = "mine.reranker.backend=lexical",
              **_: Any) -> _ModelReranker:
        return cls(model, batch_size=batch_size, fp16=fp16, device=device, where=where, alternative=alternative)

    return build


PAIR_SCORERS.register("flag", _factory(FlagRerankerBackend), config=RerankerConfig, threshold=BGE_THRESHOLD,
                      gpu=True, needs_model=True,
                      description="FlagEmbedding FlagReranker cross-encoder (e.g. BAAI/bge-reranker-v2-m3), "
                                  "normalize=True sigmoid scores")
PAIR_SCORERS.register("cross-encoder", _factory(CrossEncoderBackend), config=RerankerConfig, threshold=BGE_THRESHOLD,
                      gpu=True, needs_model=True,
                      description="sentence-transformers CrossEncoder, one logit with a sigmoid (same scale as flag)")
