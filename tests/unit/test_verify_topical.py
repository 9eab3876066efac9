"""verify's open asks about a topic (fincprg/verify/topical.py) and the comparison and preannouncement readings
that came with them, and a metric's trend, a review's period and the report's own year: each rule drops the
failing reading and keeps the acceptable one beside it (shapes from blind readings, sources made up)."""
import datetime as dt

from fincprg.verify.answer import check_answer
from fincprg.finance.crosscheck import periods
from fincprg.verify.scopes import check_part_whole
from fincprg.verify.wording import check_vague
from fincprg.verify.topical import check_topical, check_trend


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


def test_a_trend_needs_a_figure_not_a_direction_or_plan():
    direction = "2021年之后，随着能源价格回升，公司营业收入和利润持续提升。"
    v = check_trend("某能源2021年营业收入的变化趋势如何？", direction, ["某能源"])
    assert v is not None and v.reason == "not_answered"
    # a year alone is no figure; a figure for the metric answers it
    assert check_trend("某能源2021年营业收入的变化趋势如何？", "2021年公司实现营业收入241 9亿元，同比增长59 4 。",
                       ["某能源"]) is None
    # a metric family (研发投入 is 研发费用) stated only as a plan
    plan = "公司将加大研发投入以提升学员对线上产品的认可度。"
    assert check_trend("某教育2021年研发投入的变化趋势如何？", plan, ["某教育"]) is not None
    assert check_trend("某教育2021年机构业务规模的变化趋势如何？", plan, ["某教育"]) is None  # never named: not ours
    # a metric the reader has no family for is read by the words asked
    courses = "公司将加大线上课程投入。"
    v = check_trend("某教育2021年线上课程的变化趋势如何？", courses, ["某教育"])
    assert v is not None and v.reason == "not_answered"
    # a plan asked as a plan is the topic rules' business (「规划如何」 is no trend ask; 「前景表现如何」 is one)
    assert check_trend("某教育2022年研发投入的规划如何？", plan, ["某教育"]) is None
    assert check_trend("某教育研发投入的前景表现如何？", plan, ["某教育"]) is None


def test_a_review_period_dates_its_unlabelled_figures():
    title = "某药（002821）2023年一季报点评：业绩符合预期"
    src = "公司持续加大投入，报告期内研发费用1 62亿元，同比增长23 85 。2022年签订多个工艺开发订单。"
    v = check_answer("某药2022年研发费用是多少？", src, title=title, date=dt.date(2023, 4, 28))
    assert v is not None and v.reason == "wrong_period"
    assert check_answer("某药2023年一季度研发费用是多少？", src, title=title, date=dt.date(2023, 4, 28)) is None
    # a full-year review leaves them as they are
    assert check_answer("某药2022年研发费用是多少？", src, title="某药（002821）2022年报点评：业绩符合预期",
                        date=dt.date(2023, 3, 28)) is None


def test_a_report_cannot_state_its_own_years_full_year_actual():
    src = "经营活动产生的现金流净额为1 36亿元，比去年同期减少。"
    v = check_answer("某环保2020年经营活动现金流达到了多少？", src, date=dt.date(2020, 4, 28))
    assert v is not None and v.reason == "wrong_period"
    assert check_answer("某环保2019年经营活动现金流达到了多少？", src, date=dt.date(2020, 4, 28)) is None


def test_a_revised_forecast_is_no_actual():
    src = "我们略微下调公司2022 2023 2024年营业收入分别至12 18 15 24 19 07亿元。"
    v = check_answer("某药业2022-2024年营业收入达到了多少？", src)
    assert v is not None and v.reason == "forecast_mismatch"
    assert check_answer("预计某药业2022-2024年营业收入分别是多少？", src) is None


def test_a_product_rate_and_a_contribution_are_no_company_figure():
    v = check_vague("某超市2019年的门店渗透率为多少？", "超市生鲜销售增长18 2 ，生鲜在门店的渗透率达40 。", ["某超市"])
    assert v is not None and v.reason == "vague"
    sub = "其中子公司某药业2020年营收58 03亿元，同比增长20 34 ，对公司的营收贡献率为67 32 。"
    v = check_part_whole("某高新2020年营收是多少？", sub, ["某高新"])
    assert v is not None and v.reason == "not_answered"


def test_a_sales_amount_needs_a_period():
    src = "10月实现合同销售金额523 1亿元，1 10月累计合同销售金额5450 7亿元。"
    assert check_vague("某地产的合同销售金额为多少？", src, ["某地产"]) is not None
    assert check_vague("某地产2021年10月的合同销售金额为多少？", src, ["某地产"]) is None


