"""Mined labels keep the level of their query: the topic space's subject and period rules, and identical
questions whose sources give another period, other figures or part of the metrics."""
from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fincprg.finance import extract
from fincprg.mine.facts import FactsCache
from fincprg.mine.scope import TopicScope, report_scope, speaks_for_industry, subject_words, topic_scope, topic_veto
from fincprg.mine.spaces import Space
from fincprg.mine.traverse import MineEnv, score_spaces
from fincprg.mine.veto import veto_reason
from fincprg.records import Query, Report

BANK = Report(id="r1", title="常熟银行（601128）2022年中报点评：净息差与资产质量穿越周期", text="-",
              date=dt.date(2022, 8, 15))
BANK_PASSAGE = ("2022H1净息差维持3.09%，环比一季度持平，在市场利率走低的环境下，依靠小微特色保证净息差优势。"
                "上半年贷款收益率6.32%。")
INDUSTRY = Report(id="r2", title="银行业周报：息差压力缓解", text="-", date=dt.date(2022, 9, 5),
                  report_type="industry")
INDUSTRY_PASSAGE = "8月上市银行整体净息差降至2.0%，负债成本下行缓解息差压力。"
NAMES = frozenset({"常熟银行"})


def veto(sub: str, passage: str, report: Report) -> str | None:
    return topic_veto(sub, extract(sub), passage, report_scope(report), NAMES)


def test_industry_subquery_is_not_answered_by_one_company_passage():
    sub = "2021年至2023年银行行业净息差表现如何？"
    assert subject_words(sub) == ("净息差",)
    assert veto(sub, BANK_PASSAGE, BANK) == "topic_industry"


def test_industry_subquery_is_answered_by_an_industry_report_or_an_industry_sentence():
    sub = "2021年至2023年银行行业净息差表现如何？"
    assert veto(sub, INDUSTRY_PASSAGE, INDUSTRY) is None
    # a company report whose passage speaks for the whole industry, naming no company
    wide = BANK_PASSAGE + "银行行业整体净息差仍在收窄，同业竞争加剧。"
    assert speaks_for_industry(sub, wide, NAMES)
    assert veto(sub, wide, BANK) is None
    # the same sentence about the company itself does not
    assert veto(sub, BANK_PASSAGE + "常熟银行净息差高于行业平均。", BANK) == "topic_industry"
    assert veto(sub, BANK_PASSAGE + "公司净息差高于行业平均。", BANK) == "topic_industry"


def test_untyped_report_without_a_company_in_its_title_reads_as_an_industry_report():
    untyped = Report(id="r3", title="银行行业深度：息差触底", text="-")
    assert report_scope(untyped).wide and not report_scope(BANK).wide


def test_company_subquery_needs_that_company_report():
    sub = "常熟银行2022年净息差增长的驱动因素是什么？"
    assert veto(sub, BANK_PASSAGE, BANK) is None
    other = Report(id="r4", title="江苏银行（600919）：营收提速", text="-", date=dt.date(2022, 8, 20))
    assert veto(sub, BANK_PASSAGE, other) == "topic_company"
    assert veto(sub, INDUSTRY_PASSAGE, INDUSTRY) == "topic_company"  # an industry report is no company's
    # a name the extractor cannot read (no suffix) is still found through the build's report names
    assert topic_veto("楚江新材产能表现如何？", extract("楚江新材产能表现如何？"), BANK_PASSAGE,
                      report_scope(BANK), NAMES | {"楚江新材"}) == "topic_company"


def test_the_period_a_subquery_names_must_be_the_passage_or_report_period():
    assert veto("常熟银行2022年净息差表现如何？", BANK_PASSAGE, BANK) is None
    old = Report(id="r5", title="常熟银行（601128）：2019年业绩点评", text="-", date=dt.date(2020, 4, 1))
    assert veto("常熟银行2022年净息差表现如何？", "2019年净息差3.2%。", old) == "topic_period"
    # the report's publication quarter is its period too
    assert veto("2022年第三季度银行行业净息差表现如何？", INDUSTRY_PASSAGE, INDUSTRY) is None
    assert veto("2022年第一季度银行行业净息差表现如何？", INDUSTRY_PASSAGE, INDUSTRY) == "topic_period"


def test_topic_space_records_the_veto_on_the_pair():
    sub = Query(id="qt:t0:0:0", level="topic", text="2021年至2023年银行行业净息差表现如何？", source_ids=("t0",))
    pqs = [Query(id="qp:r1#p0", level="passage", text="常熟银行净息差表现如何？", source_ids=("r1#p0",),
                 report_id="r1"),
           Query(id="qp:r2#p0", level="passage", text="银行行业净息差表现如何？", source_ids=("r2#p0",),
                 report_id="r2")]
    scope = topic_scope([BANK, INDUSTRY], pqs)
    assert isinstance(scope, TopicScope) and scope.names == frozenset({"常熟银行"})

    class High:
        name, default_threshold = "high", 0.9

        def score(self, pairs):
            return [0.99] * len(pairs)

    env = MineEnv(texts={q.id: q.text for q in [sub, *pqs]}, reranker=High(), threshold=0.9, facts=FactsCache(),
                  veto={"company": True, "period": True, "metric": True, "numbers": True, "topic": True},
                  sources={"qp:r1#p0": BANK_PASSAGE, "qp:r2#p0": INDUSTRY_PASSAGE}, topic=scope)
    space = Space("topic", "t0", (sub.id,), right=tuple(q.id for q in pqs))
    [res] = score_spaces([space], env)
    got = {(p.query_a, p.query_b): (p.accepted, p.veto) for p in res.pairs}
    assert got[(sub.id, "qp:r1#p0")] == (False, "topic_industry")
    assert got[("qp:r1#p0", sub.id)] == (False, "topic_industry")  # the reverse pass: same rule
    assert got[(sub.id, "qp:r2#p0")] == (True, None)
    assert res.counts["veto_topic_industry"] == 2 and res.counts["accepted"] == 2
    off = score_spaces([space], MineEnv(**{**env.__dict__, "veto": {**env.veto, "topic": False}, "cache": {}}))
    assert all(p.accepted for p in off[0].pairs)


