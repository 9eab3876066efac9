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
