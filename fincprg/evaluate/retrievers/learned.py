"""Feature rerankers of the multi-stage FiQA study: a learned linear model and two fixed rubrics.

All three rerank the hybrid top 200 of :class:`~fincprg.evaluate.retrievers.features.FeatureScorer`:

* ``linear``: scikit-learn ``LogisticRegression`` (balanced classes) over the standardised features,
  trained on the dataset's ``train`` qrels (relevant candidates against the other candidates of the
  same pool). A folder with no train qrels is cross-fitted instead: the evaluated queries are cut into
  5 folds by a hash of their id and each fold is scored by a model fitted on the other four, so no query
  is ranked by a model that saw its own labels.
* ``rubric-point``: the fixed weighted sum :data:`RUBRIC` of the features as they are (each is already
  in [0, 1] without looking at other candidates; ``dense`` is a cosine).
* ``rubric-list``: the same weights after min-max normalising every feature over the query's candidate
  list (query-level normalisation), so each feature weighs by how it separates this query's candidates.

The weights were set once by hand from what each feature means (lexical match first, then semantic
match, then finance terms and phrases); they are not tuned on any dataset.
"""
from __future__ import annotations

import hashlib
import logging

import numpy as np

from fincprg.errors import FincprgError
from fincprg.evaluate.retrievers.base import Results, TrainingData
from fincprg.evaluate.retrievers.features import FEATURES, FeatureScorer

log = logging.getLogger(__name__)

RUBRIC = {"bm25": 0.30, "dense": 0.15, "idf": 0.15, "coverage": 0.10, "fin": 0.10, "phrase": 0.10,
          "jaccard": 0.05, "rr_bm25": 0.025, "rr_dense": 0.025}
FOLDS = 5


def _emit(cands: list[str], scores: np.ndarray, k: int) -> dict[str, float]:
    order = sorted(range(len(cands)), key=lambda i: (-scores[i], i))[:k]  # ties keep the hybrid order
    return {cands[i]: float(scores[i]) for i in order}


def _listwise(x: np.ndarray) -> np.ndarray:
    lo, hi = x.min(axis=0), x.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.where(hi > lo, (x - lo) / span, 1.0)  # a feature equal on every candidate says nothing: all 1


class _FeatureReranker:
    """Plumbing: the feature scorer, the candidate pool (``last_pool``, for pool recall) and ``stats``."""

    def __init__(self, features: FeatureScorer, name: str):
        self.features, self.name = features, name
        self.pool = features.depth
        self.last_pool: Results = {}
        self.stats: dict[str, float] = {}

    def fit(self, corpus: dict[str, dict]) -> None:
        self.features.fit(corpus)

    def _pools(self, queries: dict[str, str]) -> dict[str, tuple[list[str], np.ndarray]]:
        pools = self.features.candidates(queries)
        self.last_pool = {q: {d: float(len(c) - i) for i, d in enumerate(c)} for q, (c, _) in pools.items()}
        return pools


class RubricReranker(_FeatureReranker):
    """``rubric-point`` (``listwise=False``) or ``rubric-list``: the fixed formula :data:`RUBRIC`."""

    def __init__(self, features: FeatureScorer, listwise: bool, weights: dict[str, float] | None = None,
                 name: str | None = None):
        super().__init__(features, name or ("rubric-list" if listwise else "rubric-point"))
        self.listwise = listwise
        w = weights or RUBRIC
        self.w = np.array([w.get(f, 0.0) for f in FEATURES])

    def search(self, queries: dict[str, str], k: int) -> Results:
        out: Results = {}
        for q, (cands, x) in self._pools(queries).items():
            if not cands:
                out[q] = {}
                continue
            out[q] = _emit(cands, (_listwise(x) if self.listwise else x) @ self.w, k)
        return out


def _fold(qid: str) -> int:
    return int(hashlib.sha1(qid.encode("utf-8")).hexdigest(), 16) % FOLDS


class LinearReranker(_FeatureReranker):
    """``linear``: logistic regression over :data:`~fincprg.evaluate.retrievers.features.FEATURES`."""

    def __init__(self, features: FeatureScorer, c: float = 1.0, name: str = "linear"):
        super().__init__(features, name)
        self.c = c
        self.training: TrainingData | None = None
        self.coef: dict[str, float] = {}

    def set_training(self, data: TrainingData) -> None:
        self.training = data

    def _train_qrels(self) -> dict[str, dict[str, int]]:
        """The folder's train qrels (every subset merged), or {} when it has none."""
        from fincprg.evaluate.data import available_subsets, merge_qrels, read_qrels

        t = self.training
        if t is None or t.folder is None or t.split == "train":
            return {}
        try:
            files = available_subsets(t.folder, "train")
        except FincprgError:
            return {}
        out = merge_qrels(read_qrels(f) for f in files.values())
        return {q: docs for q, docs in out.items() if q in t.queries}

    def _fit_model(self, pools: dict[str, tuple[list[str], np.ndarray]], qrels: dict[str, dict[str, int]]):
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        xs, ys = [], []
        for q, (cands, x) in pools.items():
            y = np.array([qrels.get(q, {}).get(d, 0) > 0 for d in cands], dtype=int)
            if y.any():  # a query whose relevant documents all missed the pool teaches nothing about ranking them
                xs.append(x)
                ys.append(y)
        if not ys or len(set(np.concatenate(ys))) < 2:
            raise FincprgError(f"{self.name}: none of the {len(pools)} training queries has a relevant document "
                               "in its candidate pool and another outside it; check the train qrels' ids")
        model = make_pipeline(StandardScaler(), LogisticRegression(C=self.c, class_weight="balanced", max_iter=2000))
        model.fit(np.vstack(xs), np.concatenate(ys))
        return model, len(ys), int(sum(len(y) for y in ys))

    def search(self, queries: dict[str, str], k: int) -> Results:
        if self.training is None:
            raise FincprgError(f"{self.name} needs labelled queries: run it through fincprg eval (or call "
                               "set_training with a TrainingData)")
        pools = self._pools(queries)
        train = self._train_qrels()
        out: Results = {}
        if train:
            tq = {q: self.training.queries[q] for q in train}
            model, nq, npairs = self._fit_model(self.features.candidates(tq), train)
            self._keep_coef(model)
            for q, (cands, x) in pools.items():
                out[q] = _emit(cands, model.decision_function(x), k) if cands else {}
            self.stats = {"train_queries": float(nq), "train_pairs": float(npairs), "crossfit_folds": 0.0}
            return out
        labels = {q: d for q, d in self.training.eval_qrels.items() if q in pools}
        log.info("%s: no train qrels in %s; %d-fold cross-fitting over the %d evaluated queries", self.name,
                 self.training.folder, FOLDS, len(labels))
        models = {}
        for f in range(FOLDS):
            rest = {q: p for q, p in pools.items() if q in labels and _fold(q) != f}
            models[f] = self._fit_model(rest, labels)[0]
        self._keep_coef(models[0])
        for q, (cands, x) in pools.items():
            out[q] = _emit(cands, models[_fold(q)].decision_function(x), k) if cands else {}
        self.stats = {"train_queries": float(len(labels) * (FOLDS - 1) / FOLDS), "crossfit_folds": float(FOLDS)}
        return out

    def _keep_coef(self, model) -> None:
        lr = model[-1]
        self.coef = dict(zip(FEATURES, (float(c) for c in lr.coef_[0])))
        log.info("%s coefficients (standardised features): %s", self.name,
                 ", ".join(f"{f} {c:+.2f}" for f, c in self.coef.items()))
