"""Phrases the offline templates keep: whole dictionary words ending in a noun, not cut from the source."""
from __future__ import annotations

from fincprg.generate.base import PassageInput
from fincprg.generate.phrases import aspect_before, aspect_of
from fincprg.generate.templates import TemplateGenerator
from fincprg.finance.words import sound
from fincprg.records import Passage, Report, Sentence
from fincprg.topics.intents import TopicInput, template_intents


def test_sound_phrases():
    assert sound("消费电子", "公司消费电子营业收入23亿元")
    assert not sound("G智能手机", "5G智能手机出货量增长30%")  # cut out of the token 5G
    assert not sound("光提取层")  # ends in a measure word, not a noun
    assert not sound("国产替代推进")  # ends in a verb


def test_aspect_is_dropped_when_it_is_no_whole_noun_phrase():
    clause = "5G智能手机出货量同比增长30%"
    assert aspect_before(clause, clause.index("出货量")) == "智能手机"  # not 「G智能手机」
    clause = "公司医美收入3.2亿元"
    assert aspect_before(clause, clause.index("收入")) == ""
    clause = "消费电子营业收入23.13亿元"
    assert aspect_before(clause, clause.index("营业收入")) == "消费电子"
    # a verb before the metric is no aspect of it (「产生研发费用的同比变化幅度」 was asked)
    clause = "前三季度公司产生研发费用2.26亿元"
    assert aspect_before(clause, clause.index("研发费用")) == ""
    # ... nor 有, 具有 (「江山欧派2017年的有实木复合门产能」 was asked), while 有机硅 keeps its 有
    for clause, want in (("目前公司有实木复合门产能100万套", "实木复合门"), ("2019年公司具有粘胶长丝产能7万吨", "粘胶长丝"),
                         ("公司有机硅产能30万吨", "有机硅")):
        assert aspect_before(clause, clause.index("产能")) == want
    # a word glued to a number is its unit or measure, no aspect (「家用电器行业的英寸产能」 was asked)
    clause = "台积电8英寸产能紧张"
    assert aspect_of(clause, clause.index("产能")) is None
    # a cause acting on the metric is no aspect of it (「影响毛利率」 was asked as if a kind of gross margin)
    clause = "一方面受2021年缺货、涨价等影响毛利率基数偏高的影响"
    assert aspect_before(clause, clause.index("毛利率")) == ""
    # a two-digit year is no part of the aspect (「2021年年中高档酒毛利率」 was asked)
    clause = "21年中高档酒毛利率提升1.01pct"
    assert aspect_before(clause, clause.index("毛利率")) == "中高档酒"


def test_generated_sentence_query_drops_a_cut_aspect():
    text = "2023年公司5G智能手机出货量为1200万台，同比增长30%。"
    rep = Report(id="r1", title="星河科技（688321）：点评", text=text, company="星河科技")
    p = Passage(id="r1#p0", report_id="r1", order=0, text=text)
    s = Sentence(id="r1#p0#s0", passage_id="r1#p0", order=0, text=text)
    q = TemplateGenerator().generate([PassageInput(rep, p, (s,))])[0].sentence_queries[0]
    assert "智能手机出货量" in q and "G智能手机" not in q, q


def test_topic_keywords_the_tokenizer_cannot_read_are_not_asked():
    topic = TopicInput("t1", ("个护", "净息差"), ("行业周报：个护龙头稳健，净息差企稳", "行业周报：净息差企稳"), "银行", ())
    subs = [s for it in template_intents(topic) for s in it["subqueries"]]
    assert subs and all("个护" not in s for s in subs) and any("净息差" in s for s in subs)


def _sentence_query(text: str) -> str:
    rep = Report(id="r1", title="星河科技（688321）：点评", text=text, company="星河科技")
    p = Passage(id="r1#p0", report_id="r1", order=0, text=text)
    s = Sentence(id="r1#p0#s0", passage_id="r1#p0", order=0, text=text)
    tree = TemplateGenerator().generate([PassageInput(rep, p, (s,))])[0]
    return getattr(tree, "sentence_queries", ("",))[0]  # a Failure: nothing askable in the passage


