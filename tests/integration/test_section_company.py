"""An industry report names a company atop its section and writes 公司 of it after: a later passage's 公司 is that
company, for the generator and for verify alike (issue 48: full-length industry reports)."""
from __future__ import annotations

import json

import pytest

from fincprg.config import load_config
from fincprg.pipeline.runner import run_pipeline

FIRST = ("龙净环保（600388）：环保设备龙头，订单饱满。公司深耕电除尘、袋式除尘与脱硫脱硝业务多年，技术积累深厚。"
         "公司在火电、钢铁、水泥等行业拥有大量客户，大型项目的交付经验丰富。公司积极拓展储能与新能源业务，"
         "与多家电池企业建立合作关系。公司研发投入持续加大，在低温除尘、超低排放改造领域形成多项专利。"
         "公司海外业务稳步推进，在东南亚、中东等地区承接多个项目。公司管理层稳定，治理结构完善。"
         "公司经营性现金流充裕，资产负债结构合理，为新业务拓展提供支撑。公司在手项目覆盖多个省份，"
         "交付节奏平稳，客户结构持续优化。非电行业的超低排放改造需求提升，为公司打开新的成长空间。"
         "公司积极参与行业标准制定，品牌影响力不断增强。")
LATER = ("2021年前三季度公司实现营业收入82.37亿元，同比增长18.25%；归母净利润6.12亿元，同比增长12.40%。"
         "2021年前三季度公司综合毛利率为23.5%，同比下降1.8个百分点，主要由于钢材等原材料价格上涨。")


# a section is headed by the name with its code, or by the name opening a paragraph after a list marker
@pytest.mark.parametrize("first", [FIRST, "行业观点：环保景气上行。\n1）" + FIRST.replace("（600388）", "")],
                         ids=["coded", "paragraph"])
def test_a_later_passage_asks_the_company_its_section_names(tmp_path, first):
    corpus = tmp_path / "reports.jsonl"
    corpus.write_text(json.dumps({"id": "r1", "title": "环保行业深度报告：景气上行", "date": "2021-11-20",
                                  "report_type": "industry", "text": first + "\n" + LATER}, ensure_ascii=False),
                      encoding="utf-8")
    out = tmp_path / "out"
    run_pipeline(corpus, out, load_config(overrides=["topics.viz=none", "chunk.passage_chars=300"]), show_progress=False)
    passages = [json.loads(x) for x in (out / "chunk" / "passages.jsonl").read_text("utf-8").splitlines()]
    later = [p["id"] for p in passages if "82.37" in p["text"]]
    assert len(passages) > 1 and later and "龙净环保" not in next(p["text"] for p in passages if p["id"] == later[0])
    kept = [q for q in map(json.loads, (out / "verify" / "queries.jsonl").read_text("utf-8").splitlines())
            if later[0] in q["source_ids"] and q["level"] in ("sentence", "passage")]
    assert kept and all(q["text"].startswith("龙净环保") for q in kept), kept
