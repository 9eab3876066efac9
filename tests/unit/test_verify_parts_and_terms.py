"""Readings a strict reader fails and verify now drops: a part's figure asked as the company's (a numbered
segment heading, a named plant, assets to be injected, a market's volume), a part's amount stated only as a
change, a plan's targets asked as a forecast, a plan asked by a year that is one of its terms, and a period
that is over by the report date read as a forecast. Each rule keeps the acceptable reading beside it. The
sources are made up."""
from __future__ import annotations

import datetime as dt

from fincprg.verify.answer import check_answer
from fincprg.verify.figures import check_amount, check_target_as_forecast
from fincprg.verify.readers import read_facts
from fincprg.verify.scopes import check_market_as_company, check_part_whole
from fincprg.verify.strict import check_event
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
