"""Finance veto cases, boilerplate detection, and the veto inside traversal."""
from __future__ import annotations

import pytest

from fincprg.mine.boilerplate import boilerplate_passages, boilerplate_queries, boilerplate_sentences
from fincprg.mine.facts import FactsCache
from fincprg.mine.spaces import sentence_spaces
from fincprg.mine.traverse import MineEnv, score_spaces
from fincprg.mine.veto import veto_reason
from fincprg.records import Passage, Query, Sentence
from tests.unit._mine_fixture import Facts, N, P, build

F = Facts


@pytest.mark.parametrize(("a", "b", "reason"), [
    (F(companies=frozenset({"贵州茅台"})), F(companies=frozenset({"五粮液"})), "company"),
    (F(codes=frozenset({"600519"})), F(codes=frozenset({"000858"})), "stock_code"),
    (F(periods=frozenset({P(2022)})), F(periods=frozenset({P(2023)})), "period_year"),
    (F(periods=frozenset({P(2023, "Q1")})), F(periods=frozenset({P(2023, "Q3")})), "period_part"),
    (F(periods=frozenset({P(None, "H1")})), F(periods=frozenset({P(None, "Q1-Q3")})), "period_part"),
    (F(periods=frozenset({P(2023)})), F(periods=frozenset({P(2023, None, True)})), "period_forecast"),
    (F(metrics=frozenset({"营业收入"}), numbers=(N(46.51, "亿元"),)),
     F(metrics=frozenset({"营业收入"}), numbers=(N(39.7, "亿元"),)), "numbers"),
])
def test_each_veto_case(a, b, reason):
    assert veto_reason(a, b) == reason
    assert veto_reason(b, a) == reason


@pytest.mark.parametrize(("a", "b"), [
    (F(companies=frozenset({"贵州茅台"})), F()),  # one side silent: compatible
    (F(companies=frozenset({"贵州茅台", "五粮液"})), F(companies=frozenset({"五粮液"}))),
    (F(periods=frozenset({P(2023, "Q1")})), F(periods=frozenset({P(2023)}))),  # part unknown on one side
    (F(periods=frozenset({P(2022), P(2023)})), F(periods=frozenset({P(2023)}))),
    (F(metrics=frozenset({"营业收入"}), numbers=(N(4651, "万元"),)),
     F(metrics=frozenset({"营业收入"}), numbers=(N(0.4651, "亿元"),))),  # same amount, other unit
    (F(metrics=frozenset({"营业收入"}), numbers=(N(39.7, "%"),)),
     F(metrics=frozenset({"营业收入"}), numbers=(N(46.51, "亿元"),))),  # growth vs amount: no conflict
])
def test_compatible_pairs_pass(a, b):
    assert veto_reason(a, b) is None


def test_different_metrics_are_a_metric_conflict_not_a_numbers_one():
    a = F(metrics=frozenset({"营业收入"}), numbers=(N(1.0, "亿元"),))
    b = F(metrics=frozenset({"归母净利润"}), numbers=(N(2.0, "亿元"),))
    assert veto_reason(a, b) == "metric"
    assert veto_reason(a, b, metric=False) is None  # the amounts of different metrics are not compared


def test_forecast_years_read_from_the_wording():
    from fincprg.finance import extract

    def reason(x, y):
        return veto_reason(extract(x), extract(y), text_a=x, text_b=y)

    # 「预计2024年」 is the forecast 2024E, not the actual 2024
    assert reason("预计星河科技2024年营业收入是多少？", "星河科技2024E营业收入预测是多少？") is None
    assert reason("星河科技2024年营业收入是多少？", "星河科技2024E营业收入预测是多少？") == "period_forecast"
    assert reason("预计星河科技2024年营业收入是多少？", "星河科技2024年营业收入是多少？") == "period_forecast"


def test_identical_questions_with_different_source_figures_are_vetoed():
    from fincprg.finance import extract

    q = "星河科技2021年上半年电子产品的营业收入为多少？"
    a = "2021年上半年，公司消费电子产品实现营业收入23.13亿元，同比增长20%。"
    b = "2021年上半年，公司汽车电子产品实现营业收入9,579万元，同比增长20%。"
    f = extract(q)
    assert veto_reason(f, f, text_a=q, text_b=q, source_a=a, source_b=b) == "source_numbers"
    assert veto_reason(f, f, text_a=q, text_b=q, source_a=a, source_b=a + "其中线上占比三成。") is None
    assert veto_reason(f, f, source_a=a, source_b=b, numbers=False) is None


