"""Query completion: vague subjects, periods, original kept, hierarchy."""
from __future__ import annotations

import pytest

from fincprg.finance.reporting_period import dominant_year
from fincprg.generate.complete import (
    add_period,
    complete_query,
    has_vague_subject,
    hierarchy,
    replace_vague_subjects,
)
from fincprg.records import Query

CO = "星河科技"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("公司毛利率下降的原因是什么？", "星河科技毛利率下降的原因是什么？"),
        ("该公司2023年营收是多少？", "星河科技2023年营收是多少？"),
        ("本公司的研发投入有多少？", "星河科技的研发投入有多少？"),
        ("标的公司估值如何？", "星河科技估值如何？"),
        ("其净利润为何下滑？", "星河科技净利润为何下滑？"),
        ("如何看待公司上半年的订单？", "如何看待星河科技上半年的订单？"),
        ("星河科技公司研发投入多少？", "星河科技研发投入多少？"),
        # words that contain 公司 are not subjects
        ("2023年公司的子公司有几家？", "2023年星河科技的子公司有几家？"),
        ("上市公司和控股公司有什么区别？", "上市公司和控股公司有什么区别？"),
        ("多家公司的毛利率如何？", "多家公司的毛利率如何？"),
        ("公司债发行利率是多少？", "公司债发行利率是多少？"),
        ("其中AI芯片收入多少？", "其中AI芯片收入多少？"),
    ],
)
def test_replace_vague_subjects(query, expected):
    assert replace_vague_subjects(query, CO) == expected


def test_no_company_no_change():
    assert complete_query("公司毛利率下降的原因是什么？", company=None) == "公司毛利率下降的原因是什么？"


@pytest.mark.parametrize(
    ("query", "vague"),
    [("公司毛利率是多少？", True), ("该公司营收？", True), ("其营收如何？", True), ("星河科技营收？", False),
     ("子公司数量？", False), ("上市公司的估值？", False), ("公司债利率？", False)],
)
def test_has_vague_subject(query, vague):
    assert has_vague_subject(query) is vague


def test_dominant_year():
    assert dominant_year("2023年营收增长，2023年毛利率提升，较2022年的水平") == 2023
    assert dominant_year("2022年和2023年") is None
    assert dominant_year("预计2024E营收") is None  # forecasts are not the report's period
    assert dominant_year("上半年营收增长") is None


def test_add_period():
    assert add_period("星河科技毛利率是多少？", 2023, CO) == "星河科技2023年毛利率是多少？"
    assert add_period("星河科技上半年毛利率是多少？", 2023, CO) == "星河科技2023年上半年毛利率是多少？"
    assert add_period("星河科技2022年毛利率是多少？", 2023, CO) == "星河科技2022年毛利率是多少？"
    assert add_period("预计星河科技净利润是多少？", 2023, CO) == "预计星河科技净利润是多少？"
    assert add_period("毛利率是多少？", None) == "毛利率是多少？"


def test_complete_query_subject_and_period():
    passage = "2023年公司实现营业收入52.18亿元。2023年毛利率为43.6%。"
    assert complete_query("公司毛利率是多少？", company=CO, passage_text=passage) == "星河科技2023年毛利率是多少？"
    # a title naming another year means the passage year is not the report's period
    assert complete_query("公司毛利率是多少？", company=CO, passage_text=passage,
                          title="星河科技（688321）：2024年一季度点评") == "星河科技毛利率是多少？"


def test_hierarchy_nests_report_passages_sentences():
    qs = [
        Query(id="qs:r1#p10#s1", level="sentence", text="b", source_ids=("r1#p10",), parent_id="qp:r1#p10",
              report_id="r1", provenance={"sentence_id": "r1#p10#s1"}),
        Query(id="qp:r1#p10", level="passage", text="P10", source_ids=("r1#p10",), report_id="r1"),
        Query(id="qp:r1#p9", level="passage", text="P9", source_ids=("r1#p9",), report_id="r1"),
        Query(id="qs:r1#p10#s0", level="sentence", text="a", source_ids=("r1#p10",), parent_id="qp:r1#p10",
              report_id="r1", provenance={"sentence_id": "r1#p10#s0"}),
        Query(id="qi:t1:0", level="intent", text="x", source_ids=("t1",)),
    ]
    h = hierarchy(qs)
    assert list(h) == ["r1"]
    ps = h["r1"]["passages"]
    assert [p["passage_id"] for p in ps] == ["r1#p9", "r1#p10"]
    assert ps[1]["query"]["text"] == "P10"
    assert [s["query"]["text"] for s in ps[1]["sentences"]] == ["a", "b"]
