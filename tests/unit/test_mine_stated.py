"""Identical questions are equivalent only when both sources STATE the asked fact (source_unstated),
months are parts of the year (source_period), and a partial answer is no answer."""
from __future__ import annotations

import pytest

from fincprg.finance import extract
from fincprg.finance.compare import month_parts, source_conflict
from fincprg.finance.stated import asked_kinds, states_event, states_metric
from fincprg.mine.veto import veto_reason


def reason(q: str, a: str, b: str) -> str | None:
    f = extract(q)
    return veto_reason(f, f, text_a=q, text_b=q, source_a=a, source_b=b)


DIV_Q = "云杉电气2021年的分红方案是什么？"
DIV_STATED = "公司2021年度利润分配预案为：以总股本2亿股为基数，向全体股东每10股派发现金红利1.5元（含税）。"


@pytest.mark.parametrize("other", [
    # a commitment, a condition, a penalty clause, a policy and a shareholder table name the word only
    "控股股东承诺，自2021年起每年现金分红不低于当年可分配利润的10%。",
    "若公司2021年实现盈利，则每10股派发现金红利不低于1元。",
    "如违反上述承诺，违规减持所得及应分得的现金分红归公司所有，金额为5000万元。",
    "公司的利润分配政策为：每年以现金方式分配的利润不少于当年可分配利润的20%。",
    "股东名称 持股比例 持股数量 王某 12.50% 25,000,000股 分红",
    "公司重视对投资者的回报，将按照相关规定实施分红。",  # no specifics either
])
def test_event_question_needs_the_event_stated_in_both_sources(other):
    assert reason(DIV_Q, DIV_STATED, other) == "source_unstated"
    assert reason(DIV_Q, other, DIV_STATED) == "source_unstated"


def test_event_stated_in_both_sources_passes():
    again = "2021年度分红方案：每10股派发现金红利1.5元，共计派发3000万元。"
    assert reason(DIV_Q, DIV_STATED, again) is None
    assert states_event(DIV_STATED, DIV_Q, frozenset({2021}))


def test_another_years_plan_does_not_answer():
    old = "公司2019年度利润分配方案为每10股派发现金红利1元，已于2020年6月实施完毕。"
    assert not states_event(old, DIV_Q, frozenset({2021}))
    assert reason(DIV_Q, DIV_STATED, old) in {"source_unstated", "source_period"}


@pytest.mark.parametrize(("q", "stated", "unstated", "stated_too"), [
    # buyback progress needs figures
    ("云杉电气回购进展如何？", "截至3月31日，公司累计回购股份120万股，支付总金额1800万元。",
     "公司董事会审议通过了回购方案，回购资金来源为自有资金。", "公司于5月12日完成回购，共回购股份300万股。"),
    # a metric question needs a figure in both sources
    ("云杉电气2021年营业收入是多少？", "2021年，公司实现营业收入8.6亿元，同比增长12%。",
     "2021年公司营业收入保持稳健，客户结构持续优化。", "2021年公司营业收入8.6亿元，规模创历史新高。"),
])
def test_the_asked_fact_needs_its_figures_in_both_sources(q, stated, unstated, stated_too):
    assert reason(q, stated, unstated) == reason(q, unstated, stated) == "source_unstated"
    assert reason(q, stated, stated_too) is None


def test_open_question_is_judged_by_its_subject_words():
    q = "云杉电气的主营业务是什么？"
    assert reason(q, "公司主营业务为输配电设备。", "公司主营业务包括电力电缆附件。") is None
    # the subject is matched literally: a paraphrase (主要从事) does not name it (a known over-veto)
    assert reason(q, "公司主营业务为输配电设备。", "公司主要从事电力电缆附件的研发。") == "source_unstated"


def test_commitment_figures_are_not_stated():
    q = "云杉电气2021年净利润是多少？"
    stated = "2021年公司实现净利润1.2亿元。"
    promise = "业绩承诺方承诺2021年净利润不低于1.5亿元。"
    assert not states_metric(promise, "净利润", q)
    assert reason(q, stated, promise) in {"source_unstated", "source_numbers"}


@pytest.mark.parametrize(("question", "kinds"), [
    ("2021年营业收入是多少？", {"value"}),
    ("2021年营业收入同比增长多少？", {"growth"}),
    ("2021年海外收入占营业收入的比重是多少？", {"share"}),
    ("2021年营业收入表现如何？", {"any"}),
])
def test_asked_kinds(question, kinds):
    assert asked_kinds(question) == kinds


