"""LLM fault injection (tests/llm_faults.py) and what the pipeline makes of it (issue 12, cases 2-3).

With 30 % of requests faulted (429 with Retry-After, 500, timeouts, truncated, non-JSON and misaligned
answers), a build loses no passage once `--retry-failed` has run, and no cut-off query is exported."""
from __future__ import annotations

import json

from fincprg.config import load_config
from fincprg.pipeline.runner import run_pipeline
from tests.llm_faults import FAULT_KINDS, FaultInjector


def _queries(out) -> list[dict]:
    return [json.loads(x) for x in (out / "generate" / "queries.jsonl").read_text("utf-8").splitlines()]


def test_injector_is_reproducible_and_heals():
    req = {"messages": [{"role": "user", "content": "x"}]}
    a = FaultInjector(rate=0.5, seed=3)
    b = FaultInjector(rate=0.5, seed=3)
    draws = [a.draw(req) for _ in range(20)]
    assert draws == [b.draw(req) for _ in range(20)]  # same seed, same attempts -> same faults
    assert {d for d in draws} - {None} and None in draws
    healing = FaultInjector(rate=1.0, seed=0, heal_after=2)
    assert [healing.draw(req) is None for _ in range(4)] == [False, False, True, True]
    assert sum(healing.counts.values()) == 4 and healing.counts["ok"] == 2


def test_every_kind_of_fault_is_survived_and_retry_failed_loses_nothing(tmp_path, llm_server, sample_corpus):
    faults = FaultInjector(rate=0.3, kinds=FAULT_KINDS, seed=1, timeout_s=1.0, heal_after=1)
    llm_server.set_responder(faults)
    # no re-ask, so every answer-level fault shows as a failure of its own kind
    cfg = load_config(overrides=["generate.backend=llm", "generate.reask=0", f"llm.base_url={llm_server.base_url}",
                                 "llm.max_retries=2", "llm.timeout=0.3", "llm.api_key_env=FINCPRG_NO_KEY"])
    out = tmp_path / "out"
    [*_, first] = run_pipeline(sample_corpus, out, cfg, upto="generate", show_progress=False)
    assert set(faults.counts) >= {"ok", *FAULT_KINDS}  # every kind was injected
    assert first.counts["retryable_failures"] > 0 and first.counts["llm"]["retries"] > 0
    # truncated and misaligned answers are kept in part (never the cut query); non-JSON ones fail
    assert set(first.counts["failures"]) == {"truncated", "misaligned", "bad_json"}
    assert all(q["text"].endswith(("？", "的问题")) for q in _queries(out))
    [*_, again] = run_pipeline(sample_corpus, out, cfg, upto="generate", show_progress=False, retry_failed=True)
    c = again.counts
    assert again.status == "retried" and c["retryable_failures"] == 0
    assert c["retried"] == c["recovered"] == first.counts["retryable_failures"]
    assert (out / "generate" / "failures.jsonl").read_text() == ""  # 0 passages lost
    queries = _queries(out)
    assert len({q["source_ids"][0] for q in queries if q["level"] == "passage"}) == c["passages"]
    # the server's queries end in "？" or "的问题": a cut-off one (60 % of an answer) would not
    assert all(q["text"].endswith(("？", "的问题")) for q in queries)
