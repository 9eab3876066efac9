"""`fincprg estimate` against the local LLM server: within 10% of the requests and tokens the following
build sends, and exactly the mining pairs it traverses when verify keeps every query."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.estimate.compare import comparison
from fincprg.estimate.tokens import TokenCounter

LLM = ["--set", "generate.backend=llm", "--set", "topics.intents.backend=llm", "--set", "topics.viz=none",
       "--set", "llm.max_retries=0", "--set", "generate.batch_size=8",
       # verify keeps every query: the estimate counts the traversal of all generated queries (with verify's checks
       # on it is an upper bound, since verify drops queries it cannot know of before they are generated)
       "--set", "verify.checks=[]"]


def test_estimate_is_within_10_percent_of_the_build(tmp_path, llm_server, sample_corpus):
    out = tmp_path / "out"
    runner = CliRunner()
    args = [str(sample_corpus), "-o", str(out), "-q", "--limit", "16", "--set", f"llm.base_url={llm_server.base_url}",
            *LLM]
    est = runner.invoke(app, ["estimate", *args, "--probe", "2"])
    assert est.exit_code == 0, est.output
    assert "to send" in est.output and "mining (lexical reranker)" in est.output
    estimate = json.loads((out / "estimate.json").read_text("utf-8"))
    probed = len(llm_server.requests)
    topics = min(2, estimate["topics"])
    # 2 query trees, 2 report-level requests and up to 2 topic intents, nothing else was sent
    assert topics >= 1 and probed == 2 + 2 + topics
    assert estimate["stages"]["generate"]["cached"] == 2 + 2 and estimate["stages"]["topics"]["cached"] == topics

    llm_server.reset()
    built = runner.invoke(app, ["build", *args])
    assert built.exit_code == 0, built.output
    assert "estimate (estimate.json) vs actual" in built.output
    rows = {r["stage"]: r for r in comparison(out)}
    assert set(rows) == {"generate", "topics"}
    for stage, r in rows.items():
        for field in ("requests", "prompt_tokens", "completion_tokens"):
            assert abs(r["error"][field]) <= 0.10, (stage, field, r)
    assert sum(r["actual"]["requests"] for r in rows.values()) == len(llm_server.requests)
    # the report level's requests are counted with the stage's (one per report with a claim)
    reports = sum("report_queries" in json.dumps(r, ensure_ascii=False) for r in llm_server.requests)
    assert reports > 0 and rows["generate"]["estimate"]["requests"] >= reports
    # the traversal counted without scoring is the one the mine stage scored
    mine = json.loads((out / "mine" / "manifest.json").read_text("utf-8"))["counts"]["spaces"]
    assert estimate["mine"]["pairs"] == {k: v["pairs"] for k, v in mine.items()}
    assert estimate["mine"]["pairs"]["sentence"] > 0


def test_offline_config_sends_nothing_and_still_counts_pairs(tmp_path, llm_server, sample_corpus):
    res = CliRunner().invoke(app, ["estimate", str(sample_corpus), "-q", "--limit", "8", "--json",
                                   "--set", "topics.viz=none", "--set", f"llm.base_url={llm_server.base_url}"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output[res.output.index("{"):])
    assert data["stages"] == {} and data["reports"] == 8 and data["mine"]["pairs"]["sentence"] > 0
    assert not llm_server.requests


def test_token_counter_uses_a_tokenizer_json_or_the_stated_ratio(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "营业": 1, "收入": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    counter = TokenCounter(str(tmp_path))
    assert counter.text("营业 收入 增长") == 3 and "tokenizer.json" in counter.name
    assert TokenCounter(None, 2.0).text("营业收入增长") == 3
    assert TokenCounter(None, 2.0).messages([{"role": "user", "content": "营业收入"}]) == 3 + 4 + 2
    with pytest.raises(Exception, match="estimate.tokenizer"):
        TokenCounter(str(tmp_path / "missing"))
