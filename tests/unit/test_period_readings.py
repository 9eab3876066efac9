"""Issue 48's period classes, each read as a class: a negative growth is a fall, a day's figure is no year's nor an
average, a price needs its object, a year must be the fact's own, an actual is no forecast."""
from __future__ import annotations

import datetime as dt

import pytest

from fincprg.verify.answer import check_answer
from fincprg.generate.templates import TemplateGenerator

D = dt.date(2021, 3, 1)


def _questions(sentence: str, company: str, **kw: object) -> list[str]:
    return [TemplateGenerator().sentence_query(sentence, company, key=k, **kw) for k in "abcdef"]  # type: ignore[arg-type]


@pytest.mark.parametrize("sentence", [
    "2020年公司实现归母净利润1.2亿元，同比增长-54%。",
    "2020年公司归母净利润1.2亿元，同比增长-54.21%，主要系原材料涨价。",
])
def test_growth_by_a_negative_figure_is_asked_as_a_fall(sentence):
    qs = _questions(sentence, "恩华药业", date=D)
    assert all("增长" not in q for q in qs) and any("下降" in q for q in qs), qs


@pytest.mark.parametrize("source", ["2020年公司实现归母净利润1.2亿元，同比增长-54%。",
                                    "2020年公司归母净利润1.2亿元，同比增长 -54.21%。"])
def test_a_rise_asked_of_a_negative_growth_is_contradicted(source):
    v = check_answer("恩华药业2020年归母净利润同比增长了多少？", source, sentence=source, date=D)
    assert v is not None and v.reason.value == "contradicted", v
    assert check_answer("恩华药业2020年归母净利润同比下降了多少？", source, sentence=source, date=D) is None


# --- a day's figure ----------------------------------------------------------------------------------------------
_CLOSE = "截至2022年5月19日收盘，伟隆股份报收于11.25元，上涨9.97%，换手率6.99%，成交额6843.48万元。"


def _day_rule():
    from fincprg.verify.dated import check_day_figure
    return check_day_figure


def _tense_rule():
    from fincprg.verify.dated import check_actual_as_forecast
    return check_actual_as_forecast


@pytest.mark.parametrize("query, source", [
    ("伟隆股份2022年成交额达到了多少？", _CLOSE),
    ("伟隆股份的平均股价是多少？", "截至5月19日收盘，伟隆股份股价为11.25元。"),
    ("紫金矿业2020年股价是多少？", "本周公司股价收于5.2元，周涨幅3%。"),
])
def test_a_days_figure_is_no_years_nor_an_average(query, source):
    v = _day_rule()(query, source)
    assert v is not None and v.reason.value == "wrong_period", v


@pytest.mark.parametrize("query, source", [
    ("伟隆股份2022年5月19日成交额是多少？", _CLOSE),  # asked with its day
    ("紫金矿业2020年前三季度营收是多少？", "公司10月28日发布2020年三季报，前三季度实现营收126.93亿元。"),  # a publication's day
    ("紫金矿业2020年在手订单是多少？", "截至2020年12月31日，公司在手订单合计156亿元。"),  # a year's last day
    ("紫金矿业2020年营收是多少？", "2020年公司实现营收100亿元。6月15日公司股价为5元。"),
])
def test_a_figure_of_a_period_is_not_a_days(query, source):
    assert _day_rule()(query, source) is None


def test_a_day_figure_is_asked_with_its_day():
    qs = _questions(_CLOSE, "伟隆股份", date=D)
    assert all("2022年5月19日" in q for q in qs if q) and any(qs), qs
    qs = _questions("6月15日外三元生猪均价为32.64元/公斤。", "牧原股份", date=D, passage_year=2020)
    assert all("2020" not in q and "日日外" not in q for q in qs), qs


