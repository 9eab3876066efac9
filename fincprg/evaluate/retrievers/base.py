"""The retriever interface (BEIR results format) and helpers shared by every retriever."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

Results = dict[str, dict[str, float]]  # qid -> {doc id: score}, BEIR's results format


@runtime_checkable
class Retriever(Protocol):
    """Anything with ``fit(corpus)`` and ``search(queries, k)`` returning BEIR results."""

    name: str

    def fit(self, corpus: dict[str, dict]) -> None:
        """Index ``corpus`` (doc id -> {"title", "text", ...})."""

    def search(self, queries: dict[str, str], k: int) -> Results:
        """Return the top ``k`` documents per query, as ``{qid: {doc_id: score}}``."""


@runtime_checkable
class UsesQueryMeta(Protocol):
    """Optional: retrievers that need the other queries.jsonl fields (e.g. report_id)."""

    def set_query_meta(self, meta: dict[str, dict]) -> None: ...


@dataclass
class TrainingData:
    """What a trained retriever may learn from: the dataset folder (its ``train`` qrels are read from
    there), every query text, and the evaluated split's qrels, used only for k-fold cross-fitting when
    the folder has no train qrels (a query is then scored by a model that never saw its labels)."""

    folder: Path | None
    split: str
    queries: dict[str, str]
    eval_qrels: dict[str, dict[str, int]] = field(default_factory=dict)


@runtime_checkable
class UsesTraining(Protocol):
    """Optional: retrievers that learn from labelled queries (e.g. ``linear``)."""

    def set_training(self, data: TrainingData) -> None: ...


def tokenize(text: str) -> list[str]:
    """Lower-cased finance tokens: ``fincprg.finance.tokenize`` (jieba + finance dictionary, no punctuation)."""
    from fincprg.finance import tokenize as finance_tokenize

    return [t.lower() for t in finance_tokenize(text)]


def forward_query_meta(retrievers: Iterable[object], meta: dict[str, dict]) -> None:
    """Hand the queries.jsonl fields to every retriever in ``retrievers`` that uses them."""
    for r in retrievers:
        if isinstance(r, UsesQueryMeta):
            r.set_query_meta(meta)


def forward_training(retrievers: Iterable[object], data: TrainingData) -> None:
    """Hand the training data to every retriever in ``retrievers`` that learns from it."""
    for r in retrievers:
        if isinstance(r, UsesTraining):
            r.set_training(data)


class PoolReranker:
    """Plumbing shared by rerankers of a first-stage pool (cross-encoder, cards, Borda).

    Subclasses set ``first_stage`` and ``pool``. ``last_pool`` keeps each query's first-stage top ``pool``
    so the harness reports candidate-pool recall separately.
    """

    first_stage: Retriever
    pool: int
    corpus: dict[str, dict]
    last_pool: Results

    def fit(self, corpus: dict[str, dict]) -> None:
        self.first_stage.fit(corpus)
        self.corpus = corpus

    def set_query_meta(self, meta: dict[str, dict]) -> None:
        forward_query_meta([self.first_stage], meta)

    def first_pool(self, queries: dict[str, str], depth: int) -> Results:
        """Search the first stage ``depth`` deep, keep the top ``pool`` per query in ``last_pool``."""
        first_runs = self.first_stage.search(queries, depth)
        self.last_pool = {q: {d: run[d] for d in ranked(run)[: self.pool]} for q, run in first_runs.items()}
        return first_runs


def doc_text(doc: dict) -> str:
    """Title and text joined, as BEIR models do (the title is skipped when the text repeats it)."""
    title = (doc.get("title") or "").strip()
    text = (doc.get("text") or "").strip()
    if title and not text.startswith(title):
        return f"{title}\n{text}"
    return text or title


def top_k(ids: list[str], scores: np.ndarray, k: int, *, keep: Callable[[float], bool] | None = None) -> dict[str, float]:
    """The ``k`` best (id, score) pairs, best first; ``keep`` filters scores (e.g. BM25's > 0)."""
    if len(ids) == 0 or k <= 0:
        return {}
    k = min(k, len(ids))
    idx = np.argpartition(-scores, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    return {ids[i]: float(scores[i]) for i in idx if keep is None or keep(float(scores[i]))}


def ranked(results: dict[str, float]) -> list[str]:
    """Doc ids of one query's results, best first (ties broken by doc id for determinism)."""
    return [d for d, _ in sorted(results.items(), key=lambda x: (-x[1], x[0]))]


def progress(items: Iterable, total: int | None = None, desc: str = "", show: bool = True) -> Iterable:
    """A tqdm bar when ``show`` and the work is long enough to need one."""
    if not show or (total is not None and total < 200):
        return items
    from tqdm.auto import tqdm

    return tqdm(items, total=total, desc=desc, leave=False)
