"""verify's open asks about a topic (fincprg/verify/topical.py) and the comparison and preannouncement readings
that came with them: each rule drops the failing reading and keeps the acceptable one beside it."""
import datetime as dt

from fincprg.verify.answer import check_answer
from fincprg.verify.readers import periods
from fincprg.verify.strict import check_vague
from fincprg.verify.topical import check_topical


def test_progress_asked_of_an_outlook_is_not_answered():
    v = check_topical("某乳业2020年的渠道建设有哪些进展？", "我们看好2020年公司渠道下沉持续推进。", ["某乳业"])
    assert v is not None and v.reason == "not_answered"
    # the progress stated with a figure answers it; a plan with a figure answers a plan
    assert check_topical("某调味品2021年渠道拓展情况如何？", "2021年公司新增经销商1200家，渠道覆盖地级市90%。",
                         ["某调味品"]) is None
    assert check_topical("某调味品2022年渠道方面有哪些规划？", "预计2022年公司将新增经销商1000家，渠道进一步下沉。",
                         ["某调味品"]) is None
    # ... but not the same plan asked as what happened
    assert check_topical("某调味品2022年渠道拓展情况如何？", "预计2022年公司将新增经销商1000家，渠道进一步下沉。",
                         ["某调味品"]) is not None


def test_an_impact_needs_a_stated_effect_and_figure_asks_are_left_to_the_figure_rules():
    v = check_topical("某电力2021年并购事项对业绩有何影响？", "两座电站的资产注入仍在审核中。", ["某电力"])
    assert v is not None and v.reason == "not_answered"
    assert check_topical("某电力2021年并购事项对业绩有何影响？", "收购完成后增厚2021年归母净利润12亿元。",
                         ["某电力"]) is None
    assert check_topical("某零售2021年开了多少家新门店？", "看好门店扩张。", ["某零售"]) is None
    assert check_topical("某零售2021年营收是多少？", "看好渠道", ["某零售"]) is None
    assert check_topical("医药行业面临医保谈判降价超预期等哪些风险？", "风险提示：医保谈判降价超预期。") is None


def test_a_comparison_is_no_period():
    v = check_vague("某乳业三季度营业收入较上年同期变化了多少？", "2021年三季度公司实现营业收入290亿元，同比增长13%。",
                    frozenset(["某乳业"]))
    assert v is not None and v.reason == "vague"
    v = check_vague("某钾肥氯化钾营收较上年同期变化了多少？", "氯化钾营收34亿元，同比增长311%。", frozenset(["某钾肥"]))
    assert v is not None and v.reason == "vague"
    assert check_vague("某乳业2021年三季度营业收入较上年同期变化了多少？", "x", frozenset(["某乳业"])) is None
    assert check_vague("某乳业今年营业收入同比增长了多少？", "x", frozenset(["某乳业"])) is None


def test_a_preannouncement_is_no_actual_figure():
    src = "公司发布2023年一季度业绩预告，预告归母净利润1.00-1.20亿元，同比增长100%-140%。"
    v = check_answer("某食品2023年一季度的归母净利润为多少？", src, title="某食品", sentence=src,
                     date=dt.date(2023, 4, 10))
    assert v is not None and v.reason == "forecast_mismatch"
    src = "2023年一季度公司实现归母净利润1.10亿元，同比增长120%。"
    assert check_answer("某食品2023年一季度的归母净利润为多少？", src, title="某食品", sentence=src,
                        date=dt.date(2023, 4, 10)) is None


def test_month_notation_after_a_year_is_a_part_of_the_year():
    src = "2022年公司收入增长势头不减。公司经初步核算，2022M1 2实现营业收入7 09亿元左右，同比增长42 左右。"
    v = check_answer("某装备2022年营业收入的同比变化幅度是多少？", src, title="某装备：业绩符合预期", sentence=src,
                     date=dt.date(2022, 3, 30))
    assert v is not None and v.reason == "wrong_period"
    assert periods("M2货币供应增速回落") == []  # money supply, not February
    assert [p.part for p in periods("2022M1-2实现营收")] == ["M"]
