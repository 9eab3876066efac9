"""verify's figure checks (fincprg/verify/figures.py) and the reading fixes that came with them: each rule drops
the failing reading and keeps the acceptable one beside it."""
import datetime as dt

from fincprg.verify.answer import check_answer
from fincprg.verify.figures import check_combined, check_rate_level, check_risk
from fincprg.verify.forecasts import check_earnings_forecast, check_valuation
from fincprg.finance.crosscheck import periods, read_facts
from fincprg.verify.scopes import check_part_whole
from fincprg.verify.events import check_event
from fincprg.verify.wording import check_garbled, check_vague


def test_a_part_of_a_combined_category_is_not_answered():
    v = check_combined("新安股份2021年特种硅烷产品收入是多少？", "硅基终端及特种硅烷产品实现收入32 04亿元，同比增长", ["新安股份"])
    assert v is not None and v.reason == "not_answered"
    assert check_combined("步步高2019年家电收入是多少？", "分品类，超市 家电收入增长7 65 至129亿元", ["步步高"]) is not None
    # the part stated on its own, a space after 公司, and a period word are no combined category
    assert check_combined("新安股份2021年特种硅烷产品收入是多少？", "特种硅烷产品实现收入12亿元", ["新安股份"]) is None
    assert check_combined("景津装备2021年配套设备收入是多少？", "2021年公司 配套设备收入5亿元", ["景津装备"]) is None
    assert check_combined("中航高科2020年前三季度的营收为多少？", "2020年三季报 前三季度实现营收30亿元", ["中航高科"]) is None
    # a list with one value each (分别) is no combined figure
    src = "其中双胶纸 铜版纸 白卡纸毛利率分别为 23 4 23 3 22 6 。"
    assert check_combined("晨鸣纸业2020年上半年的白卡纸毛利率为多少？", src, ["晨鸣纸业"]) is None


def test_a_rate_given_only_as_a_change_has_no_level():
    v = check_rate_level("兆驰股份2019年的财务费用率是多少？", "毛利率为22 5 ，财务费用率同比 1 2pct。")
    assert v is not None and v.reason == "not_answered"
    assert check_rate_level("华鲁恒升2022年三季度的毛利率为多少？", "22Q3实现毛利率23 3 ，同环比分别下滑 13 2 9 1pct。") is None
    assert check_rate_level("常熟银行2022年上半年净息差是多少？", "2022H1净息差维持3 09 ，环比一季度持平") is None
    assert check_rate_level("步步高2019年毛利率是多少？", "主营毛利率减少0 36pct至15 98 。") is None
    assert check_rate_level("X2019年毛利率同比变化多少？", "毛利率同比 1 2pct。") is None  # a change asked


def test_a_multiple_at_todays_price_is_not_reached():
    src = "当前股价对应2020 2022 年的 PB 为 1 87 1 77 1 68 倍 PB，维持 增持 评级。"
    v = check_valuation("招商证券2020-2022年PB达到了多少？", src)
    assert v is not None and v.reason == "forecast_mismatch"
    assert check_valuation("招商证券2020-2022年的PB是多少？", src) is None


def test_a_risk_only_listed_answers_no_effect_and_a_pointer_lists_none():
    v = check_risk("汽车销量不及预期的风险对银轮股份有何影响？", "风险提示 汽车销量不及预期，新能源热管理发展不及预期")
    assert v is not None and v.reason == "not_answered"
    v = check_risk("成都银行面临哪些主要风险？", "首次覆盖给予 买入 评级。风险提示多种因素变化可能会对我们的判断产生影响，详见正文。")
    assert v is not None
    assert check_risk("成都银行面临哪些主要风险？", "风险提示：资产质量恶化，利率下行超预期。") is None