def test_checks_can_be_switched_off():
    a, b = F(companies=frozenset({"贵州茅台"}), periods=frozenset({P(2022)})), \
        F(companies=frozenset({"五粮液"}), periods=frozenset({P(2023)}))
    assert veto_reason(a, b) == "company"
    assert veto_reason(a, b, company=False) == "period_year"
    assert veto_reason(a, b, company=False, period=False) is None


def test_real_extractor_vetoes_text_pairs():
    from fincprg.finance import extract

    def reason(x, y):
        return veto_reason(extract(x), extract(y))

    assert reason("贵州茅台（600519）2023年营业收入是多少", "五粮液（000858）2023年营业收入是多少") in {
        "company", "stock_code"}
    assert reason("公司2022年营业收入是多少", "公司2023年营业收入是多少") == "period_year"
    assert reason("公司2023年一季度营业收入是多少", "公司2023年三季度营业收入是多少") == "period_part"
    assert reason("公司2023年营业收入是多少", "公司2023E营业收入预测是多少") == "period_forecast"
    assert reason("2021年营业收入46.51亿元的原因", "2021年营业收入39.7亿元的原因") == "numbers"
    assert reason("公司2023年营业收入是多少", "公司2023年的营业收入有多少") is None


def test_veto_applied_to_accepted_pairs_only():
    fx = build()
    texts = {q.id: q.text for q in fx["queries"]}
    texts["qs:R1#p0#s0"] = "2022年营业收入"
    texts["qs:R1#p2#s1"] = "2023年营业收入"

    class High:
        name, default_threshold = "high", 0.9

        def score(self, pairs):
            return [0.99 if {"2022年营业收入", "2023年营业收入"} == set(p) else 0.2 for p in pairs]

    from tests.unit._mine_fixture import stub_extract

    env = MineEnv(texts=texts, reranker=High(), threshold=0.9, facts=FactsCache(stub_extract),
                  veto={"company": True, "period": True, "numbers": True})
    res = score_spaces(sentence_spaces(fx["queries"]), env)
    kept = [p for r in res for p in r.pairs]
    assert len(kept) == 2 and all(p.veto == "period_year" and not p.accepted for p in kept)
    assert res[0].counts["veto_period_year"] == 2 and res[0].counts["accepted"] == 0
    env_off = MineEnv(texts=texts, reranker=High(), threshold=0.9, facts=FactsCache(stub_extract), veto=None)
    off = [p for r in score_spaces(sentence_spaces(fx["queries"]), env_off) for p in r.pairs]
    assert len(off) == 2 and all(p.accepted and p.veto is None for p in off)


def test_boilerplate_detection_repeated_and_keywords():
    warn = "市场竞争加剧，原材料价格大幅波动，下游需求不及预期。"
    sents, passages, report_of = [], [], {}
    for r in range(4):
        pid = f"R{r}#p0"
        texts = [f"公司{r}号产品收入增长{r + 10}%，主要来自海外市场的新客户订单持续放量和产能释放。", warn if r < 3 else "另一句独有的分析内容在此。"]
        passages.append(Passage(id=pid, report_id=f"R{r}", order=0, text="".join(texts)))
        report_of[pid] = f"R{r}"
        sents += [Sentence(id=f"{pid}#s{i}", passage_id=pid, order=i, text=t) for i, t in enumerate(texts)]
    pid = "R4#p0"
    passages.append(Passage(id=pid, report_id="R4", order=0, text="买入：预期未来6个月内，个股相对同期基准指数涨幅在20%以上"))
    report_of[pid] = "R4"
    sents.append(Sentence(id=f"{pid}#s0", passage_id=pid, order=0, text=passages[-1].text))
    bp_s = boilerplate_sentences(sents, report_of, min_reports=3)
    assert bp_s == {"R0#p0#s1", "R1#p0#s1", "R2#p0#s1", "R4#p0#s0"}
    bp_p = boilerplate_passages(passages, sents, bp_s, min_reports=3)
    assert bp_p == {"R4#p0"}  # the warning is less than half of R0-R2's passages
    queries = [Query(id=f"qs:{s.id}", level="sentence", text="q", source_ids=(s.passage_id,),
                     provenance={"sentence_id": s.id}) for s in sents]
    queries += [Query(id=f"qp:{p.id}", level="passage", text="q", source_ids=(p.id,)) for p in passages]
    assert boilerplate_queries(queries, bp_s, bp_p) == {f"qs:{s}" for s in bp_s} | {"qp:R4#p0"}
