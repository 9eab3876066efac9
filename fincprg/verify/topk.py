"""Exact top-``depth`` BM25 search without scoring every passage (issue 23): MaxScore over batches of queries.

Scoring every query against every passage made verify quadratic (queries grow with the corpus). Per query:

1. **Rounds.** The query's still *essential* terms are scored over their postings, cheapest (lowest df) first,
   within a posting budget per round (one sparse product per round for the batch; by default a first round of
   ``BUDGET`` postings, then all the essential terms left: more rounds cost more than they save). After each
   round, the ``probe`` best passages so far get the weights of the query's unscored common terms (looked up)
   on top: these are lower bounds of true scores, so the ``depth``-th largest is a threshold theta that at
   least ``depth`` passages reach.
2. **Non-essential terms.** Unscored common terms, lowest upper bound (the term's largest weight in any
   passage) first, whose bounds sum below theta cannot lift a passage that has none of the scored terms into
   the top ``depth``: only passages in the postings of the scored terms remain candidates, and once every
   term left is non-essential the rounds stop.
3. **Candidates.** A candidate whose scored part plus the bounds of the unscored terms stays below theta is
   dropped; the others get the unscored terms' weights one term at a time (largest bound first), dropping as
   the bound tightens.

Scores are then the sums the exhaustive product gives, rounded to 9 decimals, up to the order of the
additions; where that order could change the rounded value (a sum within the float error of a rounding
boundary) the weights are added again in the product's order (the query's terms by id), so the rounded
scores, the ranking and its ties (document order) are the exhaustive search's, bit for bit. Every margin is
wider than the float error of a sum (``delta``), so no float rounding prunes a passage that belongs.

With ``floors`` (verify's round trip: a query's best own passage's score x (1 - margin), see
``roundtrip.own_floors``) the floor is the threshold from the start and only passages at or above it come
back. The work per query still grows with the corpus where the passages close to a query's own do (as on
bench_scale's corpus; eval/README.md's scale section has the stage's measured seconds), and the terms' upper
bounds (a term's largest weight anywhere) are loose: block-max bounds would be the next step.
"""
from __future__ import annotations

from typing import Any

import numpy as np

# the index searched: a fincprg.verify.roundtrip.CharBM25 (not imported, not even for typing: roundtrip imports
# this module, and the package's import graph stays without cycles)
CharBM25 = Any

_U = 2.0 ** -53  # unit round-off of float64
BUDGET = 1024  # postings per query in the first round
GROWTH = 1e12  # budget factor from one round to the next (1e12: the second round takes all that is left)
# non-essential terms' bounds sum below this share of the threshold: a tighter filter on the candidates for
# more postings scored; 0.6 was ~1.2x faster than 1.0 on bench_scale's corpus with verify's floors
LAZY_SHARE = 0.6
MIN_THETA = 1e-6  # below this a threshold prunes nothing (zero-score passages tie and go by document order)


