"""Issue 48: an industry or strategy report's sentences are asked about whom they name (a listed company, the
industry or market), never about the broker that wrote the report (fincprg.generate.industry)."""
from __future__ import annotations

import pytest

from fincprg.finance.stocks import stock_table
from fincprg.generate.base import PassageInput
from fincprg.generate.industry import industry_term, is_wide, sentence_subject
from fincprg.generate.templates import TemplateGenerator, title_subject
from fincprg.records import Failure, Passage, Report, Sentence


@pytest.fixture(scope="module")
def table():
    return stock_table("bundled")


def _item(sents, title="电子行业周报：景气向上", broker="西南证券", report_type="industry"):
    report = Report(id="r1", title=title, text="x", report_type=report_type, meta={"broker": broker})
    passage = Passage(id="r1#p0", report_id="r1", order=0, text="".join(sents))
    return PassageInput(report, passage, tuple(Sentence(id=f"r1#p0#s{i}", passage_id="r1#p0", order=i, text=t)
                                               for i, t in enumerate(sents)))


def test_a_sentence_is_asked_about_the_company_or_industry_it_names(table):
    kw = {"table": table, "broker": "西南证券"}
    assert sentence_subject("龙净环保前三季度实现营业收入82.37亿元，同比增长18.25%。", "电子行业", **kw) == "龙净环保"
    assert sentence_subject("2020年前三季度电子行业营收同比增长15.2%。", "电子行业", **kw) == "电子行业"
    assert sentence_subject("2021年白酒行业收入同比增长12%。", None, **kw) == "白酒行业"
    # 公司 with no name: the company the passage names before it, if it names exactly one
    assert sentence_subject("公司前三季度营收82亿元。", "电子行业", previous="龙净环保发布三季报。", **kw) == "龙净环保"
    assert sentence_subject("公司前三季度营收82亿元。", "电子行业", previous="龙净环保发布三季报。业绩超预期。",
                            **kw) == "龙净环保"
    assert sentence_subject("公司前三季度营收82亿元。", "电子行业", previous="龙净环保与宁德时代签约。", **kw) is None
    # a figure of nobody named, in a passage that speaks of companies: not asked
    assert sentence_subject("毛利率同比下降6pct。", "电子行业", **kw) is None
    # in a passage on the industry alone, or a risk list: the report's industry
    assert sentence_subject("毛利率同比下降6pct。", "电子行业", industry_passage=True, **kw) == "电子行业"
    assert sentence_subject("风险提示：下游需求不及预期。", "电子行业", **kw) == "电子行业"


def test_the_broker_is_never_a_subject(table):
    s = "西南证券研究所认为，2021年电子行业营收同比增长15%。"
    assert sentence_subject(s, "电子行业", table=table, broker="西南证券") == "电子行业"
    assert sentence_subject("西南证券预计龙净环保2021年营收增长10%。", None, table=table, broker="西南证券") == "龙净环保"
    # another broker named as a company of the sentence (a securities industry report) is a company like others
    assert sentence_subject("兴业证券2021年营收同比增长20%。", None, table=table, broker="西南证券") == "兴业证券"
    # 中国银河 wrote it: 中国银河 is not asked about, however its header names it
    assert sentence_subject("中国银河证券·行业周报 2021年营收同比增长20%。", None, table=table,
                            broker="中国银河证券") is None


def test_the_templates_ask_an_industry_report_about_its_sentences_subjects(table):
    gen = TemplateGenerator(table=table)
    tree = gen.generate([_item(["2020年前三季度电子行业营收同比增长15.2%，净利润同比增长20%。",
                                "西南证券2020年前三季度营收同比增长30%，归母净利润同比增长25%。",
                                "龙净环保2020年前三季度营业收入82.37亿元，同比增长18.25%。"])])[0]
    first, broker, company = tree.sentence_queries
    assert first.startswith("电子行业2020年前三季度营收") and broker == "" and company.startswith("龙净环保")
    assert not any("西南证券" in q for q in (tree.passage_query, *tree.sentence_queries))
    # a strategy report with no subject and nothing named: no subject, counted as such
    (res,) = gen.generate([_item(["毛利率为30%，同比提升2个百分点。"], title="策略周报：市场回顾", report_type="strategy")])
    assert isinstance(res, Failure) and res.kind == "no_subject"


def test_an_untitled_body_never_takes_its_broker_as_its_company(table):
    from fincprg.generate.subject import body_subject

    text = ("西南证券·行业周报 请务必阅读正文后免责条款。龙净环保前三季度营收82亿元。西南证券股份有限公司具备资格。"
            "西南证券研究所。西南证券。龙净环保毛利率提升。")
    assert body_subject(text, table)[0] == "西南证券"  # named most: without the broker known, it wins
    assert body_subject(text, table, broker="西南证券")[0] == "龙净环保"
    only_broker = "西南证券·行业周报 请务必阅读。公司前三季度营收82亿元。西南证券股份有限公司具备资格。西南证券。"
    assert body_subject(only_broker, table, broker="西南证券") is None


