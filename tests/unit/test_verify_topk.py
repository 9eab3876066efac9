"""verify's pruned BM25 top-k (fincprg.verify.topk) returns the exhaustive search's (indices, scores) bit for bit:
judge_ranking reads the whole top ``depth`` (every unrelated report within the margin), so a passage the pruning
dropped, a tie put out of document order or a score rounded differently would change verdicts."""
from __future__ import annotations

import json
import random
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fincprg.verify import topk
from fincprg.verify.roundtrip import CharBM25, Target, char_tokens, judge_ranking, own_floors

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


# --- floors (verify's round trip): only the documents at or above each query's own-passage floor ---------------

def _verdicts(idx, val, targets, report_of, k, n, margin):
    out = []
    for r, t in enumerate(targets):
        g = int((idx[r] >= 0).sum())
        out.append(judge_ranking(idx[r][:g], val[r][:g], t, report_of, k=k, n=n, margin=margin))
    return out


def _same_verdicts(bm: CharBM25, queries, targets, report_of, *, k, n, margin, depth, **kw) -> int:
    """Floored search vs the exhaustive one: the lists cut at the floors and every verdict are equal; returns
    how many queries had a floor."""
    floors = own_floors(bm, queries, [t.own for t in targets], margin)
    got = topk.search(bm, queries, depth, floors=floors, **kw)
    want = bm.search_exhaustive(queries, depth)
    cut = topk._cut(*want, topk._floors(floors, len(queries)))
    assert np.array_equal(got[0], cut[0]) and np.array_equal(got[1], cut[1]), "floored list differs"
    assert _verdicts(*got, targets, report_of, k, n, margin) == _verdicts(*want, targets, report_of, k, n, margin)
    return int((floors > 0).sum())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), n_docs=st.integers(1, 70), k=st.integers(1, 6), n=st.integers(1, 4),
       margin=st.sampled_from([0.0, 0.05, 0.3, 0.9]), common=st.sampled_from([1, 4, 10 ** 9]))
def test_floored_search_gives_the_exhaustive_verdicts_on_random_corpora(seed, n_docs, k, n, margin, common):
    rng = random.Random(seed)
    docs = [_text(rng, 0, 30) for _ in range(n_docs)]
    docs += [docs[rng.randrange(n_docs)] for _ in range(rng.randint(0, 5))]  # equal documents: ties
    report_of = [f"r{rng.randrange(max(len(docs) // 3, 1))}" for _ in docs]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(CharBM25, "COMMON", common)
        bm = CharBM25(docs)
    queries, targets = [], []
    for _ in range(rng.randint(1, 20)):
        own = rng.sample(range(len(docs)), rng.randint(0, min(3, len(docs))))  # none, one or a few own passages
        src = docs[own[0]] if own and docs[own[0]] else _text(rng, 1, 8)
        a = rng.randrange(len(src))
        queries.append(src[a:a + rng.randint(1, 12)] if rng.random() < 0.7 else _text(rng, 1, 12))
        related = {report_of[rng.randrange(len(docs))]} if rng.random() < 0.3 else set()
        targets.append(Target(frozenset(own), frozenset(report_of[d] for d in own), frozenset(related)))
    queries.append("鑫鑫 xyz")  # no known term: its own passage scores 0, no floor
    targets.append(Target(frozenset({0}), frozenset({report_of[0]})))
    depth = max(k, 10 * n)
    _same_verdicts(bm, queries, targets, report_of, k=k, n=n, margin=margin, depth=depth,
                   batch=rng.choice([1, 3, 256]), budget=rng.choice([1, 1024]))