def test_a_segment_that_cannot_be_said_is_not_asked_as_the_company_total():
    # 医美 is no dictionary word: 「星河科技2022年收入是多少？」 would ask the company's revenue
    assert "收入" not in _sentence_query("2022年公司医美收入3.2亿元，同比增长40%。")
    # a customer's contribution, and a share, are not the company's revenue
    assert "收入" not in _sentence_query("2022年大客户甲贡献收入2.11亿元，较上年有所提升。")
    assert "收入" not in _sentence_query("2022年宣传推广费2359万元，占收入3.6%。")


def test_a_forecast_with_unreadable_years_stays_a_forecast():
    q = _sentence_query("我们预计23 24公司年营业收入分别为30.54、37.91亿元。")
    assert q == "" or "预" in q, q


def test_topic_keyword_questions_fit_the_keyword():
    from fincprg.topics.intent_templates import _keyword_question

    assert _keyword_question("t", "疫情", "2020年交通运输行业", "交通运输") == "2020年交通运输行业受疫情的影响如何？"
    assert _keyword_question("t", "回购", "2020年银行行业", "银行") == ""  # a company event
    assert "前景" not in _keyword_question("t", "净息差", "2021年银行行业", "银行")  # a measure has no 前景
    # another industry's term in one stray title; a theme two titles share stays
    assert _keyword_question("t", "生猪", "2021年房地产行业", "房地产", ("新希望：生猪出栏高增", "万科A：销售回暖")) == ""
    assert "AI" in _keyword_question("t", "AI", "2021年电子行业", "电子", ("AI芯片需求旺盛", "AI算力周报"))
    assert "生猪" in _keyword_question("t", "生猪", "2021年农林牧渔行业", "农林牧渔")


def test_no_second_forecast_word():
    from fincprg.generate.phrases import Frame
    from fincprg.generate.questions import metric_question

    f = Frame(period="2023年", forecast=True, metric="净利润", surface="净利润", aspect="预测", number=True)
    for k in "abcdef":
        q = metric_question(k, "星河科技", f)
        assert q.count("预测") + q.count("预计") == 1, q


def test_stable_growth_is_no_placement_and_a_listed_risk_has_no_asked_impact():
    from fincprg.finance.events import event_of

    assert event_of("新元药业（002873）：重视中药发展布局,业绩保持稳定增长") is None
    assert event_of("涪陵榨菜：定增方案彰显发展信心") == "定增"
    # a listed risk is asked as which risks: neither its impact nor the risk itself written into the question
    for listed in ("风险提示：竞争加剧，原材料价格波动。", "风险提示：电网投资不及预期，原材料价格波动。"):
        q = _sentence_query(listed)
        assert q and "竞争" not in q and "电网投资" not in q and "有何影响" not in q, q


def test_an_amount_of_a_bare_action_is_not_asked():
    q = _sentence_query("2022年公司投资建设年产10万吨镁合金项目，投资金额约为6.46亿元。")
    assert "投资金额" not in q, q


def test_a_flash_reports_preliminary_figure_is_not_asked_as_a_forecast():
    q = _sentence_query("公司发布2022年前三季度业绩快报，前三季度预计实现营业收入8.83亿元，同比减少1.08%。")
    assert q and "预" not in q, q


def test_a_market_index_is_not_asked_of_the_company():
    assert "指数" not in _sentence_query("2022年3月以来BDTI指数上涨11.98%，运价持续回升。")


def test_a_forecast_asks_a_plan_of_the_company_never_of_its_market():
    assert _sentence_query("预计2023年公司信贷需求有望回暖，贷款增速保持稳健。") == ""
    assert _sentence_query("公司预计2023年渠道继续下沉，新增经销商1000家。") == "星河科技2023年渠道方面有哪些规划？"
    assert _sentence_query("预计2024年公司新项目将陆续投产。") == "星河科技2024年投产方面有哪些规划？"  # no 「投产的前景」