def test_the_asked_figure_kind_must_be_stated():
    amount_q = "云杉电气2021年营业收入是多少？"
    growth_only = "2021年公司营业收入同比增长12%。"
    amount = "2021年公司营业收入8.6亿元，同比增长12%。"
    assert not states_metric(growth_only, "营业收入", amount_q)
    assert reason(amount_q, amount, growth_only) == "source_unstated"
    growth_q = "云杉电气2021年营业收入同比增长多少？"
    assert reason(growth_q, amount, growth_only) is None
    # 表现如何 takes any figure
    assert states_metric(growth_only, "营业收入", "云杉电气2021年营业收入表现如何？")


def test_segment_figures_do_not_give_the_total():
    q = "云杉电气2021年营业收入是多少？"
    total = "2021年公司实现营业收入8.6亿元。"
    segment = "2021年公司线上渠道营业收入3.1亿元。"
    assert not states_metric(segment, "营业收入", q)
    assert reason(q, total, segment) in {"source_unstated", "source_numbers"}
    # a question that names the segment is answered by the segment's clause
    assert states_metric(segment, "营业收入", "云杉电气2021年线上渠道营业收入是多少？")


@pytest.mark.parametrize(("text", "parts"), [
    ("2021年1-4月销售额", [(2021, "M1-M4")]),
    ("4月单月销售额", [(None, "M4")]),
    ("1-6月收入", [(None, "H1")]),
    ("7~9月收入", [(None, "Q3")]),
    ("截至6月30日的存货", []),  # a date is not a period
    ("未来12个月", []),
    ("6月底在手订单", []),
])
def test_month_parts(text, parts):
    assert month_parts(text) == parts


@pytest.mark.parametrize("part_only", [
    "2021年4月，公司营业收入1.1亿元，同比增长8%。",  # one month
    "2021年1-4月，公司营业收入3.3亿元，同比增长9%。",  # months to date
    "2021年前三季度，公司营业收入6.1亿元，同比增长10%。",  # nine months
    "2021年一季度，公司营业收入1.9亿元，同比增长7%。",  # a quarter
])
def test_full_year_question_is_not_answered_by_a_part_of_the_year(part_only):
    q = "云杉电气2021年营业收入是多少？"
    full = "2021年，公司营业收入8.6亿元，同比增长12%。"
    assert reason(q, full, part_only) in {"source_period", "source_numbers"}
    # compare the periods alone (the figures differ too): the part-only source is another period
    assert source_conflict(extract(q), extract(q), part_only, part_only + " ") == "source_period"


def test_a_question_about_the_part_is_answered_by_the_part():
    q = "云杉电气2021年1-4月营业收入是多少？"
    a = "2021年1-4月，公司营业收入3.3亿元，同比增长9%。"
    assert reason(q, a, "公司2021年1-4月营业收入3.3亿元。") is None


def test_asides_titles_and_dates_do_not_state_an_amount():
    q = "云杉电气2021年回购了多少股份？"
    counted = "2021年3月，公司以集中竞价方式累计回购股份150万股，支付金额2100万元。"
    aside = "以总股本1.2亿股（不含已回购的股份150万股）为基数，每10股派发现金红利1元。"
    title = "公司于2021年6月2日披露了《关于回购结果的公告》。"
    assert states_event(counted, q, frozenset({2021}))
    assert not states_event(aside, q, frozenset({2021}))
    assert not states_event(title, q, frozenset({2021}))  # a date, but no count
    assert reason(q, counted, title) == "source_unstated"


def test_months_are_parts_for_a_quantity_question_but_dates_for_an_event():
    q = "云杉港口2021年货物吞吐量是多少？"  # no lexicon metric: the whole sources' periods
    assert reason(q, "2021年，公司完成货物吞吐量2.3亿吨。", "2021 年 6 月公司完成货物吞吐量2100万吨。") == "source_period"
    ev = "云杉电气2021年回购了多少股份？"
    assert reason(ev, "2021年3月，公司累计回购股份150万股。", "2021年，公司累计回购股份150万股。") is None


def test_open_question_needs_its_subject_outside_risk_notes_and_conditions():
    q = "云杉电气主要客户有哪些？"
    told = "公司主要客户包括国家电网、南方电网和多家省级电力公司。"
    risk = "如果公司主要客户的采购政策发生重大变化，可能对公司经营造成不利影响。"
    assert reason(q, told, risk) == "source_unstated"
    assert reason(q, told, "公司客户以电网企业为主，客户粘性较强。") is None
    # a marker that is the subject itself does not make the sentence unstating
    pq = "云杉电气受到哪些政策影响？"
    assert reason(pq, "公司受益于特高压建设政策，订单增长。", "新能源配储政策推动公司储能业务发展。") is None


def test_identical_sources_that_state_nothing_give_no_label():
    risk = "如果公司主要客户的采购政策发生重大变化，可能对公司经营造成不利影响。"
    assert reason("云杉电气主要客户有哪些？", risk, risk) == "source_unstated"
    told = "2021年，公司实现营业收入8.6亿元。"
    assert reason("云杉电气2021年营业收入是多少？", told, told) is None