# --- an actual asked as a forecast ----------------------------------------------------------------------------------
@pytest.mark.parametrize("query, source", [
    ("预计恩华药业2021年前三季度营收是多少？", "2021年前三季度实现营收30.59亿元，同比增长15%。"),
    ("恩华药业2021年归母净利润的预测是多少？", "2021年报告期内公司录得归母净利润5.1亿元。"),
    ("恩华药业2021年上半年净利润的预测值是多少？", "2021H1归母净利润2.2亿元，同比+21%。"),
])
def test_an_actual_asked_as_a_forecast_is_not_answered(query, source):
    v = _tense_rule()(query, source)
    assert v is not None and v.reason.value == "not_answered", v


@pytest.mark.parametrize("query, source", [
    ("预计恩华药业2022年营收是多少？", "我们预计2022年公司实现营收36.2亿元。"),
    ("恩华药业2022-2024年净利润的预测值是多少？", "2022-2024年归母净利润分别为4.7、6.5、8.5亿元。"),
    ("恩华药业2022年净利润的预测值是多少？", "公司2022年归母净利润将达到5亿元。"),
    ("恩华药业2021年营收是多少？", "2021年前三季度实现营收30.59亿元。"),  # no forecast asked
])
def test_a_forecast_in_its_source_is_no_actual(query, source):
    assert _tense_rule()(query, source) is None


# --- a price of nothing ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("query, names", [
    ("农林牧渔行业2020年的均价为多少？", ()),
    ("牧原股份2020年的均价为多少？", ("牧原股份",)),
    ("牧原股份2021年价格走势如何？", ("牧原股份",)),
])
def test_a_price_of_no_product_is_vague(query, names):
    from fincprg.verify.wording import check_vague
    v = check_vague(query, "2020年均价为32.64元/公斤，同比上涨62%，2021年价格走势向下。", names)
    assert v is not None and v.reason.value == "vague", v


def test_a_price_of_a_product_is_asked():
    from fincprg.verify.wording import check_vague
    assert check_vague("牧原股份2020年生猪均价为多少？", "2020年生猪均价为32.64元/公斤。", ("牧原股份",)) is None


def test_the_generator_asks_no_price_of_nothing():
    qs = _questions("2020年均价为32.64元/公斤，同比上涨62%。", "农林牧渔行业", date=D)
    assert all("均价" not in q for q in qs), qs
    assert any("生猪均价" in q for q in _questions("2020年生猪均价为32.64元/公斤，同比上涨62%。", "牧原股份", date=D))


# --- a year the fact does not carry ----------------------------------------------------------------------------------
_DIVIDEND = "公司2018年度利润分配方案为每10股派发现金红利1元，同比增长10%。"


@pytest.mark.parametrize("event", ["7月26日公司中标某矿区采矿权项目，成交价1.22亿元。",
                                   "7月26日公司公告收购某矿业公司51%股权，成交价1.22亿元。"])
def test_an_event_is_not_dated_by_another_sentences_year(event):
    passage = _DIVIDEND + event
    qs = [TemplateGenerator().sentence_query(event, "紫金矿业", key=k, date=dt.date(2019, 9, 1), passage_year=2018,
                                             passage_text=passage) for k in "abc"]
    assert all(q and "2018" not in q for q in qs), qs
    v = check_answer("紫金矿业2018年中标了哪些项目？", passage, sentence=event, date=D)
    assert v is not None and v.reason.value == "wrong_period", v


def test_a_figure_takes_the_day_nearest_it_and_an_event_its_days_year():
    s = "于2022年6月21日，姜宗祥获委任为总裁。截至2022年7月18日收盘，青岛啤酒报收于75.1元，成交额1.49亿元。"
    assert all("7月18日" in q for q in _questions(s, "青岛啤酒", date=D) if q)
    s = "事件：格力电器于2020年4月12日晚间公告，将使用自有资金通过集中竞价方式回购公司股份。"
    qs = _questions(s, "格力电器", date=D)
    assert all("2020年" in q and "日" not in q for q in qs if q) and any(qs), qs


def test_preliminary_results_are_an_actual_not_a_forecast():
    v = _tense_rule()("奥佳华2019年净利润的预测值是多少？", "根据业绩快报，公司2019年净利润为3.98亿元，同比下降8%。")
    assert v is not None and v.reason.value == "not_answered", v
