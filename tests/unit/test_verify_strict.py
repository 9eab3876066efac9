"""The strict reader's rules (fincprg.verify.wording, .topicrules): one failing and one passing query each."""
from __future__ import annotations

import datetime as dt

from fincprg.finance.crosscheck import periods
from fincprg.verify.reading import ReportInfo
from fincprg.verify.scopes import check_part_whole
from fincprg.verify.events import check_event
from fincprg.verify.wording import check_garbled, check_in_sentence, check_vague
from fincprg.verify.topicrules import as_of_year, check_topic_strict


def _reason(v):
    return v.reason if v is not None else None


def test_a_time_dependent_figure_without_a_period_is_vague():
    assert _reason(check_vague("青松建化的水泥熟料销量是多少？", "2022年水泥熟料销量420万吨")) == "vague"
    assert _reason(check_vague("招商轮船的净利润达到多少？", "净利润12亿元")) == "vague"
    assert check_vague("青松建化2022年水泥熟料销量是多少？", "2022年水泥熟料销量420万吨") is None
    assert check_vague("海螺水泥目前的产能是多少？", "公司现有产能2.7亿吨") is None  # a stock, as of now


def test_a_change_or_driver_of_a_flow_without_a_period_is_vague():
    src = "报告期公司实现归母净利润8.2亿元，同比增长21%；经营活动现金流净额12.5亿元，同比增长60%。"
    assert _reason(check_vague("东岳机械归母净利润和经营现金流的变化情况如何？", src)) == "vague"
    assert _reason(check_vague("东岳机械营收同比增长的主要原因是什么？", src)) == "vague"
    assert check_vague("东岳机械2021年归母净利润的变化情况如何？", src) is None
    assert check_vague("东岳机械面临哪些主要风险？", src) is None  # no flow asked
    assert check_vague("东岳机械现有产能的变化情况如何？", "公司现有产能30万吨，较上年增加5万吨。") is None  # a stock


def test_a_product_metric_without_its_product_is_vague():
    src = "公司MDI产能达到260万吨/年，位居全球第一。"
    assert _reason(check_vague("沧州大化的产能扩张计划如何？", src)) == "vague"
    assert check_vague("沧州大化MDI产能扩张计划如何？", src) is None
    assert check_vague("沧州大化的产能扩张计划如何？", "公司总产能达到260万吨。") is None
    # a price per ton given per product line has no company-wide reading
    tiers = "2022年中高价酒吨价同比+6.0%，普通白酒吨价同比+2.2%。"
    assert _reason(check_vague("汾阳酒业2022年吨价较上年同期变化了多少？", tiers)) == "vague"
    assert check_vague("汾阳酒业2022年吨价较上年同期变化了多少？", "2022年公司吨价同比+6.0%。") is None
    # the product is written away from 产能 (「将产能提升至…」), but the source builds capacity for several products
    several = "公司对年产1500吨甜味剂项目技改，将产能提升至3000吨；新建5000t a香料项目和年产4500吨溶剂项目。"
    assert _reason(check_vague("华安化工2019年的产能为多少？", several)) == "vague"
    assert check_vague("华安化工2019年甜味剂的产能为多少？", several) is None
    assert check_vague("华安化工2019年的产能为多少？", "公司年产1500吨甜味剂项目技改后，2019年产能提升至3000吨。") is None


def test_a_company_metric_stated_only_for_a_part_is_not_answered():
    names = ["华润双鹤"]
    seg = "其中输液业务收入18.2亿元，同比增长6%。"
    assert _reason(check_part_whole("华润双鹤2021年营业收入是多少？", seg, names)) == "not_answered"
    sub = "控股子公司双鹤药业实现归母净利润3.1亿元。"
    assert _reason(check_part_whole("华润双鹤归母净利润同比变化如何？", sub, names)) == "not_answered"
    nation = "2019年全国旅游收入6.6万亿元。"
    assert _reason(check_part_whole("宋城演艺2019年营业收入是多少？", nation, ["宋城演艺"])) == "not_answered"
    whole = "2021年公司实现营业收入80.5亿元，其中输液业务收入18.2亿元。"
    assert check_part_whole("华润双鹤2021年营业收入是多少？", whole, names) is None
    assert check_part_whole("华润双鹤2021年输液业务收入是多少？", seg, names) is None  # it asks the part
    assert check_part_whole("华润双鹤2021年营业收入是多少？", "华润双鹤2021年营收80.5亿元", names) is None


