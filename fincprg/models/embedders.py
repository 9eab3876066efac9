"""Text embedders: TF-IDF/LSA (offline default), sentence-transformers, or the industry classifier's states; topic
clustering embeds titles with them, mining's prefilter query texts.

They are the entries of :data:`fincprg.registry.EMBEDDERS` (registered at the bottom); a user registers their
own with ``fincprg.register_embedder``. They sit here, below the stages, because two stages build them.

All embedders return L2-normalised float32 rows, so that cosine and Euclidean distances agree and
the Time2Vec block (norm <= weight) has a known scale relative to the text block.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from fincprg.config_sections import EmbedderConfig
from fincprg.errors import BackendError, ConfigError
from fincprg.registry import EMBEDDERS

log = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An ``(n, d)`` float32 array, one row per text."""
        ...


def l2_normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def _finance_tokens(text: str) -> list[str]:
    from fincprg.finance import tokenize

    return tokenize(text)


class LSAEmbedder:
    """TF-IDF over finance-aware jieba tokens, reduced by TruncatedSVD (latent semantic analysis).

    ``fit`` happens on the texts passed to ``embed`` (transductive: the corpus is the vocabulary).
    When the vocabulary is smaller than ``dim`` the SVD keeps ``min(dim, n_terms - 1, n_docs - 1)``
    components, and with fewer than 2 usable components the TF-IDF rows are returned as they are.
    """

    name = "lsa"

    def __init__(self, dim: int = 128, seed: int = 42, min_df: int = 1, max_features: int | None = 50000,
                 n_iter: int = 5):
        self.dim, self.seed, self.min_df, self.max_features = dim, seed, min_df, max_features
        self.n_iter = n_iter

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vec = TfidfVectorizer(tokenizer=_finance_tokens, token_pattern=None, lowercase=False,
                              min_df=self.min_df, max_features=self.max_features, sublinear_tf=True,
                              dtype=np.float32)  # float32: the SVD's dense products at half the cost
        try:
            tfidf = vec.fit_transform(texts)
        except ValueError:  # empty vocabulary (e.g. only stopwords)
            return np.zeros((len(texts), 1), dtype=np.float32)
        k = min(self.dim, tfidf.shape[1] - 1, tfidf.shape[0] - 1)
        if k < 2:
            return l2_normalise(tfidf.toarray())
        svd = TruncatedSVD(n_components=k, random_state=self.seed, algorithm="randomized",
                           n_iter=self.n_iter)
        return l2_normalise(svd.fit_transform(tfidf))


class SentenceTransformerEmbedder:
    """A sentence-transformers model (folder path or hub id), loaded by :mod:`fincprg.models`."""

    name = "sentence-transformers"

    def __init__(self, model: str, batch_size: int = 64, device: str | None = None, where: str = "topics.embedder"):
        from fincprg.models import TextEncoder

        self.encoder = TextEncoder(model, where=f"{where}.model", batch_size=batch_size, device=device,
                                   alternative=f"{where}.backend=lsa")
        self.encoder.model()  # load now: a bad model id fails before clustering starts

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # titles are compared with titles (a symmetric task): e5's card asks for its "query: " prompt there
        return self.encoder.encode(list(texts), role="query")


class ClassifierEmbedder:
    """Pooled hidden states of the transformers industry classifier (see ``fincprg/topics/classify.py``)."""

    name = "classifier"

    def __init__(self, classifier: Any):
        if not hasattr(classifier, "embed"):
            raise BackendError("topics.embedder.backend=classifier needs topics.classifier.backend="
                               "transformers (the lexicon classifier has no hidden states)")
        self.classifier = classifier

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return l2_normalise(self.classifier.embed(texts))


class CharLSAEmbedder:
    """Character 1-2-gram TF-IDF + TruncatedSVD over the texts passed to ``embed`` (the ``lsa`` embedder of
    query texts, used by mining's prefilter; rows are not normalised here, the prefilter does that)."""

    name = "lsa"

    def __init__(self, dim: int = 128, seed: int = 42):
        self.dim, self.seed = dim, seed

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from sklearn.decomposition import TruncatedSVD  # noqa: PLC0415
        from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: PLC0415

        x = TfidfVectorizer(analyzer="char", ngram_range=(1, 2), sublinear_tf=True,
                            dtype=np.float32).fit_transform(texts)
        dim = max(1, min(self.dim, x.shape[1] - 1, len(texts) - 1))
        return TruncatedSVD(n_components=dim, random_state=self.seed).fit_transform(x) if dim >= 2 else x.toarray()


def make_embedder(cfg: Any, *, seed: int = 42, classifier: Any = None, texts: str = "titles",
                  device: str | None = None, where: str = "topics.embedder") -> Embedder:
    """Build the embedder named by ``cfg.backend`` (an ``EmbedderConfig``), a :data:`~fincprg.registry.EMBEDDERS`
    entry. ``texts`` is what it embeds: ``titles`` (topics) or ``queries`` (mining's prefilter); ``where`` is
    the config section, for messages."""
    entry = EMBEDDERS.get(cfg.backend)
    if entry.needs_model and not cfg.model:
        raise BackendError(f"{where}.backend={cfg.backend} needs {where}.model (a local folder or hub id), "
                           f"or set {where}.backend=lsa")
    return entry.factory(cfg, texts=texts, seed=seed, device=device, classifier=classifier, where=where)


def _lsa(cfg: Any, *, texts: str = "titles", seed: int = 42, **_: Any) -> Embedder:
    # titles: jieba + finance-dictionary words; query texts (short, many near-duplicates): characters
    return LSAEmbedder(dim=cfg.dim, seed=seed, n_iter=getattr(cfg, "svd_iter", 5)) if texts == "titles" else CharLSAEmbedder(dim=cfg.dim, seed=seed)


def _sentence_transformers(cfg: Any, *, device: str | None = None, where: str = "topics.embedder",
                           **_: Any) -> Embedder:
    return SentenceTransformerEmbedder(cfg.model, batch_size=cfg.batch_size, device=device, where=where)


def _classifier(cfg: Any, *, texts: str = "titles", classifier: Any = None, where: str = "topics.embedder",
                **_: Any) -> Embedder:
    if texts != "titles":
        raise ConfigError(f"{where}.backend: classifier embeds titles only (the industry classifier's hidden "
                          "states); use lsa or sentence-transformers")
    return ClassifierEmbedder(classifier)


EMBEDDERS.register("lsa", _lsa, config=EmbedderConfig,
                   description="offline TF-IDF + TruncatedSVD (titles: finance-aware jieba words; queries: "
                               "char 1-2-grams)")
EMBEDDERS.register("sentence-transformers", _sentence_transformers, config=EmbedderConfig, gpu=True,
                   needs_model=True, description="a sentence-transformers bi-encoder (local folder or hub id); "
                                                 "its query prompt is used (e5: 'query: ')")
EMBEDDERS.register("classifier", _classifier, config=EmbedderConfig, gpu=True,
                   description="pooled hidden states of the transformers industry classifier (titles only; "
                               "needs topics.classifier.backend=transformers)")
