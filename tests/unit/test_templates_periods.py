"""A question writes its period once (no 「2023年四季度2023Q4」)."""
from __future__ import annotations

import re

import pytest

from fincprg.generate.templates import TemplateGenerator

_DOUBLE = re.compile(r"(?i)\d{2,4}年[^，？]{0,6}?(?:\d{2,4}(?:q\d|h\d|e)|[1-4]q\d\d)")


@pytest.mark.parametrize("sentence", [
    "康宁生物2023Q2实现营业收入12.5亿元，同比增长23.4%。",
    "星河科技2023Q4归母净利润3.2亿元，同比增长15%，AI芯片放量。",
    "云岭酒业2024H1毛利率为65.3%，同比提升1.2个百分点。",
])
def test_sentence_query_writes_the_period_once(sentence):
    company = sentence[:4]
    for key in ("a", "b", "c", "d"):
        q = TemplateGenerator().sentence_query(sentence, company, key=key)
        assert q and not _DOUBLE.search(q), q


def test_passage_query_writes_the_period_once():
    text = ("星河科技2023Q4实现营业收入45.6亿元，同比增长18%。2023Q4归母净利润6.1亿元，同比增长21%。"
            "AI芯片出货量快速提升，2023Q4数据中心需求旺盛。公司2023Q4毛利率为41%。")
    for key in ("a", "b", "c"):
        q = TemplateGenerator().passage_query(text, "星河科技", key=key)
        assert q and not _DOUBLE.search(q) and "2023年四季度" in q, q


def test_a_comparison_base_is_not_the_period_of_the_figure_beside_it():
    # the ratio of a 2021 first-quarter review is not of 2019's first quarter, which it is only compared with
    s = "一季度年化信用风险成本约1.67%，同比下降10bps，与2019年一季度持平。期末拨备覆盖率为438.9%，较年初提升1.2个百分点。"
    for key in ("a", "b", "c", "d"):
        q = TemplateGenerator().sentence_query(s, "星河银行", key=key)
        assert "2019" not in q, q
    from fincprg.finance.reporting_period import without_base_periods as blank

    assert "2019" not in blank("2021Q1营收较2019年同期增长26%，客流恢复至2019年水平")
    assert "2021" in blank("2021Q1营收较2019年同期增长26%") and "2020" not in blank("需求同比2020年上升16%")
    assert "19" not in blank("收益较19年仍下滑12.7%")
    assert blank("2020年公司与华为合作") == "2020年公司与华为合作"  # 与 a partner, not a base