def test_a_subject_set_earlier_holds_for_the_figure():
    # the previous sentence names a subsidiary; the figure's sentence opens on the figure
    src = ("顶立科技是国内智能热工装备龙头，于2021年入选专精特新企业，顶立科技分拆上市逐步推进。"
           "上半年实现净利润7671万元，较2020年全年增长显著。")
    v = check_part_whole("楚江新材2021年上半年的净利润为多少？", src, ["楚江新材"], start=src.index("上半年"))
    assert v is not None and v.reason == "not_answered"
    # an associate named earlier in the sentence; a segment as the sentence's topic
    src = "其中公司联营企业海得威系专业生产呼气试验药品，2022 年营业收入 23 47亿元，实现净利润4 69亿元。"
    assert check_part_whole("中核科技2022年的营业收入是多少？", src, ["中核科技"]) is not None
    assert check_part_whole("兆驰股份2019年营收是多少？", "LED 业务方面，全年营收达 21 41 亿元，增幅 22 4", ["兆驰股份"]) is not None
    # a parallel clause keeps the subject; 「未扣非预测」 qualifies nothing in the query
    src = "西南设计2021 2022 2023年未扣非预测净利润为1 02 1 24 1 41亿元，扣非预测净利润为7062万元。"
    assert check_part_whole("声光电科2021-2023年未扣非预测净利润为多少？", src, ["声光电科"]) is not None
    # the company's own figures stay answered
    assert check_part_whole("中核科技2022年的净利润是多少？", "2022年实现营业收入10亿元，净利润1亿元。", ["中核科技"]) is None
    src = "中核科技是阀门龙头，中核科技2021年上市。2022年实现营业收入10亿元，净利润1亿元。"
    assert check_part_whole("中核科技2022年的净利润是多少？", src, ["中核科技"]) is None


def test_events_need_their_specifics_not_a_date():
    q = "青岛啤酒2020年股权激励计划的主要内容是什么？"
    v = check_event(q, "1 管理改善 2020年3月公司推行股权激励计划，团队活力有望被激活。", ["青岛啤酒"])
    assert v is not None and v.reason == "not_answered"
    assert check_event(q, "2020年3月公司推出股权激励计划，拟授予限制性股票1000万股，授予价格10元/股。", ["青岛啤酒"]) is None
    assert check_event("德赛西威主要客户有哪些？", "公司产品与客户领先有望实现蜕变。", ["德赛西威"]) is not None
    assert check_event("德赛西威主要客户有哪些？", "公司客户包括一汽大众、吉利汽车等。", ["德赛西威"]) is None
    # 分红型 is an insurance product
    assert check_event("中国人保2020年分红情况如何？", "其中分红型两全保险保费收入达60亿元。", ["中国人保"]) is not None


def test_vague_open_evaluations_and_one_of_several_values():
    assert check_vague("泸州老窖的投资价值如何？", "公司公布股权激励方案", ["泸州老窖"]) is not None
    assert check_vague("泸州老窖2021年的营收增速如何？", "2021年营收增长20%", ["泸州老窖"]) is None
    src = "2021Q1，公司肥料、有机胺的产量分别为69 0、14 2万吨，销量分别为61 9、14 3万吨"
    assert check_vague("华鲁恒升2021年一季度销量达到了多少？", src, ["华鲁恒升"]) is not None
    assert check_vague("华鲁恒升2021年一季度肥料销量达到了多少？", src, ["华鲁恒升"]) is None


def test_reading_fixes_in_periods_and_tense():
    assert periods("2020Q1 3 公司实现营收")[0].part == "9M"  # Q1-3 with the dash lost
    assert periods("21Q1收入3 4亿元")[0].part == "Q1"
    # a base year of a target states no figure for that year
    assert not [f for f in read_facts("以2019年净利润为基数，2020年净利润增长率不低于10%") if 2019 in f.years]
    src = "2021Q1公司实现收入1 4亿元，实现归母净利润649 9万元，业绩基本符合我们预期。"
    v = check_answer("传智教育2021年一季度归母净利润预计能达到多少？", src, date=dt.date(2021, 4, 28))
    assert v is not None and v.reason == "forecast_mismatch"  # 符合我们预期 is a verdict, not a forecast
    # a year already reported, asked as a forecast the source does not make
    src = "2022年公司净利率为10 42 。盈利预测 我们维持2023 2024年归母净利润4 72 5 72亿元。"
    v = check_answer("盐津铺子2022-2023年的盈利预测是多少？", src, date=dt.date(2023, 4, 15))
    assert v is not None and v.reason == "wrong_period"
    # what happened after the report's year cannot be told; a plan can
    src = "2022年公司将继续推进渠道改革，渠道管控将进一步提升。"
    v = check_answer("五粮液2022年的渠道建设有哪些进展？", src, date=dt.date(2021, 2, 22))
    assert v is not None and v.reason == "forecast_mismatch"
    assert check_answer("五粮液2022年的渠道建设有哪些规划？", src, date=dt.date(2021, 2, 22)) is None


