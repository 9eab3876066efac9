"""Template intents name what a topic's titles share: a majority company, two subject companies with a theme,
or the theme itself (issues 18 and 38)."""
from __future__ import annotations

import datetime as dt

from fincprg.topics.intent_templates import shared_theme
from fincprg.topics.intents import TopicInput, template_intents, to_queries

DATES = (dt.date(2021, 3, 1), dt.date(2021, 8, 1))


def test_companies_of_one_industry_but_different_themes_are_not_paired():
    # both 食品饮料, but one report is about 榨菜 and the other about 白酒 (the blind reading's example)
    titles = ("涪陵榨菜（002507）公司动态点评：Q2业绩略超市场预期，定增方案彰显发展信心",
              "五粮液（000858）公司动态点评：春节动销良好，白酒一季度高增长可期")
    for it in template_intents(TopicInput("t1", ("白酒", "榨菜"), titles, "食品饮料", DATES)):
        assert "涪陵榨菜" not in it["intent"] and "五粮液" not in it["intent"], it  # neither is the topic's subject


def test_unrelated_industries_are_not_paired():
    titles = ("航发动力（600893）：单三季度营业收入环比+30%，航发产品交付加速",
              "通威股份（600438）：三季度盈利大增，持续加速组件业务推进")
    assert shared_theme(*titles) is None
    # nothing shared: no intent; each company's title is still asked, alone, as a parentless subquery
    for it in template_intents(TopicInput("t2", ("组件",), titles, "国防军工", DATES)):
        assert it["intent"] == "" and all(("航发动力" in q) != ("通威股份" in q) for q in it["subqueries"]), it


def test_companies_sharing_a_theme_share_an_intent():
    titles = ("五粮液（000858）：白酒动销良好，一季度高增长可期", "泸州老窖（000568）：白酒高端化加速，股权激励落地",
              "五粮液（000858）：白酒批价上行", "泸州老窖（000568）：国窖放量")
    [it] = template_intents(TopicInput("t3", ("白酒",), titles, "食品饮料", DATES))
    assert "五粮液" in it["intent"] and "泸州老窖" in it["intent"] and "白酒" in it["intent"], it


def test_a_company_names_the_intent_only_where_it_is_the_majority():
    """Issue 38: 「了解玲珑轮胎…」 over a topic whose reports are mostly about 春风动力 names the wrong subject."""
    own = tuple(f"春风动力（603129）：{x}" for x in ("摩托车出口高增", "全地形车销量创新高", "Q3业绩超预期",
                                                  "大排量摩托车放量", "2021年收入增长", "新品周期开启"))
    titles = (*own, "玲珑轮胎（601966）：2019年上半年业绩高增")
    [it] = template_intents(TopicInput("t5", ("摩托车",), titles, "汽车", DATES))
    assert "春风动力" in it["intent"] and "玲珑轮胎" not in it["intent"], it
    assert not any("玲珑轮胎" in q for q in it["subqueries"]), it
    # one company among six industry titles that share 轮胎: the intent names the theme, not the company
    industry = tuple(f"轮胎行业周报：{x}" for x in ("原材料价格回落", "出口景气延续", "开工率回升", "海运费下行",
                                                 "半钢胎需求旺盛", "全钢胎库存下降"))
    [it] = template_intents(TopicInput("t6", ("轮胎",), (*industry, titles[-1]), "汽车", DATES))
    assert "轮胎" in it["intent"] and "玲珑轮胎" not in it["intent"], it


def test_a_topic_whose_titles_share_nothing_gets_no_intent():
    """A grab-bag topic has no research intent; a company among it keeps its own title's question."""
    titles = ("计算机周报：OpenAI十二天总结与Agent新范式", "3D打印行业：3D打印材料赋予医疗设计师全新的工作方式",
              "完美世界（002624）：游戏业绩稳健，《天龙2》等新品陆续释放增量", "鸿蒙电脑专题报告：鸿蒙电脑横空出世")
    got = template_intents(TopicInput("t7", ("新范式", "游戏", "鸿蒙"), titles, "计算机", DATES))
    assert all(it["intent"] == "" for it in got), got
    assert all("完美世界" in q for it in got for q in it["subqueries"]), got  # only the company's own title is asked


