"""BERTopic's topic keywords (c-TF-IDF) and topic hierarchy (Ward on c-TF-IDF cosine), without BERTopic.

``import bertopic`` alone takes 8-10 s (it imports transformers and UMAP), a third of the topics budget
on 48k titles, and BERTopic tokenises every title a second time (as one long document per topic). This
module computes the same things from the per-title token counts, so each title is tokenised once
(``fincprg.finance.tokenize`` caches it):

* c-TF-IDF (BERTopic's ``ClassTfidfTransformer`` defaults): a class's token counts, L1-normalised,
  times ``idf = log(1 + A / f)``, ``f`` a token's count over all classes (the outlier class included),
  ``A`` the average number of tokens per class;
* keywords: a class's tokens by c-TF-IDF score (ties: vocabulary order), zero scores left out;
* hierarchy (``hierarchical_topics()``): ``scipy.cluster.hierarchy.linkage(1 - cosine, "ward",
  optimal_ordering=True)`` over the leaf topics' c-TF-IDF rows; each merge is named by the top 5 c-TF-IDF
  words of its merged counts, and numbered ``n_leaves + i`` (BERTopic's ``Parent_ID``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Merge:
    """One row of the hierarchy, with the column names of BERTopic's ``hierarchical_topics()``."""

    Parent_ID: int
    Parent_Name: str
    Topics: tuple[int, ...]


class ClassTfidf:
    """c-TF-IDF over per-class token counts (rows = classes, columns = the vocabulary ``words``)."""

    def __init__(self, counts: sp.csr_matrix, words: Sequence[str]):
        self.words = list(words)
        df = np.asarray(counts.sum(axis=0)).ravel().astype(np.float64)
        avg = int(counts.sum(axis=1).mean()) if counts.shape[0] else 0
        self.idf = np.log(avg / np.maximum(df, 1e-12) + 1.0)

    def transform(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        from sklearn.preprocessing import normalize

        if counts.shape[1] == 0:  # an empty vocabulary scores nothing
            return sp.csr_matrix(counts, dtype=np.float64)
        return sp.csr_matrix(normalize(counts.astype(np.float64), axis=1, norm="l1") @ sp.diags(self.idf))

    def top_words(self, row: sp.csr_matrix, n: int) -> list[str]:
        """The ``n`` best-scoring words of one c-TF-IDF row (score > 0; ties by vocabulary order)."""
        row = row.tocsr()
        keep = row.data > 0
        data, cols = row.data[keep], row.indices[keep]
        order = np.lexsort((cols, -data))[:n]  # by score, then vocabulary position
        return [self.words[j] for j in cols[order]]


def class_counts(tokens: Sequence[Sequence[str]], labels: Sequence[int]
                 ) -> tuple[sp.csr_matrix, list[str], list[int]]:
    """Token counts per class: ``(counts, vocabulary, classes)``, classes sorted (``-1`` first)."""
    from sklearn.feature_extraction.text import CountVectorizer

    if any(tokens):
        vec = CountVectorizer(analyzer=list)  # titles come tokenised; the vocabulary is sorted, as BERTopic's
        per_title, words = vec.fit_transform(tokens), vec.get_feature_names_out().tolist()
        per_title.sort_indices()  # renumbering the vocabulary left each row's columns unsorted: sums in column order
    else:  # titles of stopwords and figures only: no keywords, not sklearn's "empty vocabulary" error
        per_title, words = sp.csr_matrix((len(tokens), 0)), []
    classes = sorted(set(int(k) for k in labels))
    pos = {k: c for c, k in enumerate(classes)}
    member = sp.csr_matrix((np.ones(len(labels)), ([pos[int(k)] for k in labels], np.arange(len(labels)))),
                           shape=(len(classes), len(labels)))
    return sp.csr_matrix(member @ per_title), words, classes


def topic_keywords(tokens: Sequence[Sequence[str]], labels: Sequence[int], top_n: int
                   ) -> tuple[ClassTfidf, dict[int, list[str]], dict[int, sp.csr_matrix]]:
    """c-TF-IDF keywords per class: ``(model, {class: keywords}, {class: counts row})``."""
    counts, words, classes = class_counts(tokens, labels)
    model = ClassTfidf(counts, words)
    scores = model.transform(counts)
    keywords = {k: model.top_words(scores[c], top_n) for c, k in enumerate(classes)}
    return model, keywords, {k: counts[c] for c, k in enumerate(classes)}


def ward_hierarchy(model: ClassTfidf, leaf_counts: Sequence[sp.csr_matrix], leaves: Sequence[int],
                   progress: Callable[..., Iterable[Any]] | None = None) -> tuple[list[Merge], np.ndarray]:
    """BERTopic's ``hierarchical_topics()`` on the leaf topics: the merges and the linkage matrix."""
    from scipy.cluster import hierarchy as sch
    from scipy.spatial.distance import squareform
    from sklearn.metrics.pairwise import cosine_similarity

    n = len(leaves)
    rows = model.transform(sp.vstack(leaf_counts).tocsr())
    # no vocabulary: every topic as far from every other, as cosine similarity reads all-zero rows
    dist = 1 - (cosine_similarity(rows) if rows.shape[1] else np.eye(n))
    np.fill_diagonal(dist, 0)
    dist = np.clip((dist + dist.T) / 2, 0, None)  # exact symmetry for squareform; no negative rounding
    Z = sch.linkage(squareform(dist, checks=False), "ward", optimal_ordering=True)
    members: list[tuple[int, ...]] = [(int(k),) for k in leaves]
    counts: list[sp.csr_matrix] = list(leaf_counts)
    merges = []
    steps = range(len(Z))
    for i in (progress(steps, total=len(Z), desc="topics: name the hierarchy") if progress else steps):
        a, b = int(Z[i, 0]), int(Z[i, 1])
        members.append(tuple(sorted(members[a] + members[b])))
        counts.append(counts[a] + counts[b])
        name = "_".join(model.top_words(model.transform(counts[-1]), 5))
        merges.append(Merge(Parent_ID=n + i, Parent_Name=name, Topics=members[-1]))
    return merges, Z
