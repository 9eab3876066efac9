"""Lexical retrievers: BM25 (bm25s over finance tokens), per-report BM25, and 64-d LSA."""
from __future__ import annotations

import logging

import numpy as np

from fincprg.evaluate.retrievers.base import Results, doc_text, progress, tokenize, top_k

log = logging.getLogger(__name__)


class BM25:
    """BM25 (bm25s, Lucene variant) over jieba + finance-dictionary tokens.

    Scores ≤ 0 are dropped: bm25s pads ``k`` with zero-score documents that share no term.
    """

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, show_progress: bool = True):
        self.k1, self.b, self.show_progress = k1, b, show_progress
        self.ids: list[str] = []
        self._model = None

    def fit(self, corpus: dict[str, dict]) -> None:
        import bm25s

        # bm25s sets its own logger to DEBUG, which floods the CLI with "Building index from tokens"
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self.ids = list(corpus)
        tokens = [tokenize(doc_text(corpus[d])) or [""] for d in
                  progress(self.ids, len(self.ids), "bm25: tokenise corpus", self.show_progress)]
        self._model = bm25s.BM25(k1=self.k1, b=self.b)
        self._model.index(tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of ``query`` against every document (in ``self.ids`` order)."""
        assert self._model is not None, "call fit() first"
        tids = self._model.get_tokens_ids(tokenize(query))  # unknown tokens are left out
        if not tids:
            return np.zeros(len(self.ids), dtype=np.float32)
        return np.asarray(self._model.get_scores_from_ids(tids))

    def search(self, queries: dict[str, str], k: int) -> Results:
        return {q: top_k(self.ids, self.scores(t), k, keep=lambda s: s > 0)
                for q, t in progress(queries.items(), len(queries), "bm25", self.show_progress)}


class PerReportBM25(BM25):
    """BM25 restricted to the query's own report (queries within one document).

    A query's report comes from its ``report_id`` in queries.jsonl; documents' from ``report_id`` in
    corpus.jsonl (or the ``<report_id>#p<n>`` passage id). Queries without a report search everything.
    """

    name = "bm25-report"

    def __init__(self, **kw):
        super().__init__(**kw)
        self.meta: dict[str, dict] = {}
        self._members: dict[str, np.ndarray] = {}

    def set_query_meta(self, meta: dict[str, dict]) -> None:
        self.meta = meta

    def fit(self, corpus: dict[str, dict]) -> None:
        super().fit(corpus)
        groups: dict[str, list[int]] = {}
        for i, d in enumerate(self.ids):
            groups.setdefault(report_of(d, corpus[d]), []).append(i)
        self._members = {r: np.asarray(ix) for r, ix in groups.items()}

    def search(self, queries: dict[str, str], k: int) -> Results:
        out: Results = {}
        scoped = 0
        for q, text in progress(queries.items(), len(queries), "bm25-report", self.show_progress):
            s = self.scores(text)
            members = self._members.get(str(self.meta.get(q, {}).get("report_id") or ""))
            if members is not None:
                scoped += 1
                s = s[members]
                ids = [self.ids[i] for i in members]
            else:
                ids = self.ids
            out[q] = top_k(ids, s, k, keep=lambda x: x > 0)
        log.info("bm25-report: %d/%d queries searched inside their own report", scoped, len(queries))
        return out


def report_of(doc_id: str, doc: dict) -> str:
    """The report a document belongs to: its ``report_id`` field, the ``<report>#p<n>`` id, or itself."""
    rid = doc.get("report_id")
    if rid:
        return str(rid)
    return doc_id.split("#p", 1)[0] if "#p" in doc_id else doc_id


class LSA:
    """TF-IDF over finance tokens, TruncatedSVD to ``dim`` (64) dimensions, L2-normalised; cosine search."""

    name = "lsa"

    def __init__(self, dim: int = 64, seed: int = 42, show_progress: bool = True):
        self.dim, self.seed, self.show_progress = dim, seed, show_progress
        self.ids: list[str] = []

    def fit(self, corpus: dict[str, dict]) -> None:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.ids = list(corpus)
        texts = [doc_text(corpus[d]) for d in self.ids]
        # token_pattern=None: the custom tokenizer replaces the regex (sklearn warns otherwise)
        self._tfidf = TfidfVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None, sublinear_tf=True)
        x = self._tfidf.fit_transform(texts)
        dim = max(1, min(self.dim, x.shape[1] - 1, x.shape[0] - 1))
        self._svd = TruncatedSVD(n_components=dim, random_state=self.seed)
        self._docs = _l2(self._svd.fit_transform(x))

    def encode(self, texts: list[str]) -> np.ndarray:
        return _l2(self._svd.transform(self._tfidf.transform(texts)))

    def scores(self, query: str) -> np.ndarray:
        return self._docs @ self.encode([query])[0]

    def score_all(self, queries: list[str]) -> np.ndarray:
        """Cosine of each query with every document (rows: queries; columns: ``self.ids`` order)."""
        return self.encode(queries) @ self._docs.T

    def search(self, queries: dict[str, str], k: int) -> Results:
        qids = list(queries)
        qv = self.encode([queries[q] for q in qids])
        sims = qv @ self._docs.T
        return {q: top_k(self.ids, sims[i], k) for i, q in enumerate(qids)}


def _l2(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n == 0, 1, n)