def test_a_risk_flagged_table_name_yields_to_the_name_written_beside_its_code(tmp_path):
    from fincprg.finance.stocks import StockTable

    table = tmp_path / "stocks.csv"
    table.write_text("symbol,name,industry\n003032,*ST传智,文教休闲\n600519,贵州茅台,白酒\n", encoding="utf-8")
    t = StockTable(table)
    assert [m.name for m in t.mentions("传智教育 003032 公司发布2021年一季报。")] == ["传智教育"]
    assert [m.name for m in t.mentions("公司 003032 发布一季报。")] == ["*ST传智"]  # nothing written beside it
    assert [m.name for m in t.mentions("贵州茅台（600519）：业绩稳健")] == ["贵州茅台"]


def test_a_unit_without_its_number_a_nameless_month_and_a_level_without_a_figure():
    from fincprg.verify.wording import check_garbled

    assert check_garbled("某榨菜2019年的万吨榨菜产能为多少？") is not None
    assert check_garbled("某榨菜2019年营收是多少亿元？") is None
    src = "1月单月市占率17 24 ，同比提升0 92pct。"
    assert check_vague("某快递2022年单月市占率同比提升了多少？", src, ["某快递"]) is not None
    assert check_vague("某快递2022年1月单月市占率同比提升了多少？", src, ["某快递"]) is None
    assert check_trend("某港口2020年估值水平如何？", "公司估值可参照其他港口。", ["某港口"]) is not None
    assert check_trend("某港口2020年估值水平如何？", "当前股价对应2020年PE为15倍。", ["某港口"]) is None


def test_an_impact_is_stated_only_where_the_topic_acts_on_something():
    # the company's response to the topic, with figures beside it, states no impact of the topic
    response = "前三季度利润增长主要归因于公司为应对疫情调整产品结构，加大海外开拓，高端产品销量增长18%。"
    v = check_topical("疫情对某铝业2020年前三季度经营有何影响？", response, ["某铝业"])
    assert v is not None and v.reason == "not_answered" and "impact" in v.detail
    # a cause word before the topic, or an effect word after it, states the impact
    for stated in ("受疫情影响，一季度公司营收同比下滑12%。", "疫情导致公司2月停工两周，一季度营收下滑12%。",
                   "一季度因疫情停工，营收下滑12%。"):
        assert check_topical("疫情对某铝业2020年一季度经营有何影响？", stated, ["某铝业"]) is None, stated
    # 归因于 names a cause of the result, not the topic as a cause
    assert check_topical("疫情对某铝业2020年经营有何影响？", "增长归因于应对疫情的举措，销量达到12万吨。",
                         ["某铝业"]) is not None
    # a progress ask is unchanged: the same response sentence states the 海外 progress with a figure
    assert check_topical("某铝业2020年前三季度海外拓展情况如何？", response, ["某铝业"]) is None


def test_the_nation_s_figures_state_no_company_topic():
    national = ("4月我国与东盟进出口贸易继续逆势增长，某港将持续受益。据海关总署数据，2020年前4月我国货物贸易进出口总值"
                "9.07万亿元，其中出口4.74万亿元，同比-6.4%。")
    v = check_topical("某港2020年出口业务表现如何？", national, ["某港"])
    assert v is not None and v.reason == "not_answered"
    # the company named after the nation speaks of its own exports
    own = "我国出口承压，某港2020年出口集装箱120万标箱，同比增长20%。"
    assert check_topical("某港2020年出口业务表现如何？", own, ["某港"]) is None
    # the company's 全球化 or 国内 markets are its own
    assert check_topical("某农化2021年海外业务进展如何？", "公司持续推进全球化布局，海外子公司收入同比增长42%。",
                         ["某农化"]) is None


def test_the_brokers_view_or_a_things_benefit_is_no_progress_or_plan_of_the_company():
    # the analyst's expectation is not the company's plan, nor its earlier report the company's progress
    co = ["某珠宝"]
    assert check_topical("某珠宝2021年二季度渠道方面有哪些规划？",
                         "渠道方面：我们预计2021Q2公司新开门店数稳步回升，全年有望净开店600家。", co) is not None
    assert check_topical("某珠宝2020年的渠道建设有哪些进展？",
                         "我们在前期报告《供给端管理更加娴熟》即阐述了公司渠道管理有所精进。", co) is not None
    # what a strategy may do for the topic is no progress
    assert check_topical("某酒业2022年渠道拓展情况如何？", "“13455”营销方针有助公司强化“品牌+渠道”双轮驱动战略。",
                         co) is not None
    # the company's own plan and progress still answer
    assert check_topical("某珠宝2021年二季度渠道方面有哪些规划？", "公司计划2021Q2新开门店200家，渠道进一步下沉。",
                         co) is None
    assert check_topical("某珠宝2021年渠道拓展情况如何？", "2021年公司渠道新开门店600家，我们认为扩张节奏稳健。",
                         co) is None