def test_a_loose_word_or_a_figureless_mention_does_not_answer_a_figure():
    src = ("2023年销量 净利润考核目标分别为280 115万辆。按目标值计算，净利润同比增速依次为 26 82 。"
           "综合业绩计算公式中销量目标权重占比高于利润。")
    v = check_answer("长城汽车2023年净利润是多少？", src)
    assert v is not None and v.reason == "forecast_mismatch"
    src = "公司公告月度吞吐量数据。2020 年 6 月公司完成货物吞吐量 2468 2 万吨，同比 20 04 。"
    v = check_answer("北部湾港2020年货物吞吐量是多少？", src, date=dt.date(2020, 7, 2))
    assert v is not None and v.reason == "wrong_period"


def test_a_plan_asked_as_done_is_garbled():
    for q in ("山西汾酒2023年力争营收同比增长了多少？", "预计常熟银行2022年需求方面有哪些进展？"):
        v = check_garbled(q)
        assert v is not None and v.reason == "garbled", q
    assert check_garbled("山西汾酒2023年营收同比增长了多少？") is None
    assert check_garbled("预计常熟银行2022年净利润是多少？") is None


def test_a_category_given_only_as_its_remainder_is_not_answered():
    src = "2022年公司酱油收入13 2亿元，食醋收入2 8亿元，其他调味品收入5 06亿元。"
    v = check_combined("甘泉味业2022年的调味品收入为多少？", src, ["甘泉味业"])
    assert v is not None and v.reason == "not_answered" and "其他调味品" in v.detail
    assert check_combined("甘泉味业2022年的食醋收入为多少？", src, ["甘泉味业"]) is None
    assert check_combined("甘泉味业2022年的调味品收入为多少？", "调味品收入20亿元，其他调味品收入5亿元", ["甘泉味业"]) is None


def test_an_earnings_forecast_needs_a_forecast_figure_for_every_year_asked():
    one_year = "我们预计公司2025年净利润约380亿元，2023-2025年股息率分别为3 8 、4 0 、4 3 ，维持买入评级。"
    v = check_earnings_forecast("江电能源2023-2025年的盈利预测是多少？", one_year)
    assert v is not None and v.reason == "not_answered" and "2023、2024" in v.detail
    assert check_earnings_forecast("江电能源2025年的盈利预测是多少？", one_year) is None
    none = check_earnings_forecast("蓝芯科技2023年的盈利预测是多少？", "锂电池业务持续放量，我们维持盈利预测，维持买入评级。")
    assert none is not None and none.reason == "not_answered"
    full = "我们预计公司2023-2025年归母净利润分别为320、350、380亿元，维持买入评级。"
    assert check_earnings_forecast("江电能源2023-2025年的盈利预测是多少？", full) is None
    # a half year asked needs the half year's forecast
    assert check_earnings_forecast("恰恰食品2022年下半年的业绩预测如何？", "预计2022年下半年公司净利润增长20 。") is None
    assert check_earnings_forecast("恰恰食品2022年下半年的业绩预测如何？", "预计2022年公司净利润增长20 。") is not None


def test_a_flash_reports_preliminary_figure_is_an_actual():
    src = ("事件 公司公布2022年前三季度业绩快报公告。2022年前三季度预计实现营业总收入8 83亿元，同比减少1 08 "
           "预计实现归属于上市公司股东的净利润29 2亿元，同比增加5 02 。")
    when = dt.date(2022, 10, 20)
    v = check_answer("川江能源2022年前三季度归属于上市公司股东的净利润的预测值是多少？", src, date=when)
    assert v is not None and v.reason == "forecast_mismatch"
    assert check_answer("川江能源2022年前三季度归属于上市公司股东的净利润是多少？", src, date=when) is None
    # without a 快报, 「预计实现」 is an analyst's forecast
    ahead = "我们预计公司2023年预计实现归母净利润32亿元。"
    assert check_answer("川江能源2023年归母净利润的预测值是多少？", ahead, date=when) is None


