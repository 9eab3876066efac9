"""Round trip: a query must retrieve its own source from the whole corpus, and not many unrelated reports as well.

The retriever is BM25 over characters and character bigrams: no word segmentation, so it shares nothing
with the generator's (jieba, finance lexicon) reading of the text. Scoring is one sparse matrix product per
batch of queries (scipy), so ~150k queries over ~30k passages stay a few matrix products, not a Python loop
over pairs.

* ``not_retrieved``: none of the query's own passages (sentence/passage level: its passage; report level: any
  passage of its report; topic and intent: any passage of the topic's reports) is in the top ``k``.
* ``ambiguous``: at least ``n`` other, unrelated reports (another company's, or outside the topic) have a
  passage scoring within ``margin`` (relative) of the query's best own passage: it would match many
  reports about equally well.
* ``not_retrieved_dense`` (``verify.dense.model`` set): the same top-``k`` test with a bi-encoder (e.g.
  multilingual-e5-small, with its query/passage prompts), run on the queries BM25 kept. Dense cosines
  crowd into a narrow band, so the relative-margin ambiguity test stays with BM25.
"""
from __future__ import annotations

import operator
import re
import unicodedata
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from fincprg.verify.registry import ALL, Rule, register
from fincprg.verify.verdict import Reason, Verdict

# run by the stage over the whole corpus, after the per-query rules (no per-query check)
register(Rule("round_trip", ALL, (Reason.NOT_RETRIEVED, Reason.AMBIGUOUS), "query, the whole corpus",
              "character BM25 ranks an own passage in the top k, and not many unrelated reports as high",
              switch="round_trip", kind="stage", tested_by="tests/unit/test_verify_checks.py::test_round_trip_finds_"
              "the_own_passage_and_flags_ambiguous_queries"))
register(Rule("round_trip_dense", ALL, (Reason.NOT_RETRIEVED_DENSE,), "query, the whole corpus",
              "verify.dense.model ranks an own passage in the top k", switch="round_trip", kind="stage",
              tested_by="tests/integration/test_verify_stage.py::test_the_dense_round_trip_drops_what_the_bi_encoder_"
              "does_not_retrieve"))

_FLOOR_BATCH = 4096  # queries per batch of own_floors
_KEEP = re.compile(r"[0-9A-Za-z\u3400-\u9fff]+")


def char_tokens(text: str) -> list[str]:
    """Characters and character bigrams of each run of letters, digits and CJK characters (lower-cased)."""
    out: list[str] = []
    for run in _KEEP.findall(unicodedata.normalize("NFKC", text).lower()):
        out.extend(run)
        out.extend(map(operator.add, run, run[1:]))  # run[i:i + 2], in C
    return out