def test_a_sentence_query_must_be_answered_by_its_sentence():
    assert _reason(check_in_sentence("中炬高新2021年毛利率是多少？", "公司调味品销量增长12%。")) == "not_in_sentence"
    assert _reason(check_in_sentence("中炬高新回购进展如何？", "公司调味品销量增长12%。")) == "not_in_sentence"
    assert check_in_sentence("中炬高新2021年毛利率是多少？", "毛利率为35.1%，同比下降3pct。") is None
    assert check_in_sentence("中炬高新业绩表现如何？", "实现营收51亿元，同比增长4%。") is None


def test_an_event_question_needs_the_event_stated_with_specifics():
    commit = "若标的公司未完成业绩承诺，则交易对方应当以股份补偿。收购有助于协同。"
    assert _reason(check_event("东方雨虹收购了哪些公司？", commit)) == "not_answered"
    other = "公司与宁德时代签订3.2亿元供货合同。"
    assert _reason(check_event("东方雨虹收购的对象是什么？", other)) == "not_answered"  # a contract is no acquisition
    stated = "公司以5.6亿元收购天鼎丰100%股权，2022年3月完成过户。"
    # planned or prepared for is not done
    for planned in ("公司拟以5.6亿元收购天鼎丰100%股权。", "公司设立研究院，为持续引进标的及收购兼并提供支持。"):
        assert _reason(check_event("东方雨虹收购了哪些公司？", planned)) == "not_answered"
    # the specifics are written with the event, not anywhere in its sentence
    far = "股权激励信号积极，相对增速保障弹性，催化估值切换时点提前，给予目标价266元，维持评级。"
    assert _reason(check_event("东方雨虹股权激励计划的主要内容是什么？", far)) == "not_answered"
    near = "公司发布股权激励计划，拟授予限制性股票1000万股，授予价格100元。"
    assert check_event("东方雨虹股权激励计划的主要内容是什么？", near) is None
    # a plan is what a question about the plan asks (with the projects it asks named)
    assert check_event("东方雨虹定增募集资金用于哪些项目？", "公司公告拟发行25亿元定增，用于年产5000万只元器件扩产项目。") is None
    assert check_event("东方雨虹收购了哪些公司？", stated) is None
    assert check_event("东方雨虹收购的意义何在", commit) is None  # not a what/which question


def test_boilerplate_and_repeats_are_garbled():
    assert _reason(check_garbled("如果超过公司最近一期经审计资产总额的30%需要如何审议？")) == "garbled"
    assert _reason(check_garbled("控股股东承诺的锁定期是多久？")) == "garbled"
    assert _reason(check_garbled("光伏玻璃产能光伏玻璃产能的变化如何？")) == "garbled"
    assert check_garbled("福莱特2021年营业收入和2022年营业收入分别是多少？") is None
    assert check_garbled("福莱特光伏玻璃产能的扩张节奏如何？") is None


def test_an_undated_report_is_read_as_of_its_latest_actual_year():
    body = "2021年公司实现营收12亿元，同比增长8%。我们预计2022-2023年归母净利润为2.1、2.6亿元。"
    assert as_of_year([body]) == 2021
    assert as_of_year(["我们预计2023年营收增长"]) is None


def _info(i, title, date, companies=(), kind="company"):
    return ReportInfo(str(i), title, date, frozenset(companies), "title", kind)


def test_topic_full_year_question_on_interim_reviews_is_wrong_period():
    infos = [_info(1, "伊利股份（600887）：2021年半年报点评：收入高增", dt.date(2021, 8, 30), ["伊利股份"]),
             _info(2, "伊利股份（600887）：三季报点评：盈利改善", dt.date(2021, 10, 29), ["伊利股份"])]
    v = check_topic_strict("伊利股份2021年业绩表现如何？", infos, ["伊利股份"], [])
    assert _reason(v) == "wrong_period"
    assert check_topic_strict("伊利股份2021年上半年业绩表现如何？", infos, ["伊利股份"], []) is None
    annual = infos + [_info(3, "伊利股份（600887）：2021年年报点评", dt.date(2022, 4, 29), ["伊利股份"])]
    assert check_topic_strict("伊利股份2021年业绩表现如何？", annual, ["伊利股份"], []) is None


