"""Readings a strict reader fails and verify now drops: a part's figure asked as the company's (a numbered
segment heading, a named plant, assets to be injected, a market's volume), a part's amount stated only as a
change, a plan's targets asked as a forecast, a plan asked by a year that is one of its terms, and a period
that is over by the report date read as a forecast. Each rule keeps the acceptable reading beside it. The
sources are made up."""
from __future__ import annotations

import datetime as dt

from fincprg.verify.answer import check_answer
from fincprg.verify.figures import check_amount, check_change_stated, check_risk
from fincprg.verify.forecasts import check_target_as_forecast
from fincprg.finance.crosscheck import periods, read_facts
from fincprg.verify.scopes import check_market_as_company, check_part_whole
from fincprg.verify.events import check_event
from fincprg.verify.wording import check_garbled, check_vague, check_whole_year
from fincprg.verify.topicrules import as_of_year

NAMES = ["华鼎股份"]


def _reason(v):
    return v.reason if v is not None else None


def test_a_numbered_segment_heading_makes_its_figures_the_segments():
    src = "2 酒店业务 公司加快门店扩张，22H1收入3 5亿元，同比增长12 。"
    q = "华鼎股份2022年上半年收入达到了多少？"
    assert _reason(check_part_whole(q, src, NAMES)) == "not_answered"
    assert check_part_whole(q, "公司加快门店扩张，22H1收入3 5亿元，同比增长12 。", NAMES) is None
    # the company's main business is no part
    assert check_part_whole(q, "1 主营业务 公司22H1收入3 5亿元，同比增长12 。", NAMES) is None


def test_a_named_plant_generates_for_its_owner_not_for_the_company():
    q = "华鼎股份发电量提升主要受哪些因素驱动？"
    src = "甲乙电站与丙丁电站相继投产完毕，装机规模的增长将拉动发电量增长。"
    assert _reason(check_part_whole(q, src, NAMES)) == "not_answered"
    assert check_part_whole(q, "公司发电量同比增长10 ，主要受来水偏丰带动。", NAMES) is None


def test_assets_to_be_injected_are_not_the_company_even_as_a_whole():
    q = "华鼎股份2021年净利率达到了多少？"
    src = "拟注入资产21年整体净利率18 ，处行业较高水平，三家医院合计收入2亿元 净利润3600万元 净利率18 。"
    assert _reason(check_part_whole(q, src, NAMES)) == "not_answered"
    assert check_part_whole(q, "公司2021年整体净利率18 ，处行业较高水平。", NAMES) is None


def test_a_markets_volume_is_not_the_companys():
    q = "华鼎股份2022年国内重卡销量同比变化了多少？"
    src = "2022年国内重卡销量同比下降50 ，公司热管理业务收入逆势增长。"
    assert _reason(check_market_as_company(q, src, NAMES)) == "wrong_subject"
    assert check_market_as_company(q, "2022年公司国内重卡销量同比下降30 。", NAMES) is None
    # the company's own domestic sales and a domestic market's revenue are its own
    assert check_market_as_company("华鼎股份2022年国内市场收入是多少？", src, NAMES) is None


def test_a_parts_amount_is_read_from_the_parts_own_mentions():
    q = "华鼎股份2022年的华北区域收入为多少？"
    src = "2022年华东、华北区域收入分别同增20 、15 ，线上渠道收入3亿元，同增40 。"
    assert _reason(check_amount(q, src, NAMES)) == "not_answered"
    # the amount after the part's name alone, and another metric before it (和) qualifies nothing
    assert check_amount(q, "2022年分区域营收分别为华东8亿元、华北5亿元。", NAMES) is None
    both = "华鼎股份2022年的归母净利润和扣非归母净利润分别是多少？"
    assert check_amount(both, "2022年归母净利润2亿元，扣非归母净利润1 8亿元。", NAMES) is None


