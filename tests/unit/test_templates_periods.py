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
