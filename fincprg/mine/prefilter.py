"""Optional bi-encoder prefilter: only the top-k embedding neighbours inside a space are reranked.

A pair (a, b) survives when b is among a's ``top_k`` nearest neighbours or a among b's (so the
kept set is symmetric and the ``one``/``both`` direction policies see the same pairs). Same-
passage pairs and self-pairs are never neighbours. Embeddings: ``lsa`` (character 1-2-gram
TF-IDF + TruncatedSVD, offline) or ``sentence-transformers`` (a local path or hub id, on
``mine.prefilter.device``).

The mine stage reports the pairs this saves (``prefilter`` in its counts: cost-model pairs of
the full traversal, pairs scored, pairs saved). How many mined positives survive compared with
the full traversal needs both runs; ``eval/bench_mining.py`` measures it at paper scale.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from fincprg.config import EmbedderConfig
from fincprg.mine.spaces import Space


class TextEmbedder:
    """Embeds the whole query-text inventory once; rows looked up by text."""

    def __init__(self, cfg: EmbedderConfig, seed: int = 42, device: str | None = None):
        self.cfg = cfg
        self.seed = seed
        self.device = device  # sentence-transformers only; None lets it pick (cuda when available)
        self._index: dict[str, int] = {}
        self._emb: np.ndarray | None = None

    def prepare(self, texts: Sequence[str]) -> None:
        uniq = list(dict.fromkeys(texts))
        self._index = {t: i for i, t in enumerate(uniq)}
        from fincprg.models.embedders import make_embedder  # noqa: PLC0415 - sklearn or the model only when enabled

        # both sides of a mined pair are queries, so a bi-encoder gives each its query prompt (e5: "query: ")
        emb = make_embedder(self.cfg, texts="queries", seed=self.seed, device=self.device,
                            where="mine.prefilter.embedder").embed(uniq)
        emb = np.asarray(emb, dtype=np.float32)
        norms = np.linalg.norm(emb, axis=1, keepdims=True)
        self._emb = emb / np.maximum(norms, 1e-12)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        assert self._emb is not None, "call prepare() with the text inventory first"
        return self._emb[[self._index[t] for t in texts]]


def _topk(sim: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the k largest entries per row (ties broken by index, deterministic)."""
    k = min(k, sim.shape[1])
    order = np.argsort(-sim, axis=1, kind="stable")
    return order[:, :k]


def neighbour_mask(space: Space, left: np.ndarray, right: np.ndarray | None, k: int,
                   block: int = 1024) -> sp.csr_matrix:
    """Allowed pairs as a sparse boolean (n_left x n_cols) matrix, symmetric in membership."""
    cols = left if right is None else right
    n, m = len(left), len(cols)
    rows_i, cols_j = [], []
    g = np.unique(np.asarray(space.groups, dtype=object), return_inverse=True)[1] if space.groups else None
    for r0 in range(0, n, block):
        sim = left[r0:r0 + block] @ cols.T
        if right is None:
            idx = np.arange(r0, min(n, r0 + block))
            sim[np.arange(len(idx)), idx] = -np.inf
            if g is not None:
                sim[g[idx][:, None] == g[None, :]] = -np.inf
        top = _topk(sim, k)
        valid = np.take_along_axis(sim, top, axis=1) > -np.inf
        rr = np.repeat(np.arange(r0, r0 + len(top)), top.shape[1])
        rows_i.append(rr[valid.reshape(-1)])
        cols_j.append(top.reshape(-1)[valid.reshape(-1)])
    a = sp.csr_matrix((np.ones(sum(len(x) for x in rows_i), dtype=bool),
                       (np.concatenate(rows_i) if rows_i else [], np.concatenate(cols_j) if cols_j else [])),
                      shape=(n, m))
    if right is None:
        return (a + a.T).tocsr().astype(bool)
    # bipartite: also keep the left items that are among a right item's top-k
    rev_i, rev_j = [], []
    for c0 in range(0, m, block):
        sim = cols[c0:c0 + block] @ left.T
        top = _topk(sim, k)
        rev_j.append(np.repeat(np.arange(c0, c0 + len(top)), top.shape[1]))
        rev_i.append(top.reshape(-1))
    b = sp.csr_matrix((np.ones(sum(len(x) for x in rev_i), dtype=bool),
                       (np.concatenate(rev_i), np.concatenate(rev_j))), shape=(n, m))
    return (a + b).tocsr().astype(bool)