def test_an_incentive_plans_targets_are_no_forecast():
    q = "预计华鼎股份2023-2024年净利润是多少？"
    src = "解除限售条件为2023、2024年净利润考核目标分别为10亿元、12亿元。"
    assert _reason(check_target_as_forecast(q, src)) == "not_answered"
    assert check_target_as_forecast(q, src + "我们预计公司2023-2024年净利润分别为11亿元、13亿元。") is None
    assert check_target_as_forecast("华鼎股份2023-2024年的净利润考核目标是多少？", src) is None
    # any metric: a sales target is no sales forecast
    sales = "2023 2024年销量考核目标分别为30 40万辆。"
    assert _reason(check_target_as_forecast("华鼎股份2023-2024年销量的预测值是多少？", sales)) == "not_answered"


def test_a_plan_is_asked_by_the_year_on_its_name_not_by_its_terms():
    src = ("公司公告2023年员工持股计划草案，拟覆盖核心员工300人，受让价格为每股5元。"
           "考核要求2024 2025年营收增速分别不低于10 、12 。")
    v = check_event("华鼎股份2025年员工持股计划的主要内容是什么？", src, NAMES)
    assert _reason(v) == "wrong_period"
    assert check_event("华鼎股份2023年员工持股计划的主要内容是什么？", src, NAMES) is None


def test_a_period_over_by_the_report_date_is_no_forecast():
    src = "业绩有望受益于政策，2022年前三季度公司营收100亿元，同比增长10 。"
    rev = [f for f in read_facts(src, dt.date(2022, 11, 1)) if f.metric == "营业收入"]
    assert rev and not rev[0].forecast
    # the same quarters are still ahead of a report of August
    assert [f for f in read_facts(src, dt.date(2022, 8, 1)) if f.metric == "营业收入"][0].forecast
    v = check_answer("华鼎股份2022年前三季度营收的预测值是多少？", src, date=dt.date(2022, 11, 1))
    assert _reason(v) == "forecast_mismatch"


def test_a_pledges_years_do_not_date_an_undated_report():
    body = "2020年公司实现营收10亿元，同比增长5 。股东承诺标的公司2021 2023年合计净利润不低于3亿元，若未能完成将予以补偿。"
    assert as_of_year([body]) == 2020


def test_an_industrys_query_asks_its_own_market():
    src = "预计2023年国内新增光伏装机量同比增长50 。"
    assert check_market_as_company("光伏行业2023年国内新增光伏装机量的预测值是多少？", src, ["光伏行业"]) is None
    assert check_market_as_company("2023年国内新增光伏装机量的预测值是多少？", src, NAMES) is None


def test_what_a_part_contributes_is_the_parts_own_figure():
    q = "华鼎股份2022年上半年归母净利润的变化情况如何？"
    src = "假设物流业务贡献公司2022H1归母净利润5 2亿元，则剔除物流业务后，其余业务贡献公司2022H1归母净利润1 3亿元。"
    assert _reason(check_part_whole(q, src, NAMES)) == "not_answered"
    assert check_part_whole(q, "公司2022H1归母净利润6 5亿元，同比增长8 。", NAMES) is None


def test_a_clause_after_a_parts_figure_keeps_the_part_though_the_company_was_named_before_it():
    q = "华鼎股份2022年上半年收入是多少？"
    src = "2022H1公司物流业务收入逆势增长，收入120亿元，同比增长19 。"
    assert _reason(check_part_whole(q, src, NAMES)) == "not_answered"
    # a multiple of the metric (「为同期收入3 2x」) gives no figure of it
    times = "2022年设计业务收入40亿，年末在手合同额130亿，为同期收入3 2x。"
    assert _reason(check_part_whole("华鼎股份2022年收入是多少？", times, NAMES)) == "not_answered"


def test_a_capacity_named_after_a_lost_bracket_has_its_product():
    v = check_vague("华鼎股份2022年产能是多少？", "一号煤矿 产能300万吨 年 正在办理投产手续。", NAMES)
    assert _reason(v) == "vague"


def test_an_events_price_needs_a_price_in_yuan():
    q = "华鼎股份2022年股权激励的授予对象和价格是多少？"
    src = "公司完成股权激励首批授予登记，激励对象共500人，授予股票期权1200万份。"
    assert _reason(check_event(q, src, NAMES)) == "not_answered"
    assert check_event(q, src.replace("。", "，行权价格为25 6元 股。"), NAMES) is None


