"""verify's pruned BM25 top-k (fincprg.verify.topk) returns the exhaustive search's (indices, scores) bit for bit:
judge_ranking reads the whole top ``depth`` (every unrelated report within the margin), so a passage the pruning
dropped, a tie put out of document order or a score rounded differently would change verdicts."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fincprg.verify import topk
from fincprg.verify.roundtrip import CharBM25

ROOT = Path(__file__).resolve().parents[2]
# a small alphabet: many shared characters and bigrams, equal documents and equal scores (ties)
ALPHABET = "营收利润增长公司毛利率下降风险"


def _same(bm: CharBM25, queries: list[str], depth: int, **kw) -> None:
    got = topk.search(bm, queries, depth, **kw)
    want = bm.search_exhaustive(queries, depth)
    assert got[0].shape == want[0].shape and got[0].dtype == want[0].dtype
    assert np.array_equal(got[0], want[0]), "pruned ranking differs from the exhaustive one"
    assert np.array_equal(got[1], want[1]), "pruned scores differ from the exhaustive ones"


def _text(rng: random.Random, lo: int, hi: int, alphabet: str = ALPHABET) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), n_docs=st.integers(1, 70), depth=st.integers(1, 12),
       budget=st.sampled_from([1, 8, 1024]), growth=st.sampled_from([2.0, 1e12]),
       common=st.sampled_from([1, 4, 10 ** 9]))
def test_pruned_search_is_the_exhaustive_one_on_random_corpora(seed, n_docs, depth, budget, growth, common):
    rng = random.Random(seed)
    docs = [_text(rng, 0, 30) for _ in range(n_docs)]
    docs += [docs[rng.randrange(n_docs)] for _ in range(rng.randint(0, 5))]  # equal documents: equal scores
    # common=1: no dense count table; 10**9: every term in it (lookups by binary search vs by the table)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(CharBM25, "COMMON", common)
        bm = CharBM25(docs)
    queries = [_text(rng, 1, 12) for _ in range(rng.randint(1, 20))]
    queries += ["", "鑫鑫 xyz", "。！", rng.choice(docs) or "营收"]  # no known term, a whole document
    _same(bm, queries, depth, budget=budget, growth=growth, batch=rng.choice([1, 3, 256]))
    _same(bm, queries, len(docs) + 3, budget=budget, growth=growth)  # depth >= documents: everything, in order


def test_pruned_search_prunes_and_still_keeps_every_tied_passage():
    rng = random.Random(3)
    filler = "本报告仅供参考投资有风险入市需谨慎"
    docs = [_text(rng, 40, 80, filler) for _ in range(300)]
    docs[17] = docs[230] = docs[231] = filler[:6] + "星河科技营收增长" + filler  # tied, one before the others
    docs[100] = "星河科技" + filler
    bm = CharBM25(docs)
    queries = ["星河科技营收增长", "星河科技的风险", "投资风险", "星河科技投资风险需谨慎"]
    _same(bm, queries, 3)
    _same(bm, queries, 50)
    idx, sc = topk.search(bm, queries, 3)
    assert list(idx[0]) == [17, 230, 231] and sc[0][0] == sc[0][2] > 0
    # the search really pruned: some terms' postings were never read, and few passages got a full score
    bt = topk._Batch(bm, queries[3:], 3, 6)
    while (todo := bt.essential()).any():
        bt.round(todo, topk.BUDGET)
        bt.raise_theta()
    assert (~bt.scored).any() and bt.theta[0] > 0
    pr, _, _ = bt.finish()
    assert len(pr) < len(docs) / 10


def test_pruning_that_drops_a_passage_is_caught(monkeypatch):
    """The equality check above would catch a pruning bug: an over-confident threshold changes the result."""
    rng = random.Random(5)
    docs = [_text(rng, 10, 40) for _ in range(80)]
    bm = CharBM25(docs)
    queries = [_text(rng, 3, 8) for _ in range(30)]
    idx, _ = bm.search_exhaustive(queries, 10)
    raise_theta = topk._Batch.raise_theta

    def too_high(self):
        raise_theta(self)
        self.theta = np.where(self.theta > 0, self.theta * 1.2, self.theta)

    monkeypatch.setattr(topk._Batch, "raise_theta", too_high)
    assert not np.array_equal(topk.search(bm, queries, 10)[0], idx)


def test_looked_up_weights_are_the_stored_ones():
    rng = random.Random(9)
    docs = [_text(rng, 0, 40) for _ in range(60)] + ["ROE 12.5%", "星河科技（600001）"]
    bm = CharBM25(docs)
    w = bm.weights.tocoo()
    assert (bm.common_slot >= 0).sum() > 5 and (bm.common_slot < 0).sum() > 5
    got = topk.lookup(bm, w.row.astype(np.int64), w.col.astype(np.int64))
    assert np.array_equal(got, w.data)  # dense count table (common terms) and binary search (the others)
    absent = np.asarray(bm.weights.toarray() == 0).nonzero()
    assert not topk.lookup(bm, absent[0].astype(np.int64), absent[1].astype(np.int64)).any()


def test_sums_in_the_products_order_are_the_products_sums():
    """The fallback for sums near a rounding boundary adds the weights as the sparse product does."""
    rng = random.Random(13)
    docs = [_text(rng, 5, 60) for _ in range(50)]
    bm = CharBM25(docs)
    queries = [_text(rng, 2, 15) for _ in range(20)]
    full = (bm.query_matrix(queries) @ bm.weights).toarray()
    bt = topk._Batch(bm, queries, 5, 10)
    pr, pd = np.repeat(np.arange(len(queries)), len(docs)), np.tile(np.arange(len(docs)), len(queries))
    assert np.array_equal(bt.exact(pr, pd), full[pr, pd])


@pytest.mark.skipif(not (ROOT / "datasets" / "sample" / "reports.jsonl").is_file(), reason="no datasets/sample")
def test_pruned_search_on_the_sample_reports():
    rows = [json.loads(line) for line in open(ROOT / "datasets" / "sample" / "reports.jsonl", encoding="utf-8")]
    docs = [f"{r['title']}\n{p}" for r in rows for p in r["text"].split("\n") if p.strip()]
    rng = random.Random(1)
    sents = [s for d in docs for s in d.replace("。", "。\n").split("\n") if len(s) > 6]
    queries = [r["title"] for r in rows] + rng.sample(sents, min(300, len(sents))) + \
        [s[: len(s) // 2] for s in rng.sample(sents, min(100, len(sents)))]
    bm = CharBM25(docs)
    _same(bm, queries, 50)
    _same(bm, queries, 10, budget=16, growth=2.0)
