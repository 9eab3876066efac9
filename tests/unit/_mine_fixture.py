"""Hand-built fixture shared by the mine tests: 4 reports, 2 industry subtrees, 3 topic nodes."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from fincprg.records import Passage, Qrel, Query, Sentence, Topic


@dataclass(frozen=True)
class P:  # Period stand-in with the fincprg.finance field names
    year: int | None = None
    part: str | None = None
    forecast: bool = False


@dataclass(frozen=True)
class N:  # Number stand-in
    value: float
    unit: str | None = None
    raw: str = ""


@dataclass(frozen=True)
class Facts:
    companies: frozenset = frozenset()
    codes: frozenset = frozenset()
    periods: frozenset = frozenset()
    metrics: frozenset = frozenset()
    numbers: tuple = ()
    directions: frozenset = field(default_factory=frozenset)


_COMPANIES = ("贵州茅台", "五粮液", "宁德时代")
_METRICS = ("营业收入", "净利润", "毛利率")


def stub_extract(text: str, company: str | None = None) -> Facts:
    """Tiny regex extractor with the FinanceFacts shape (the mine tests must not depend on jieba)."""
    periods = set()
    for y, e in re.findall(r"(20\d\d)(E?)年?", text):
        part = None
        for p in ("Q1", "Q2", "Q3", "Q4", "H1"):
            if p in text:
                part = p
        periods.add(P(int(y), part, bool(e)))
    nums = tuple(N(float(v), u) for v, u in re.findall(r"(\d+(?:\.\d+)?)(亿元|万元|%)", text))
    return Facts(
        companies=frozenset(c for c in _COMPANIES if c in text),
        codes=frozenset(re.findall(r"\b(\d{6})\b", text)),
        periods=frozenset(periods),
        metrics=frozenset(m for m in _METRICS if m in text),
        numbers=nums,
    )


# report -> passages -> number of sentences
LAYOUT = {"R1": [2, 1, 3], "R2": [2], "R3": [1, 1], "R4": [1]}
SUBTREE = {"R1": "h1", "R2": "h1", "R3": "h2"}  # R4 has no assignment


def build() -> dict:
    passages, sentences, queries, qrels = [], [], [], []
    for rid, sizes in LAYOUT.items():
        for pi, ns in enumerate(sizes):
            pid = f"{rid}#p{pi}"
            stext = [f"{rid}第{pi}段第{si}句的内容" for si in range(ns)]
            passages.append(Passage(id=pid, report_id=rid, order=pi, text="".join(stext)))
            pq = f"qp:{pid}"
            queries.append(Query(id=pq, level="passage", text=f"{rid}段{pi}的主要内容是什么",
                                 source_ids=(pid,), report_id=rid))
            qrels.append(Qrel(query_id=pq, passage_id=pid))
            for si, t in enumerate(stext):
                sid = f"{pid}#s{si}"
                sentences.append(Sentence(id=sid, passage_id=pid, order=si, text=t))
                queries.append(Query(id=f"qs:{sid}", level="sentence", text=f"问题{sid}", source_ids=(pid,),
                                     parent_id=pq, report_id=rid, provenance={"sentence_id": sid}))
                qrels.append(Qrel(query_id=f"qs:{sid}", passage_id=pid))
    nodes = [
        Topic(id="h1", children=("t0", "t2"), title_ids=("R1", "R2"), size=2),
        Topic(id="t0", parent_id="h1", title_ids=("R1",), size=1, is_leaf=True),
        Topic(id="t2", parent_id="h1", title_ids=("R2",), size=1, is_leaf=True),
        Topic(id="t1", title_ids=("R3",), size=1, is_leaf=True),
    ]
    topic_queries = [
        Query(id="qi:t0:0", level="intent", text="意图t0", source_ids=("t0",)),
        Query(id="qt:t0:0:0", level="topic", text="子问题t0a", source_ids=("t0",), parent_id="qi:t0:0"),
        Query(id="qt:t0:0:1", level="topic", text="子问题t0b", source_ids=("t0",), parent_id="qi:t0:0"),
        Query(id="qi:h1:0", level="intent", text="意图h1", source_ids=("h1",)),
        Query(id="qt:h1:0:0", level="topic", text="子问题h1a", source_ids=("h1",), parent_id="qi:h1:0"),
    ]
    return {"passages": passages, "sentences": sentences, "queries": queries, "qrels": qrels,
            "nodes": {n.id: n for n in nodes}, "topic_queries": topic_queries}
