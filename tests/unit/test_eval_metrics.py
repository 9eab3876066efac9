"""Metrics match a hand computation and pytrec_eval; Borda arithmetic; correlation output."""
from __future__ import annotations

import math

import numpy as np
import pytest

from fincprg.evaluate.correlation import correlate, correlation_matrix, read_scores_csv
from fincprg.evaluate.metrics import evaluate, per_query, pool_recall, trec_order
from fincprg.evaluate.retrievers.borda import bootstrap_borda, borda_points, regroup

# q1: relevant d1 (rank 2) and d3 (rank 4); q2: relevant d5 at rank 12.
QRELS = {"q1": {"d1": 1, "d3": 1}, "q2": {"d5": 1}}
RUN = {
    "q1": {"d2": 0.9, "d1": 0.8, "d4": 0.7, "d3": 0.6},
    "q2": {**{f"x{i:02d}": 1.0 - i * 0.01 for i in range(11)}, "d5": 0.5},
}
L2 = math.log2
HAND = {
    "q1": {"R@1": 0.0, "R@5": 1.0, "R@10": 1.0, "R@100": 1.0,
           "nDCG@10": (1 / L2(3) + 1 / L2(5)) / (1 + 1 / L2(3)), "MRR@10": 0.5, "MAP@100": (1 / 2 + 2 / 4) / 2},
    "q2": {"R@1": 0.0, "R@5": 0.0, "R@10": 0.0, "R@100": 1.0, "nDCG@10": 0.0, "MRR@10": 0.0, "MAP@100": 1 / 12},
}


def test_toy_run_matches_hand_computation():
    pq = per_query(QRELS, RUN)
    for q, want in HAND.items():
        for m, v in want.items():
            assert pq[q][m] == pytest.approx(v, abs=1e-12), (q, m)
    mean = evaluate(QRELS, RUN)
    assert mean["n"] == 2
    assert mean["nDCG@10"] == pytest.approx(HAND["q1"]["nDCG@10"] / 2, abs=1e-12)
    assert mean["MAP@100"] == pytest.approx((0.5 + 1 / 12) / 2, abs=1e-12)
    assert mean["MRR@10"] == pytest.approx(0.25, abs=1e-12)


def test_toy_run_matches_pytrec_eval_directly():
    import pytrec_eval

    raw = pytrec_eval.RelevanceEvaluator(QRELS, {"recall.1,5,10,100", "ndcg_cut.10", "map_cut.100",
                                                 "recip_rank"}).evaluate(RUN)
    pq = per_query(QRELS, RUN)
    for q in QRELS:
        assert pq[q]["nDCG@10"] == raw[q]["ndcg_cut_10"]
        assert pq[q]["MAP@100"] == raw[q]["map_cut_100"]
        assert pq[q]["R@5"] == raw[q]["recall_5"]
    # recip_rank has no cut-off: q2 gets 1/12 there, 0 in MRR@10
    assert raw["q2"]["recip_rank"] == pytest.approx(1 / 12)
    assert pq["q2"]["MRR@10"] == 0.0
    assert pq["q1"]["MRR@10"] == raw["q1"]["recip_rank"]


def test_mrr_truncation_follows_trec_eval_tie_order():
    # 11 documents tie; trec_eval orders ties by doc id descending, so 'a' is 11th and falls out of the top 10
    run = {"q": {d: 1.0 for d in "abcdefghijk"}}
    assert trec_order(run["q"])[-1] == "a"
    assert per_query({"q": {"a": 1}}, run)["q"]["MRR@10"] == 0.0
    assert per_query({"q": {"k": 1}}, run)["q"]["MRR@10"] == 1.0


def test_queries_without_results_count_as_zero():
    qrels = {**QRELS, "q3": {"d9": 1}, "q4": {"d9": 0}}  # q4 has no relevant doc: not judged
    mean = evaluate(qrels, {**RUN, "q3": {}})
    assert mean["n"] == 3
    assert mean["R@100"] == pytest.approx(2 / 3)


def test_pool_recall():
    assert pool_recall(QRELS, {"q1": {"d1": 1.0}, "q2": {"d5": 1.0}}) == pytest.approx((0.5 + 1) / 2)


def test_borda_points_by_hand():
    assert borda_points([1, 2, 3, 4], 4) == [1.0, 2 / 3, 1 / 3, 0.0]
    assert borda_points([2, 1], 2) == [0.0, 1.0]


def test_regroup_covers_everyone_and_merges_singletons():
    groups = regroup([str(i) for i in range(9)], 4, np.random.default_rng(0))
    assert sorted(x for g in groups for x in g) == [str(i) for i in range(9)]
    assert [len(g) for g in groups] == [4, 5]  # 4 + 4 + 1 -> the lone one joins the last group


def test_bootstrap_borda_single_group_is_exact_and_stops_early():
    value = {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}
    res = bootstrap_borda(list("dcba"), lambda g: [value[x] for x in g], g=4, rounds=10, top_k=2)
    assert res.scores == pytest.approx({"a": 1.0, "b": 2 / 3, "c": 1 / 3, "d": 0.0})
    assert res.rounds == 2 and res.stopped_early  # identical top-2 in rounds 1 and 2
    assert res.rank_variance == 0.0


def test_bootstrap_borda_without_early_stop_runs_every_round():
    rng = np.random.default_rng(1)
    noisy = lambda g: list(rng.random(len(g)))  # noqa: E731
    res = bootstrap_borda([str(i) for i in range(12)], noisy, g=4, rounds=6, top_k=3, stop_jaccard=1.01)
    assert res.rounds == 6 and not res.stopped_early
    assert res.rank_variance > 0  # a random scorer is unstable across groupings
    assert all(0.0 <= s <= 1.0 for s in res.scores.values())


def test_correlation_matrix_and_output(tmp_path):
    csv = tmp_path / "ext.csv"
    csv.write_text("retriever,score\nbm25,0.1\nlsa,0.2\nhybrid,0.3\nrrf,0.4\n", encoding="utf-8")
    ext = read_scores_csv(csv)
    subsets = {"sentence": {"bm25": 1.0, "lsa": 2.0, "hybrid": 3.0, "rrf": 5.0},
               "topic": {"bm25": 4.0, "lsa": 3.0, "hybrid": 2.0, "rrf": 1.0}}
    names, mat, cnt = correlation_matrix({"external": ext, **subsets}, "kendall")
    assert names == ["external", "sentence", "topic"]
    assert mat[0][1] == pytest.approx(1.0) and mat[0][2] == pytest.approx(-1.0)
    assert cnt[0][1] == 4
    _, pear, _ = correlation_matrix({"external": ext, **subsets}, "pearson")
    assert pear[0][1] == pytest.approx(np.corrcoef([0.1, 0.2, 0.3, 0.4], [1, 2, 3, 5])[0, 1])
    text = correlate(ext, subsets)
    assert "Pearson correlation" in text and "Kendall correlation" in text
    assert "| external | 1.000 | 1.000 | -1.000 |" in text  # the Kendall row


def test_correlation_needs_three_shared_retrievers(tmp_path):
    text = correlate({"a": 1, "b": 2}, {"s": {"a": 1, "b": 3}})
    assert "fewer than 3" in text and "–" in text


def test_bad_external_csv_says_what_to_fix(tmp_path):
    from fincprg.errors import InputError

    p = tmp_path / "x.csv"
    p.write_text("name,value\na,1\n", encoding="utf-8")
    with pytest.raises(InputError, match="retriever"):
        read_scores_csv(p)