def test_a_company_question_is_read_against_that_companys_reports_only():
    """Another company's annual review in the topic does not answer 「X 2022年…」 where X has only an interim one."""
    infos = [_info(1, "重庆啤酒（600132）：2022年中报点评：高端化持续", dt.date(2022, 8, 20), ["重庆啤酒"]),
             _info(2, "青岛啤酒（600600）：2022年年报点评：量价齐升", dt.date(2023, 3, 30), ["青岛啤酒"]),
             _info(3, "南方航空（600029）：2021年报点评", dt.date(2022, 4, 1), ["南方航空"])]
    comps = ["重庆啤酒", "青岛啤酒", "南方航空"]
    v = check_topic_strict("重庆啤酒2022年收入表现如何？", infos, comps, [])
    assert _reason(v) == "wrong_period" and "重庆啤酒" in v.detail
    assert check_topic_strict("青岛啤酒2022年收入表现如何？", infos, comps, []) is None
    assert check_topic_strict("重庆啤酒2022年上半年收入表现如何？", infos, comps, []) is None
    v = check_topic_strict("南方航空2022年经营表现如何？", infos, comps, [])  # it has only a 2021 review
    assert _reason(v) == "wrong_period" and "no report" in v.detail
    assert check_topic_strict("南方航空2021年经营表现如何？", infos, comps, []) is None


def test_an_industry_question_asks_only_the_years_of_the_titles_that_write_its_subject():
    """「2022年至2023年…受寒潮的影响」 where only 2022's titles speak of 寒潮: 2023 comes from another report's date."""
    infos = [_info(1, "东方电力（600001）2022年中报点评：受寒潮影响电量下滑", dt.date(2022, 8, 20), ["东方电力"]),
             _info(2, "南江水电（600002）：寒潮推高用电负荷，二季度盈利承压", dt.date(2022, 7, 15), ["南江水电"]),
             _info(3, "北辰新能（600003）：风光装机加速，成长空间广阔", dt.date(2023, 3, 10), ["北辰新能"])]
    comps = ["东方电力", "南江水电", "北辰新能"]
    v = check_topic_strict("2022年至2023年电力行业受寒潮的影响如何？", infos, comps, ["电力"])
    assert _reason(v) == "wrong_period" and "寒潮" in v.detail
    assert check_topic_strict("2022年电力行业受寒潮的影响如何？", infos, comps, ["电力"]) is None
    # a subject no title writes is left to the other checks
    assert check_topic_strict("2022年至2023年电力行业的发展前景如何？", infos, comps, ["电力"]) is None


def test_topic_industry_question_needs_industry_reports_or_many_companies():
    two = [_info(1, "晨光股份：文具龙头", dt.date(2021, 4, 1), ["晨光股份"]),
           _info(2, "齐心集团：办公集采", dt.date(2021, 5, 1), ["齐心集团"])]
    assert _reason(check_topic_strict("文具行业的竞争格局如何？", two, ["晨光股份", "齐心集团"], [])) == "wrong_subject"
    many = two + [_info(3, "轻工行业周报：文具景气", dt.date(2021, 5, 8), kind="industry")]
    assert check_topic_strict("文具行业的竞争格局如何？", many, ["晨光股份", "齐心集团"], []) is None


def test_topic_entities_the_titles_do_not_name_are_dropped():
    infos = [_info(1, "拓普集团：轻量化底盘放量", dt.date(2022, 3, 1), ["拓普集团"])]
    assert _reason(check_topic_strict("Rivian对拓普集团的订单如何？", infos, ["拓普集团"], [])) == "wrong_subject"
    assert _reason(check_topic_strict("旭升集团底盘订单如何？", infos, ["拓普集团"], [],
                                      listed=lambda t: ["旭升集团"] if "旭升集团" in t else [])) == "wrong_subject"
    assert check_topic_strict("拓普集团底盘订单如何？", infos, ["拓普集团"], [], listed=lambda t: []) is None
    nuc = [_info(1, "中核科技：核化工阀门订单饱满", dt.date(2022, 3, 1), kind="industry")]
    assert _reason(check_topic_strict("化工阀门需求如何？", nuc, [], ["化工"])) == "fragment_subject"
    assert check_topic_strict("核化工阀门需求如何？", nuc, [], ["化工"]) is None


def test_periods_still_read_interim_titles():
    assert any(p.part == "H1" for p in periods("2021年半年报点评"))


