"""--max-requests stops a build cleanly (exit code 3) and a re-run without it finishes the same dataset,
sending no request twice (the answers of the stopped run come from the cache)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from fincprg.cli import app

FILES = ("queries.jsonl", "qrels.jsonl", "failures.jsonl", "hierarchy.json")


def _args(corpus: Path, out: Path, url: str, *extra: str) -> list[str]:
    return ["build", str(corpus), "-o", str(out), "-q", "--upto", "generate", "--limit", "6",
            "--set", "generate.backend=llm", "--set", f"llm.base_url={url}", "--set", "llm.max_retries=0",
            "--set", "generate.batch_size=4", "--set", "llm.concurrency=2", *extra]


def _sent(server) -> list[str]:
    return [json.dumps(r["messages"], ensure_ascii=False, sort_keys=True) for r in server.requests]


def test_max_requests_stops_cleanly_and_resumes_without_repeating_a_request(tmp_path, llm_server, sample_corpus):
    out, ref = tmp_path / "out", tmp_path / "ref"
    runner = CliRunner()
    stopped = runner.invoke(app, _args(sample_corpus, out, llm_server.base_url, "--max-requests", "5"))
    assert stopped.exit_code == 3, stopped.output
    assert "stopped" in stopped.output and "--max-requests 5 reached" in stopped.output
    assert "LLM budget: 5 of 5 requests sent" in stopped.output
    first = _sent(llm_server)
    assert len(first) == 5  # the limit holds: the 6th request was never sent
    assert not (out / "generate" / "manifest.json").exists()
    progress = json.loads((out / "generate" / "_progress.json").read_text("utf-8"))
    assert progress["batches_done"] == 1  # batch 1 (4 passages) committed; batch 2 was stopped
    assert (out / "chunk" / "manifest.json").exists()  # finished stages are kept

    llm_server.reset()
    resumed = runner.invoke(app, _args(sample_corpus, out, llm_server.base_url))
    assert resumed.exit_code == 0, resumed.output
    second = _sent(llm_server)
    assert not set(first) & set(second), "a request answered before the stop was sent again"

    llm_server.reset()
    clean = runner.invoke(app, _args(sample_corpus, ref, llm_server.base_url))
    assert clean.exit_code == 0, clean.output
    assert sorted(first + second) == sorted(_sent(llm_server))  # exactly the requests of a build that never stopped
    for name in FILES:
        assert (out / "generate" / name).read_bytes() == (ref / "generate" / name).read_bytes(), name


def test_max_cost_needs_a_price(tmp_path, llm_server, sample_corpus):
    res = CliRunner().invoke(app, _args(sample_corpus, tmp_path / "o", llm_server.base_url, "--max-cost", "0.01",
                                        "--set", "llm.model=unpriced-model"))
    assert res.exit_code == 2 and "llm.prices" in res.output
    assert not llm_server.requests


def test_max_cost_stops_before_the_limit_is_passed(tmp_path, llm_server, sample_corpus):
    # gpt-4o prices (2.5 / 10 USD per 1M tokens); one request of the sample costs about 0.003 USD
    res = CliRunner().invoke(app, _args(sample_corpus, tmp_path / "o", llm_server.base_url, "--max-cost", "0.02"))
    assert res.exit_code == 3, res.output
    assert "--max-cost 0.02 USD reached" in res.output
    spent = re.search(r"requests sent, ([0-9.]+) of 0.02 USD spent", res.output)
    assert spent and 0 < float(spent.group(1)) <= 0.02
    assert 0 < len(llm_server.requests) < 12  # some were sent, not all