def test_an_industry_keyword_is_not_asked_as_a_theme_of_itself():
    titles = tuple(f"钢铁行业周报：{x}" for x in ("钢价小幅回升", "供需结构改善", "行业去库", "产能优化"))
    for it in template_intents(TopicInput("t8", ("钢铁行业", "钢价"), titles, "钢铁", DATES)):
        assert "钢铁行业钢铁" not in it["intent"] and all("钢铁行业钢铁" not in q for q in it["subqueries"]), it
    parts = tuple(f"汽车零部件行业周报：{x}" for x in ("出海加速", "智能驾驶", "热管理"))
    [it] = template_intents(TopicInput("t9", ("汽车零部件",), parts, "汽车", DATES))
    assert "汽车行业汽车零部件" not in it["intent"] and "汽车零部件" in it["intent"], it


def test_the_stage_honours_max_intents():
    """topics.intents.max_intents reaches the templates: a topic has one subject, so at most one intent."""
    from types import SimpleNamespace

    from fincprg.config import load_config
    from fincprg.topics.stage import make_queries

    titles = ("五粮液（000858）：白酒动销良好", "五粮液（000858）：白酒批价上行", "涪陵榨菜（002507）：Q2业绩略超预期")
    topic = TopicInput("t4", ("白酒",), titles, "食品饮料", DATES)
    ctx = SimpleNamespace(config=load_config(overrides=["topics.intents.max_intents=3"]))
    intents = [q for q in make_queries([topic], ctx)[0] if q.level == "intent"]
    assert len(intents) == 1 and "五粮液" in intents[0].text, intents


def test_a_theme_the_names_already_say_is_not_repeated():
    titles = ("春秋航空（601021）：航空客运恢复，Q3盈利转正", "南方航空（600029）：航空需求回暖，客座率提升")
    for i in range(6):  # several picks of the template
        for it in template_intents(TopicInput(f"t{i}", ("航空",), titles, "交通运输", DATES)):
            assert "航空航空" not in it["intent"] and "关于航空的" not in it["intent"], it


def test_capacity_and_multiples_are_not_asked_how_they_perform():
    from fincprg.topics.intent_templates import _title_question

    for i in range(6):
        q = _title_question(f"k{i}", "南山铝业", "南山铝业（600219）：新增产能投放，加码产能和经销布局")
        assert q and "产能表现" not in q and "产能的变化" not in q, q
        q = _title_question(f"k{i}", "中国平安", "中国平安（601318）：PE仅10倍，估值处于低位")
        assert q and "PE表现" not in q, q


def _subqueries(topic: TopicInput) -> list[str]:
    return [s for it in template_intents(topic) for s in it["subqueries"]]


def test_one_company_title_does_not_speak_for_its_industry():
    # one bank's 净息差 title and one insurer's 寿险 title are no view of the industry's 净息差 or 寿险
    dates = (dt.date(2021, 3, 1), dt.date(2023, 8, 1))
    titles = ("常熟银行（601128）2022年中报点评：净息差与资产质量穿越周期", "兴业银行（601166）：资产质量保持平稳")
    subs = _subqueries(TopicInput("t5", ("净息差", "资产质量"), titles, "银行", dates))
    assert not any("银行行业" in s for s in subs), subs
    # and neither bank has more than half the reports: no subquery names one (issue 50)
    assert not any("常熟银行" in s or "兴业银行" in s for s in subs), subs
    # two titles writing it: the topic's reports speak for the industry
    titles2 = (*titles[:1], "江苏银行（600919）：净息差企稳，信贷投放提速")
    subs2 = _subqueries(TopicInput("t5", ("净息差",), titles2, "银行", dates))
    assert any(s.startswith("2021年至2023年银行行业净息差") for s in subs2), subs2