def test_company_names_are_neither_events_nor_fragments():
    assert check_in_sentence("昭衍新药2021年毛利率是多少？", "毛利率为49.6%。", ["昭衍新药"]) is None
    banks = [_info(1, "江苏银行：息差企稳", dt.date(2022, 3, 1), ["江苏银行"]),
             _info(2, "南京银行：信贷高增", dt.date(2022, 3, 2), ["南京银行"])]
    assert check_topic_strict("银行信贷投放如何？", banks, ["江苏银行", "南京银行"], ["银行"]) is None


def test_an_undated_target_price_or_rating_is_vague_and_a_filler_word_is_no_segment():
    """Every report on a company sets its own target price and rating: undated, the ask matches them all."""
    assert _reason(check_vague("坚朗五金的目标价是多少？", "目标价80元")) == "vague"
    assert _reason(check_vague("坚朗五金的投资评级和目标价是什么？", "维持买入评级，目标价80元")) == "vague"
    assert _reason(check_vague("凯莱英的PE是多少？", "对应23年PE26X")) == "vague"
    assert check_vague("凯莱英2023年的PE是多少？", "对应23年PE26X") is None
    src = "事件 2020Q1 实现收入136亿元，同比下降1.9%。"
    assert check_part_whole("晨鸣纸业2020年一季度收入是多少？", src, ["晨鸣纸业"]) is None


def test_a_company_total_needs_a_figure_for_the_company():
    """Segment figures with the company's metric named only as a share or without a figure do not answer the
    company's total; a segment's 主营业务收入 is the segment's; another asked metric is no qualifier."""
    q = "恒立液压2022年收入表现如何？"
    share = "公司2022年海外收入17 5亿人民币，同比增长41 9 ，收入占比上升至21 5 。"
    assert _reason(check_part_whole(q, share, ["恒立液压"])) == "not_answered"
    assert check_part_whole(q, "公司2022年实现营业收入82 0亿元，同比下降12 9 。海外收入17 5亿元。", ["恒立液压"]) is None
    no_figure = "公司国内、国外收入分别为1048、778亿元，营收实现正增长。"
    assert _reason(check_part_whole("美的集团2022年上半年收入同比增长了多少？", no_figure, ["美的集团"])) == "not_answered"
    seg = "2020Q1 Q3 公司移动主营业务收入为人民币 1165 39亿元，同比下降 1 0 。固网主营业务收入达到890亿元"
    assert _reason(check_part_whole("中国联通2020年前三季度收入同比变化多少？", seg, ["中国联通"])) == "not_answered"
    assert check_part_whole("中国联通2020年前三季度收入同比变化多少？", "公司主营业务收入2300亿元，同比增长4%",
                            ["中国联通"]) is None
    two = "航空新材料业务实现营业收入22 48亿元，实现归母净利润4 19亿元。机床装备业务实现营业收入8607万元"
    assert _reason(check_part_whole("中航高科2020年三季度的归母净利润和营业收入分别是多少？", two, ["中航高科"])) \
        == "not_answered"


def test_part_of_year_without_a_year_is_vague():
    from fincprg.verify.wording import check_vague

    v = check_vague("美的集团一季度营业收入是多少？", "2023年一季度公司营收增长10%。")
    assert v is not None and v.reason == "vague"
    assert check_vague("美的集团2023年一季度营业收入是多少？", "2023年一季度公司营收增长10%。") is None


def test_market_share_without_its_business_is_vague():
    from fincprg.verify.wording import check_vague

    src = "公司流感疫苗批签发份额达46%，两融市占率4.99%。"
    v = check_vague("公司2020年市占率是多少？", src)
    assert v is not None and "市占率" in v.detail


def test_an_amount_asked_of_a_source_that_gives_only_the_change_is_not_answered():
    from fincprg.verify.figures import check_amount

    v = check_amount("海天味业2020年二季度的调味酱收入为多少？", "2Q20调味酱收入同比增长19.7%，蚝油收入增长12%。")
    assert v is not None and v.reason == "not_answered"
    assert check_amount("海天味业2020年二季度的调味酱收入为多少？", "2Q20调味酱收入12.5亿元，同比增长19.7%。") is None
    assert check_amount("北部湾港2020年6月货物吞吐量是多少？", "2020 年 6 月公司完成货物吞吐量 2468 2 万吨，同比 20 04") is None
    assert check_amount("海天味业调味酱收入同比增长多少？", "2Q20调味酱收入同比增长19.7%。") is None  # a change asked



