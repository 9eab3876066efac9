"""verify's check functions, each a pure function over texts: the reasons a strict reader gives."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from fincprg.verify.answer import check_answer, check_topic_answer
from fincprg.finance.crosscheck import FY, H1, M9, Q1, periods, read_ask, read_facts
from fincprg.verify.related import check_related
from fincprg.verify.roundtrip import CharBM25, Target, char_tokens, judge_ranking
from fincprg.verify.sources import passage_subjects, report_info
from fincprg.verify.reading import Subjects
from fincprg.verify.subject import check_subject, lead
from fincprg.records import Report

D19, D21, D22 = dt.date(2020, 4, 28), dt.date(2021, 8, 30), dt.date(2022, 5, 1)


# --- readers ---------------------------------------------------------------------------------------------------

def test_periods_join_years_with_their_part_of_year():
    got = [(sorted(p.years), p.part) for p in periods("公司发布2021年半年报，21H1营收增长，23Q1利润下滑，1H21毛利率，"
                                                      "前三季度费用率，2022/2023/2024年EPS")]
    assert got == [([2021], H1), ([2021], H1), ([2023], Q1), ([2021], H1), ([], M9), ([2022, 2023, 2024], None)]


def test_facts_carry_the_period_and_read_direction_and_forecast():
    facts = read_facts("2021H1公司实现营收25.3亿元，同比增长30%，归母净利润3.1亿元，同比下降5%。"
                       "我们预计公司2022-2023年EPS分别为0.92、1.23元。", D21)
    rev, profit, eps = facts
    assert (rev.metric, rev.years, rev.part, rev.direction, rev.forecast) == ("营业收入", {2021}, H1, "up", False)
    assert (profit.metric, profit.direction) == ("净利润", "down")
    assert eps.forecast and eps.years == {2022, 2023}


def test_rate_and_loss_phrases_keep_the_metric_direction():
    assert read_facts("营收增速放缓")[0].direction == "up"  # revenue still grew
    assert read_facts("净利润降幅收窄")[0].direction == "down"  # profit still fell
    assert read_facts("净利润亏损收窄")[0].direction == "up"
    assert read_facts("营收同比持平")[0].direction == "flat"
    assert read_facts("营收未出现下滑")[0].direction is None


def test_a_query_reads_its_ask():
    ask = read_ask("兆驰股份2019年代工出货量下降的主要原因是什么？")
    assert ask.metrics == ("出货量",) and ask.years == {2019} and ask.part == FY and ask.direction["出货量"] == "down"
    assert read_ask("预计X 2023年营收是多少？").forecast and not read_ask("X营收符合预期吗").forecast
    assert read_ask("X 2022年收入较上年同期变化了多少？").years == {2022}  # 上年同期 is a comparison


# --- answerability ---------------------------------------------------------------------------------------------

def test_a_contradicted_premise_is_dropped():
    src = "2019年公司代工出货量同比增长34%，代工收入增长20%。"
    v = check_answer("兆驰股份2019年代工出货量下降的主要原因是什么？", src, title="兆驰股份（002429）：代工高增", date=D19)
    assert v is not None and v.reason == "contradicted"
    v = check_answer("上海建工2019年收入同比下降了多少？", "2019年公司实现营业收入2055亿元，同比增长20.5%。", date=D19)
    assert v is not None and v.reason == "contradicted"
    assert check_answer("兆驰股份2019年代工出货量增长了多少？", src, date=D19) is None


@pytest.mark.parametrize("src, wrong, right, date", [
    # a full-year question on half-year figures
    ("公司发布2021年半年报，2021H1实现营收25.3亿元，同比增长30%，归母净利润3.1亿元，同比增长12%。",
     "X 2021年归母净利润和营收表现如何？", "X 2021年上半年归母净利润和营收表现如何？", D21),
    # a quarter of another year
    ("公司2021年实现营收100亿元。22Q1公司实现营收30亿元，同比增长10%。",
     "X 2021年一季度营收是多少？", "X 2022年一季度营收是多少？", D22),
    # a bare part of a year is the report's latest such part, not the year a comparison beside it names
    ("公司前三季度实现合同销售额512亿元，同比增长8%，新增土储建面同比下降12%至330万方（2021年410万方）。",
     "X 2021年前三季度合同销售额是多少？", "X 2022年前三季度合同销售额是多少？", dt.date(2022, 10, 28)),
    # an undated report, read as of the end of its as-of year (verify.topicrules.infer_date)
    ("公司前三季度实现合同销售额512亿元，同比增长8%，新增土储建面同比下降12%至330万方（2021年410万方）。",
     "X 2021年前三季度合同销售额是多少？", "X 2022年前三季度合同销售额是多少？", dt.date(2022, 12, 31)),
    # the same where the asked measure is no metric of the readers' (销售均价): the period alone is checked
    ("公司前三季度销售均价同比增长3%至10976元/平，拿地均价占销售均价比例上行至38%（2021年29%）。",
     "X 2021年前三季度销售均价是多少？", "X 2022年前三季度销售均价是多少？", dt.date(2022, 10, 28)),
    # a comparison's base (较中报) is no period the source gives the figure for
    ("截止三季度，公司净投资收益率为4.5%，较中报提升0.2pct，保持稳健。2019年公司净投资收益率4.6%。",
     "X 2020年上半年的净投资收益率为多少？", "X 2020年三季度净投资收益率为多少？", dt.date(2020, 11, 1)),
], ids=["full_year_on_half_year", "quarter_of_another_year", "bare_part_beside_a_comparison_year",
        "bare_part_in_an_undated_report", "bare_part_period_only", "comparison_base_is_no_period"])
def test_a_period_the_source_does_not_give_is_wrong_period(src, wrong, right, date):
    v = check_answer(wrong, src, date=date)
    assert v is not None and v.reason == "wrong_period"
    assert check_answer(right, src, date=date) is None


def test_forecast_and_actual_must_match():
    src = "我们预计公司2022-2024年归母净利润分别为7.2、8.5、10.3亿元。"
    v = check_answer("X 2023年归母净利润是多少？", src, date=D22)
    assert v is not None and v.reason == "forecast_mismatch"
    assert check_answer("X 2022-2024年归母净利润的预测是多少？", src, date=D22) is None
    v = check_answer("预计X 2021年营收是多少？", "2021年公司实现营收100亿元，同比增长5%。", date=D22)
    assert v is not None and v.reason == "forecast_mismatch"


def test_a_metric_the_source_never_states_is_absent():
    v = check_answer("X 2021年毛利率是多少？", "2021年公司实现营收100亿元。", date=D22)
    assert v is not None and v.reason == "metric_absent"


def test_a_sentence_query_is_read_at_its_sentence_then_its_passage():
    passage = "2021年上半年公司营收增长30%。公司毛利率为35%，同比提升2个百分点。"
    # the period named before the sentence holds for it: a full-year question fails
    v = check_answer("X 2021年毛利率提升了多少？", passage, sentence="公司毛利率为35%，同比提升2个百分点。", date=D21)
    assert v is not None and v.reason == "wrong_period"


def test_topic_queries_are_read_against_titles_and_dates():
    titles = [("A公司（600001）：2023年营收增长20%", dt.date(2024, 4, 1))]
    assert check_topic_answer("A公司2023年营收表现如何？", titles) is None
    assert check_topic_answer("A公司2019年营收表现如何？", titles).reason == "wrong_period"
    assert check_topic_answer("A公司2026年营收是多少？", titles).reason == "forecast_mismatch"
    assert check_topic_answer("A公司2023年营收下降的原因？", titles).reason == "contradicted"


# --- subject ---------------------------------------------------------------------------------------------------

def test_fragment_and_wrong_subjects_are_dropped():
    s = Subjects(frozenset({"招商银行"}))
    assert check_subject("招商银行2020年代理保险收入是多少？", s) is None
    assert check_subject("预计招商银行2021年营收是多少？", s) is None
    for q in ("代理保险2020年占手续费收入是多少？", "钢基材料2021年营收是多少？", "受下游光通信2019年需求影响如何？"):
        assert check_subject(q, s).reason == "fragment_subject", q
    assert lead("受下游光通信2019年需求影响如何？") == "下游光通信"
    assert check_subject("国信传媒2021年营收是多少？", s).reason == "wrong_subject"  # a broker's team
    assert check_subject("汽车电子2021年营收是多少？", s).reason == "wrong_subject"  # a segment
    listed = lambda text: ["五粮液"] if "五粮液" in text else []  # noqa: E731
    assert check_subject("五粮液2021年营收是多少？", s, listed=listed).reason == "wrong_subject"
    assert check_subject("公司2021年营收是多少？", s).reason == "no_subject"
    assert check_subject("归母净利润的预测是多少？", s).reason == "no_subject"
    assert check_subject("利润均以食品2020年的收入是多少？", s).reason == "fragment_subject"
    assert check_subject("X", Subjects()).reason == "no_subject"


def test_industry_terms_are_subjects_of_industry_reports_only():
    industry = Subjects(frozenset(), frozenset({"汽车电子", "电子"}), "industry")
    assert check_subject("汽车电子2021年市场规模是多少？", industry) is None
    company = Subjects(frozenset({"均胜电子"}), frozenset(), "company")
    assert check_subject("汽车电子2021年市场规模是多少？", company).reason == "wrong_subject"


def test_an_untitled_report_takes_its_subject_from_its_body():
    class Table:  # the two methods verify uses of fincprg.finance.stocks.StockTable
        name_of: dict = {}

        @staticmethod
        def mentions(text):
            from types import SimpleNamespace as NS
            return [NS(name="宁德时代", count=text.count("宁德时代"))] if "宁德时代" in text else []

    body = Report(id="r", title="", text="宁德时代2023年营收增长。宁德时代毛利率提升。")
    info = report_info(body, Table())
    assert info.companies == {"宁德时代"} and info.subject_from == "body" and info.kind == "company"
    nothing = report_info(Report(id="n", title="", text="行业需求回暖。"), Table())
    assert nothing.kind == "unknown" and passage_subjects(nothing, "行业需求回暖。").empty


# --- related companies, round trip -----------------------------------------------------------------------------

def test_an_intent_pairing_unrelated_companies_is_dropped():
    industry = {"涪陵榨菜": "食品", "五粮液": "白酒", "泸州老窖": "白酒"}
    v = check_related("比较涪陵榨菜和五粮液的经营表现", ["五粮液", "涪陵榨菜", "泸州老窖"], industry)
    assert v is not None and v.reason == "unrelated_companies"
    assert check_related("比较泸州老窖和五粮液的经营表现", ["五粮液", "涪陵榨菜", "泸州老窖"], industry) is None


def test_round_trip_finds_the_own_passage_and_flags_ambiguous_queries():
    docs = ["星河科技营收增长", "恒芯存储出货量提升", "面临哪些风险 原材料", "面临哪些风险 汇率", "面临哪些风险 需求"]
    assert "星河" in char_tokens("星河科技") and "星" in char_tokens("星河科技")
    bm = CharBM25(docs)
    idx, sc = bm.search(["星河科技的营收", "面临哪些风险"], depth=5)
    assert idx[0][0] == 0
    own = Target(frozenset({0}), frozenset({"r0"}))
    report_of = ["r0", "r1", "r2", "r3", "r4"]
    assert judge_ranking(idx[0], sc[0], own, report_of, k=1, n=2, margin=0.05) is None
    v = judge_ranking(idx[1], sc[1], Target(frozenset({2}), frozenset({"r2"})), report_of, k=3, n=2, margin=0.05)
    assert v is not None and v.reason == "ambiguous"
    v = judge_ranking(idx[0], sc[0], Target(frozenset({1}), frozenset({"r1"})), report_of, k=1, n=2, margin=0.05)
    assert v is not None and v.reason == "not_retrieved"
    assert isinstance(idx, np.ndarray)


# -- months, a sentence's own reading, valuations of an open year -----------------------------------------
def test_full_year_question_from_a_month_figure_is_wrong_period():
    import datetime as dt

    from fincprg.verify.answer import check_answer

    src = "2020年6月，港口集装箱吞吐量完成120万标箱，同比增长5%。"
    v = check_answer("2020年集装箱吞吐量是多少？", src, sentence=src, date=dt.date(2020, 7, 15))
    assert v is not None and v.reason == "wrong_period"
    assert check_answer("2020年6月集装箱吞吐量是多少？", src, sentence=src, date=dt.date(2020, 7, 15)) is None


def test_sentence_that_states_the_metric_decides_alone():
    import datetime as dt

    from fincprg.verify.answer import check_answer

    passage = "2019年公司实现营业收入150亿元，同比增长12%。其中19Q4单季收入42.7亿元，同比增长8%。"
    sentence = "其中19Q4单季收入42.7亿元，同比增长8%。"
    v = check_answer("2019年营业收入是多少？", passage, sentence=sentence, date=dt.date(2020, 4, 1))
    assert v is not None and v.reason == "wrong_period"  # the passage's full-year figure is another sentence's
    assert check_answer("2019年营业收入是多少？", passage, sentence="2019年公司实现营业收入150亿元，同比增长12%。",
                        date=dt.date(2020, 4, 1)) is None


def test_valuation_of_an_open_year_asked_as_reached_is_a_forecast():
    import datetime as dt

    from fincprg.verify.answer import check_answer

    src = "当前股价对应2024年PE为14倍，估值处于历史低位。"
    v = check_answer("2024年PE达到了多少？", src, sentence=src, date=dt.date(2024, 3, 1))
    assert v is not None and v.reason == "forecast_mismatch"
    assert check_answer("2022年PE是多少？", "2022年PE为20倍。", sentence="2022年PE为20倍。",
                        date=dt.date(2024, 3, 1)) is None


def test_an_incentive_target_is_no_actual():
    import datetime as dt

    from fincprg.verify.answer import check_answer

    src = "股权激励考核目标为2023年净利润不低于100亿元。"
    v = check_answer("长城汽车2023年净利润是多少？", src, sentence=src, date=dt.date(2023, 3, 1))
    assert v is not None and v.reason == "forecast_mismatch"