def test_wide_reports_and_title_subjects():
    r = Report(id="r", title="A股策略深度报告：市政订单延续", text="x")
    assert title_subject(r.title) == "A股"  # 策略 is the kind, not the market
    assert is_wide(r, None, "A股") and not is_wide(Report(id="c", title="t", text="x", report_type="company"), None, "A股")
    assert industry_term("本周半导体板块上涨3%。", None) == "半导体板块"


def test_a_partner_named_before_is_not_whom_gongsi_means(table):
    kw = {"table": table, "broker": None}
    previous = "与蓝思科技合资成立宁夏公司，消费电子将成为蓝宝石行业新增长点。"
    assert sentence_subject("预测20-22年公司归母净利润为8.60/11.14/13.94亿元。", None, previous=previous, **kw) is None
    # 「归属于上市|公司股东的净利润」 cut by a break: no 公司 of anyone's
    assert sentence_subject("公司股东的净利润0.67亿元，同比增长79.32%。", None, previous="龙净环保发布三季报。", **kw) is None


def test_a_new_item_and_a_drama_title_name_no_company(table):
    kw = {"table": table, "broker": None}
    previous = "贵州燃气公告，子公司出售热力公司2%股权。"
    assert sentence_subject("公司发布2022年一季报：Q1实现营收534.1亿元。", None, previous=previous, **kw) is None
    assert sentence_subject("公司Q1实现营收5.1亿元。", None, previous=previous, **kw) == "贵州燃气"
    assert sentence_subject("电视剧《新世界》的投资收入1.5亿元。", None, **kw) is None


def test_a_risk_list_is_not_asked_of_a_company_named_after_it(table):
    s = "风险提示：公司长协谈判不及预期、全球贸易需求超预期下滑。吉祥航空2021年录得归母净利润亏损4.98亿"
    assert sentence_subject(s, "交通运输行业", table=table, broker=None) is None
    assert sentence_subject("吉祥航空风险提示：油价大幅上涨。", "交通运输行业", table=table, broker=None) == "吉祥航空"


def test_an_industry_is_asked_no_risk_list(table):
    gen = TemplateGenerator(table=table)
    # an industry's risk list matches every report on that industry: no query, at either level
    (res,) = gen.generate([_item(["风险提示：下游需求不及预期，行业竞争加剧。"])])
    assert isinstance(res, Failure) or not any("风险" in q for q in (res.passage_query, *res.sentence_queries))
    # a passage on the industry is asked about it
    (res,) = gen.generate([_item(["2020年电子行业营收达到1200亿元，同比增长35%，毛利率为20%。"])])
    assert res.passage_query.startswith("电子行业")


def test_a_customer_or_a_brokers_branch_is_no_subject_and_a_query_names_one_company(table):
    kw = {"table": table, "broker": "西南证券"}
    # the fact is the unnamed supplier's: its customer is not asked about
    assert sentence_subject("公司战略客户包括万华化学，2021年客户拓展顺利。", "化工行业", **kw) is None
    assert sentence_subject("中控技术2021年新增战略客户万华化学。", "化工行业", **kw) == "中控技术"
    # the selling desk of a block trade is no company the report speaks of
    assert sentence_subject("信达证券北京某路营业部卖出中公教育1000万股。", "教育行业", **kw) == "中公教育"
    gen = TemplateGenerator(table=table)
    # a frame that took another listed company into its aspect: whose figure is unclear
    assert gen._finish("一汽解放2019年宁德时代归属于上市公司股东的净利润达到了多少？") == ""
    assert gen._finish("宁德时代2019年归母净利润达到了多少？") == "宁德时代2019年归母净利润达到了多少？"


def test_a_sentence_writing_gongsi_asks_the_reports_company_not_another_coded_one():
    gen = TemplateGenerator()
    q = gen.sentence_query("受三人行（605168）股价下跌影响，2022年一季度公司归母净利润1.11亿元，同比下降20.57%。",
                           "科大讯飞", key="k")
    assert q.startswith("科大讯飞") and "三人行" not in q


def test_a_chunk_joining_two_companies_sentences_and_a_section_headed_with_a_code(table):
    from fincprg.generate.industry import section_heads

    def section_company(before, table, broker):  # the section a passage after ``before`` continues
        found = section_heads(before, table, broker)
        return found[-1][1] if found else None

    kw = {"table": table, "broker": "西南证券"}
    joined = ("未来，闻泰科技与联想平板的共同目标是做到安卓平板市场第一。\n"
              "紫光国微（002049）：事件：公司发布2021年中报，实现营业收入22.92亿元。")
    assert sentence_subject(joined, "电子行业", **kw) is None
    # a section is headed with its code; a customer the section mentions after it is no section company
    before = "龙净环保（600388）：环保设备龙头。公司客户包括宁德时代，11月获得宁德时代定点采购订单。"
    assert section_company(before, table, "西南证券") == "龙净环保"
    assert section_company("公司客户包括宁德时代，11月获得宁德时代定点采购订单。", table, "西南证券") is None


