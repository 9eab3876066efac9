"""generate.rewrite: queries that copy their passage are rewritten by the LLM, and a rewrite that loses a
number, period or company is refused."""
from __future__ import annotations

import json
import re

from fincprg.config import load_config
from fincprg.finance.easiness import overlap
from fincprg.pipeline.runner import run_pipeline

REPORT = {"id": "r1", "title": "星河科技（688321）：2023年营收稳健增长", "company": "星河科技", "date": "2024-04-22",
          "text": "2023年星河科技实现营业收入52.18亿元，同比增长14.4%。2023年星河科技毛利率为43.6%，同比提升1.2个百分点。"
                  "星河科技AI芯片收入11.42亿元，同比增长86.3%。"}


def _answer(request: dict) -> str:
    user = request["messages"][-1]["content"]
    if "原查询：" in user:  # the rewrite prompt
        query = user.split("原查询：", 1)[1].splitlines()[0]
        nums = re.findall(r"\d+(?:\.\d+)?", query)
        if "毛利率" in query:
            return json.dumps({"query": "星河科技的盈利水平怎么样？"}, ensure_ascii=False)  # loses 2023, 43.6...
        return json.dumps({"query": f"星河科技{'、'.join(nums)}对应哪些经营数据？"}, ensure_ascii=False)
    sentences, _ = json.JSONDecoder().raw_decode(user[user.index('["'):])
    # a lazy generator: every query is its sentence, copied
    return json.dumps({"passage_query": sentences[0], "sentence_queries": sentences}, ensure_ascii=False)


def test_rewrite_replaces_copied_queries_and_refuses_lossy_rewrites(tmp_path, llm_server):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps(REPORT, ensure_ascii=False) + "\n", encoding="utf-8")
    llm_server.set_responder(_answer)
    cfg = load_config(None, ["generate.backend=llm", "generate.report.enabled=false", f"llm.base_url={llm_server.base_url}", "llm.max_retries=0",
                             "generate.rewrite.enabled=true", "generate.complete=false", "chunk.sentence_chars=30"])
    out = tmp_path / "out"
    counts = run_pipeline(corpus, out, cfg, upto="generate", show_progress=False)[-1].counts
    queries = [json.loads(x) for x in (out / "generate" / "queries.jsonl").read_text("utf-8").splitlines()]
    passage = json.loads((out / "chunk" / "passages.jsonl").read_text("utf-8").splitlines()[0])["text"]
    kept = [q for q in queries if q["provenance"].get("rewrite") == "kept"]
    refused = [q for q in queries if q["provenance"].get("rewrite") == "rejected_facts"]
    assert kept and refused and counts["rewrite"]["kept"] == len(kept)
    assert counts["rewrite"]["rejected_facts"] == len(refused)
    for q in kept:
        assert q["text"] != q["provenance"]["rewritten_from"]
        assert overlap(q["text"], passage) < overlap(q["provenance"]["rewritten_from"], passage)
        assert q["provenance"]["rewrite_template"] == "query_rewrite.zh"
    for q in refused:
        assert "毛利率" in q["text"] and "rewritten_from" not in q["provenance"]  # the original stays
    rewrites = [r for r in llm_server.requests if "原查询" in r["messages"][-1]["content"]]
    assert len(rewrites) == len(kept) + len(refused)  # one request per copied query

    llm_server.reset()  # a re-run of the stage answers everything from the cache
    run_pipeline(corpus, out, cfg, upto="generate", force=True, show_progress=False)
    assert not llm_server.requests


def test_rewrite_needs_the_llm_backend():
    import pytest

    from fincprg.errors import ConfigError

    with pytest.raises(ConfigError, match="generate.rewrite.enabled needs generate.backend: llm"):
        load_config(None, ["generate.rewrite.enabled=true"])
