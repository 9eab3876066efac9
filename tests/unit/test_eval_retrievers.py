"""Every offline retriever ranks the obvious passage first on a small Chinese finance corpus."""
from __future__ import annotations

import pytest

from fincprg.errors import ConfigError
from fincprg.evaluate.retrievers import Retriever, build_retriever, default_specs
from fincprg.evaluate.retrievers.base import ranked
from fincprg.evaluate.retrievers.cards import make_card, periods_match
from fincprg.evaluate.retrievers.fusion import hybrid_scores, minmax, rrf_scores
from tests.unit import _eval_fixture as fx

OFFLINE = ["bm25", "bm25-report", "lsa", "hybrid", "hybrid:0.5", "rrf", "rrf:bm25+lsa+bm25-report",
           "cards", "borda", "borda:first", "hier", "hier:2"]


def _run(spec: str, k: int = 5) -> dict[str, dict[str, float]]:
    r = build_retriever(spec, show_progress=False)
    assert isinstance(r, Retriever)
    if hasattr(r, "set_query_meta"):
        r.set_query_meta(fx.query_meta())
    r.fit(fx.corpus())
    return r.search(fx.queries(), k)


@pytest.mark.parametrize("spec", OFFLINE)
def test_relevant_passage_ranks_first(spec):
    run = _run(spec)
    assert set(run) == set(fx.QUERIES)
    firsts = {q: ranked(docs)[0] for q, docs in run.items() if docs}
    hits = sum(firsts.get(q) == d for q, (_, d) in fx.QUERIES.items())
    # LSA on 9 passages has at most 8 dimensions, so allow it one miss; lexical methods must get all
    assert hits >= (5 if spec == "lsa" else 6), (spec, firsts)
    for docs in run.values():
        assert len(docs) <= 5
        scores = [docs[d] for d in ranked(docs)]
        assert scores == sorted(scores, reverse=True)


def test_bm25_drops_zero_scores_and_unknown_terms():
    run = _run("bm25", k=9)
    assert all(s > 0 for docs in run.values() for s in docs.values())
    r = build_retriever("bm25", show_progress=False)
    r.fit(fx.corpus())
    assert r.search({"x": "完全无关的词语组合量子引力"}, 5) == {"x": {}}


def test_bm25_report_stays_inside_the_querys_report():
    run = _run("bm25-report", k=9)
    for q, docs in run.items():
        want = fx.query_meta()[q]["report_id"]
        assert docs and all(d.startswith(want + "#") for d in docs)


def test_hier_only_returns_passages_of_top_reports():
    run = _run("hier:1", k=9)
    for q, docs in run.items():
        assert {d.split("#")[0] for d in docs} == {fx.QUERIES[q][1].split("#")[0]}
        assert len(docs) == 3  # all passages of the one retrieved report


def test_default_specs_offer_seven_with_report_queries_and_six_without():
    assert len(default_specs(True)) >= 7 and "bm25-report" in default_specs(True)
    assert "bm25-report" not in default_specs(False) and len(default_specs(False)) >= 6


@pytest.mark.parametrize("bad", ["bm26", "hybrid:x", "hybrid:1.5", "rrf:bm25", "dense:", "hier:a", "borda:zzz"])
def test_bad_specs_say_how_to_fix(bad):
    with pytest.raises(ConfigError) as e:
        build_retriever(bad)
    assert bad.split(":")[0] in str(e.value) or "spec" in str(e.value)


def test_rrf_arithmetic():
    fused = rrf_scores([{"a": 3.0, "b": 2.0}, {"b": 5.0, "c": 1.0}], k=60)
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 62)
    assert ranked(fused) == ["b", "a", "c"]


def test_minmax_hybrid_arithmetic():
    assert minmax({"a": 10, "b": 5, "c": 0}) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert minmax({"a": 3, "b": 3}) == {"a": 1.0, "b": 1.0}
    h = hybrid_scores({"a": 10, "b": 5, "c": 0}, {"a": 0.2, "b": 0.4}, weight=0.75)
    assert h == pytest.approx({"a": 0.75, "b": 0.75 * 0.5 + 0.25, "c": 0.0})


def test_finance_cards_and_period_match():
    q = make_card("贵州茅台（600519）2023年营业收入同比增长多少？")
    d = make_card("贵州茅台2023年实现营业收入1505亿元，同比增长18%")
    assert "营业收入" in q.metrics and "营业收入" in d.metrics
    assert d.has_number
    assert periods_match(q.periods, d.periods)
    assert not periods_match(frozenset({(2023, None)}), frozenset({(2022, "FY")}))
    assert periods_match(frozenset({(2023, None)}), frozenset({(2023, "H1")}))


def test_cards_reports_its_pool():
    r = build_retriever("cards", show_progress=False)
    r.fit(fx.corpus())
    r.search(fx.queries(), 3)
    assert set(r.last_pool) == set(fx.QUERIES)
    assert all(len(v) <= 100 for v in r.last_pool.values())


def test_tokenize_uses_the_finance_dictionary():
    from fincprg.evaluate.retrievers import tokenize

    toks = tokenize("贵州茅台ROE与归母净利润，同比增长12%。")
    assert "归母净利润" in toks and "roe" in toks  # one finance term, lower-cased
    assert "，" not in toks and "。" not in toks


def test_pool_rerankers_forward_query_meta_and_keep_their_pool():
    from fincprg.evaluate.retrievers.base import PoolReranker

    seen = {}

    class First:
        name = "first"

        def fit(self, corpus):
            seen["fit"] = len(corpus)

        def set_query_meta(self, meta):
            seen["meta"] = meta

        def search(self, queries, k):
            seen["k"] = k
            return {q: {"a": 3.0, "b": 2.0, "c": 1.0} for q in queries}

    class R(PoolReranker):
        def __init__(self):
            self.first_stage, self.pool = First(), 2

    r = R()
    r.set_query_meta({"q": {"report_id": "x"}})
    r.fit({"a": {}, "b": {}, "c": {}})
    first = r.first_pool({"q": "text"}, 5)
    assert seen == {"meta": {"q": {"report_id": "x"}}, "fit": 3, "k": 5}
    assert r.last_pool == {"q": {"a": 3.0, "b": 2.0}} and len(first["q"]) == 3 and r.corpus


def test_eval_scores_do_not_depend_on_words_a_build_left_in_the_tokenizer(tmp_path):
    """A build registers its company names with the shared jieba tokenizer; eval in the same process
    must score as a fresh `fincprg eval` does."""
    from fincprg.evaluate.harness import run_eval
    from fincprg.finance.lexicon import use_words

    from tests.unit import _eval_fixture as fx

    folder = fx.write_beir(tmp_path / "beir")
    fresh = run_eval(folder, ["bm25"], show_progress=False, keep_runs=True)
    use_words({"数字营销平台收入", "装机量全球市占率", "储能业务毛利率", "净息差下降"})  # as a build would
    after = run_eval(folder, ["bm25"], show_progress=False, keep_runs=True)
    assert after.runs["bm25"] == fresh.runs["bm25"]
    use_words(())
