"""Query-pair scorers for mining, one per traversal space.

Backends (``mine.reranker.backend``): the entries of :data:`fincprg.registry.PAIR_SCORERS`, built-in or
registered by a user (``fincprg.register_pair_scorer``):
- ``flag`` and ``cross-encoder``: the neural scorers of :mod:`fincprg.models.rerankers`.
- ``lexical``: the offline default (:mod:`fincprg.mine.lexical`), a character n-gram TF-IDF
  cosine blended with agreement of finance fields. Its threshold is documented there. In the
  topic space it hands over to IDF-weighted coverage (:mod:`fincprg.mine.coverage`).

All scores are "how likely query b is the same information need as query a" in [0, 1].
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from fincprg.errors import ConfigError
from fincprg.models.rerankers import (  # noqa: F401 - re-exported for mining
    BGE_THRESHOLD,
    CrossEncoderBackend,
    FlagRerankerBackend,
    Reranker,
)
from fincprg.registry import PAIR_SCORERS

if TYPE_CHECKING:
    from fincprg.config import RerankerConfig
    from fincprg.mine.facts import FactsCache

log = logging.getLogger(__name__)

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


def make_reranker(cfg: RerankerConfig, facts: FactsCache | None = None, workers: int = 1) -> Reranker:
    """Build the configured backend (``mine.reranker``), a :data:`~fincprg.registry.PAIR_SCORERS` entry."""
    entry = PAIR_SCORERS.get(cfg.backend)
    if entry.needs_model and not cfg.model:
        raise ConfigError(f"mine.reranker.model: backend {cfg.backend!r} needs a model (local path or hub id, "
                          "e.g. BAAI/bge-reranker-v2-m3), or set mine.reranker.backend=lexical")
    return entry.factory(model=cfg.model, batch_size=cfg.batch_size, fp16=cfg.fp16, device=cfg.device,
                         where="mine.reranker.model", alternative="mine.reranker.backend=lexical",
                         facts=facts, workers=workers)


def threshold_for(cfg: RerankerConfig, reranker: Reranker) -> float:
    """``mine.reranker.threshold`` if set, else the registered backend's default (else the scorer's own)."""
    if cfg.threshold is not None:
        return float(cfg.threshold)
    default = PAIR_SCORERS.get(cfg.backend).threshold
    return float(default if default is not None else reranker.default_threshold)


def scorers_by_space(cfg: RerankerConfig, spaces: Sequence[str], facts: FactsCache | None = None,
                     workers: int = 1) -> dict[str, Reranker]:
    """The scorer of each traversal space (one model instance shared where they agree).

    A scorer judges every space unless it hands one over (``for_space``): the offline lexical scorer
    hands the topic space to coverage (see :meth:`fincprg.mine.lexical.LexicalReranker.for_space`).
    """
    base = make_reranker(cfg, facts, workers)
    for_space = getattr(base, "for_space", None)
    return {kind: for_space(kind) if for_space is not None else base for kind in spaces}
