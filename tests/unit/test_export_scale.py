"""Export in bounded memory gives the bytes the whole-corpus versions gave (issue 23).

Each streamed or blocked piece is checked against a brute-force reference on a small random case:
near-duplicate removal (greedy, all pairs), BM25 negatives (an index over the token strings, as bm25s
builds it itself), overlaps (every pair measured afresh) and the parquet files (one table from one list).
"""
from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from fincprg.export import hf
from fincprg.export.dedup import first_kept_matches, grams
from fincprg.export.negatives import Guard, bm25_negatives
from fincprg.export.quality import Overlaps
from fincprg.export.tokens import TokenIds
from fincprg.finance import extract, tokenize
from fincprg.finance.easiness import overlap

WORDS = ["营业收入", "毛利率", "增长", "原因", "是什么", "情况", "如何", "净利润", "下滑", "提升", "的", "主要",
         "2023年", "星河科技", "同比", "亿元", "订单", "芯片"]


def _texts(rng: random.Random, n: int, lo: int = 2, hi: int = 6) -> list[str]:
    texts = ["".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi))) for _ in range(n)]
    # copies, near-copies (punctuation, one word less) and copies of copies: the cases dedup merges
    texts += [t + "？" for t in texts[: n // 5]] + [t[:-1] for t in texts[n // 5: n // 3]] + texts[: n // 4]
    rng.shuffle(texts)
    return texts


def _greedy_brute(texts: list[str], threshold: float, n: int) -> list[tuple[int, float] | None]:
    """The definition: a text is removed for the first kept text before it that is similar enough."""
    kept: list[int] = []
    out: list[tuple[int, float] | None] = []
    for j, t in enumerate(texts):
        match = None
        for i in kept:
            a, b = grams(texts[i], n), grams(t, n)
            if a and b and len(a & b) / len(a | b) >= threshold and extract(texts[i]) == extract(t):
                match = (i, round(len(a & b) / len(a | b), 4))
                break
        out.append(match)
        if match is None:
            kept.append(j)
    return out


@pytest.mark.parametrize("threshold, n, seed", [(0.9, 2, 0), (0.7, 2, 1), (0.6, 3, 2), (0.85, 2, 3)])
def test_blocked_dedup_equals_the_greedy_brute_force(threshold, n, seed):
    texts = _texts(random.Random(seed), 240)
    got = first_kept_matches(texts, threshold, n)
    assert got == _greedy_brute(texts, threshold, n)
    assert sum(m is not None for m in got) > 20  # the case has duplicates to find


def _bm25_reference(queries, positives, texts, n, positive_texts=None, guard=None):
    """bm25_negatives as it was: bm25s indexes the token strings of every passage itself."""
    import bm25s

    from fincprg.export import negatives as neg

    guard = guard or Guard()
    retriever = bm25s.BM25(backend="numpy")
    retriever.index([tokenize(t) for t in texts], show_progress=False)
    out = []
    qtok = [tokenize(q) or ["\0"] for q in queries]
    k = min(len(texts), guard.depth(n) + min(max((len(p) for p in positives), default=0), 256) + 16)
    ids, scores = retriever.retrieve(qtok, k=k, show_progress=False)
    for i, q in enumerate(queries):
        ptexts = neg._positive_texts(i, positives, texts, positive_texts)
        cands = neg._candidates(ids[i], scores[i], positives[i], ptexts, texts, drop_zero=True)
        out.append(guard.select(q, cands, texts, None, ptexts, n))
    return out, retriever


def test_bm25_over_token_ids_equals_bm25_over_token_strings():
    rng = random.Random(7)
    texts = _texts(rng, 150, 4, 14)
    queries = _texts(rng, 60, 1, 4)[:60]
    positives = [set(rng.sample(range(len(texts)), rng.randint(0, 3))) for _ in queries]
    positive_texts = [{rng.choice(texts)} if rng.random() < 0.3 else set() for _ in queries]
    want, ref = _bm25_reference(queries, positives, texts, 5, positive_texts)
    # ids shared with other texts first (tokens no pool passage has: empty BM25 columns), as export does
    tokens = TokenIds()
    for t in _texts(rng, 30, 3, 6) + ["董事会决议公告"]:
        tokens.ids(t)
    got = bm25_negatives(queries, positives, texts, 5, positive_texts=positive_texts, tokens=tokens)
    assert got == want and sum(map(len, got)) > 100
    assert bm25_negatives(queries, positives, texts, 5, positive_texts=positive_texts) == want

    # the scores themselves are the same float32 values, not merely the same order
    import bm25s

    by_ids = bm25s.BM25(backend="numpy")
    by_ids.index(tokens.corpus(texts), show_progress=False)
    for q in queries[:20]:
        toks = tokenize(q)
        if toks:
            assert np.array_equal(ref.get_scores(toks), by_ids.get_scores(toks))


def test_overlaps_equal_every_pair_measured_afresh():
    rng = random.Random(3)
    passages = {f"p{i}": t for i, t in enumerate(_texts(rng, 80, 4, 12))}
    queries = _texts(rng, 50, 1, 5)[:50] + ["", "？"]
    ov = Overlaps(passages, recent=4)  # a tiny memo: passages are measured again after eviction
    for q, pids in itertools.product(queries, [rng.sample(sorted(passages), 3) + ["missing"] for _ in range(3)]):
        want = {m: round(max((overlap(q, passages[p], m) for p in pids if p in passages and overlap_defined(q, m)),
                             default=0.0), 4) for m in ("bigram", "token")}
        assert ov.best(q, pids) == want
    ov.release_passages()
    assert ov.best(queries[0], ["p1"]) == {m: round(overlap(queries[0], passages["p1"], m), 4)
                                           for m in ("bigram", "token")}


def overlap_defined(q: str, measure: str) -> bool:
    """The old Overlaps skipped every passage for a query without units (no bigram or no token)."""
    from fincprg.finance.easiness import bigrams

    return bool(bigrams(q) if measure == "bigram" else tokenize(q))


def test_parquet_from_batches_has_the_bytes_of_one_table(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(5)
    s = pa.string()
    schema = pa.schema([("_id", s), ("text", s), ("date", s)])
    rows = [{"_id": f"r{i}", "text": "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30))),
             "date": rng.choice(["", "2023-01-02"])} for i in range(1000)]
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / "one.parquet")
    monkeypatch.setattr(hf, "_BATCH", 7)
    hf._write_parquet(tmp_path / "batched.parquet", iter(rows), schema)
    assert (tmp_path / "batched.parquet").read_bytes() == (tmp_path / "one.parquet").read_bytes()
    hf._write_parquet(tmp_path / "empty.parquet", iter([]), schema)
    assert pq.read_table(tmp_path / "empty.parquet").num_rows == 0


def _char_bm25_reference(docs, k1=1.2, b=0.75):
    """verify's CharBM25 weights as built before issue 23: Python lists, a COO build, whole-array weights."""
    from scipy import sparse

    from fincprg.verify.roundtrip import char_tokens

    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    lengths = np.zeros(len(docs), dtype=np.float64)
    for d, text in enumerate(docs):
        toks = char_tokens(text)
        lengths[d] = len(toks)
        counts: dict[int, int] = {}
        for t in toks:
            i = vocab.setdefault(t, len(vocab))
            counts[i] = counts.get(i, 0) + 1
        rows.extend(counts)
        cols.extend([d] * len(counts))
        vals.extend(counts.values())
    tf = sparse.csr_matrix((np.asarray(vals, dtype=np.float64), (rows, cols)), shape=(len(vocab), len(docs)))
    n = max(len(docs), 1)
    df = np.diff(tf.indptr)
    idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    avg = lengths.mean() if len(docs) else 1.0
    tf = tf.tocoo()
    denom = tf.data + k1 * (1 - b + b * lengths[tf.col] / max(avg, 1e-9))
    w = idf[tf.row] * tf.data * (k1 + 1) / denom
    return vocab, sparse.csr_matrix((w, (tf.row, tf.col)), shape=tf.shape)


def test_verify_char_bm25_in_bounded_memory_is_the_coo_build_entry_for_entry(monkeypatch):
    from fincprg.verify.roundtrip import CharBM25

    rng = random.Random(11)
    docs = _texts(rng, 120, 3, 20) + ["", "ROE 12.5%", "星河科技（600001）"]
    vocab, want = _char_bm25_reference(docs)
    monkeypatch.setattr(CharBM25, "_SLICE", 97)  # many slices, one ending mid-row
    got = CharBM25(docs)
    assert got.vocab == vocab and got.weights.shape == want.shape
    for a in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(got.weights, a), getattr(want, a)), a
    assert got.weights.data.dtype == want.data.dtype and got.weights.indices.dtype == want.indices.dtype
    queries = _texts(rng, 30, 1, 4)[:30]
    idx, sc = got.search(queries, depth=10)
    ref = CharBM25.__new__(CharBM25)
    ref.vocab, ref.weights, ref.n_docs = vocab, want, len(docs)
    ref_idx, ref_sc = ref.search_exhaustive(queries, depth=10)
    assert np.array_equal(idx, ref_idx) and np.array_equal(sc, ref_sc)
    assert CharBM25([]).n_docs == 0