def test_a_sentence_that_ends_on_its_risk_heading_names_no_risk():
    q = "华鼎股份面临哪些主要风险？"
    assert _reason(check_risk(q, "维持买入评级。风险提示。")) == "not_answered"
    assert check_risk(q, "维持买入评级。风险提示：原材料价格波动、下游需求下滑。") is None


def test_an_example_of_the_answer_written_into_the_question_is_garbled():
    assert _reason(check_garbled("华鼎股份面临原材料价格波动等哪些风险？")) == "garbled"
    assert check_garbled("华鼎股份面临哪些风险？") is None
    assert check_garbled("华鼎股份新产能还要等几个月才能投产？") is None  # 等 the verb


def test_a_sentence_opening_on_its_metric_after_a_segments_sentence_is_the_segments():
    q = "华鼎股份2022年上半年毛利率较上年同期变化了多少？"
    src = "2022H1公司物流业务收入逆势增长，收入120亿元，同比增长19 。毛利率1 7 ，同比减少1 4个百分点。"
    at = src.index("毛利率")
    assert _reason(check_part_whole(q, src, NAMES, start=at)) == "not_answered"
    # a quarter after 其中 is no part, and a sentence that names the company keeps its figures
    quarter = "公司发布2022年半年报，实现营收34 7亿元，其中单二季度实现营收10 5亿元。毛利率30 ，同比提升2pct。"
    assert check_part_whole(q, quarter, NAMES, start=quarter.index("毛利率")) is None


def test_a_change_asked_for_a_period_needs_that_periods_number():
    q = "华鼎股份2022年一季度毛利率较上年同期变化了多少？"
    src = "产品提价成功22Q1毛利率迅速回升21FY整体毛利率24 ，同比下滑8 5pct。"
    assert _reason(check_change_stated(q, src)) == "not_answered"
    moved = "销售费用率由21年6 59 增至22年7 32 。"
    assert check_change_stated("华鼎股份2022年销售费用率同比提升了多少？", moved) is None
    assert check_change_stated(q, "22Q1毛利率为30 ，同比提升2pct。") is None
    # an amount sizes no change: the nine months' change asked where only the third quarter's is given
    nine = "今年前三季度，步步高实现净利1 69亿元，其中第三季度净利润同比扭亏为盈，较去年同期增长127 33 。"
    assert _reason(check_change_stated("步步高2020年前三季度净利的同比变化幅度是多少？", nine)) == "not_answered"
    assert check_change_stated("步步高2020年前三季度净利同比增长了多少？",
                               "今年前三季度，步步高实现净利1 69亿元，同比增长12 。") is None


def test_an_event_named_as_a_point_in_time_states_no_event():
    q = "华鼎股份2019年收购了哪些资产？"
    src = "截至2019年末，公司金矿资源量102 6吨，相比于刚收购时39 6吨的资源量，实现约159 的增长。"
    assert _reason(check_event(q, src, NAMES)) == "not_answered"
    assert check_event(q, "2019年公司以5亿元收购甲乙矿业100 股权。", NAMES) is None


def test_a_month_that_lost_its_number_is_a_month():
    assert [p.part for p in periods("截止2020年月，公司资产负债率为49 39")] == ["M"]
    assert [p.part for p in periods("2020年月均销量3万辆")] == [None]
    q = "华鼎股份2020年的资产负债率为多少？"
    assert _reason(check_whole_year(q, "截止2020年月，公司资产负债率为49 39 。", NAMES)) == "wrong_period"
    assert check_whole_year(q, "截止2020年末，公司资产负债率为49 39 。", NAMES) is None
    # an event dated by its month is that year's event
    plan = "2022年3月公司发布股权激励计划，拟授予限制性股票1000万股。"
    assert check_whole_year("华鼎股份2022年股权激励计划拟授予多少股票？", plan, NAMES) is None
    assert _reason(check_garbled("华鼎股份2019年月销售金额同比提升了多少？")) == "garbled"
    assert check_garbled("华鼎股份2020年月均销量是多少？") is None
    assert check_garbled("华鼎股份2022年月活用户数是多少？") is None


def test_two_digit_years_before_fy_and_figures_that_lost_their_point():
    assert [(sorted(p.years), p.part) for p in periods("21FY整体毛利率24")] == [([2021], "FY")]
    assert periods("实现营业收入2054 97亿元") == []  # 2054.97亿元, not the year 2054