def test_a_risk_list_is_asked_as_which_risks_never_naming_one_nor_as_yes_or_no():
    # 「需要关注X的风险吗」 read as a risk list's line turned into a question nobody types (two readings), and
    # 「面临X等哪些风险」 as the answer written into the question (about half the readers' verdicts)
    text = "风险提示：原材料价格涨幅超预期。"
    for i in range(1, 7):  # the template pick is keyed on the sentence id: these ids draw every form (r3 the second)
        rep = Report(id=f"r{i}", title="星河科技（688321）：点评", text=text, company="星河科技")
        p = Passage(id=f"r{i}#p0", report_id=f"r{i}", order=0, text=text)
        s = Sentence(id=f"r{i}#p0#s0", passage_id=f"r{i}#p0", order=0, text=text)
        q = TemplateGenerator().generate([PassageInput(rep, p, (s,))])[0].sentence_queries[0]
        assert q in ("星河科技面临哪些主要风险？", "投资星河科技需要关注哪些风险？"), q


def test_a_figure_s_unit_is_no_aspect_and_a_cost_ratio_no_revenue():
    from fincprg.generate.phrases import CLAUSE_METRIC, aspect_of
    clause = "保守给予6 460亿目标市值，相比DCF结果15%折扣"
    m = CLAUSE_METRIC.search(clause)
    assert m is not None and aspect_of(clause, m.start(), frozenset({"某电力"})) is None  # never 「亿目标市值」
    # 成本收入(比) is a bank's cost ratio: no revenue to ask about
    assert CLAUSE_METRIC.search("2021年成本收入较上年提高2.59pct至21.52%") is None
    assert CLAUSE_METRIC.search("2021年营业收入较上年增长10.8%").group() == "营业收入"


def test_a_months_figure_is_not_asked_without_its_month():
    from fincprg.generate.phrases import CLAUSE_METRIC, aspect_of
    clause = "10月草甘膦市场均价为8万元 吨"
    m = CLAUSE_METRIC.search(clause)
    assert m is not None and aspect_of(clause, m.start(), frozenset()) is None  # never 「2022年月草甘膦市场均价」
    linked = "10月草甘膦市场的均价为8万元 吨"  # the candidate loses its 的: the month is still found before it
    m = CLAUSE_METRIC.search(linked)
    assert m is not None and aspect_of(linked, m.start(), frozenset()) is None


def test_a_store_total_is_not_asked_how_many_stores_opened():
    import datetime as dt

    from fincprg.generate import questions as qs

    total = "截至2020年底，索菲亚门店总数超过4000家，其中专卖店2719家。"
    opened = "2020年公司新开门店300家，门店总数超过4000家。"
    d = dt.date(2021, 3, 1)
    asked = {qs.event_question(k, "索菲亚", "门店", total, "", 2021, d) for k in "abcdefgh"}
    assert asked == {"索菲亚2020年门店扩张情况如何？"}
    assert "索菲亚2020年开了多少家新门店？" in {qs.event_question(k, "索菲亚", "门店", opened, "", 2021, d) for k in "abcdefgh"}


def test_an_event_is_not_dated_by_the_report_a_sentence_cites():
    import datetime as dt

    from fincprg.generate import questions as qs

    cited = "公司建厂效率较高，18年年报显示湘潭工厂刚开建，仅8个月时间月饼产线即建成投产。"
    assert qs.event_question("k", "广州酒家", "投产", cited, cited, 2019, dt.date(2019, 10, 1)) == ""
    dated = "2019年公司湘潭工厂月饼产线建成投产。"
    assert qs.event_question("k", "广州酒家", "投产", dated, dated, 2019, dt.date(2019, 10, 1)).startswith("广州酒家2019年")