def lookup(bm: CharBM25, terms: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """``bm.weights[terms, docs]`` element-wise (0 where the term is absent), exactly as stored."""
    out = np.zeros(len(terms), dtype=np.float64)
    if not len(terms):
        return out
    slot = bm.common_slot[terms]
    dense = slot >= 0
    if dense.any():
        out[dense] = bm.common_weight(slot[dense], terms[dense], docs[dense])
    if (~dense).any():
        out[~dense] = _bsearch(bm.weights, terms[~dense], docs[~dense])
    return out


def _bsearch(w, terms: np.ndarray, docs: np.ndarray) -> np.ndarray:  # noqa: ANN001 - scipy CSR matrix
    """Binary search of each document in its term's row (rows hold sorted document indices)."""
    lo, end = w.indptr[terms].astype(np.int64), w.indptr[terms + 1].astype(np.int64)
    hi = end.copy()
    last = max(len(w.indices) - 1, 0)
    for _ in range(int(np.max(end - lo, initial=0)).bit_length()):
        mid = (lo + hi) // 2
        go = (lo < hi) & (w.indices[np.minimum(mid, last)] < docs)
        lo = np.where(go, mid + 1, lo)
        hi = np.where(go | (lo >= hi), hi, mid)
    hit = (lo < end) & (w.indices[np.minimum(lo, last)] == docs)
    return np.where(hit, w.data[np.minimum(lo, last)], 0.0)


def _at_least(p, limit: np.ndarray) -> np.ndarray:  # noqa: ANN001 - scipy CSR matrix
    """``p.data >= limit[row]`` for every stored entry of ``p``, a row at a time: no per-entry copy of the
    limits (the sums of a batch are the search's largest arrays)."""
    out = np.empty(len(p.data), dtype=bool)
    ptr = p.indptr
    for r in range(len(ptr) - 1):
        np.greater_equal(p.data[ptr[r]:ptr[r + 1]], limit[r], out=out[ptr[r]:ptr[r + 1]])
    return out


def _ragged(owner: np.ndarray, ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For item i owned by row ``owner[i]``, every position of that row's list ``ptr[r]:ptr[r+1]``:
    (item index, position), items in order and positions in list order."""
    start, count = ptr[owner], ptr[owner + 1] - ptr[owner]
    item = np.repeat(np.arange(len(owner)), count)
    pos = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count) + start[item]
    return item, pos


def _grouped(rows: np.ndarray, key: np.ndarray, mask: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The entries where ``mask`` holds, by row then ``key`` ascending (stable): entry indices, row pointers."""
    ent = np.flatnonzero(mask)
    ent = ent[np.lexsort((key[ent], rows[ent]))]
    ptr = np.zeros(b + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[ent], minlength=b), out=ptr[1:])
    return ent, ptr


def _prefix_below(rows: np.ndarray, key: np.ndarray, mask: np.ndarray, limit: np.ndarray, b: int) -> np.ndarray:
    """Per row, the entries of ``mask`` in ascending ``key`` whose running sum of ``key`` stays below the row's
    ``limit`` (strictly): a bool over the entries."""
    ent, ptr = _grouped(rows, key, mask, b)
    out = np.zeros(len(rows), dtype=bool)
    if len(ent):
        run = np.cumsum(key[ent])
        run -= np.repeat(np.concatenate([[0.0], run])[ptr[:-1]], np.diff(ptr))
        out[ent] = run < limit[rows[ent]]
    return out


class _Batch:
    """One batch of queries through the rounds; entries are the (query, term) pairs of the query matrix."""

    def __init__(self, bm: CharBM25, queries, depth: int, probe: int,  # noqa: ANN001 - a sequence of str
                 floors: np.ndarray | None = None):
        self.bm, self.depth, self.probe = bm, depth, probe
        q = bm.query_matrix(queries)
        self.b, self.qptr, self.terms = q.shape[0], q.indptr.astype(np.int64), q.indices.astype(np.int64)
        self.rows = np.repeat(np.arange(self.b), np.diff(self.qptr))
        self.bound = bm.max_weight[self.terms]
        self.df = bm.df[self.terms].astype(np.float64)
        self.common = bm.common_slot[self.terms] >= 0
        k = np.diff(self.qptr)
        # any two orders of adding a query's k weights differ by at most 2(k-1)u times their sum: delta is
        # twice that, the margin covers delta on both sides and the 9-decimal rounding
        self.delta = 4 * (k + 2) * _U * np.bincount(self.rows, self.bound, minlength=self.b) + 1e-300
        self.margin = 2 * self.delta + 2e-9
        # a query's floor (only passages scoring at least that are wanted) is a threshold from the start
        self.floors = np.full(self.b, -np.inf) if floors is None else floors
        self.theta = np.where(self.floors >= MIN_THETA, self.floors, 0.0)
        self.scored = np.zeros(len(self.terms), dtype=bool)
        self.part = None  # scipy CSR (b x n_docs): sums of the scored terms' weights

    def essential(self) -> np.ndarray:
        """Unscored entries that are not non-essential (see the module docstring)."""
        limit = np.where(self.theta > 0, LAZY_SHARE * self.theta - self.margin, -np.inf)
        lazy = _prefix_below(self.rows, self.bound, self.common & ~self.scored, limit, self.b)
        return ~self.scored & ~lazy

    def round(self, todo: np.ndarray, budget: float) -> None:
        """Score the cheapest essential terms of each query (running df within ``budget``, at least one)."""
        from scipy import sparse

        ent, ptr = _grouped(self.rows, self.df, todo, self.b)
        run = np.cumsum(self.df[ent])
        run -= np.repeat(np.concatenate([[0.0], run])[ptr[:-1]], np.diff(ptr))
        first = np.zeros(len(ent), dtype=bool)
        first[ptr[:-1][np.diff(ptr) > 0]] = True
        self.scored[ent[(run <= budget) | first]] = True
        # all scored terms again rather than adding to the last round's sums: the earlier rounds' postings are
        # few, adding two large sparse matrices is not
        take = np.flatnonzero(self.scored)
        self.part = None  # the last round's sums are not needed while the product runs: not both held
        sel = sparse.csr_matrix((np.ones(len(take)), (self.rows[take], self.terms[take])),
                                shape=(self.b, self.bm.weights.shape[0]))
        self.part = sel @ self.bm.weights

    def raise_theta(self) -> None:
        """Lower bounds of the ``probe`` best passages so far (scored part + looked-up unscored common terms)."""
        p = self.part
        # a passage whose scored part plus every unscored bound stays below theta cannot raise it: one pass
        # leaves them out, so the per-query partial sort sees few
        unscored = np.bincount(self.rows, np.where(self.scored, 0.0, self.bound), minlength=self.b)
        floor = np.where(self.theta > 0, self.theta - self.margin - unscored, -np.inf)
        hit = np.flatnonzero(_at_least(p, floor))
        start = np.searchsorted(hit, p.indptr)
        # a query with a floor (near its top score) is probed once its essential terms are all scored: before,
        # the loose bounds let through many passages below the floor (measured: 1x 2x slower); after, the
        # depth-th score beats the floor where many passages are near the top (16x: 1.5x faster)
        wait = (self.floors > 0) & (np.bincount(self.rows, self.essential(), minlength=self.b) > 0)
        docs, owner = [], []
        for r in range(self.b):
            a, e = start[r], start[r + 1]
            if e - a < self.depth or wait[r]:
                continue
            pick = hit[a:e]
            if e - a > self.probe:
                pick = pick[np.argpartition(-p.data[pick], self.probe - 1)[:self.probe]]
            docs.append(pick)
            owner.append(np.full(len(pick), r))
        if not docs:
            return
        pos = np.concatenate(docs)
        pr, pd = np.concatenate(owner), p.indices[pos].astype(np.int64)
        lb = p.data[pos] + self._add(pr, pd, self.common & ~self.scored)
        order = np.lexsort((-lb, pr))
        pr, lb = pr[order], lb[order]
        first = np.searchsorted(pr, np.arange(self.b))
        has = np.bincount(pr, minlength=self.b) >= self.depth
        kth = np.where(has, lb[np.minimum(first + self.depth - 1, len(lb) - 1)], 0.0) - self.delta
        self.theta = np.maximum(self.theta, np.where(kth >= MIN_THETA, kth, 0.0))

    def _add(self, pr: np.ndarray, pd: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Per pair (query, doc): the sum of the weights of the query's ``mask`` entries in that doc."""
        ent, ptr = _grouped(self.rows, self.terms, mask, self.b)
        item, pos = _ragged(pr, ptr)
        return np.bincount(item, lookup(self.bm, self.terms[ent[pos]], pd[item]), minlength=len(pr))

    def finish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidates with exact rounded scores: (query, doc, score) arrays."""
        p = self.part
        rest = ~self.scored  # all non-essential now
        floor = np.where(self.theta > 0, self.theta - self.margin, -np.inf)
        ent, ptr = _grouped(self.rows, -self.bound, rest, self.b)  # largest bound first
        count = np.diff(ptr)
        left = np.bincount(self.rows[ent], self.bound[ent], minlength=self.b)
        # few passes over the (large) sums: a candidate needs its scored part to reach floor - left
        keep = _at_least(p, floor - left)
        s, pd = p.data[keep], p.indices[keep].astype(np.int64)
        kept = np.concatenate([[0], np.cumsum(keep)])[p.indptr]
        self.part = p = None  # the sums are read: free them before the lookups
        pr = np.repeat(np.arange(self.b), np.diff(kept))
        for j in range(int(np.max(count, initial=0))):
            has = count[pr] > j
            s[has] += lookup(self.bm, self.terms[ent[ptr[pr[has]] + j]], pd[has])
            now = ent[ptr[:-1][count > j] + j]  # each query's j-th term, now added
            left = np.maximum(left - np.bincount(self.rows[now], self.bound[now], minlength=self.b), 0.0)
            keep = s + left[pr] >= floor[pr]
            pr, pd, s = pr[keep], pd[keep], s[keep]
        return pr, pd, self._rounded(pr, pd, s)

    def _rounded(self, pr: np.ndarray, pd: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``np.round(exact, 9)`` where ``exact`` is the sum in the product's order; ``s`` differs from it by at
        most delta, which changes the rounding only near a boundary: those sums are added again in order."""
        y = s * 1e9
        tol = 2 * self.delta[pr] * 1e9 + 4 * np.spacing(np.abs(y))
        risky = np.abs(np.abs(y - np.floor(y)) - 0.5) <= tol
        if risky.any():
            s = s.copy()
            s[risky] = self.exact(pr[risky], pd[risky])
        return np.round(s, 9)

    def exact(self, pr: np.ndarray, pd: np.ndarray) -> np.ndarray:
        """Scores summed as the sparse product sums them: 0 + w(t1) + w(t2) + ... over the query's terms by id."""
        return _exact(self.bm, self.qptr, self.terms, pr, pd)


def _exact(bm: CharBM25, qptr: np.ndarray, terms: np.ndarray, pr: np.ndarray, pd: np.ndarray) -> np.ndarray:
    """:meth:`_Batch.exact` for the query matrix rows ``qptr``/``terms`` (CSR, terms by id within a row)."""
    item, pos = _ragged(pr, qptr)
    w = lookup(bm, terms[pos], pd[item])
    width = np.diff(qptr)[pr]
    grid = np.zeros((len(pr), int(width.max(initial=0))))
    grid[item, pos - qptr[pr][item]] = w
    acc = np.zeros(len(pr))
    for col in grid.T:  # one addition at a time, left to right (a row's padding adds 0.0: no change)
        acc += col
    return acc


def pair_scores(bm: CharBM25, queries, pr: np.ndarray, pd: np.ndarray) -> np.ndarray:  # noqa: ANN001
    """The rounded scores of the pairs (query ``pr[i]``, document ``pd[i]``), bit for bit as the searches give
    them (the sparse product's order of additions, then 9 decimals)."""
    pr, pd = np.asarray(pr, dtype=np.int64), np.asarray(pd, dtype=np.int64)
    if not len(pr):
        return np.zeros(0)
    q = bm.query_matrix(queries)
    return np.round(_exact(bm, q.indptr.astype(np.int64), q.indices.astype(np.int64), pr, pd), 9)


def search(bm: CharBM25, queries, depth: int, batch: int = 256, progress=None,  # noqa: ANN001
           budget: float = BUDGET, growth: float = GROWTH,
           floors: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """What ``bm.search_exhaustive`` returns, bit for bit: top ``depth`` (indices, rounded scores) per query.

    ``floors`` (one per query; NaN or <= 0: none): a query with a floor gets only the documents whose rounded
    score is >= it, still best first and at most ``depth``: the exhaustive list's prefix at or above the floor,
    the row padded with index -1 and score -inf. A floor near the query's top score prunes far more than the
    ``depth``-th score does (verify's round trip: the floor is from the query's own passage)."""
    n = bm.n_docs
    depth = min(depth, n)
    fl = _floors(floors, len(queries))
    if depth >= n:
        return _cut(*bm.search_exhaustive(queries, depth, batch=batch, progress=progress), fl)
    idx = np.zeros((len(queries), depth), dtype=np.int64)
    val = np.zeros((len(queries), depth), dtype=np.float64)
    probe = 2 * depth
    for s0 in range(0, len(queries), batch):
        chunk = queries[s0:s0 + batch]
        bt = _Batch(bm, chunk, depth, probe, fl[s0:s0 + len(chunk)])
        grow = float(budget)
        while (todo := bt.essential()).any():
            bt.round(todo, grow)
            bt.raise_theta()
            grow *= growth
        if bt.part is None:  # no query has a known term
            bt.part = _empty(bt.b, n)
        pr, pd, sc = bt.finish()
        _place(pr, pd, sc, depth, n, idx[s0:s0 + len(chunk)], val[s0:s0 + len(chunk)], bt.floors)
        if progress is not None:
            progress(len(chunk))
    return idx, val


def _floors(floors: np.ndarray | None, nq: int) -> np.ndarray:
    """Per query, its floor (> 0) or -inf (none)."""
    if floors is None:
        return np.full(nq, -np.inf)
    fl = np.asarray(floors, dtype=np.float64)
    if fl.shape != (nq,):
        raise ValueError(f"floors: one per query ({nq}), got shape {fl.shape}")
    return np.where(fl > 0, fl, -np.inf)  # NaN > 0 is False


def _cut(idx: np.ndarray, val: np.ndarray, fl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Entries below their query's floor become (-1, -inf) (they are a suffix: rows are best first)."""
    below = val < fl[:, None]
    return np.where(below, -1, idx), np.where(below, -np.inf, val)


def _empty(b: int, n: int):  # noqa: ANN202 - scipy CSR matrix
    from scipy import sparse

    return sparse.csr_matrix((b, n), dtype=np.float64)


def _place(pr: np.ndarray, pd: np.ndarray, sc: np.ndarray, depth: int, n: int, idx: np.ndarray,
           val: np.ndarray, floors: np.ndarray) -> None:
    """Each query's best ``depth`` (score descending, then document order); when fewer than ``depth``
    candidates score above 0, the rest are the first zero-score documents in document order, as in a full sort.
    A query with a floor gets only its candidates at or above it, the rest of its row (-1, -inf)."""
    pos = sc > 0
    pr, pd, sc = pr[pos], pd[pos], sc[pos]
    order = np.lexsort((pd, -sc, pr))
    pr, pd, sc = pr[order], pd[order], sc[order]
    start = np.searchsorted(pr, np.arange(len(idx) + 1))
    for r in range(len(idx)):
        a, e = start[r], min(start[r + 1], start[r] + depth)
        if floors[r] > 0:  # the candidates are sorted: those at or above the floor come first
            e = a + int(np.count_nonzero(sc[a:e] >= floors[r]))
        got = e - a
        idx[r, :got], val[r, :got] = pd[a:e], sc[a:e]
        if got < depth and floors[r] > 0:
            idx[r, got:], val[r, got:] = -1, -np.inf
        elif got < depth:
            # the got positives take at most got of the first depth documents
            zeros = np.setdiff1d(np.arange(depth), pd[a:e], assume_unique=True)[:depth - got]
            idx[r, got:], val[r, got:] = zeros, 0.0