def test_a_floor_is_the_own_passage_score_exactly_and_ties_at_it_are_kept():
    rng = random.Random(21)
    filler = "本报告仅供参考投资有风险入市需谨慎"
    docs = [_text(rng, 40, 80, filler) for _ in range(200)]
    docs[5] = docs[120] = docs[121] = "星河科技营收增长" + filler  # the own passage (120) and two equal ones
    bm = CharBM25(docs)
    queries = ["星河科技营收增长", "鑫鑫"]
    floors = own_floors(bm, queries, [frozenset({120}), frozenset({7})], margin=0.0)
    full = np.round((bm.query_matrix(queries) @ bm.weights).toarray(), 9)
    assert floors[0] == full[0, 120] > 0 and np.isnan(floors[1])  # margin 0: the floor is the score itself
    idx, val = topk.search(bm, queries, 10, floors=floors)
    assert list(idx[0][:3]) == [5, 120, 121] and (idx[0][3:] == -1).all() and np.isneginf(val[0][3:]).all()
    assert np.array_equal(idx[1], bm.search_exhaustive(queries, 10)[0][1])  # no floor: the plain top 10
    report_of = [f"r{i}" for i in range(len(docs))]
    targets = [Target(frozenset({120}), frozenset({"r120"})), Target(frozenset({7}), frozenset({"r7"}))]
    assert _same_verdicts(bm, queries, targets, report_of, k=2, n=1, margin=0.0, depth=10) == 1
    with pytest.raises(ValueError, match="one per query"):
        topk.search(bm, queries, 10, floors=np.ones(3))


def test_a_floor_prunes_more_than_the_depth():
    rng = random.Random(3)
    filler = "本报告仅供参考投资有风险入市需谨慎"
    docs = [_text(rng, 40, 80, filler) for _ in range(300)]
    docs[17] = filler[:6] + "星河科技营收增长" + filler
    bm = CharBM25(docs)
    queries = ["星河科技投资风险需谨慎营收"]
    floors = own_floors(bm, queries, [frozenset({17})], margin=0.05)
    pruned = []
    for fl in (None, floors):
        bt = topk._Batch(bm, queries, 50, 100, topk._floors(fl, 1))
        while (todo := bt.essential()).any():
            bt.round(todo, topk.BUDGET)
            bt.raise_theta()
        pruned.append(len(bt.finish()[0]))
    assert pruned[1] < pruned[0] / 5


@pytest.mark.skipif(not (ROOT / "datasets" / "sample" / "reports.jsonl").is_file(), reason="no datasets/sample")
def test_floored_search_on_the_sample_reports():
    rows = [json.loads(line) for line in open(ROOT / "datasets" / "sample" / "reports.jsonl", encoding="utf-8")]
    docs, report_of = [], []
    for i, r in enumerate(rows):
        for p in r["text"].split("\n"):
            if p.strip():
                docs.append(f"{r['title']}\n{p}")
                report_of.append(f"r{i}")
    rng = random.Random(2)
    picks = rng.sample(range(len(docs)), min(300, len(docs)))
    queries, targets = [], []
    for d in picks:
        sents = [s for s in docs[d].replace("。", "。\n").split("\n") if len(s) > 6] or [docs[d]]
        s = rng.choice(sents)
        queries.append(s if rng.random() < 0.5 else s[: len(s) // 2])
        targets.append(Target(frozenset({d}), frozenset({report_of[d]})))
    bm = CharBM25(docs)
    assert _same_verdicts(bm, queries, targets, report_of, k=10, n=5, margin=0.05, depth=50) > len(queries) * 0.9
    assert _same_verdicts(bm, queries, targets, report_of, k=3, n=2, margin=0.3, depth=20, budget=16) > 0


def test_char_tokens_are_characters_then_bigrams_of_each_run():
    rng = random.Random(4)
    for text in [_text(rng, 0, 30, ALPHABET + " ，AbC12") for _ in range(200)] + ["", "a", "ＡＢ１２，星河"]:
        want = []
        for run in re.findall(r"[0-9A-Za-z\u3400-\u9fff]+", unicodedata.normalize("NFKC", text).lower()):
            want += list(run) + [run[i:i + 2] for i in range(len(run) - 1)]
        assert char_tokens(text) == want
