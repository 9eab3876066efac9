"""Issue 48's subject classes, each as a class: an industry term or a company cut from inside a longer word, a
company's segment read as an industry, and a listed short name that is a place or an ordinary phrase."""
from __future__ import annotations

import pytest

from fincprg.finance.ordinary import ordinary_name
from fincprg.finance.stocks import stock_table
from fincprg.generate.industry import industry_term, sentence_subject
from fincprg.verify.sources import listed_in
from fincprg.verify.subject import Subjects, check_subject


@pytest.fixture(scope="module")
def table():
    return stock_table("bundled")


# --- 1. a subject cut from inside a longer word or name --------------------------------------------------------

def test_an_industry_term_starts_a_word_of_the_sentence():
    # the whole compound where a noun runs into the term, never the term cut from it
    assert industry_term("燃料电池行业领先，装机量同比增长30%。", None) == "燃料电池行业"
    assert industry_term("2021年锂电池行业出货量同比增长80%。", None) == "锂电池行业"
    # a verb or adverb running into it (集中 of 「集中石化」): the next word's term, 石化行业, not 中石化行业
    assert industry_term("产能持续集中石化行业龙头。", None) == "石化行业"
    assert industry_term("本周半导体板块上涨3%。", None) == "半导体板块"


def test_a_company_is_never_taken_from_inside_another_firms_name(table):
    # a subsidiary or another firm whose name runs on from a listed short name to a 有限公司
    assert sentence_subject("比亚迪汽车工业有限公司2021年营收同比增长20%。", None, table=table, broker=None) is None
    assert listed_in(table, "太平洋制罐（北京）有限公司营收同比增长5%。") == ()
    # the listed company's own full name (a 股份有限公司), or the name with a partner after it, is the company
    assert listed_in(table, "比亚迪股份有限公司营收同比增长20%。") == ("比亚迪",)
    assert listed_in(table, "比亚迪与华为技术有限公司签署合作协议。") == ("比亚迪",)


# --- 3. listed short names that are places or ordinary phrases -------------------------------------------------

@pytest.mark.parametrize("sentence", [
    "12月线上线下销售额分别+9.4%/+17.3%，全年市占率同比提升2.7pct。",  # 'online and offline' (not in jieba)
    "连云港港口吞吐量同比增长5%。",  # a city (jieba: nr)
    "新产业营收同比增长20%，新业态加速成长。",  # 'new industries' (not in jieba)
    "坚持中国医药分开改革，药品营收同比增长20%。",  # 中国 + 医药分开
    "太平洋航线运价同比上涨30%。",  # an ocean (jieba: ns)
    "鄂尔多斯项目营收同比增长30%。",  # a city (jieba: ns)
])
def test_a_place_or_phrase_is_no_company_without_its_code_or_full_name(table, sentence):
    assert sentence_subject(sentence, None, table=table, broker=None) is None
    assert listed_in(table, sentence) == ()


def test_the_code_or_full_name_makes_it_the_company(table):
    assert sentence_subject("新产业（300832）营收同比增长20%。", None, table=table, broker=None) == "新产业"
    assert sentence_subject("太平洋证券2021年营收同比增长20%。", None, table=table, broker=None) == "太平洋"
    assert listed_in(table, "江苏连云港港口股份有限公司营收增长5%。") == ("连云港",)
    assert not ordinary_name("连云港", "连云港（601008）吞吐量增长", "601008")
    # a name that is no ordinary word stays a company without its code
    assert listed_in(table, "龙净环保营收增长10%。") == ("龙净环保",)


def test_a_query_naming_a_place_as_its_company_is_wrong_subject():
    s = Subjects(frozenset({"海尔智家"}), frozenset({"家电"}), "industry")
    v = check_subject("线上线下2021年市占率同比提升了多少？", s)
    assert v is not None and v.reason == "wrong_subject" and "线上线下" in v.detail
    assert check_subject("连云港港口2021年吞吐量是多少？", s).reason == "wrong_subject"
    # as the report's own company (its title) it is the subject
    assert check_subject("连云港2021年吞吐量是多少？", Subjects(frozenset({"连云港"}))) is None