def test_a_section_is_headed_by_a_code_or_a_name_opening_a_paragraph(table):
    from fincprg.finance.sections import heads, section_of

    # a name opening a paragraph (after a list marker at most) heads a section, as one followed by its code does
    assert section_of("行业观点。\n1）长青股份：公司发布2019年年报。", table, "西南证券") == "长青股份"
    assert section_of("行业观点。\n大唐发电主要经营火电、水电。", table, "西南证券") == "大唐发电"
    assert section_of("行业观点：龙净环保（600388）订单饱满。", table, "西南证券") == "龙净环保"
    # a sentence opening on a company announcing heads its section, as a news item does
    news = "世纪华通(002602.SZ)披露可转债预案。事件：志邦家居发布2019年度业绩快报：公司实现营收29.66亿元。"
    assert section_of(news, table, "西南证券") == "志邦家居"
    assert section_of("世纪华通(002602.SZ)披露可转债预案。公司与志邦家居发布联合公告。", table, "西南证券") == "世纪华通"
    # a name going on into a list, or named mid-paragraph, or the broker, heads nothing
    assert heads("行业观点。\n宁德时代、比亚迪等龙头受益。", table, "西南证券") == []
    assert heads("行业观点。公司获得宁德时代定点采购订单。", table, "西南证券") == []
    assert heads("行业观点。\n西南证券认为景气向上。", table, "西南证券") == []


def test_a_section_headed_inside_a_passage_ends_the_one_before(table):
    from fincprg.generate.templates import _section_context

    sents = ["公司前三季度营收82亿元，同比增长18%。", "\n长青股份发布2019年年报。", "公司全年营收30亿元，同比增长5%。"]
    item = _item(sents)
    item = PassageInput(item.report, item.passage, item.sentences, before="龙净环保（600388）：环保设备龙头。")
    first, _, third = _section_context(item, table, "西南证券")
    assert first.startswith("龙净环保。") and third.startswith("长青股份。") and "龙净环保" not in third
    gen = TemplateGenerator(table=table)
    q1, _, q3 = gen.generate([item])[0].sentence_queries
    assert q1.startswith("龙净环保") and q3.startswith("长青股份"), (q1, q3)


def test_a_company_reports_sentence_of_a_peer_is_asked_about_the_peer(table):
    gen = TemplateGenerator(table=table)
    # neither the report's company nor 公司 in it: the one listed issuer it names owns the fact
    assert gen._fact_owner("报告期内锦浪科技来自境外的营业收入同比增长60%。", "金盘科技", "") == "锦浪科技"
    assert gen._fact_owner("报告期内来自境外的营业收入同比增长60%。", "金盘科技", "") == "金盘科技"
    # two issuers named, or a part of the chunk that lists risks of the report's own company: whose is unclear
    assert gen._fact_owner("锦浪科技境外营收同比增长60%，阳光电源境外营收同比增长40%。", "金盘科技", "") == ""
    assert gen._fact_owner("风险提示：原材料价格上涨。\n锦浪科技境外营收同比增长60%。", "金盘科技", "") == ""
    q = gen.sentence_query("报告期内锦浪科技来自境外的营业收入同比增长60%。", "金盘科技", key="k")
    assert "金盘科技" not in q and (q == "" or q.startswith("锦浪科技")), q
    # a peer named with its code after the report company's risk list: the risks are not the peer's
    risks = "风险提示：数字化建设投资放缓；技术和产品研发不及预期。\n初灵信息(300250)股价今日报收11.73元。"
    assert gen.sentence_query(risks, "科大讯飞", key="k") == ""


def test_a_market_from_a_strategy_title_is_asked_only_of_sentences_that_write_it(table):
    kw = {"table": table, "broker": "西南证券", "industry_passage": True}
    assert sentence_subject("2020年上半年实现营收439.5亿元，同比增长11.3%。", "A股", **kw) is None
    assert sentence_subject("2020年上半年A股营收同比下降7%。", "A股", **kw) == "A股"
    assert sentence_subject("截至11月17日，沪深300指数PE-TTM为11.2倍。", "A股", **kw) == "A股"  # a market's figure
    # the economy's figures are the country's, not the market's
    assert sentence_subject("我们预计2023年全年GDP增速为5.3%左右。", "A股", **kw) == "中国"
    assert sentence_subject("2023年上半年实现营收439.5亿元。", "A股", **kw) is None
    # an industry is its passage's subject where the passage speaks of it alone (板块估值 in a 计算机行业周报)
    assert sentence_subject("板块估值（PE-TTM）为48.6倍。", "计算机行业", **kw) == "计算机行业"
