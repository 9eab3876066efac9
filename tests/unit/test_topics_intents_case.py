"""Topic keywords keep the casing the titles use (AI, A股), not the tokenizer's lower case."""
from __future__ import annotations

from fincprg.topics.intents import TopicInput, surface_form, template_intents


def test_surface_form_restores_title_casing():
    titles = ("电子行业周报：AI芯片需求旺盛", "A股策略：关注ai应用", "Chiplet与HBM")
    assert surface_form("ai", titles) == "AI"  # the first (most representative) title wins
    assert surface_form("a股", titles) == "A股"
    assert surface_form("hbm", titles) == "HBM"
    assert surface_form("chiplet", titles) == "Chiplet"
    assert surface_form("gpu", titles) == "gpu"  # no title has it: unchanged
    assert surface_form("芯片", titles) == "芯片"


def test_template_intents_use_title_casing():
    topic = TopicInput("t0", ("ai", "a股", "算力"), ("A股AI行情回顾：算力领涨", "AI算力周报"), "电子")
    [it] = template_intents(topic)
    texts = [it["intent"], *it["subqueries"]]
    assert "AI" in it["intent"]  # one theme, as the titles write it
    assert not any("ai" in t or "a股" in t for t in texts), texts
    # AI is the lexicon's term of another industry (计算机): asked without 「电子行业」, which would join two sectors
    assert any(t.startswith("AI") for t in it["subqueries"]) and not any("电子行业AI" in t for t in texts)


def test_intents_ask_the_part_of_the_year_the_titles_review():
    """A half-year or Q3 review is asked as that part of the year, never as the whole year."""
    import datetime as dt

    titles = ("重庆啤酒（600132）：2022年中报点评：收入稳健增长", "重庆啤酒（600132）：2022年前三季度收入增长",
              "安琪酵母（600298）：2022年前三季度收入增长")
    topic = TopicInput("t1", ("收入",), titles, "食品饮料", (dt.date(2022, 8, 20), dt.date(2022, 10, 30)))
    texts = [t for it in template_intents(topic, max_intents=3) for t in [it["intent"], *it["subqueries"]]]
    assert any("重庆啤酒2022年上半年" in t for t in texts) and any("重庆啤酒2022年前三季度" in t for t in texts)
    assert not any("2022年的" in t or "2022年收入" in t for t in texts), texts


def test_the_driver_question_needs_a_title_that_says_it_grew():
    from fincprg.topics.intent_templates import _title_question

    forms = {_title_question(f"k{i}", "南山铝业", "南山铝业（600219）：产能投放助推业绩") for i in range(40)}
    assert forms and not any("驱动因素" in f for f in forms)
    grew = {_title_question(f"k{i}", "伊利股份", "伊利股份（600887）：2021年收入增长稳健") for i in range(40)}
    assert any("收入增长的驱动因素" in f for f in grew) and all("2021年" in f for f in grew)


def test_a_payout_ratio_is_decided_not_driven():
    from fincprg.topics.intent_templates import _title_question

    forms = {_title_question(f"k{i}", "中原保险", "中原保险（601999）：2020年分红率提升至35%") for i in range(40)}
    assert forms and not any("驱动因素" in f for f in forms), forms
