"""Issue 48: verify on industry reports: their industries and the companies their sentences name are subjects,
the broker that wrote a report never is, and a company is not asked another entity's fact (fact_owner)."""
from __future__ import annotations

from fincprg.records import Report
from fincprg.verify.sources import passage_subjects, report_info
from fincprg.verify.reading import Subjects
from fincprg.verify.subject import check_fact_owner, check_subject


class Table:  # what verify uses of fincprg.finance.stocks.StockTable
    name_of: dict = {}
    NAMES = ("西南证券", "龙净环保", "京东方A", "力积电", "宁德时代")

    @classmethod
    def mentions(cls, text):
        from types import SimpleNamespace as NS
        return [NS(name=n, count=text.count(n)) for n in cls.NAMES if n in text]


def listed(text):
    return [n for n in Table.NAMES if n in text]


def test_the_broker_is_no_subject_of_the_report_it_wrote():
    text = "西南证券·行业周报。龙净环保营收增长。龙净环保毛利率提升。西南证券研究所。西南证券股份有限公司。"
    untitled = Report(id="r", title="", text=text, meta={"broker": "西南证券"})
    info = report_info(untitled, Table())
    assert info.companies == {"龙净环保"} and info.broker == "西南证券"  # named most, yet not the subject
    s = passage_subjects(info, text, listed(text))
    assert "西南证券" not in s.companies
    v = check_subject("西南证券2021年营收是多少？", s, listed=listed)
    assert v is not None and v.reason == "wrong_subject" and "broker" in v.detail
    assert check_subject("龙净环保2021年营收是多少？", s, listed=listed) is None
    # another broker's report on 西南证券 (its title names it) keeps it as the subject
    titled = Report(id="c", title="西南证券（600369）：经纪业务回暖", text=text, meta={"broker": "华辰证券"})
    s = passage_subjects(report_info(titled, Table()), text, listed(text))
    assert check_subject("西南证券2021年营收是多少？", s, listed=listed) is None


def test_an_industry_report_takes_no_issuer_from_its_body_and_accepts_its_industry():
    text = "龙净环保营收增长。龙净环保毛利率提升。电子行业营收同比增长15%。"
    r = Report(id="i", title="电子行业周报：景气向上", text=text, report_type="industry", meta={"broker": "西南证券"})
    info = report_info(r, Table())
    assert info.kind == "industry" and info.companies == frozenset()
    s = passage_subjects(info, text, listed(text))
    assert check_subject("电子行业2020年前三季度营收同比增长多少？", s, listed=listed) is None
    assert check_subject("龙净环保2020年营收是多少？", s, listed=listed) is None  # named in the passage


def test_a_company_is_not_asked_another_entitys_fact():
    s = Subjects(frozenset({"京东方A", "力积电"}), frozenset({"电子行业"}), "industry")
    sentence = "力积电铜锣新厂2023年初期规划产能为每月1万片。"
    v = check_fact_owner("京东方A2023年初期规划产能是多少？", sentence, s, listed)
    assert v is not None and v.reason == "wrong_subject" and "力积电" in v.detail
    assert check_fact_owner("力积电2023年初期规划产能是多少？", sentence, s, listed) is None
    # 公司 in the sentence: the report's company speaking of itself, its fact
    assert check_fact_owner("京东方A2023年营收是多少？", "公司与力积电合作，2023年营收100亿元。", s, listed) is None
    # an industry asked a listed company's figure
    v = check_fact_owner("电子行业2021年营收是多少？", "龙净环保2021年营收100亿元。", s, listed)
    assert v is not None and v.reason == "wrong_subject"
    assert check_fact_owner("电子行业2021年营收是多少？", "电子行业2021年营收100亿元，龙净环保领先。", s, listed) is None
    assert check_fact_owner("京东方A2023年营收是多少？", None, s, listed) is None  # a passage query: not read here


def test_a_passage_query_is_read_in_the_sentences_that_write_its_metric():
    s = Subjects(frozenset({"京东方A", "力积电"}), frozenset(), "company")
    passage = "京东方A持续扩产。力积电的集群业务实现销售收入2.96亿元，占比66%。力积电将受益。"
    v = check_fact_owner("京东方A2019年的销售收入为多少？", None, s, listed, passage=passage)
    assert v is not None and v.reason == "wrong_subject"
    wrapped = "力积电股份有限公司公告称，其实现营业收入102亿元；归属于上市\n公司股东的净利润0.67亿元。"
    v = check_fact_owner("京东方A2020年前三季度股东净利润是多少？", None, s, listed, passage=wrapped)
    assert v is not None  # read as whole sentences: the clause after ；and the wrapped line are 力积电's
    own_first = "公司2019年销售收入10亿元。" + passage  # the first sentence of the metric is the company's own
    assert check_fact_owner("京东方A2019年的销售收入为多少？", None, s, listed, passage=own_first) is None
    # 「归属于上市|公司股东的净利润」 cut by a break is no 公司 of the asked company
    v = check_fact_owner("京东方A2020年前三季度股东净利润是多少？", "公司股东的净利润0.67亿元，力积电网点1389家。", s, listed)
    assert v is not None and v.reason == "wrong_subject"


