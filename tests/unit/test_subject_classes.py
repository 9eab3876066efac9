"""Issue 48's subject classes, each as a class: an industry term or a company cut from inside a longer word, a
company's segment read as an industry, and a listed short name that is a place or an ordinary phrase."""
from __future__ import annotations

import pytest

from fincprg.finance.ordinary import ordinary_name
from fincprg.finance.stocks import stock_table
from fincprg.generate.industry import industry_term, sentence_subject
from fincprg.verify.sources import listed_in
from fincprg.verify.reading import Subjects
from fincprg.verify.subject import check_segment, check_subject


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
    # ... or a registered name that ends on the short name: a subsidiary with its place before the listed name
    assert listed_in(table, "安徽宣城海螺水泥有限公司以1.22亿元成交价中标采矿权。") == ()
    assert listed_in(table, "海螺水泥分公司中标采矿权。") == ()
    # the listed company's own full name (a 股份有限公司), or the name with a partner after it, is the company
    assert listed_in(table, "比亚迪股份有限公司营收同比增长20%。") == ("比亚迪",)
    assert listed_in(table, "比亚迪与华为技术有限公司签署合作协议。") == ("比亚迪",)


# --- 2. a company's segment read as an industry ------------------------------------------------------------------

_SEGMENT_PASSAGE = "公司聚烯烃板块受景气上行带动盈利提升。焦炭板块2021Q1实现焦炭销量103万吨，同比减少0.4万吨，均价同比上涨652元/吨。"


def test_a_segment_in_a_passage_on_a_company_is_no_industry_subject(table):
    s = "焦炭板块2021Q1实现焦炭销量103万吨，同比减少0.4万吨，均价同比上涨652元/吨。"
    assert sentence_subject(s, None, table=table, broker=None) is None  # the passage writes 公司 (the default)
    # in a passage on the industry alone it is the industry's
    assert sentence_subject(s, None, table=table, broker=None, industry_passage=True) == "焦炭板块"
    # the stock market's sector moves as a whole, whatever the passage names
    assert sentence_subject("本周白酒板块上涨3%，跑赢沪深300。", None, table=table, broker=None) == "白酒板块"
    # 行业 is the industry's, in any passage
    assert sentence_subject("2021年白酒行业收入同比增长12%。", None, table=table, broker=None) == "白酒行业"


def test_a_query_asking_a_segment_as_an_industry_or_a_company_figure_of_it_is_wrong_subject():
    s = Subjects(frozenset({"华能国际"}), frozenset({"焦炭", "火电"}), "industry")
    listed = lambda t: ["华能国际"] if "华能国际" in t else []  # noqa: E731
    v = check_segment("焦炭板块2021年一季度焦炭销量同比下降了多少？", _SEGMENT_PASSAGE, s, listed)
    assert v is not None and v.reason == "wrong_subject" and "焦炭板块" in v.detail
    industry = "焦炭板块2021Q1焦炭销量103万吨，同比减少0.4万吨，行业库存回落。"
    assert check_segment("焦炭板块2021年一季度焦炭销量同比下降了多少？", industry, s, listed) is None
    sector = "本周白酒板块上涨3%，贵州茅台上涨5%。"
    assert check_segment("白酒板块本周涨幅是多少？", sector, s, listed) is None
    # the whole company's figure asked of its segment; the segment's own revenue is fine
    v = check_segment("华能国际2021年火电板块归母净利润是多少？", "华能国际火电板块2021年营收1000亿元。", s, listed)
    assert v is not None and v.reason == "wrong_subject" and "归母" in v.detail
    assert check_segment("华能国际2021年火电板块营收是多少？", "华能国际火电板块2021年营收1000亿元。", s, listed) is None
    assert check_segment("华能国际2021年主营业务收入是多少？", "公司主营业务收入1000亿元。", s, listed) is None
    # a market sector's valuation is no company's figure
    assert check_segment("食品饮料板块PE为多少？", "食品饮料板块PE为35倍，公司估值低于板块。", s, listed) is None


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


def test_a_securities_firm_rating_another_company_is_not_the_subject(table):
    # 「兴业证券2021年EPS的预测值」 was asked of the broker that revised 东方盛虹's forecast
    s = "7月13日讯，兴业证券7月12日将东方盛虹评级调整为审慎增持，2021年EPS预测由0.45元调整为0.41元。"
    assert sentence_subject(s, None, table=table, broker=None) == "东方盛虹"
    # the firm's own results keep it the subject
    own = "兴业证券2021年上半年营业收入26亿元，同比增长7.8%。"
    assert sentence_subject(own, None, table=table, broker=None) == "兴业证券"


def test_china_before_a_longer_word_is_no_china_prefixed_company():
    from fincprg.finance.ordinary import ordinary_name

    assert ordinary_name("中国动力", "2020年，中国动力电池装机量62.85GWh。", "600482")  # China's 动力电池
    assert not ordinary_name("中国动力", "中国动力2020年营收增长12%。", "600482")
    assert ordinary_name("中国银行", "持有中国银行卡的客户。", "601988")
    assert not ordinary_name("中国平安", "中国平安寿险业务新业务价值下降。", "601318")
    # the last character starting a common word: 「数字人民币」 is the currency, not 数字人
    assert ordinary_name("数字人", "数字人民币试点范围扩大。", "920670")
    assert not ordinary_name("平安银行", "平安银行业务结构持续优化。", "000001")
