"""A 9-passage Chinese finance corpus (3 reports) with obvious queries, shared by the eval tests."""
from __future__ import annotations

import json
from pathlib import Path

REPORTS = {
    "r1": ("贵州茅台（600519）：高端白酒龙头业绩稳健", [
        "贵州茅台2023年实现营业收入1505亿元，同比增长18%，归母净利润747亿元，同比增长19%。",
        "公司直销渠道占比持续提升，i茅台数字营销平台全年实现酒类不含税收入222亿元。",
        "我们预计公司2024年至2026年每股收益分别为68元、79元、91元，维持买入评级。",
    ]),
    "r2": ("宁德时代（300750）：动力电池全球份额继续领先", [
        "宁德时代动力电池装机量全球市占率达到37%，连续七年位居全球第一。",
        "储能电池出货量快速增长，海外储能订单饱满，储能业务毛利率约为22%。",
        "钠离子电池与麒麟电池量产推进，新技术有望打开公司第二增长曲线。",
    ]),
    "r3": ("招商银行（600036）：零售银行护城河稳固", [
        "招商银行2023年净息差为2.15%，较上年下降25个基点，存款成本保持行业较低水平。",
        "资产质量保持稳健，不良贷款率0.95%，拨备覆盖率437%，风险抵补能力充足。",
        "零售客户总资产AUM突破13万亿元，财富管理手续费收入承压下滑。",
    ]),
}

QUERIES = {
    "q1": ("贵州茅台2023年营业收入同比增长多少？", "r1#p0"),
    "q2": ("i茅台数字营销平台收入", "r1#p1"),
    "q3": ("宁德时代动力电池装机量全球市占率", "r2#p0"),
    "q4": ("宁德时代储能业务毛利率是多少？", "r2#p1"),
    "q5": ("招商银行净息差下降多少个基点", "r3#p0"),
    "q6": ("招商银行不良贷款率和拨备覆盖率", "r3#p1"),
}


def corpus() -> dict[str, dict]:
    return {f"{r}#p{i}": {"title": title, "text": text, "report_id": r}
            for r, (title, texts) in REPORTS.items() for i, text in enumerate(texts)}


def queries() -> dict[str, str]:
    return {q: t for q, (t, _) in QUERIES.items()}


def qrels() -> dict[str, dict[str, int]]:
    return {q: {d: 1} for q, (_, d) in QUERIES.items()}


def query_meta() -> dict[str, dict]:
    return {q: {"report_id": d.split("#")[0]} for q, (_, d) in QUERIES.items()}


def write_beir(folder: Path, *, fincprg_layout: bool = True) -> Path:
    """Write the fixture as a BEIR folder: qrels/{all,sentence}-test.tsv, or plain qrels/test.tsv."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for d, doc in corpus().items():
            f.write(json.dumps({"_id": d, **doc}, ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for q, (t, d) in QUERIES.items():
            f.write(json.dumps({"_id": q, "text": t, "report_id": d.split("#")[0]}, ensure_ascii=False) + "\n")

    def tsv(name: str, qids: list[str]) -> None:
        rows = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{QUERIES[q][1]}\t1" for q in qids]
        (folder / "qrels" / name).write_text("\n".join(rows) + "\n", encoding="utf-8")

    if fincprg_layout:
        tsv("all-test.tsv", list(QUERIES))
        tsv("sentence-test.tsv", ["q1", "q4", "q5"])
    else:
        tsv("test.tsv", list(QUERIES))
    return folder
