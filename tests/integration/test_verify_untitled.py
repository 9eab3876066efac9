"""A corpus of untitled report bodies builds end to end, and verify lets no fragment subject through:
every kept sentence/passage query names a listed company its source names (found through the stock table)."""
from __future__ import annotations

import json

from fincprg import layout as L
from fincprg.config import load_config
from fincprg.pipeline.runner import run_pipeline

TABLE = "ts_code,symbol,name,industry\n300750.SZ,300750,宁德时代,电气设备\n600519.SH,600519,贵州茅台,白酒\n" \
        "000858.SZ,000858,五粮液,白酒\n002594.SZ,002594,比亚迪,汽车整车\n"
BODIES = [
    "宁德时代2023年实现营业收入4009亿元，同比增长22%。宁德时代动力电池出货量321GWh，同比增长25%。"
    "受下游储能需求拉动，宁德时代储能电池出货量69GWh，同比增长46%。代理销售收入占比较低。",
    "2023年上半年贵州茅台实现营业收入707亿元，同比增长20.8%，归母净利润359亿元，同比增长20.8%。"
    "茅台酒销售收入593亿元，同比增长17.2%。系列酒收入增长明显，贵州茅台直销渠道占比提升。",
    "比亚迪2023年新能源汽车销量302万辆，同比增长62%。比亚迪海外销量24万辆，出口增长显著。"
    "钢基材料价格回落，单车成本下降，比亚迪毛利率提升至20.2%。",
    "行业需求回暖，终端库存回落至健康水平。原材料价格下降，行业毛利率有望修复。渠道调研显示订单环比改善。",
]


def test_untitled_bodies_build_and_keep_no_fragment_subject(tmp_path):
    corpus = tmp_path / "bodies.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": f"b{i}", "text": t}, ensure_ascii=False)
                                for i, t in enumerate(BODIES)), encoding="utf-8")
    table = tmp_path / "stocks.csv"
    table.write_text(TABLE, encoding="utf-8")
    cfg = load_config(overrides=[f"finance.stock_table={table}", "topics.viz=none", "chunk.min_passage_chars=10"])
    out = tmp_path / "out"
    outcomes = {o.name: o for o in run_pipeline(corpus, out, cfg, show_progress=False)}
    build = L.Build(out)
    assert build.manifest(L.EXPORT) is not None  # built end to end
    counts = outcomes["verify"].counts
    assert counts["report_subjects"]["body"] == 3  # the three bodies that name a listed company
    assert counts["passages_without_subject"] == 1  # the body that names none
    names = ("宁德时代", "贵州茅台", "五粮液", "比亚迪")
    generated = [q for q in build.queries(L.GENERATE)]
    kept = {q.id: q for q in build.queries(L.VERIFY) if q.level in ("sentence", "passage")}
    assert generated, "the generator wrote no query for the bodies"
    for q in generated:  # the invariant: a query naming no listed company of its source is never kept
        if not any(n in q.text for n in names):
            assert q.id not in kept, q.text
    assert not any(q.report_id == "b3" for q in kept.values())
    reasons = {d["query_id"]: d["reason"] for d in build.dropped()}
    assert all(reasons[q.id] == "no_subject" for q in generated if q.report_id == "b3")
    fragments = [q for q in generated if q.text.startswith(("钢基材料", "代理销售", "受下游"))]
    assert all(reasons[q.id] == "fragment_subject" for q in fragments)


# what an LLM writes for the same bodies: sentence key -> query (fragments and subject-less ones on purpose)
GOOD = "宁德时代2023年营业收入是多少？"  # the passage query of b0: the listed company its body names, kept
LLM_QUERIES = {
    "受下游储能需求": "受下游储能2023年出货量增长了多少？",  # fragment cut from the sentence
    "钢基材料": "钢基材料价格回落对毛利率有何影响？",  # fragment: a material, not a company
    "行业需求回暖": "行业需求回暖的原因是什么？",  # a body that names no company: no subject
}


def _llm_answer(request: dict) -> str:
    user = request["messages"][-1]["content"]
    sentences, _ = json.JSONDecoder().raw_decode(user[user.index('["'):])
    queries = [next((q for k, q in LLM_QUERIES.items() if k in s), "") for s in sentences]
    good = GOOD if any("4009亿元" in s for s in sentences) else ""
    return json.dumps({"passage_query": good, "sentence_queries": queries}, ensure_ascii=False)


def test_untitled_llm_queries_with_fragment_or_no_subject_are_dropped(tmp_path, llm_server, monkeypatch):
    corpus = tmp_path / "bodies.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": f"b{i}", "text": t}, ensure_ascii=False)
                                for i, t in enumerate(BODIES)), encoding="utf-8")
    table = tmp_path / "stocks.csv"
    table.write_text(TABLE, encoding="utf-8")
    llm_server.set_responder(_llm_answer)
    monkeypatch.setenv("FINCPRG_TEST_KEY", "sk-test")
    cfg = load_config(overrides=[f"finance.stock_table={table}", "topics.viz=none", "chunk.min_passage_chars=10",
                                 "generate.backend=llm", "generate.complete=false", "llm.max_retries=0",
                                 f"llm.base_url={llm_server.base_url}", "llm.api_key_env=FINCPRG_TEST_KEY"])
    out = tmp_path / "out"
    run_pipeline(corpus, out, cfg, show_progress=False)
    build = L.Build(out)
    kept = {q.text for q in build.queries(L.VERIFY)}
    reasons = {d["text"]: d["reason"] for d in build.dropped()}
    assert GOOD in kept, reasons
    for key in ("受下游储能需求", "钢基材料"):
        assert reasons.get(LLM_QUERIES[key]) in ("fragment_subject", "no_subject"), (key, reasons)
    assert reasons.get(LLM_QUERIES["行业需求回暖"]) == "no_subject", reasons
    assert not kept & {LLM_QUERIES[k] for k in ("受下游储能需求", "钢基材料", "行业需求回暖")}