class CharBM25:
    """Okapi BM25 (k1, b) over :func:`char_tokens`, held as a sparse term x document weight matrix.

    Built in bounded memory (issue 23): the (term, count) entries of each document go into 4-byte arrays
    (Python lists of them took 24 bytes an entry: 48M entries at 16,000 reports), become a column-per-document
    matrix without a sort, and the weights replace the counts in place, a slice at a time. The matrix is
    the one the term x document COO build gave, entry for entry.
    """

    _SLICE = 1 << 20  # entries weighted at a time
    COMMON = 4  # terms in more than 1/COMMON of the passages get a dense count table (pruned search)

    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75):
        from scipy import sparse

        terms, counts, starts = array("i"), array("i"), array("q", [0])
        lengths = np.zeros(len(docs), dtype=np.float64)
        # a missing token gets the next id on lookup (the factory runs before the insert): ids in C
        vocab: defaultdict[str, int] = defaultdict()
        vocab.default_factory = vocab.__len__
        for d, text in enumerate(docs):
            toks = char_tokens(text)
            lengths[d] = len(toks)
            # counted by token in C, ids by first occurrence (Counter keeps it): the per-token dict loop's arrays
            per_doc = Counter(toks)
            terms.extend(map(vocab.__getitem__, per_doc))
            counts.extend(per_doc.values())
            starts.append(len(terms))
        self.vocab = dict(vocab)
        # counts as float32 (exact below 2**24) through the conversion, float64 once it is done: half the bytes
        # at the build's peak, where both layouts are held
        data = np.asarray(counts, dtype=np.float32)
        del counts
        shape = (len(self.vocab), len(docs))
        # one column per document; as CSR each term's row lists its documents in order, as the COO build did
        tf = sparse.csc_matrix((data, np.frombuffer(terms, dtype=np.int32), np.frombuffer(starts, dtype=np.int64)),
                               shape=shape).tocsr()
        del data, terms, starts
        tf = sparse.csr_matrix((tf.data.astype(np.float64), tf.indices, tf.indptr), shape=shape)
        n = max(len(docs), 1)
        df = np.diff(tf.indptr)
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        avg = lengths.mean() if len(docs) else 1.0
        # per document, the length part of the BM25 denominator (the same expression, element by element)
        kd = k1 * (1 - b + b * lengths / max(avg, 1e-9))
        # the pruned search (fincprg.verify.topk) looks up weights of common terms in passages: their counts
        # as a dense table (a few hundred terms x passages, bytes), weighted as below on the fly
        common = np.flatnonzero(df > n / self.COMMON)
        self.common_slot = np.full(len(self.vocab), -1, dtype=np.int64)
        self.common_slot[common] = np.arange(len(common))
        top = max((tf.data[tf.indptr[t]:tf.indptr[t + 1]].max() for t in common), default=0)
        self.common_tf = np.zeros((len(common), len(docs)), dtype=np.min_scalar_type(int(top)))
        for j, t in enumerate(common):
            self.common_tf[j, tf.indices[tf.indptr[t]:tf.indptr[t + 1]]] = tf.data[tf.indptr[t]:tf.indptr[t + 1]]
        w = tf.data  # counts in, weights out (the same expression, element by element, as on the whole array)
        for s in range(0, len(w), self._SLICE):
            e = min(s + self._SLICE, len(w))
            row = np.searchsorted(tf.indptr, np.arange(s, e), side="right") - 1
            tfd = w[s:e]
            w[s:e] = idf[row] * tfd * (k1 + 1) / (tfd + kd[tf.indices[s:e]])
        self.weights = tf
        self.n_docs = len(docs)
        self.k1, self.idf, self.kd, self.df = k1, idf, kd, df
        # each term's largest weight in any passage: its upper bound in a score
        self.max_weight = np.maximum.reduceat(w, tf.indptr[:-1]) if len(w) else np.zeros(len(self.vocab))

    def common_weight(self, slot: np.ndarray, terms: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """Weights of common terms (``slot`` in the dense count table) in ``docs``: what ``weights`` holds,
        bit for bit (the build's expression on the same numbers), 0 where the term is absent."""
        tfd = self.common_tf[slot, docs].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            w = self.idf[terms] * tfd * (self.k1 + 1) / (tfd + self.kd[docs])
        return np.where(tfd > 0, w, 0.0)

    def query_matrix(self, queries: Sequence[str]):  # noqa: ANN201 - scipy sparse matrix
        from scipy import sparse

        rows, cols = [], []
        for r, q in enumerate(queries):
            ids = {self.vocab[t] for t in char_tokens(q) if t in self.vocab}
            rows.extend([r] * len(ids))
            cols.extend(sorted(ids))
        return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(queries), len(self.vocab)))

    def search(self, queries: Sequence[str], depth: int, batch: int = 256,
               progress: Callable[[int], None] | None = None,
               floors: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top ``depth`` documents per query: (indices, scores), best first; ties broken by document order.
        Exactly :meth:`search_exhaustive`'s result, without scoring every document (:mod:`fincprg.verify.topk`);
        ``floors`` (per query, > 0) keep only the documents scoring at least that, rows padded (-1, -inf)."""
        from fincprg.verify import topk

        return topk.search(self, queries, depth, batch=batch, progress=progress, floors=floors)

    def search_exhaustive(self, queries: Sequence[str], depth: int, batch: int = 256,
                          progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`search` by scoring every query against every document (the reference; quadratic)."""
        depth = min(depth, self.n_docs)
        idx = np.zeros((len(queries), depth), dtype=np.int64)
        val = np.zeros((len(queries), depth), dtype=np.float64)
        for s in range(0, len(queries), batch):
            scores = (self.query_matrix(queries[s:s + batch]) @ self.weights).toarray()
            # round so that sums in another order give the same ranking (stable across machines)
            scores = np.round(scores, 9)
            # the depth-th score; of the documents tied at it, the first ones in document order (argpartition
            # alone picks among them in no defined order)
            kth = -np.partition(-scores, depth - 1, axis=1)[:, depth - 1] if 0 < depth < self.n_docs else None
            for r in range(len(scores)):
                top = np.arange(self.n_docs)
                if kth is not None:
                    above = np.flatnonzero(scores[r] > kth[r])
                    top = np.concatenate([above, np.flatnonzero(scores[r] == kth[r])[:depth - len(above)]])
                order = sorted(top, key=lambda d: (-scores[r, d], d))
                idx[s + r] = order
                val[s + r] = scores[r, order]
            if progress is not None:
                progress(len(scores))
        return idx, val


@dataclass(frozen=True)
class Target:
    """What counts as a query's own source: passages (by corpus index) and the reports they belong to;
    ``related`` reports (same company, same topic) are neither own nor counted against it."""

    own: frozenset[int]
    own_reports: frozenset[str]
    related: frozenset[str] = frozenset()


def dense_search(queries: Sequence[str], docs: Sequence[str], cfg: Any, depth: int,
                 progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top ``depth`` documents per query by cosine with ``cfg.model`` (``verify.dense``), best first."""
    from fincprg.models import TextEncoder

    enc = TextEncoder(cfg.model, where="verify.dense.model", batch_size=cfg.batch_size, device=cfg.device,
                      alternative="verify.dense.model: null (character BM25 only)")
    d = enc.encode(list(docs), show_progress=False, role="passage")
    depth = min(depth, len(docs))
    idx = np.zeros((len(queries), depth), dtype=np.int64)
    val = np.zeros((len(queries), depth), dtype=np.float64)
    for s in range(0, len(queries), 256):
        sims = np.round(enc.encode(list(queries[s:s + 256]), role="query") @ d.T, 6)
        for r, row in enumerate(sims):
            order = sorted(np.argpartition(-row, depth - 1)[:depth], key=lambda j: (-row[j], j))
            idx[s + r], val[s + r] = order, row[order]
        if progress is not None:
            progress(len(sims))
    return idx, val


def own_floors(bm: CharBM25, queries: Sequence[str], owns: Sequence[frozenset[int]], margin: float) -> np.ndarray:
    """Per query, the lowest score :func:`judge_ranking` reads (BM25 pass): its best own passage's score S, as
    the search rounds it, times (1 - margin), at most S. Every passage ranked before that own passage scores
    >= S, so the documents at or above the floor, best first and cut to the same depth, are the full ranking's
    prefix that both tests read: the same verdicts. NaN (no floor) where S is 0: the own passage then ranks
    among the zero scores, by document order, and the query needs the whole top depth."""
    from fincprg.verify import topk

    best = np.zeros(len(owns))
    for s in range(0, len(owns), _FLOOR_BATCH):  # a batch at a time: the pairs' weight grid is pairs x terms
        part = [sorted(o) for o in owns[s:s + _FLOOR_BATCH]]
        pr = np.repeat(np.arange(len(part)), [len(o) for o in part])
        pd = np.fromiter((d for o in part for d in o), dtype=np.int64, count=len(pr))
        np.maximum.at(best[s:s + len(part)], pr, topk.pair_scores(bm, queries[s:s + len(part)], pr, pd))
    return np.where(best > 0, np.minimum(best, best * (1 - margin)), np.nan)


def judge_ranking(ranked: np.ndarray, scores: np.ndarray, target: Target, report_of: Sequence[str], *,
                  k: int, n: int | None, margin: float, dense: str | None = None) -> Verdict | None:
    """Round-trip verdict for one query from its ranked passages (corpus indices) and their scores;
    ``dense`` (the model) for a dense ranking: only the top-``k`` test, ``n`` None skips ambiguity."""
    best = next((r for r, d in enumerate(ranked[:k]) if int(d) in target.own), None)
    if best is None and dense:
        return Verdict(Reason.NOT_RETRIEVED_DENSE, f"none of its own passages is in the top {k} of the dense model "
                       f"{dense} over the corpus")
    if best is None:
        return Verdict(Reason.NOT_RETRIEVED, f"none of its own passages is in the top {k} of a character BM25 over "
                       "the corpus")
    if n is None:
        return None
    floor = scores[best] * (1 - margin)
    others = {report_of[int(d)] for d, s in zip(ranked, scores) if s >= floor and s > 0} \
        - target.own_reports - target.related
    if len(others) >= n:
        return Verdict(Reason.AMBIGUOUS, f"{len(others)} unrelated reports score within {margin:.0%} of its own "
                       f"passage ({', '.join(sorted(others)[:3])}…)")
    return None


class Docs(Sequence[str]):
    """The corpus rows as the round trip indexes them (``src``: verify's sources: passages, reports), made when
    read: a passage with its report's title, as the exported corpus row carries it (not held: a second copy of the
    corpus's text)."""

    def __init__(self, src: Any):
        self.src = src

    def __len__(self) -> int:
        return len(self.src.passages)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        p = self.src.passages[i]
        info = self.src.reports.get(p.report_id)
        return f"{info.title}\n{p.text}" if info is not None else p.text


class RoundTrip:
    """Round-trip verdicts over the whole corpus. The corpus rows and each query's target (its own passages and
    related reports) are built once and shared by the BM25 pass and the dense pass that follows it."""

    def __init__(self, src: Any, cfg: Any):
        self.src, self.cfg = src, cfg
        self.docs = Docs(src)
        self.report_of = [p.report_id for p in src.passages]
        self.passages_of: dict[str, list[int]] = defaultdict(list)
        for i, rid in enumerate(self.report_of):
            self.passages_of[rid].append(i)
        self.reports_of: dict[str, set[str]] = defaultdict(set)  # company -> its reports (related to each other)
        for info in src.reports.values():
            for c in info.companies:
                self.reports_of[c].add(info.id)
        self.targets: dict[str, Target] = {}

    def target(self, q: Any) -> Target:
        src, targets = self.src, self.targets
        if q.level in ("sentence", "passage"):
            p = src.passage(q.source)
            assert p is not None
            key = f"p:{p.id}"
            if key not in targets:
                same = {r for c in src.reports[p.report_id].companies for r in self.reports_of[c]}
                targets[key] = Target(frozenset({src.passage_at[p.id]}), frozenset({p.report_id}), frozenset(same))
            return targets[key]
        if q.level == "report":  # a report question: every passage of its report is its own
            p = src.passage(q.source)
            assert p is not None
            key = f"r:{p.report_id}"
            if key not in targets:
                same = {r for c in src.reports[p.report_id].companies for r in self.reports_of[c]}
                own = frozenset(self.passages_of[p.report_id])
                targets[key] = Target(own, frozenset({p.report_id}), frozenset(same))
            return targets[key]
        key = f"t:{q.source}"
        if key not in targets:
            reports = {i.id for i in src.topic_reports(q.source)}
            targets[key] = Target(frozenset(i for r in reports for i in self.passages_of[r]), frozenset(reports))
        return targets[key]

    def __call__(self, queries: list[Any], progress: Callable[[int], None] | None = None,
                 dense: bool = False) -> list[Verdict | None]:
        """Verdicts for ``queries`` in one batched pass: character BM25, or (``dense``) the bi-encoder
        ``verify.dense.model``."""
        cfg = self.cfg
        if not queries or not self.docs:
            return [None] * len(queries)
        texts = [q.text for q in queries]
        if dense:
            idx, scores = dense_search(texts, self.docs, cfg.dense, cfg.top_k, progress=progress)
        else:
            depth = max(cfg.top_k, 10 * cfg.ambiguous_reports)
            bm = CharBM25(self.docs)
            # only the documents at or above each query's floor decide its verdict: pruning against it
            floors = own_floors(bm, texts, [self.target(q).own for q in queries], cfg.ambiguous_margin)
            idx, scores = bm.search(texts, depth, batch=cfg.batch_size, progress=progress, floors=floors)
            got = (idx >= 0).sum(axis=1)  # rows end in (-1, -inf) below the floor
            idx, scores = [i[:g] for i, g in zip(idx, got)], [s[:g] for s, g in zip(scores, got)]
        return [judge_ranking(idx[r], scores[r], self.target(q), self.report_of, k=cfg.top_k,
                              n=None if dense else cfg.ambiguous_reports, margin=cfg.ambiguous_margin,
                              dense=cfg.dense.model if dense else None) for r, q in enumerate(queries)]