def test_a_company_measure_is_not_asked_of_an_industry_nor_a_past_range_of_its_prospects():
    from fincprg.topics.intent_templates import _keyword_question

    two = ("伊利股份（600887）：净利润稳健增长", "青岛啤酒（600600）：净利润超预期")
    assert _keyword_question("t", "净利润", "2020年至2023年食品饮料行业", "食品饮料", two, companies=True) == ""
    # industry reports may sum a measure over the industry
    assert _keyword_question("t", "净利润", "2020年至2023年食品饮料行业", "食品饮料", two) != ""
    for key in map(str, range(12)):  # every form the key can pick
        q = _keyword_question(key, "农药", "2020年至2023年基础化工行业", "基础化工", ("农药景气", "农药涨价"))
        assert q and "前景" not in q, q
    forms = {_keyword_question(str(k), "农药", "2022年基础化工行业", "基础化工", ()) for k in range(12)}
    assert forms and not any("前景" in q for q in forms), forms  # no 前景 either: vague over digests (reading 22)


def test_a_keyword_the_industry_name_holds_is_not_asked_again():
    from fincprg.topics.intent_templates import _keyword_question

    assert _keyword_question("t", "汽车", "2023年汽车行业", "汽车", ("汽车周报", "汽车销量")) == ""
    assert _keyword_question("t", "新能源车", "2023年汽车行业", "汽车", ("新能源车周报", "新能源车销量")) != ""


def test_another_industrys_name_is_not_asked_in_the_topics_industry():
    from fincprg.topics.intent_templates import _keyword_question

    titles = ("甲科技（000001）：汽车电子放量", "乙电子（000002）：汽车业务高增")
    assert _keyword_question("t", "汽车", "2022年电子行业", "电子", titles, companies=True) == ""
    # a theme of another industry that is not its name still stays where two titles write it
    assert _keyword_question("t", "AI", "2022年电子行业", "电子", ("甲：AI芯片放量", "乙：AI服务器高增")) != ""


def test_an_intent_never_reads_as_the_company_holding_a_view():
    # 「东山精密关于汽车的研究观点」 and 「…在特斯拉领域的业绩表现」 were read as unnatural
    titles = ("银轮股份（002126）：特斯拉热管理订单放量", "常熟汽饰（603035）：特斯拉配套业务高增")
    solo = ("东山精密（002384）：汽车业务营收高速增长",)
    texts = [it["intent"] for k in range(8) for ts, kws, ind in ((titles, ("特斯拉",), "汽车"), (solo, ("汽车",), "电子"))
             for it in template_intents(TopicInput(f"t{k}", kws, ts, ind, DATES))]
    assert texts and not any("关于" in t or "领域" in t for t in texts), texts
    assert any("特斯拉相关业务" in t for t in texts) and any("东山精密" in t and "汽车" in t for t in texts), texts


def test_a_theme_needs_half_of_the_titles_and_a_keyword_two():
    """A theme a third of a grab-bag topic writes is no intent of the topic; a keyword one title of several writes
    is no subquery (检测 in one fund-holdings report of three)."""
    grab = ("影视短剧2025行业简析报告", "2025短剧行业营销报告", "影视行业：2025短剧F4崛起之路", "2025年Q1剧集广告大盘报告",
            "2025集换式卡牌行业简析报告", "中东地区移动游戏发展趋势报告2025", "2025暑期档综艺热度报告")
    assert template_intents(TopicInput("t10", ("短剧",), (*grab, "2025年演唱会市场报告", "2025年电影票房报告"),
                                       "传媒", DATES)) == []
    [it] = template_intents(TopicInput("t11", ("短剧",), grab[:3], "传媒", DATES))
    assert "短剧" in it["intent"], it
    funds = ("社会服务行业2024Q3基金持仓分析报告：检测及酒店龙头获得增持", "社会服务行业2025Q1基金持仓分析报告：重仓比例回升，酒店景气",
             "社会服务行业2025Q4基金持仓分析报告：酒店龙头普遍增配")
    for it in template_intents(TopicInput("t12", ("酒店", "检测"), funds, "消费者服务", DATES)):
        assert not any("检测" in q for q in it["subqueries"]), it