def test_an_amount_of_an_action_with_nothing_acted_on_is_vague():
    src = "公司拟投资建设年产10万吨镁合金项目，投资金额约为6 46亿元；巢湖项目投资金额12亿元。"
    v = check_vague("云岭金属投资金额是多少？", src, ["云岭金属"])
    assert _reason(v) == "vague" and "投资金额" in v.detail
    assert _reason(check_vague("华商证券2020年上半年交易金额达到了多少？", "x", ["华商证券"])) == "vague"
    assert check_vague("华商证券2020年上半年股基交易金额达到了多少？", "x", ["华商证券"]) is None
    assert check_vague("云岭金属镁合金项目的投资金额是多少？", src, ["云岭金属"]) is None


def test_stable_growth_is_no_placement_event():
    # 「稳定增长」 holds the characters of 定增, and 「新增发电量」 those of 增发
    assert check_event("新元药业定增募集资金用于哪些项目？", "业绩保持稳定增长，新增发电量10亿千瓦时。") is not None
    assert check_event("新元药业定增募集资金用于哪些项目？", "公司定增募集资金8亿元用于中药饮片扩产项目。") is None


def test_a_buyback_account_named_in_a_share_count_is_no_buyback():
    from fincprg.finance.events import event_of

    cut = "股东累计减持公司股份774.2万股，占扣除回购专用账户股份后总股本的2.017%。"
    assert event_of(cut) is None
    assert check_event("金城医药2021年回购了多少股份？", cut) is not None
    assert check_event("金城医药2021年回购了多少股份？", "2021年公司累计回购股份774万股，耗资1.2亿元。") is None


def test_an_index_is_a_markets_not_the_companys():
    v = check_vague("招远轮船BDTI指数同比提升了多少？", "3月以来BDTI指数上涨11 98 。", ["招远轮船"])
    assert _reason(v) == "wrong_subject"
    assert check_vague("2023年航运行业BDTI指数同比提升了多少？", "BDTI指数上涨11 98 。", ["招远轮船"]) is None


def test_an_adjusted_several_part_or_subsidiary_figure_is_not_the_company_total():
    names = ["康宁医疗"]
    adjusted = "上半年剔除防疫类用品公司总收入9.2亿元，同比+12%。国内收入10.3亿元，海外收入4.1亿元。"
    assert _reason(check_part_whole("康宁医疗2022年上半年的收入为多少？", adjusted, names)) == "not_answered"
    several = "零食各品类表现良好，2022年收入增速分别为18%、27%、35%。电商渠道收入3.2亿元。"
    assert _reason(check_part_whole("康宁医疗2022年收入是多少？", several, names)) == "not_answered"
    # 「分别」 over several years is one company's revenue, year by year
    years = "预计公司2023-2025年营业收入分别为35.1亿元、41.2亿元、48.0亿元。"
    assert check_part_whole("康宁医疗2024年营业收入预计是多少？", years, names) is None
    # a subsidiary named on the short name, and the sentence after it, speak of the subsidiary
    sub = "2021年平安寿险保费收入4900亿元，同比-3%。新业务价值380亿元，同比-24%。"
    assert _reason(check_part_whole("中国平安2021年新业务价值是多少？", sub, ["中国平安"])) == "not_answered"
    assert check_part_whole("中国平安2021年新业务价值是多少？", "2021年公司新业务价值380亿元。",
                            ["中国平安"]) is None



def test_a_business_lead_in_makes_the_figures_after_it_that_businesss():
    names = ["东海证券"]
    lead = "经纪业务方面，公司股基成交额9万亿，同比+12%；代销金融产品方面，公司实现收入3.2亿元，同比+40%。"
    assert _reason(check_part_whole("东海证券2021年的收入为多少？", lead, names)) == "not_answered"
    # an aspect of the company itself, a metric or the company's name leads in nothing but the company
    for lead_in in ("盈利能力方面", "收入方面", "东海证券方面"):
        assert check_part_whole("东海证券2021年的收入为多少？", f"{lead_in}，公司2021年实现收入30.5亿元。", names) is None
    # a whole the clause itself writes overrides the lead-in
    assert check_part_whole("东海证券2021年的收入为多少？", "海外方面，公司整体实现收入30.5亿元。", names) is None


