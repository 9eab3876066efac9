"""Offline query-pair scorer: character n-gram TF-IDF cosine blended with finance-field agreement.

score = (1 - w) * cos + w * agree, in [0, 1], where

- ``cos`` is the cosine of sublinear character 1-2-gram TF-IDF vectors (IDF fitted over every
  query text of the build, so boilerplate n-grams such as 公司/同比 weigh little); Chinese has no
  spaces and character bigrams are close to words, so no segmenter is needed and it is fast. The
  vectors are of the question less the fillers of its frame (:func:`fincprg.finance.question_core`):
  「营收是多少」, 「的营收为多少」 and 「营收达到了多少」 ask one thing, and their fillers alone had held such
  pairs at 0.85-0.89, below the threshold (the veto reads the same pairs' sources either way); the
  asking word (多少, 原因, 如何) is kept, since it tells an amount from a cause;
- ``agree`` averages, over the finance fields that at least one query names (entities =
  companies + stock codes, metrics, periods), the Jaccard overlap of the two sets, counting 0.5
  when only one side names the field; with no field on either side ``agree = cos``.
- ``w = 0.25``.

Threshold (``LEXICAL_THRESHOLD``): 0.9, read off hand-checked pairs rather than a labelled
study: a punctuation-only rewording of the same question scores ~0.92, the same question for
another year ~0.76 and for another metric ~0.55 (tests/unit/test_mine_rerankers.py pins the
ordering), and on the paper-scale benchmark corpus (eval/README.md, mining section) fewer than
1 in 50,000 traversed pairs reach 0.9. It is strict on purpose: a lexical scorer cannot see
paraphrase, and the paper found 24% false positives even with a real reranker at 0.99. Not yet
calibrated against a real reranker's decisions.

Everything is vectorised with scipy sparse matrices: a block of n x m pairs costs one sparse
product per field, which is what lets the paper-scale traversal (tens of millions of pairs)
run in minutes on 2 cores.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from fincprg.finance import question_core
from fincprg.mine.facts import FactsCache, entity_keys, period_key
from fincprg.registry import PAIR_SCORERS

LEXICAL_THRESHOLD = 0.9
AGREEMENT_WEIGHT = 0.25


def _binary_matrix(key_sets: list[set[str]], vocab: dict[str, int]) -> sp.csr_matrix:
    indptr, indices = [0], []
    for keys in key_sets:
        for k in sorted(keys):
            indices.append(vocab.setdefault(k, len(vocab)))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float32)
    return sp.csr_matrix((data, np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
                         shape=(len(key_sets), max(len(vocab), 1)))


class LexicalReranker:
    """Offline scorer; implements both :class:`Reranker` and :class:`BlockScorer`."""

    name = "lexical"
    default_threshold = LEXICAL_THRESHOLD

    def __init__(self, facts: FactsCache | None = None, *, ngram_range: tuple[int, int] = (1, 2),
                 weight: float = AGREEMENT_WEIGHT, workers: int = 1):
        self.workers = workers
        self.facts = facts or FactsCache()
        self.ngram_range = ngram_range
        self.weight = weight
        self._index: dict[str, int] = {}
        self._vec = None
        self._x: sp.csr_matrix | None = None
        self._fields: list[sp.csr_matrix] = []
        self._vocabs: list[dict[str, int]] = [{}, {}, {}]

    # -- inventory -----------------------------------------------------------------------------
    def prepare(self, texts: Sequence[str]) -> None:
        """Fit IDF on ``texts`` (deduplicated, order kept) and encode them; later texts are appended."""
        new = [t for t in dict.fromkeys(texts) if t not in self._index]
        if not new:
            return
        cores = [question_core(t) for t in new]
        if self._vec is None:
            from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: PLC0415

            self._vec = TfidfVectorizer(analyzer="char", ngram_range=self.ngram_range, sublinear_tf=True,
                                        lowercase=True, dtype=np.float32)
            x = self._vec.fit_transform(cores)
        else:
            x = self._vec.transform(cores)
        self.facts.prefetch(new, workers=self.workers)
        facts = self.facts.many(new)
        fields = [
            [entity_keys(f) for f in facts],
            [set(f.metrics) for f in facts],
            [{period_key(p) for p in f.periods} for f in facts],
        ]
        # already as wide as each vocabulary after this batch; only older rows need padding (below)
        mats = [_binary_matrix(ks, v) for ks, v in zip(fields, self._vocabs, strict=True)]
        base = len(self._index)
        for i, t in enumerate(new):
            self._index[t] = base + i
        if self._x is None:
            self._x, self._fields = x.tocsr(), mats
        else:
            self._x = sp.vstack([self._x, x]).tocsr()
            self._fields = [sp.vstack([_pad(old, len(v)), m]).tocsr()
                            for old, m, v in zip(self._fields, mats, self._vocabs, strict=True)]

    def rows(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self._index]
        if missing:
            self.prepare(missing)
        return np.fromiter((self._index[t] for t in texts), dtype=np.int64, count=len(texts))

    # -- scoring -------------------------------------------------------------------------------
    def score_rows(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """Score matrix (len(ia) x len(ib)) for inventory rows; float32."""
        assert self._x is not None
        cos = (self._x[ia] @ self._x[ib].T).toarray()
        parts = []
        for f in self._fields:
            fa, fb = f[ia], f[ib]
            inter = (fa @ fb.T).toarray()
            na = np.asarray(fa.sum(axis=1), dtype=np.float32).reshape(-1, 1)
            nb = np.asarray(fb.sum(axis=1), dtype=np.float32).reshape(1, -1)
            parts.append((inter, na, nb))
        return self._combine(cos, parts)

    def _combine(self, cos: np.ndarray, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
        cos = np.clip(cos.astype(np.float32, copy=False), 0.0, 1.0)
        total = np.zeros_like(cos)
        count = np.zeros_like(cos)
        for inter, na, nb in parts:
            if not (na.any() or nb.any()):
                continue
            ha, hb = na > 0, nb > 0
            both = ha & hb
            one = ha ^ hb
            union = np.maximum(na + nb - inter, 1.0)
            total += np.where(both, inter / union, np.where(one, 0.5, 0.0))
            count += (both | one)
        agree = np.where(count > 0, total / np.maximum(count, 1.0), cos)
        return np.clip((1.0 - self.weight) * cos + self.weight * agree, 0.0, 1.0).astype(np.float32)

    def for_space(self, space: str) -> object:
        """The scorer of a traversal space: a broad topic subquery is never lexically *similar* to a specific
        passage query, so in the topic space the offline stand-in for a reranker's judgement is coverage
        (:mod:`fincprg.mine.coverage`); a neural scorer judges every space itself."""
        if space == "topic":
            from fincprg.mine.coverage import CoverageScorer  # noqa: PLC0415

            return CoverageScorer()
        return self

    def score_block(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        return self.score_rows(self.rows(a), self.rows(b))

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        ia = self.rows([p[0] for p in pairs])
        ib = self.rows([p[1] for p in pairs])
        assert self._x is not None
        cos = np.asarray(self._x[ia].multiply(self._x[ib]).sum(axis=1), dtype=np.float32)
        parts = []
        for f in self._fields:
            fa, fb = f[ia], f[ib]
            inter = np.asarray(fa.multiply(fb).sum(axis=1), dtype=np.float32)
            na = np.asarray(fa.sum(axis=1), dtype=np.float32)
            nb = np.asarray(fb.sum(axis=1), dtype=np.float32)
            parts.append((inter, na, nb))
        return [float(x) for x in self._combine(cos, parts).reshape(-1)]


def _pad(m: sp.csr_matrix, width: int) -> sp.csr_matrix:
    width = max(width, 1)
    if m.shape[1] == width:
        return m
    m = m.tocsr()
    return sp.csr_matrix((m.data, m.indices, m.indptr), shape=(m.shape[0], width))


def _lexical(*, facts: FactsCache | None = None, workers: int = 1, **_: object) -> LexicalReranker:
    return LexicalReranker(facts=facts, workers=workers)


PAIR_SCORERS.register("lexical", _lexical, threshold=LEXICAL_THRESHOLD, gpu=False,
                      description="offline lexical scorer (char n-grams + finance-field agreement)")