def test_an_amount_is_read_within_its_clause():
    from fincprg.verify.figures import check_amount

    src = "在手订单充足，预付账款为2.4亿元，合同负债增长89%。"
    assert check_amount("天宇电子2021年订单达到了多少？", src).reason == "not_answered"
    assert check_amount("天宇电子2021年订单达到了多少？", "2021年新签订单方面，合计38亿元。") is None
    assert check_amount("天宇电子2021年订单达到了多少？", "全年新签38亿元的订单。") is None


def test_a_price_level_needs_a_price_with_its_currency():
    from fincprg.verify.figures import check_price_level

    change = "2019年公司主要产品售价同比降幅在5%-12%，但公司以量补价。"
    assert check_price_level("远东化工2019年售价达到了多少？", change).reason == "not_answered"
    assert check_price_level("远东化工2019年售价达到了多少？", "2019年主要产品售价为5600元/吨。") is None
    assert check_price_level("远东化工2019年售价同比下降了多少？", change) is None  # a change asked as one


def test_a_doubled_year_word_and_an_undated_rate_are_dropped():
    assert check_garbled("东方航空2021年年综合客座率是多少？").reason == "garbled"
    assert check_garbled("东方航空2021年年报净利润是多少？") is None
    assert check_vague("东方航空客座率是多少？", "22Q2客座率73.3%").reason == "vague"
    assert check_vague("东方航空2022年二季度客座率是多少？", "22Q2客座率73.3%") is None


def test_a_joined_category_listed_by_year_is_still_joined():
    # 分别 over the years of one joined category (配套设备及配件) is no figure per member
    by_year = ("2019-2021年公司配套设备及配件业务收入分别同比+7.2%、+12.0%、+40.1%。2021年公司滤板、滤布、其他配件及"
               "配套设备业务分别实现收入3.93、1.80、1.79亿元。")
    v = check_combined("某装备2021年配套设备业务收入是多少？", by_year, ["某装备"])
    assert v is not None and v.reason == "not_answered"
    # one value per member is that member's figure
    assert check_combined("某纸业2021年铜版纸毛利率是多少？", "2021年双胶纸 铜版纸毛利率分别为18%、21%。", ["某纸业"]) is None


def test_a_figure_asked_is_stated_by_the_mention_whose_number_it_is():
    # 「毛利率高」 in a sentence dated by 「22年报」 gives no figure; the number after it belongs to the next 毛利率
    src = ("冲水组件代工：龙头稳固，毛利率高。该业务公司有三大优势：根据公司22年报，目前居国内冲水组件第一名；"
           "3）该产品单值低，重要性高，毛利率高：2019年公司冲水组件毛利率为33.1%。")
    d = dt.date(2023, 7, 1)
    assert check_answer("瑞尔特2022年的冲水组件毛利率为多少？", src, date=d).reason.value == "wrong_period"
    assert check_answer("瑞尔特2019年的冲水组件毛利率为多少？", src, date=d) is None


def test_a_why_question_needs_a_cause_stated():
    from fincprg.verify.figures import check_cause

    q = "星河科技2022年上半年净利润下降的主要原因有哪些？"
    # a request to explain is no explanation; a figure alone is none either
    assert check_cause(q, "交易所要求公司说明上半年净利润同比下降44 87 的原因。").reason.value == "not_answered"
    assert check_cause(q, "上半年净利润1 2亿元，同比下降44 87 。") is not None
    assert check_cause(q, "上半年净利润同比下降44 87 ，主要系原材料价格上涨。") is None
    # a cause written for another figure (the sentence after) is none of the asked one's
    other = "上半年净利润同比下降44 87 。客座率逆势上升，带动了业务量的提升。"
    assert check_cause(q, other) is not None
    assert check_cause(q, "受疫情影响，上半年净利润同比下降44 87 。客座率上升。") is None
    assert check_cause("星河科技2022年上半年净利润是多少？", "上半年净利润1 2亿元。") is None


def test_a_figure_under_an_assumption_is_a_projection():
    src = "按2019年分红率假设，公司2019-2021年股息率分别为4.4%、5.0%和5.4%。"
    d = dt.date(2020, 5, 1)
    assert check_answer("天山股份2019-2021年股息率是多少？", src, date=d).reason.value == "forecast_mismatch"
    assert check_answer("天山股份2019-2021年股息率的预测值是多少？", src, date=d) is None