def test_the_company_a_query_names_first_is_the_one_asked_and_gongsi_after_an_announcement_is_not_it():
    s = Subjects(frozenset({"京东方A", "力积电"}), frozenset(), "company")
    v = check_fact_owner("京东方A2018年力积电营收同比增长了多少？", "2018年力积电营收16.86亿元，同比增长16%。", s, listed)
    assert v is not None and "京东方A" in v.detail
    v = check_fact_owner("京东方A2021年一季度营收是多少？", "力积电发布2021年一季报，公司一季度实现营收1.74亿。", s, listed)
    assert v is not None
    assert check_fact_owner("京东方A2021年营收是多少？", "受益于力积电放量，公司2021年营收增长30%。", s, listed) is None
    v = check_fact_owner("京东方A2015年推出了哪些新品？", "力积电作为龙头，2015年发力云计算，丰富了公司业务线条。", s, listed)
    assert v is not None
    # an event asked of a passage that speaks of another company throughout, never of the asked one nor of 公司
    v = check_fact_owner("疫情对京东方A经营有何影响？", None, s, listed, passage="力积电零售贷款增速有望反转。力积电受益。")
    assert v is not None
    assert check_fact_owner("京东方A投资收入是多少？", "电视剧《力积电》的投资收入1.5亿元。", s, listed) is None


def test_an_industry_is_not_asked_the_figure_of_a_firm_the_table_does_not_list():
    s = Subjects(frozenset(), frozenset({"家用电器行业", "计算机行业", "汽车行业"}), "industry")
    v = check_fact_owner("家用电器行业2022年二季度的营业收入为多少？",
                         "台积电二季度实现营业收入181.6亿美元，毛利率达59.1%。", s, listed)
    assert v is not None and v.reason == "wrong_subject" and "台积电" in v.detail
    v = check_fact_owner("计算机行业2021年智能硬件营收的同比变化幅度是多少？",
                         "（2）智能硬件营收同比增长41.63%，录音笔、办公本等销量增长。", s, listed)
    assert v is not None and v.reason == "wrong_subject"
    # the industry's own products and totals are its figures
    assert check_fact_owner("汽车行业2022年上半年销量同比增长多少？", "2022年上半年，汽车销量同比增长12%。", s,
                            listed) is None
    assert check_fact_owner("汽车行业2022年营收同比增长多少？", "今年前三季度实现营收100亿元，同比增长8%。", s,
                            listed) is None


def test_a_market_from_a_strategy_title_is_asked_only_what_its_sentence_writes_of_it():
    s = Subjects(frozenset(), frozenset({"A股"}), "industry")
    v = check_fact_owner("A股2020年上半年营收和净利的变化情况如何？", "上半年实现营收439.5亿元，同比增长11.3%。", s, listed)
    assert v is not None and v.reason == "wrong_subject"
    assert check_fact_owner("A股2020年上半年营收同比下降了多少？", "2020年上半年全部A股营收同比下降7%。", s,
                            listed) is None
    assert check_fact_owner("A股11月17日的指数PE为多少？", "截至11月17日，沪深300指数PE-TTM为11.2倍。", s, listed) is None
    # an industry's name holds a shorter term (医药行业, 医药): still the industry, read as before
    s = Subjects(frozenset(), frozenset({"医药"}), "industry")
    assert check_fact_owner("医药行业2023年首付款总额是多少？", "2023年创新药企业对外授权首付款总额约30亿美元。", s,
                            listed) is None


def test_an_industry_holds_no_market_share():
    s = Subjects(frozenset(), frozenset({"家用电器行业"}), "industry")
    v = check_fact_owner("家用电器行业2021年市占率的同比变化幅度是多少？", "2021年家用电器行业洗衣机市占率提升2.7pct至39.2%。",
                         s, listed)
    assert v is not None and v.reason == "wrong_subject"
    assert check_fact_owner("家用电器行业2021年营收同比增长多少？", "2021年家用电器行业营收同比增长8%。", s, listed) is None
