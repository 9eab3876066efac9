"""Title clustering on precomputed embeddings, and the topic tree it implies.

Two engines (``topics.cluster.engine``) run the same algorithm, BERTopic's: a clusterer over the title
vectors (HDBSCAN; any object with ``fit`` and ``labels_`` may be injected, as BERTopic's
``hdbscan_model=``), c-TF-IDF keywords over finance-aware jieba tokens (fincprg's user dictionary and
stopwords, plus report boilerplate words such as 周报/点评), and a Ward hierarchy over the topics'
c-TF-IDF rows (``hierarchical_topics()``). ``bertopic`` (default) fits a real ``BERTopic`` on fincprg's
clusters (:mod:`fincprg.topics.bertopic_engine`; the model stays on the tree for its plotly figures and
the stage saves it); ``native`` computes c-TF-IDF and the hierarchy in :mod:`fincprg.topics.ctfidf` from
each title's cached tokens and never imports BERTopic (6-10 s of imports).

By default HDBSCAN runs inside each industry (:class:`~fincprg.topics.partition.IndustryHDBSCAN`,
``by_industry``) after a per-industry PCA; otherwise once over all titles after an optional global
reduction (UMAP with a fixed random_state, or PCA). Outliers may then join the nearest topic of their
own industry (``reduce_outliers``, ``outlier_scope``, ``outlier_threshold``); the tree records which
titles moved (``TopicTree.reassigned``). The tree is rebuilt from each merge's set of leaf topics (a
node's parent is the smallest merge that contains it), which does not depend on BERTopic's internal
child-id numbering.

Ids: leaves ``t<k>`` (topic k, numbered by size, largest first: BERTopic counts sizes after outlier
reduction, the native engine before it; outliers ``t-1`` hung under the root),
inner nodes ``h<k>`` (BERTopic's Parent_ID). Tiny corpora, or runs where the clusterer finds fewer than
two topics, fall back to a single topic ``t0`` (plus ``t-1`` and a root ``h1`` when there are outliers).
"""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fincprg.topics.tokens import REPORT_STOPWORDS, topic_tokens  # noqa: F401 - re-exported

log = logging.getLogger(__name__)

@dataclass
class TopicTree:
    """Result of clustering: per-title leaf topic, keywords and the tree over leaf topics."""

    topics: list[int]  # BERTopic topic per title (-1 = outlier)
    keywords: dict[str, list[str]]  # node id -> keywords
    parent: dict[str, str | None]  # node id -> parent id
    children: dict[str, list[str]]  # node id -> child ids (ordered)
    root: str
    model: Any = None  # the fitted BERTopic (engine "bertopic"; None otherwise)
    hierarchy: Any = None  # hierarchical_topics() rows (a DataFrame, or ctfidf.Merge records)
    notes: list[str] = field(default_factory=list)
    reassigned: list[bool] = field(default_factory=list)  # per title: an outlier given its topic afterwards
    linkage: Any = None  # the native engine's scipy linkage matrix over the leaf topics (for the dendrogram)

    @property
    def n_topics(self) -> int:
        return len({t for t in self.topics if t != -1})

    @property
    def outlier_share(self) -> float:
        return (sum(t == -1 for t in self.topics) / len(self.topics)) if self.topics else 0.0


def make_clusterer(cfg: Any) -> Any:
    """HDBSCAN over all titles, configured from ``topics.cluster`` (a ``ClusterConfig``)."""
    from hdbscan import HDBSCAN

    return HDBSCAN(min_cluster_size=cfg.min_cluster_size, min_samples=cfg.min_samples,
                   metric="euclidean", cluster_selection_method=cfg.cluster_selection_method,
                   core_dist_n_jobs=max(1, cfg.workers), prediction_data=False)


def make_reducer(cfg: Any, seed: int) -> Any:
    """UMAP (seeded), PCA or a no-op before a global clusterer (BERTopic's ``umap_model``)."""
    if cfg.umap:
        from umap import UMAP

        return UMAP(n_neighbors=cfg.n_neighbors, n_components=cfg.n_components, min_dist=0.0,
                    metric="cosine", random_state=seed, low_memory=True)
    if cfg.pca_components:
        from sklearn.decomposition import PCA

        return _SafePCA(PCA(n_components=cfg.pca_components, random_state=seed, svd_solver="randomized"))
    return _Identity()


class _Identity:
    """No reduction (what BERTopic's ``BaseDimensionalityReduction`` does, without importing BERTopic)."""

    def fit(self, X: np.ndarray, y: Any = None) -> _Identity:
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return X