def test_a_part_unnamed_or_one_of_several_shares_is_vague():
    src = "快运分部净利润3.1亿元，同城分部净亏损1.2亿元。"
    assert _reason(check_vague("东方物流2022年分部净利润是多少？", src, ["东方物流"])) == "vague"
    assert check_vague("东方物流2022年快运分部净利润是多少？", src, ["东方物流"]) is None
    shares = "两融余额为420亿元，市场份额为3.85%；股票质押业务市场份额为4.10%。"
    assert _reason(check_vague("东海证券2021年市场份额是多少？", shares)) == "vague"
    # one share a year is no ambiguity
    assert check_vague("东海证券2021年市占率是多少？", "2020年市占率3.1%，2021年市占率提升至3.6%。") is None


def test_the_first_two_quarters_read_as_the_first_half():
    assert [p.part for p in periods("2020Q1-2实现收入136亿元")] == ["H1"]
    assert [p.part for p in periods("2020Q1 2 年实现收入 136 亿元")] == ["H1"]  # the dash stripped
    assert [p.part for p in periods("2020Q1 2亿元")] == ["Q1"]  # a figure follows: the first quarter's
    # a range from one first quarter to another holds no Q1-2 (first half), in either reader
    assert [(sorted(p.years), p.part) for p in periods("22Q1-23Q1营收增长8%")] == [([2022], "Q1"), ([2023], "Q1")]
    from fincprg.finance.extract import extract
    assert {(p.year, p.part) for p in extract("2020Q1-2021Q1营收").periods} == {(2020, "Q1"), (2021, "Q1")}


def test_a_company_is_not_its_own_subsidiary():
    # 平安银行's alias 平安 with 银行 is the company itself, not a subsidiary
    src = "2021年平安银行营业收入1694亿元，同比+10%。"
    assert check_part_whole("平安银行2021年营业收入是多少？", src, ["平安银行", "平安"]) is None


def test_another_group_or_a_contribution_is_not_the_company_s_profit():
    text = ("2020H1置业一号、联发集团归母净利润分别为20.7、4.3亿元（2019H1为2.8、5.1亿元），考虑股权比例，"
            "合计贡献公司归母净利润15.4亿元（2019H1为6.4亿元）。")
    v = check_part_whole("某股份2019年上半年的归母净利润为多少？", text, ["某股份"])
    assert v is not None and v.reason == "not_answered"
    # 集团 alone or after the company is the company
    assert check_part_whole("某股份2020年上半年的归母净利润为多少？", "2020H1集团实现归母净利润22.7亿元。", ["某股份"]) is None
    assert check_part_whole("某股份2020年上半年的归母净利润为多少？", "2020H1某股份集团实现归母净利润22.7亿元。",
                            ["某股份"]) is None


def test_the_uses_of_raised_money_need_the_projects_named():
    v = check_event("某电子定增募集资金用于哪些项目？", "4月27日公司公告拟发行25亿元定增扩产，着力发展核心主业。", ["某电子"])
    assert v is not None and v.reason == "not_answered"
    assert check_event("某电子定增募集资金用于哪些项目？", "公司拟定增募资25亿元，用于新型元器件扩产项目和研发中心建设。",
                       ["某电子"]) is None
    # a won bid names its project by the customer and the goods; no 项目 word is needed
    assert check_event("某激光2020年中标了哪些项目？", "公司在2020年底中标某时代的锂电池生产设备11.94亿元。",
                       ["某激光"]) is None


def test_a_launch_bid_or_deal_asked_with_no_period_is_vague():
    for q in ("某酒业推出了哪些新品？", "某讯飞中标了哪些项目？"):
        assert _reason(check_vague(q, "春节期间推出经典款和小瓶装，中标某省教育项目3.2亿元。", ["某酒业", "某讯飞"])) == "vague", q
    assert check_vague("某酒业2021年推出了哪些新品？", "春节期间推出经典款和小瓶装。", ["某酒业"]) is None
    # a plan's content is one event, not one per year
    assert check_vague("某酒业股权激励计划的主要内容是什么？", "公司拟授予限制性股票1000万股。", ["某酒业"]) is None


def test_a_day_without_a_year_is_vague():
    src = "1月7日午间收盘，国芯科技市值117.29亿元。"
    assert _reason(check_vague("国芯科技1月7日的市值为多少？", src)) == "vague"
    assert check_vague("国芯科技2022年1月7日的市值为多少？", "2022年" + src) is None