# identical questions asked of two sources of one report
def source_veto(q: str, a: str, b: str, qb: str | None = None) -> str | None:
    qb = qb or q
    return veto_reason(extract(q), extract(qb), text_a=q, text_b=qb, source_a=a, source_b=b)


@pytest.mark.parametrize(("q", "a", "b", "reason"), [
    # H1 vs full year, the same growth rate: the figure agrees, the period does not
    ("星河科技营业收入增长多少？", "2023年上半年公司营业收入同比增长20%。", "2023年公司营业收入同比增长20%。",
     "source_period"),
    # a quarter vs the first three quarters, no figures on one side
    ("星河科技营业收入情况如何？", "2023年三季度公司营业收入环比改善。", "2023年前三季度公司营业收入稳步增长。",
     "source_period"),
    # actual vs forecast of the same year
    ("星河科技2024年归母净利润是多少？", "2024年公司实现归母净利润7.9亿元。", "预计2024年公司归母净利润稳步增长。",
     "source_period"),
    # the question's year is not the source's (a sentence about 2015's valuation)
    ("保利发展2022年PE是多少？", "当前公司PE处于过去十年低位。", "在上一轮宽松周期2015年，公司PE高点达到12.7倍。",
     "source_period"),
    # other figures: the growth rate that follows the revenue belongs to it
    ("新安股份2021年收入同比增长多少？", "2021年公司实现收入189.77亿元，同比增长51.45%，归母净利润26.54亿元。",
     "2021年海外子公司收入同比增长42%。", "source_numbers"),
    # only part of the facts asked
    ("星河科技2023年营业收入和归母净利润分别是多少？", "2023年公司营业收入52.2亿元，归母净利润7.9亿元。",
     "2023年公司营业收入52.2亿元，同比增长14.4%。", "source_metrics"),
])
def test_identical_questions_whose_sources_differ_are_vetoed(q, a, b, reason):
    assert source_veto(q, a, b) == reason
    assert source_veto(q, b, a) == reason


@pytest.mark.parametrize(("q", "a", "b"), [
    ("星河科技2023年营业收入是多少？", "2023年公司实现营业收入52.18亿元，同比增长14.4%。",
     "公司2023年营收为52.18亿元（+14.4%），其中四季度营收15.64亿元。"),
    ("星河科技2023年上半年营业收入是多少？", "2023H1公司营业收入23.1亿元。", "2023年上半年营收23.1亿元，同比增长8%。"),
    ("预计银轮股份2020-2022年每股收益是多少？", "我们预计公司2020-2022年每股收益分别为0.52元、0.64元和0.76元。",
     "估值方面，我们预计公司2020-2022年每股收益分别为0.52元、0.64元和0.76元，维持买入评级。"),
])
def test_identical_questions_with_the_same_facts_pass(q, a, b):
    assert source_veto(q, a, b) is None


def test_build_names_are_found_leftmost_longest():
    from fincprg.finance.stocks import find_names, name_index

    index = name_index({"常熟", "常熟银行", "银行", "江苏"})
    assert list(find_names("常熟银行与江苏银行", index)) == [("常熟银行", 0), ("江苏", 5), ("银行", 7)]
    assert list(find_names("净息差", index)) == []


@settings(max_examples=300, deadline=None)
@given(names=st.sets(st.text("中国平安银行", min_size=1, max_size=4), max_size=8),
       text=st.text("中国平安银行业", max_size=40))
def test_find_names_is_the_plain_leftmost_longest_scan(names, text):
    """The two-character index finds what trying every name, longest first, at every place finds."""
    from fincprg.finance.stocks import find_names, name_index

    ordered = sorted(names, key=len, reverse=True)
    want, i = [], 0
    while i < len(text):
        hit = next((n for n in ordered if text.startswith(n, i)), None)
        if hit:
            want.append((hit, i))
        i += len(hit) if hit else 1
    assert list(find_names(text, name_index(names))) == want


def test_a_trend_subquery_is_not_answered_by_an_outlook():
    """「中海油服市占率的变化情况如何」 labelled with a passage that only expects the share to rise (reading 7)."""
    outlook = "我们认为行业洗牌后公司长期海外市占率将持续提升。"
    assert veto("常熟银行净息差的变化情况如何？", "我们预计常熟银行净息差有望企稳。", BANK) == "topic_trend"
    assert veto("常熟银行净息差的变化情况如何？", BANK_PASSAGE, BANK) is None
    assert veto("常熟银行市占率的变化情况如何？", outlook, BANK) == "topic_trend"
