"""HDBSCAN inside each industry, size-ordered topic numbers, and outlier reduction by the nearest topic.

Clustering 48k titles in one HDBSCAN run costs ~40 s (a kd-tree in 16 PCA dims over the whole corpus)
and lets a topic mix industries. :class:`IndustryHDBSCAN` clusters each industry's titles on their own
(the topics stage already knows every title's industry: metadata, stock table, company or the
lexicon classifier), after a PCA fitted to that industry's vectors: ~30 runs of ~1.5k titles take a
few seconds, and topics stay inside one industry. Industries with fewer than ``2 × min_cluster_size``
titles cannot hold two clusters alone, and in some HDBSCAN finds no cluster at all: these are
clustered together in one pooled run (where the industry one-hot of the title vectors still keeps
industries apart).

:func:`reassign_outliers` gives HDBSCAN outliers the topic whose centroid is nearest (cosine, as
BERTopic's ``reduce_outliers(strategy="embeddings")``), by default only among the topics of the
title's own industry and above a minimum similarity; the caller marks the titles it moved.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

Progress = Callable[..., Iterable[Any]]


def _no_progress(it: Iterable[Any], **_: Any) -> Iterable[Any]:
    return it


def pca_eigh(X: np.ndarray, k: int) -> np.ndarray:
    """The top-``k`` principal components of ``X`` (exact, via the covariance's eigenvectors).

    Exact and deterministic (a sign flip of an axis does not change Euclidean distances); for a few
    thousand rows of ~100 dims this is much cheaper than sklearn's randomized solver, run per industry.
    """
    X = np.asarray(X, dtype=np.float64)
    centred = X - X.mean(axis=0)
    k = max(1, min(k, X.shape[0] - 1, X.shape[1]))
    _, vecs = np.linalg.eigh(centred.T @ centred)
    return (centred @ vecs[:, ::-1][:, :k]).astype(np.float32)


class IndustryHDBSCAN:
    """A clusterer (``fit(X)`` → ``labels_``, as BERTopic's ``hdbscan_model=``) that runs HDBSCAN per industry.

    Args:
        industries: one industry (or None) per row of the ``X`` given to :meth:`fit`.
        cfg: ``topics.cluster``: ``min_cluster_size``, ``min_samples``, ``cluster_selection_method``,
            ``pca_components`` (per-industry PCA; 0 = cluster the vectors as they are).
        progress: a tqdm-like wrapper for the loop over industries.
    """

    def __init__(self, industries: Sequence[str | None], cfg: Any, progress: Progress | None = None):
        self.industries, self.cfg = list(industries), cfg
        self.progress = progress or _no_progress
        self.labels_: np.ndarray | None = None

    def groups(self) -> tuple[list[np.ndarray], np.ndarray]:
        """Row indices per industry big enough for two clusters (sorted by industry name, unknown last),
        and the rows of the smaller industries, pooled."""
        by: dict[str | None, list[int]] = {}
        for i, ind in enumerate(self.industries):
            by.setdefault(ind, []).append(i)
        floor = 2 * self.cfg.min_cluster_size
        big, pooled = [], []
        for ind in sorted(by, key=lambda s: (s is None, s or "")):
            (big if len(by[ind]) >= floor else pooled).append(np.asarray(by[ind]))
        return big, np.sort(np.concatenate(pooled)) if pooled else np.zeros(0, dtype=np.int64)

    def _hdbscan(self, X: np.ndarray) -> np.ndarray:
        from hdbscan import HDBSCAN

        cfg = self.cfg
        if len(X) < max(4, 2 * cfg.min_cluster_size):
            return np.full(len(X), -1)
        if cfg.pca_components:
            X = pca_eigh(X, cfg.pca_components)
        X = np.asarray(X, dtype=np.float64)
        labels = None
        # HDBSCAN never returns its root as a cluster unless allowed: an industry whose titles form one
        # topic would be all outliers, so a run that finds no split is redone allowing a single cluster
        for single in (False, True):
            # one process: a worker pool per industry costs more than the few thousand rows it would split
            model = HDBSCAN(min_cluster_size=cfg.min_cluster_size, min_samples=cfg.min_samples,
                            metric="euclidean", cluster_selection_method=cfg.cluster_selection_method,
                            core_dist_n_jobs=1, prediction_data=False, allow_single_cluster=single)
            labels = np.asarray(model.fit(X).labels_)
            if labels.max() >= 0:
                break
        return labels

    def fit(self, X: np.ndarray, y: Any = None) -> IndustryHDBSCAN:
        if len(X) != len(self.industries):
            raise ValueError(f"IndustryHDBSCAN got {len(X)} rows for {len(self.industries)} industries")
        labels = np.full(len(X), -1, dtype=np.int64)
        big, pooled = self.groups()
        nxt = 0
        for idx in self.progress(big, total=len(big), desc="topics: cluster per industry"):
            sub = self._hdbscan(X[idx])
            if sub.max() < 0:  # no topic in this industry alone: its titles get a second chance in the pool
                pooled = np.sort(np.concatenate([pooled, idx]))
                continue
            found = sub >= 0
            labels[idx[found]] = sub[found] + nxt
            nxt += int(sub.max()) + 1
        if len(pooled):
            sub = self._hdbscan(X[pooled])
            labels[pooled[sub >= 0]] = sub[sub >= 0] + nxt
        self.labels_ = labels
        return self


def by_size(labels: Sequence[int]) -> list[int]:
    """Renumber topics 0, 1, ... by size, largest first (ties: first seen), as BERTopic does; -1 stays."""
    sizes: dict[int, int] = {}
    first: dict[int, int] = {}
    for i, t in enumerate(labels):
        if t != -1:
            sizes[t] = sizes.get(t, 0) + 1
            first.setdefault(t, i)
    order = sorted(sizes, key=lambda t: (-sizes[t], first[t]))
    new = {t: k for k, t in enumerate(order)}
    return [new.get(int(t), -1) for t in labels]


def reassign_outliers(labels: Sequence[int], emb: np.ndarray, industries: Sequence[str | None] | None,
                      scope: str = "industry", threshold: float = 0.0) -> tuple[list[int], list[bool]]:
    """Move outliers (``-1``) to the topic with the nearest centroid; returns new labels and who moved.

    ``scope="industry"``: only topics holding titles of the outlier's own industry (by the majority
    industry of the topic; an outlier whose industry has no topic stays an outlier); ``"all"``: any
    topic. An outlier moves only when its cosine to that centroid is at least ``threshold``.
    Centroids are those of the clustered titles (before any outlier joins).
    """
    labels = [int(t) for t in labels]
    topics = sorted(set(labels) - {-1})
    out = [i for i, t in enumerate(labels) if t == -1]
    moved = [False] * len(labels)
    if not topics or not out:
        return labels, moved
    X = np.asarray(emb, dtype=np.float32)
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    lab = np.asarray(labels)
    cent = np.stack([X[lab == k].mean(axis=0) for k in topics])
    cent /= np.maximum(np.linalg.norm(cent, axis=1, keepdims=True), 1e-12)
    sims = X[out] @ cent.T  # (outliers, topics)
    if scope == "industry" and industries is not None:
        code = {ind: j for j, ind in enumerate(sorted(set(industries), key=lambda s: (s is None, s or "")))}
        codes = np.array([code[ind] for ind in industries])
        # a topic's industry: its most common one (ties: the first in code order); with per-industry
        # clustering every topic holds one industry, except those of the pooled small industries
        major = np.array([np.bincount(codes[lab == k], minlength=len(code)).argmax() for k in topics])
        sims = np.where(codes[out][:, None] == major[None, :], sims, -np.inf)
    best = np.argmax(sims, axis=1)
    for row, i in enumerate(out):
        s = sims[row, best[row]]
        if np.isfinite(s) and s >= threshold:
            labels[i], moved[i] = topics[best[row]], True
    return labels, moved