class _SafePCA:
    """PCA that keeps at most ``min(n_samples, n_features)`` components (small corpora)."""

    def __init__(self, pca: Any):
        self.pca = pca

    def fit(self, X: np.ndarray, y: Any = None) -> _SafePCA:
        k = min(self.pca.n_components, X.shape[0], X.shape[1])
        self.pca.set_params(n_components=k)
        self.pca.fit(X)
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return self.pca.transform(X)


def _fallback_keywords(docs: Sequence[str], k: int = 10) -> list[str]:
    c = Counter(t for d in docs for t in topic_tokens(d))
    return [w for w, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def _single_topic(docs: Sequence[str], topics: list[int] | None = None, note: str = "",
                  reassigned: list[bool] | None = None) -> TopicTree:
    topics = topics if topics is not None else [0] * len(docs)
    kw = {"t0": _fallback_keywords([d for d, t in zip(docs, topics, strict=True) if t == 0])}
    moved = reassigned or [False] * len(docs)
    if -1 in topics:
        kw["t-1"] = []
        kw["h1"] = _fallback_keywords(docs)
        tree = TopicTree(topics, kw, {"h1": None, "t0": "h1", "t-1": "h1"}, {"h1": ["t0", "t-1"]}, "h1",
                         reassigned=moved)
    else:
        tree = TopicTree(topics, kw, {"t0": None}, {}, "t0", reassigned=moved)
    if note:
        tree.notes.append(note)
    return tree


def _clusterer(cfg: Any, industries: Sequence[str | None] | None, progress: Any) -> Any:
    if cfg.by_industry and industries is not None:
        from fincprg.topics.partition import IndustryHDBSCAN

        return IndustryHDBSCAN(industries, cfg, progress)
    return make_clusterer(cfg)


def _reducer(cfg: Any, seed: int, industries: Sequence[str | None] | None) -> Any:
    # per-industry clustering reduces each industry's vectors itself (pca_components)
    return _Identity() if cfg.by_industry and industries is not None else make_reducer(cfg, seed)


def _reduce_outliers(topics: list[int], emb: np.ndarray, cfg: Any,
                     industries: Sequence[str | None] | None) -> tuple[list[int], list[bool]]:
    if not cfg.reduce_outliers or -1 not in topics:
        return topics, [False] * len(topics)
    from fincprg.topics.partition import reassign_outliers

    return reassign_outliers(topics, emb, industries, cfg.outlier_scope, cfg.outlier_threshold)


def cluster_titles(docs: Sequence[str], embeddings: np.ndarray, cfg: Any, *, seed: int = 42,
                   industries: Sequence[str | None] | None = None, clusterer: Any = None, reducer: Any = None,
                   top_n_words: int = 10, progress: Any = None) -> TopicTree:
    """Cluster ``docs`` (titles) on ``embeddings`` and build the topic tree.

    Args:
        docs: titles, one per row of ``embeddings``.
        embeddings: ``(n, d)`` precomputed vectors.
        cfg: ``topics.cluster`` (``ClusterConfig``).
        seed: random_state for UMAP/PCA.
        industries: each title's industry: per-industry clustering and outlier reduction use it
            (None: one group, and outliers may join any topic).
        clusterer: injected clusterer (default: HDBSCAN from ``cfg``), e.g. ``KMeans`` in tests.
        reducer: injected dimensionality reduction (default from ``cfg``).
        progress: a tqdm-like wrapper (``progress(it, total=, desc=)``) for the long loops.
    """
    if cfg.nr_topics is not None and cfg.engine != "bertopic":
        from fincprg.errors import ConfigError

        raise ConfigError("topics.cluster.nr_topics merges topics through BERTopic: set "
                          "topics.cluster.engine=bertopic, or unset nr_topics")
    n = len(docs)
    if n < max(4, 2 * cfg.min_cluster_size) and clusterer is None:
        return _single_topic(docs, note=f"{n} titles: too few for 2 clusters of {cfg.min_cluster_size}")
    emb = np.asarray(embeddings, dtype=np.float32)
    clusterer = clusterer if clusterer is not None else _clusterer(cfg, industries, progress)
    reducer = reducer if reducer is not None else _reducer(cfg, seed, industries)
    if cfg.engine == "bertopic":
        return _bertopic_titles(docs, emb, cfg, industries, clusterer, reducer, top_n_words, progress)
    from fincprg.topics.partition import by_size

    try:
        labels = clusterer.fit(reducer.fit(emb).transform(emb)).labels_
    except ValueError as e:  # a clusterer that cannot split the data
        log.warning("topics: clustering failed on %d titles (%s); they form a single topic", len(docs), e)
        return _single_topic(docs, note=f"clustering failed ({e}); single topic")
    topics, moved = _reduce_outliers(by_size([int(t) for t in labels]), emb, cfg, industries)
    return _tree(docs, topics, moved, top_n_words, progress)


def _fewer_than_two(docs: Sequence[str], topics: list[int], moved: list[bool]) -> TopicTree:
    real = set(topics) - {-1}
    return _single_topic(docs, topics=[0 if t != -1 else -1 for t in topics], reassigned=moved,
                         note="the clusterer found one topic" if real else "the clusterer found no topic; single topic")


def _tree(docs: Sequence[str], topics: list[int], moved: list[bool], top_n_words: int, progress: Any) -> TopicTree:
    from fincprg.topics.ctfidf import topic_keywords, ward_hierarchy

    real = sorted(set(topics) - {-1})
    if len(real) < 2:
        return _fewer_than_two(docs, topics, moved)
    tokens = [topic_tokens(d) for d in docs]
    model, words, counts = topic_keywords(tokens, topics, top_n_words)
    keywords = {f"t{k}": words[k] for k in real}
    merges, Z = ward_hierarchy(model, [counts[k] for k in real], real, progress)
    parent, children, root = _tree_from_hierarchy(merges, real, keywords, -1 in topics)
    return TopicTree(topics, keywords, parent, children, root, hierarchy=merges, linkage=Z, reassigned=moved)


def _bertopic_titles(docs: Sequence[str], emb: np.ndarray, cfg: Any, industries: Sequence[str | None] | None,
                     clusterer: Any, reducer: Any, top_n_words: int, progress: Any) -> TopicTree:
    """The ``bertopic`` engine: a fitted ``BERTopic`` (kept on the tree, saved by the stage)."""
    from fincprg.topics import bertopic_engine

    try:  # reducer None: BERTopic's BaseDimensionalityReduction
        model, moved, hier = bertopic_engine.fit(docs, emb, cfg, industries, clusterer,
                                                 None if isinstance(reducer, _Identity) else reducer, top_n_words,
                                                 progress)
    except ValueError as e:  # e.g. empty vocabulary, or a clusterer that cannot split the data
        # said aloud, not only in the manifest: one topic over a large corpus makes every topic query useless
        log.warning("topics: BERTopic failed on %d titles (%s); they form a single topic", len(docs), e)
        return _single_topic(docs, note=f"BERTopic failed ({e}); single topic")
    topics = [int(t) for t in model.topics_]
    real = sorted(set(topics) - {-1})
    if hier is None or len(real) < 2:
        return _fewer_than_two(docs, topics, moved)
    keywords = {f"t{k}": [w for w, _ in (model.get_topic(k) or []) if w][:top_n_words] for k in real}
    parent, children, root = _tree_from_hierarchy(hier.itertuples(index=False), real, keywords, -1 in topics)
    return TopicTree(topics, keywords, parent, children, root, model=model, hierarchy=hier, reassigned=moved)


def _tree_from_hierarchy(rows: Iterable[Any], leaves: list[int], keywords: dict[str, list[str]], outliers: bool
                         ) -> tuple[dict[str, str | None], dict[str, list[str]], str]:
    """Parent/children maps from ``hierarchical_topics()`` rows (``Parent_ID``, ``Parent_Name``,
    ``Topics``; fills inner-node keywords); ``outliers``: ``t-1`` (no keywords) as the root's last child."""
    sets: dict[str, frozenset[int]] = {f"t{k}": frozenset([k]) for k in leaves}
    for row in rows:
        nid = f"h{int(row.Parent_ID)}"
        sets[nid] = frozenset(int(t) for t in row.Topics)
        keywords[nid] = [w for w in str(row.Parent_Name).split("_") if w]
    # parent = the smallest strictly larger set containing the node (ties: the lower inner id)
    inner = sorted((s for s in sets if s.startswith("h")), key=lambda s: (len(sets[s]), int(s[1:])))
    parent: dict[str, str | None] = {}
    for nid, members in sets.items():
        parent[nid] = next((h for h in inner if h != nid and len(sets[h]) > len(members)
                            and members <= sets[h]), None)
    roots = [nid for nid, p in parent.items() if p is None]
    if len(roots) != 1:  # pragma: no cover - hierarchical_topics always ends in one merge
        raise RuntimeError(f"topic hierarchy has {len(roots)} roots: {roots[:5]}")
    children: dict[str, list[str]] = {nid: [] for nid in sets if nid.startswith("h")}
    for nid in sorted(sets, key=_id_key):
        if parent[nid] is not None:
            children[parent[nid]].append(nid)
    if outliers:
        keywords["t-1"], parent["t-1"] = [], roots[0]
        children[roots[0]].append("t-1")
    return parent, children, roots[0]


def _id_key(nid: str) -> tuple[int, int]:
    return (0 if nid.startswith("t") else 1, int(nid[1:]))
