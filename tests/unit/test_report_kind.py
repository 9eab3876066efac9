"""Issue 48: a report's kind and broker read from its title, masthead, first lines and legal text
(fincprg.finance.reportkind), and what ingest does with them."""
from __future__ import annotations

import pytest

from fincprg.finance.reportkind import (
    broker_of,
    is_masthead,
    kind_in,
    report_broker,
    report_kind,
    same_broker,
    title_kind,
)


@pytest.mark.parametrize("title, kind", [
    ("电子行业周报（2020-07）：费用改善助力净利率提升", "industry"),
    ("化工行业专题报告：安全环保综合优势突出", "industry"),
    ("食品饮料行业动态报告：持续提升产品品质", "industry"),
    ("汽车行业周报：关注策略会纪要", "industry"),  # the kind before the colon decides
    ("策略周报：整体业绩基本符合预期", "strategy"),
    ("2024年A股策略展望：估值处于底部区间", "strategy"),
    ("晨会纪要", "strategy"),
    ("利率债周报：降准落地", "bond"),  # 利率债 is longer than 周报
    ("宏观点评：社融超预期", "macro"),
    ("上汽集团（600104）首次覆盖报告：龙头地位料将再度巩固", "company"),
    ("大连热电（600719）：持续提升公司行业竞争力", "company"),  # a code in the title: a company report
    ("某某报告", None),
])
def test_the_title_says_the_kind(title, kind):
    assert title_kind(title) == kind


@pytest.mark.parametrize("line, yes", [
    ("证券研究报告｜首次覆盖报告", True), ("证券研究报告·行业周报·电子", True), ("行业深度报告　2020-05-19", True),
    ("启明证券｜行业周报", True), ("策略周报　2021-01-02", True),
    ("计算机行业周报", False),  # no separator, no date: may be a title
    ("电子行业周报：费用改善", False), ("上汽集团（600104）首次覆盖报告：龙头", False),
    ("事件：上汽集团发布6月产销快报，6月产量为46.5万辆", False),
])
def test_a_masthead_is_told_from_a_title(line, yes):
    assert is_masthead(line) is yes


def test_the_kind_comes_from_the_title_then_the_masthead_then_the_first_lines_then_the_metadata():
    assert report_kind("电子行业周报：景气向上") == ("industry", "title")
    assert report_kind("景气向上", masthead="证券研究报告｜策略周报") == ("strategy", "masthead")
    assert report_kind("", text="证券研究报告·行业周报·电子\n本周电子板块上涨3%。") == ("industry", "text")
    assert report_kind("", text="本周电子板块上涨3%。\n行业周报是…", company="星河科技") == ("company", "metadata")
    assert report_kind("", text="本周电子板块上涨3%。") == (None, "none")
    assert kind_in(None) is None


def test_the_broker_is_the_name_the_legal_text_and_header_give_most():
    text = ("营收同比增长20%，中信证券2022年营收下降。\n西南证券·行业周报 请务必阅读正文后免责条款 4/6\n"
            "本报告由西南证券研究所发布。西南证券股份有限公司具备证券投资咨询业务资格。")
    assert report_broker(text) == "西南证券"  # 中信证券 is named in the body, not as the writer
    assert report_broker("营收同比增长20%。") is None
    assert report_broker("", masthead="启明证券｜行业周报") == "启明证券"
    assert broker_of({"broker": "华辰证券"}) == "华辰证券" and broker_of({"机构": " 东岳证券 "}) == "东岳证券"
    assert broker_of({}) is None and broker_of(None) is None


def test_a_broker_is_matched_by_its_listed_name_not_by_a_namesake():
    assert same_broker("中国银河", "中国银河证券") and same_broker("中国银河", "银河证券")
    assert same_broker("西南证券", "西南证券股份有限公司")
    assert not same_broker("兴业银行", "兴业证券") and not same_broker("西南证券", None)


def test_a_text_file_with_a_masthead_takes_its_title_from_the_next_line(tmp_path):
    from fincprg.ingest.readers import ReadStats, read_text_file

    f = tmp_path / "r1.txt"
    f.write_text("证券研究报告｜行业周报\n电子行业周报：费用改善助力净利率提升\n本周电子板块上涨3%。\n", encoding="utf-8")
    (raw,) = list(read_text_file(f, ReadStats()))
    assert raw.fields["title"] == "电子行业周报：费用改善助力净利率提升"
    assert raw.fields["masthead"] == "证券研究报告｜行业周报" and raw.fields["text"] == "本周电子板块上涨3%。"
    # a first line that is no masthead stays the title; a masthead followed by body text too
    g = tmp_path / "r2.txt"
    g.write_text("证券研究报告｜行业周报\n本周电子板块上涨3%，费用改善。\n", encoding="utf-8")
    (raw,) = list(read_text_file(g, ReadStats()))
    assert raw.fields["title"] == "证券研究报告｜行业周报" and "masthead" not in raw.fields


def test_ingest_fills_the_type_and_broker_a_record_does_not_give():
    from fincprg.config import IngestConfig
    from fincprg.ingest.mapping import FieldMapper, to_report
    from fincprg.ingest.readers import Raw

    cfg, mapper = IngestConfig(), FieldMapper({})
    r = to_report(Raw("f:1", {"title": "电子行业周报：景气向上", "text": "本报告由华辰证券研究所发布。华辰证券具备资格。"}),
                  cfg, mapper)
    assert r.report_type == "industry" and r.meta["report_type_from"] == "title" and r.meta["broker"] == "华辰证券"
    # a given type and broker are kept as they are
    r = to_report(Raw("f:2", {"title": "电子行业周报：景气向上", "text": "华辰证券研究所", "type": "公司研究",
                              "broker": "东岳证券"}), cfg, mapper)
    assert r.report_type == "company" and "report_type_from" not in r.meta and r.meta["broker"] == "东岳证券"


def test_report_broker_leaves_out_the_words_before_the_name():
    # 「根据西南证券研究所」: a lazy 「…证券」 match starting at 根 named the broker 根据西南证券
    assert report_broker("数据来源：根据西南证券研究所整理。") == "西南证券"
    assert report_broker("本报告由据华辰证券研究所发布") == "华辰证券"


def test_broker_acting_is_a_broker_rating_another_company():
    from fincprg.finance.reportkind import broker_acting

    assert broker_acting("7月13日讯，兴业证券7月12日将东方盛虹评级调整为审慎增持", "兴业证券")
    assert broker_acting("中信证券给予宁德时代目标价500元", "中信证券")
    # the firm's own results, and a rating word in a later clause, leave it a company
    assert not broker_acting("兴业证券2021年上半年营业收入26亿元，同比增长7.8%", "兴业证券")
    assert not broker_acting("国海证券上半年营业收入26.38亿元，经纪业务评级提升", "国海证券")
    assert not broker_acting("兴业银行给予授信额度评级", "兴业银行")  # not a securities firm