def test_the_companys_own_figures_beside_a_part_are_kept():
    # a more specific name after a part's 收入 returns to the company; an unmarked figure in the sentence
    # before is the company's; all plants of a kind and a verb that reports are no part
    kept = [
        ("华鼎股份2022年营业收入是多少？", "2022年海外业务收入快速增长，营业收入120亿元，同比增长20 。"),
        ("华鼎股份2022年归母净利润是多少？", "2022年营收100亿元，同比增长20 ，其中海外收入30亿元。归母净利润5亿元，同比增长15 。"),
        ("华鼎股份2022年发电量是多少？", "2022年公司控股电站累计完成发电量350亿千瓦时。"),
        ("华鼎股份2022年收入是多少？", "事件描述公司发布年报 2022年实现收入46 23亿，同比下降31 49 。"),
    ]
    for q, src in kept:
        at = src.rfind("。", 0, len(src) - 1) + 1
        assert check_part_whole(q, src, NAMES, start=at) is None, q


def test_a_change_stated_in_the_next_clause_and_generic_parts_are_answered():
    src = "2022年公司营业收入快速增长，同比增长35 ，达到120亿元。"
    assert check_change_stated("华鼎股份2022年营收同比增长了多少？", src) is None
    src = "2022年公司营业收入12亿元，其中传统业务收入同比增长5 。"
    assert check_amount("华鼎股份2022年主营业务收入是多少？", src, NAMES) is None
    assert check_amount("华鼎股份2022年主营业务收入是多少？", src, ["", "华鼎股份"]) is None  # an empty name


def test_events_named_in_words_that_start_with_shi_and_prices_of_other_things_are_kept():
    assert check_event("华鼎股份2022年收购了哪些资产？", "2022年公司收购时代新材旗下电池业务，交易对价5亿元。",
                       NAMES) is None
    assert check_event("华鼎股份2022年新品价格变化情况如何？", "2022年新品价格较老品提升约20%。", NAMES) is None
    assert check_event("华鼎股份2022年回购价格是多少？", "2022年公司以每股10 5港元回购股份500万股。", NAMES) is None


def test_guidance_is_a_forecast_and_a_short_risk_list_names_risks():
    assert check_target_as_forecast("预计华鼎股份2023年营收将达到多少？", "公司公布2023年业绩目标：营收150亿元。") is None
    assert check_risk("华鼎股份面临哪些风险？", "风险提示：疫情、政策、汇率。") is None
    assert check_risk("华鼎股份面临哪些风险？", "下游需求下滑是公司当前面临的主要风险。") is None
    # a passage ending on its heading, with the title appended after it, still names none
    assert _reason(check_risk("华鼎股份面临哪些风险？", "维持买入评级。风险提示。\n华鼎股份：业绩稳健增长")) == "not_answered"
    assert as_of_year(["2022年公司实现营收120亿元，同比增长20 ，推出若干新品。"]) == 2022  # 若干 is no condition


def test_a_long_run_outlook_is_no_past_driver():
    q = "华鼎股份2020年市占率提升主要受哪些因素驱动？"
    title = "华鼎股份（600000）：公司长期业绩提升的三驱动（油价，技术突破，市占率提升）"
    v = check_answer(q, "我们认为公司长期海外市占率将提升。", title=title, date=dt.date(2020, 12, 3))
    assert _reason(v) == "forecast_mismatch"
    done = "2020年公司市占率提升至15 ，主要受益于新客户导入。"
    assert check_answer(q, done, title=title, date=dt.date(2020, 12, 3)) is None
    # a long-term loan is no outlook
    assert not read_facts("2020年公司长期借款减少，营收增长10 。", dt.date(2021, 3, 1))[0].forecast


def test_several_is_no_condition_for_events_either():
    src = "2022年公司推出若干新品，包括「甲乙」系列，全年销售额2亿元。"
    assert check_event("华鼎股份2022年推出了哪些新品？", src, NAMES) is None
    assert _reason(check_event("华鼎股份2022年推出了哪些新品？", "若2022年推出「甲乙」系列，销售额将达2亿元。",
                               NAMES)) == "not_answered"
