"""The ``bertopic`` engine (the default): a real ``BERTopic`` fitted on fincprg's clusters, and its saved form.

BERTopic's own c-TF-IDF (with fincprg's jieba tokens), topic representations, topic vectors and
``hierarchical_topics()`` run on the clusters fincprg finds; what is slow in BERTopic stays out of the
way (48k titles fit in a few seconds once BERTopic is imported):

* the title vectors are precomputed (no embedding model; ``calculate_probabilities=False``);
* no UMAP where fincprg reduces dimensions itself: per-industry clustering runs its own PCA, so
  BERTopic gets ``BaseDimensionalityReduction()`` (a global run passes UMAP or PCA as ``umap_model``);
* ``hdbscan_model`` is :class:`ClusterThenReduce`: fincprg's clusterer (per-industry HDBSCAN by default)
  followed by the same-industry outlier reduction, so BERTopic computes c-TF-IDF once, on the final
  topics, and its topic vectors are the centroids of the titles each topic holds;
* the vectorizer's tokenizer (:class:`JoinedTokens`) cuts each title once: BERTopic joins a
  topic's titles with spaces before counting, and jieba never joins words across whitespace, so a
  joined document's tokens are its titles' tokens.

The model is saved in BERTopic's safetensors format (``OUT/topics/bertopic/``, c-TF-IDF included), so
``BERTopic.load(OUT/topics/bertopic)`` opens it and its visualisations work; ``fincprg.json`` beside
BERTopic's files says how the topics were clustered and which outlier reduction ran.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

META = "fincprg.json"  # written beside BERTopic's files in the saved folder


class JoinedTokens:
    """The vectorizer's tokenizer: c-TF-IDF tokens of a document BERTopic built by joining titles with spaces.

    Each whitespace-separated piece (a title, mostly) is tokenised once and memoised here: BERTopic counts
    the titles three times (c-TF-IDF, representative titles, hierarchy).
    """

    def __init__(self) -> None:
        self.memo: dict[str, tuple[str, ...]] = {}

    def __call__(self, doc: str) -> list[str]:
        from fincprg.topics.tokens import topic_tokens

        out: list[str] = []
        for piece in doc.split():
            toks = self.memo.get(piece)
            if toks is None:
                toks = self.memo[piece] = tuple(topic_tokens(piece))
            out.extend(toks)
        return out


def make_vectorizer() -> Any:
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(tokenizer=JoinedTokens(), token_pattern=None, lowercase=False)


class ClusterThenReduce:
    """BERTopic's ``hdbscan_model``: ``clusterer`` (``fit``/``labels_``), then outliers moved to the nearest
    topic (cosine to the centroid in the full title vectors; see :func:`~fincprg.topics.partition.reassign_outliers`).

    ``moved`` marks the titles the reduction gave a topic. ``reduce=False`` keeps HDBSCAN's outliers.
    """

    def __init__(self, clusterer: Any, embeddings: np.ndarray, industries: Sequence[str | None] | None,
                 cfg: Any):
        self.clusterer, self.embeddings, self.industries, self.cfg = clusterer, embeddings, industries, cfg
        self.labels_: np.ndarray | None = None
        self.moved: list[bool] = []

    def fit(self, X: np.ndarray, y: Any = None) -> ClusterThenReduce:
        from fincprg.topics.partition import by_size, reassign_outliers

        labels = by_size([int(t) for t in self.clusterer.fit(X).labels_])
        self.moved = [False] * len(labels)
        if self.cfg.reduce_outliers and -1 in labels:
            labels, self.moved = reassign_outliers(labels, self.embeddings, self.industries,
                                                   self.cfg.outlier_scope, self.cfg.outlier_threshold)
        self.labels_ = np.asarray(labels, dtype=np.int64)
        return self


@contextmanager
def _bertopic_progress(progress: Callable[..., Iterable[Any]] | None, desc: str) -> Iterator[None]:
    """Route the progress bar ``hierarchical_topics()`` always draws (a bare tqdm on stderr) through the
    caller's ``progress`` (the CLI's bar), or silence it."""
    import bertopic._bertopic as impl

    def bar(it: Any, disable: bool = False, **_: Any) -> Iterable[Any]:
        return progress(it, total=len(it), desc=desc) if progress is not None and not disable else it

    orig, impl.tqdm = impl.tqdm, bar
    try:
        yield
    finally:
        impl.tqdm = orig


def top_words(row: Any, words: Sequence[str], n: int) -> list[tuple[str, float]]:
    """The ``n`` best c-TF-IDF words of one row (score > 0), ties broken by vocabulary position."""
    row = row.tocsr()
    keep = row.data > 0
    data, cols = row.data[keep], row.indices[keep]
    order = np.lexsort((cols, -data))[:n]
    return [(words[j], float(data[i])) for i, j in zip(order, cols[order], strict=True)]


@cache
def _classes() -> tuple[type, type]:
    """BERTopic with two orderings made deterministic (defined on first use: importing bertopic is slow).

    BERTopic ranks a topic's words with ``np.argsort`` and numbers topics by size with pandas' default
    quicksort; numpy runs both with SIMD sorts that are not stable, so words of equal c-TF-IDF score
    (common in small topics) and topics of equal size come out in an order that can differ between CPUs,
    and with it the topic ids, the template intents and a build's bytes. Here ties go by vocabulary
    position (as :mod:`fincprg.topics.ctfidf`) and by the clusterer's numbering (by size, ties first seen).
    """
    from bertopic import BERTopic
    from bertopic.representation import BaseRepresentation

    class StableKeywords(BaseRepresentation):
        """Topic words straight from the c-TF-IDF rows, ties by vocabulary position (BERTopic pads with
        ``("", 1e-05)`` to ``top_n_words`` where a topic has fewer scored words)."""

        _vocab: Any = None
        _words: Any = None

        def extract_topics(self, topic_model: Any, documents: Any, c_tf_idf: Any, topics: Any) -> dict:
            # hierarchical_topics() calls this once per merge: get_feature_names_out() sorts the whole
            # vocabulary each time (9 ms at 24k words, ~2 s over 48k titles' 200 merges), so keep it
            vocab = topic_model.vectorizer_model.vocabulary_
            if vocab is not self._vocab:
                self._vocab, self._words = vocab, topic_model.vectorizer_model.get_feature_names_out()
            words = self._words
            n = topic_model.top_n_words
            out = {}
            for i, label in enumerate(topics):  # rows in label order, as BERTopic's own ranking reads them
                best = top_words(c_tf_idf[i], words, n)
                out[label] = best + [("", 1e-05)] * (n - len(best))
            return out

    class StableBERTopic(BERTopic):
        def _sort_mappings_by_frequency(self, documents: Any) -> Any:
            self._update_topic_size(documents)
            sizes = self.topic_sizes_
            order = sorted((t for t in sizes if t != -1), key=lambda t: (-sizes[t], t))
            mapping = {-1: -1, **{t: k for k, t in enumerate(order)}}
            self.topic_mapper_.add_mappings(mapping, topic_model=self)
            documents.Topic = documents.Topic.map(mapping).fillna(documents.Topic).astype(int)
            self._update_topic_size(documents)
            return documents

    return StableBERTopic, StableKeywords


def fit(docs: Sequence[str], emb: np.ndarray, cfg: Any, industries: Sequence[str | None] | None,
        clusterer: Any, reducer: Any, top_n_words: int, progress: Any = None) -> tuple[Any, list[bool], Any]:
    """Fit BERTopic on ``emb`` (``reducer`` None: no reduction); returns ``(model, moved, hierarchy)``
    (``hierarchical_topics()`` rows, or None below two topics). Raises ValueError where BERTopic cannot fit (e.g. an empty vocabulary)."""
    from bertopic.dimensionality import BaseDimensionalityReduction

    model_class, keywords = _classes()
    hdbscan_model = ClusterThenReduce(clusterer, emb, industries, cfg)
    model = model_class(umap_model=BaseDimensionalityReduction() if reducer is None else reducer,
                        hdbscan_model=hdbscan_model, vectorizer_model=make_vectorizer(),
                        representation_model=keywords(), top_n_words=top_n_words, calculate_probabilities=False,
                        nr_topics=cfg.nr_topics, verbose=False,
                        language="multilingual")  # "english" would strip every CJK character
    with _bertopic_progress(progress, "topics: BERTopic hierarchy"):
        model.fit(list(docs), embeddings=emb)
        moved = hdbscan_model.moved or [False] * len(docs)
        if len(set(model.topics_) - {-1}) < 2:
            return model, moved, None
        hier = model.hierarchical_topics(list(docs), distance_function=topic_distances)
    return model, moved, hier


def topic_distances(x: Any) -> np.ndarray:
    """BERTopic's default hierarchy distance (1 - cosine of the c-TF-IDF rows), clipped at 0: two topics with
    the same keywords come out at -2e-16 in float rounding, and BERTopic then refuses the whole hierarchy
    ("Distance matrix cannot contain negative values"); AlphaFin with the 49k East Money titles did."""
    from sklearn.metrics.pairwise import cosine_similarity

    return np.clip(1 - cosine_similarity(x), 0, None)


def save(model: Any, path: Path, meta: dict[str, Any]) -> None:
    """Save ``model`` to the folder ``path`` in BERTopic's safetensors format (with its c-TF-IDF), plus
    :data:`META`; written beside ``path`` and swapped in whole."""
    from fincprg.io import staging_dir, swap_in

    new = staging_dir(path)
    bt_log = logging.getLogger("BERTopic")
    level = bt_log.level
    # no embedding model to point at: the title vectors are fincprg's (text + Time2Vec [+ industry]),
    # which BERTopic's warning about saving without one cannot help with
    bt_log.setLevel(logging.ERROR)
    try:
        model.save(new, serialization="safetensors", save_ctfidf=True, save_embedding_model=False)
    finally:
        bt_log.setLevel(level)
    (new / META).write_text(json.dumps(meta, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    mode = (new / META).stat().st_mode & 0o777  # the umask's; safetensors writes its files owner-only
    for f in new.iterdir():
        f.chmod(mode)
    swap_in(new, path)


def describe(cfg: Any, moved: Sequence[bool], by_industry: bool) -> dict[str, Any]:
    """What :data:`META` records: how the topics were clustered and which outlier reduction ran."""
    clusterer = ("fincprg IndustryHDBSCAN (HDBSCAN per CITIC industry after a per-industry PCA to "
                 f"{cfg.pca_components} dims)" if by_industry else "HDBSCAN over all titles")
    reduction = (f"fincprg reassign_outliers (nearest topic centroid, cosine >= {cfg.outlier_threshold}, "
                 f"scope {cfg.outlier_scope}), inside hdbscan_model; not BERTopic.reduce_outliers"
                 if cfg.reduce_outliers else "none")
    return {"embeddings": "precomputed by fincprg (title vectors + Time2Vec, + CITIC one-hot offline); "
                          "no embedding model saved",
            "hdbscan_model": clusterer, "outlier_reduction": reduction,
            "outliers_reassigned": int(sum(moved)), "vectorizer": "CountVectorizer over fincprg's jieba tokens "
            "(fincprg.topics.tokens.topic_tokens); not saved with the model, so transform() of new titles "
            "needs fincprg.topics.bertopic_engine.make_vectorizer()"}