def test_the_industry_named_another_way_is_no_theme_and_a_publication_quarter_no_period():
    from fincprg.topics.intent_templates import names_industry

    assert names_industry("电气设备", "电力设备及新能源") == "same"  # Shenwan 2014's name
    assert names_industry("生物医药", "医药") == "same" and names_industry("农业", "农林牧渔") == "same"
    assert names_industry("汽车零部件", "汽车") == "within" and names_industry("白酒", "食品饮料") == ""
    dates = (dt.date(2024, 10, 16), dt.date(2024, 11, 10), dt.date(2024, 12, 2))
    titles = ("汽车行业周报：9月乘用车市场回暖", "汽车板块24Q3财报综述：乘用车板块景气向上", "乘用车11月销量点评")
    [it] = template_intents(TopicInput("t13", ("乘用车",), titles, "汽车", dates, title_dates=dates))
    # October-December reports review September and Q3: the theme is asked of the year, not of 2024年第四季度
    assert "2024年" in it["intent"] and "季度" not in it["intent"], it


def test_a_short_form_of_the_industry_is_the_industry():
    from fincprg.topics.intent_templates import names_industry

    assert names_industry("交运", "交通运输") == "same" and names_industry("电新", "电力设备及新能源") == "same"
    assert names_industry("航空", "交通运输") == "" and names_industry("电池", "电力设备及新能源") == ""


def test_a_keyword_the_titles_write_only_inside_a_longer_term_is_asked_whole():
    from fincprg.topics.intent_templates import whole_term

    titles = ("计算机行业周报：商业航天加速落地", "商业航天专题：星座组网提速", "计算机行业：AI应用加速")
    assert whole_term("航天", titles) == "商业航天"
    assert whole_term("航天", (*titles, "航天装备行业周报")) == "航天"  # written alone too: kept
    [it] = template_intents(TopicInput("t14", ("航天",), titles[:2], "计算机", DATES))
    assert "商业航天" in it["intent"], it


def test_intent_frames_follow_the_titles_and_spread_over_a_level():
    """Issue 50: 「了解X的业绩表现与前景」 made 115 of 149 intents. Each company's titles give its frames; over many
    topics no frame takes more than a quarter of the level where the titles allow several."""
    from collections import Counter

    from fincprg.topics.frames import company_intent, signals

    found = signals(["华鲁恒升（600426）：业绩符合预期，维持买入评级", "华鲁恒升（600426）：受益政策，毛利率提升"])
    assert {"expectation", "rating", "policy", "metric"} <= set(found)
    assert company_intent("k", "华鲁恒升", "", {}) == ("outlook", "了解华鲁恒升的业绩表现与前景")
    used: dict[str, Counter[str]] = {"intent": Counter(), "topic": Counter()}
    titles = ["{c}（600426）：业绩符合预期，维持买入评级", "{c}（600426）：受益政策，毛利率提升",
              "{c}（600426）：回购彰显信心，业绩承压"]
    intents = []
    for k, c in enumerate(["华鲁恒升", "万华化学", "扬农化工", "宝丰能源", "卫星化学", "龙佰集团", "合盛硅业", "新和成"]):
        ts = tuple(t.format(c=c) for t in titles)
        for it in template_intents(TopicInput(f"t{k}", (), ts, "基础化工", DATES), used=used):
            intents.append(it["frames"]["intent"])
            assert c in it["intent"]
    shares = Counter(intents)
    assert len(intents) == 8 and max(shares.values()) / len(intents) <= 0.25, shares
    assert sum(used["topic"].values()) and max(used["topic"].values()) / sum(used["topic"].values()) <= 0.5


def test_queries_carry_their_frame_in_provenance():
    out = to_queries("t1", [{"intent": "了解A的估值", "subqueries": ["A估值如何？"],
                             "frames": {"intent": "rating", "subqueries": ["valuation"]}}], {"generator": "templates"})
    assert [q.provenance.get("frame") for q in out] == ["rating", "valuation"]
