"""The generate stage with backend=llm against the suite's local OpenAI-compatible server."""
from __future__ import annotations

import json

from fincprg.config import load_config
from fincprg.pipeline.runner import run_pipeline

REPORTS = [
    {"id": "r1", "title": "星河科技（688321）：2023年营收稳健增长", "company": "星河科技", "date": "2024-04-22",
     "text": "2023年公司实现营业收入52.18亿元，同比增长14.4%。2023年公司毛利率为43.6%，同比提升1.2个百分点。"
             "公司AI芯片收入11.42亿元，同比增长86.3%。\n\n公司研发费用达到9.85亿元，同比增长22.7%。"},
    {"id": "r2", "title": "恒芯存储（688517）：存储价格回升", "company": "恒芯存储", "date": "2023-10-30",
     "text": "2023年前三季度公司实现营业收入28.63亿元，同比下降18.9%。公司三季度存储芯片出货量环比增长约22%。"},
]


def _answer(request: dict) -> str:
    if "恒芯" in json.dumps(request, ensure_ascii=False):
        return "not json at all"  # -> re-ask, then a bad_json failure record
    user = request["messages"][-1]["content"]
    sentences, _ = json.JSONDecoder().raw_decode(user[user.index('["'):])  # the prompt's JSON list
    n = len(sentences)
    return json.dumps({"passage_query": "公司的经营情况如何？",
                       "sentence_queries": ["公司营收是多少？"] + [""] * (n - 1)}, ensure_ascii=False)


def test_llm_backend_writes_queries_failures_and_usage(tmp_path, llm_server, monkeypatch):
    corpus = tmp_path / "reports.jsonl"
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in REPORTS), encoding="utf-8")
    llm_server.set_responder(_answer)
    monkeypatch.setenv("FINCPRG_TEST_KEY", "sk-secret-123")
    cfg = load_config(overrides=["generate.backend=llm", f"llm.base_url={llm_server.base_url}",
                                 "llm.model=gpt-4o", "llm.api_key_env=FINCPRG_TEST_KEY", "llm.max_retries=0"])
    out = tmp_path / "out"
    outcomes = run_pipeline(corpus, out, cfg, upto="generate", show_progress=False)
    counts = outcomes[-1].counts
    queries = [json.loads(line) for line in (out / "generate" / "queries.jsonl").read_text("utf-8").splitlines()]
    failures = [json.loads(line) for line in (out / "generate" / "failures.jsonl").read_text("utf-8").splitlines()]
    assert queries and all(q["report_id"] == "r1" for q in queries)
    assert all(q["provenance"]["generator"] == "llm" for q in queries)
    # completion replaced the vague subject and kept the original
    assert all(not q["text"].startswith("公司") for q in queries)
    assert any(q["provenance"].get("original", "").startswith("公司") for q in queries)
    assert failures and {f["kind"] for f in failures} == {"bad_json"} and failures[0]["raw"]
    assert counts["failures"] == {"bad_json": len(failures)}
    assert counts["empty_sentence_queries"] > 0
    assert counts["llm"]["requests"] >= 2 and counts["llm"]["total_tokens"] > 0 and counts["llm"]["cost_usd"] > 0
    for p in out.rglob("*"):
        if p.is_file():
            assert b"sk-secret-123" not in p.read_bytes()
