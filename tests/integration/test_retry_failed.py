"""`--retry-failed` (issue 12, case 2) against the suite's local OpenAI-compatible server.

Failed LLM answers are not cached; a retry run asks exactly the failed passages and topics again,
serves every other answer from the cache, and ends byte-identical to a build where nothing failed.
"""
from __future__ import annotations

import hashlib
import json

import pytest

from fincprg.config import load_config
from fincprg.pipeline.runner import STAGES, read_manifest, run_pipeline
from tests.llm_server import default_responder


def _first_user(req: dict) -> str:
    return next(m["content"] for m in req["messages"] if m["role"] == "user")


def _is_intent(req: dict) -> bool:
    return '"intent"' in _first_user(req)


def _sentences(req: dict) -> list[str]:
    user = _first_user(req)
    return json.JSONDecoder().raw_decode(user, user.index('["'))[0]


def _unlucky(req: dict) -> bool:
    """About half the passages and one of the sample's two topics fail while the server is broken."""
    if _is_intent(req):
        return "A股策略" in _first_user(req)
    return hashlib.sha1(_sentences(req)[0].encode()).digest()[0] % 2 == 0


def _faulty(state: dict):
    def responder(req: dict):
        if state["broken"] and _unlucky(req):
            return "[]" if _is_intent(req) else json.dumps({"queries": ["x"]})  # schema failures
        return default_responder(req)
    return responder


def _cfg(srv):
    return load_config(overrides=["generate.backend=llm", "topics.intents.backend=llm", f"llm.base_url={srv.base_url}",
                                  "llm.max_retries=0", "llm.api_key_env=FINCPRG_NO_KEY", "topics.viz=simple"])


def _hashes(out) -> dict[str, str]:
    return {s.name: read_manifest(out, s.name)["output_hash"] for s in STAGES}


@pytest.mark.slow
def test_retry_failed_asks_exactly_the_failures_and_matches_a_clean_build(tmp_path, llm_server, sample_corpus):
    state = {"broken": True}
    llm_server.set_responder(_faulty(state))
    cfg, out = _cfg(llm_server), tmp_path / "faulty"

    first = {o.name: o for o in run_pipeline(sample_corpus, out, cfg, show_progress=False)}
    gen, top = first["generate"].counts, first["topics"].counts
    failed = {json.loads(x)["item_id"] for x in (out / "generate" / "failures.jsonl").read_text("utf-8").splitlines()}
    assert gen["retryable_failures"] == len(failed) > 0 and gen["failures"] == {"schema": len(failed)}
    assert top["retryable_failures"] == top["intent_failures"] == 1
    assert "retried" not in gen

    # a plain re-run keeps the build as it is: nothing is sent
    llm_server.reset()
    again = run_pipeline(sample_corpus, out, cfg, show_progress=False)
    assert [o.status for o in again] == ["skipped"] * len(STAGES) and llm_server.requests == []

    # the server recovers; --retry-failed asks exactly the failed passages and topic, once each
    state["broken"] = False
    llm_server.reset()
    retried = {o.name: o for o in run_pipeline(sample_corpus, out, cfg, show_progress=False, retry_failed=True)}
    assert retried["ingest"].status == retried["chunk"].status == "skipped"
    assert retried["generate"].status == retried["topics"].status == "retried"
    asked = [r for r in llm_server.requests if not _is_intent(r)]
    assert len(asked) == len(failed) and all(_unlucky(r) and len(r["messages"]) == 2 for r in asked)
    assert len([r for r in llm_server.requests if _is_intent(r)]) == 1
    g, t = retried["generate"].counts, retried["topics"].counts
    assert (g["retried"], g["recovered"], g["retryable_failures"]) == (len(failed), len(failed), 0)
    assert (t["retried"], t["recovered"], t["retryable_failures"]) == (1, 1, 0)
    assert g["llm"]["requests"] == len(failed) and g["llm"]["cache_hits"] == g["passages"] - len(failed) + g["report_level"]["asked"]  # + reports, cached
    assert (out / "generate" / "failures.jsonl").read_text() == ""

    # byte-identical to a build on a server that never failed
    clean = tmp_path / "clean"
    run_pipeline(sample_corpus, clean, cfg, show_progress=False)
    assert _hashes(out) == _hashes(clean)
    # and a second --retry-failed has nothing left to do
    llm_server.reset()
    last = run_pipeline(sample_corpus, out, cfg, show_progress=False, retry_failed=True)
    assert {o.status for o in last} == {"skipped"} and llm_server.requests == []
