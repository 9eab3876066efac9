"""LLMClient against a real local OpenAI-compatible HTTP server (tests/llm_server.py); nothing is mocked."""
from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import pytest

from fincprg.config import LLMConfig
from fincprg.llm import LLMClient, price_for
from tests.llm_server import Delayed, completion_body, error_body

KEY_ENV = "FINCPRG_TEST_LLM_KEY"
SECRET = "sk-fincprg-test-4f1c9e0d7b2a-do-not-leak"


def make_cfg(srv, **kw) -> LLMConfig:
    base = dict(base_url=srv.base_url, model="test-model", api_key_env=KEY_ENV, concurrency=4,
                max_retries=3, timeout=5.0, prices={"test-model": {"input": 2.5, "output": 10.0}})
    base.update(kw)
    return LLMConfig(**base)


def msgs(i: int) -> list[dict]:
    return [{"role": "system", "content": "只输出 JSON"}, {"role": "user", "content": f"问题 {i}"}]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)


def test_request_shape_and_json_mode(llm_server, tmp_path):
    client = LLMClient(make_cfg(llm_server), tmp_path)
    [res] = client.chat_many([msgs(0)], progress=False)
    assert res.ok and json.loads(res.text) == {"echo": "问题 0"}
    req = llm_server.requests[0]
    assert req["model"] == "test-model"
    assert req["response_format"] == {"type": "json_object"}
    assert req["messages"] == msgs(0)
    assert llm_server.headers[0]["authorization"] == f"Bearer {SECRET}"  # the env var's key is used


def test_concurrency_limit_holds(llm_server, tmp_path):
    llm_server.latency = 0.1
    client = LLMClient(make_cfg(llm_server, concurrency=4), tmp_path)
    t0 = time.perf_counter()
    out = client.chat_many([msgs(i) for i in range(24)], progress=False)
    elapsed = time.perf_counter() - t0
    assert all(r.ok for r in out)
    assert [json.loads(r.text)["echo"] for r in out] == [f"问题 {i}" for i in range(24)]  # order kept
    assert llm_server.max_in_flight == 4  # never above the limit, and the limit is actually used
    assert elapsed >= 24 / 4 * 0.1 * 0.9


def test_retry_429_honours_retry_after(llm_server, tmp_path):
    calls = []

    def responder(req):
        calls.append(time.perf_counter())
        if len(calls) == 1:
            return 429, error_body("rate limited", type_="rate_limit_error"), {"Retry-After": "1"}
        return "{}"

    llm_server.set_responder(responder)
    client = LLMClient(make_cfg(llm_server), tmp_path)
    [res] = client.chat_many([msgs(0)], progress=False)
    assert res.ok and res.text == "{}"
    assert len(calls) == 2
    assert calls[1] - calls[0] >= 0.95  # waited as told, not the 0.5 s default backoff
    assert client.stats["retries"] == 1 and client.stats["failures"] == 0


def test_retry_500_then_success(llm_server, tmp_path):
    n = {"calls": 0}

    def responder(req):
        n["calls"] += 1
        if n["calls"] <= 2:
            return 500, error_body("boom", type_="server_error"), {"retry-after-ms": "10"}
        return '{"ok": true}'

    llm_server.set_responder(responder)
    client = LLMClient(make_cfg(llm_server), tmp_path)
    [res] = client.chat_many([msgs(0)], progress=False)
    assert res.ok and json.loads(res.text) == {"ok": True}
    assert n["calls"] == 3
    assert client.stats["retries"] == 2 and client.stats["requests"] == 1


def test_retry_on_timeout_then_success(llm_server, tmp_path):
    n = {"calls": 0}

    def responder(req):
        n["calls"] += 1
        return Delayed(2.0, '{"late": true}') if n["calls"] == 1 else '{"late": false}'

    llm_server.set_responder(responder)
    client = LLMClient(make_cfg(llm_server, timeout=0.3), tmp_path)
    t0 = time.perf_counter()
    [res] = client.chat_many([msgs(0)], progress=False)
    assert res.ok and json.loads(res.text) == {"late": False}
    assert n["calls"] == 2 and client.stats["retries"] == 1
    assert time.perf_counter() - t0 < 2.0  # it did not wait for the hung request


def test_retries_exhausted_is_an_error_not_an_exception(llm_server, tmp_path):
    llm_server.set_responder(lambda req: (503, error_body("overloaded"), {"retry-after-ms": "5"}))
    client = LLMClient(make_cfg(llm_server, max_retries=2), tmp_path)
    out = client.chat_many([msgs(0), msgs(1)], progress=False)
    assert all(not r.ok and "503" in r.error for r in out)
    assert len(llm_server.requests) == 6
    s = client.stats
    assert s["failures"] == 2 and s["retries"] == 4 and s["requests"] == 2


def test_client_errors_are_not_retried(llm_server, tmp_path):
    # (401/403 stop the whole batch instead: tests/unit/test_llm_hardening.py)
    llm_server.set_responder(lambda req: (422, error_body("bad input"), {}))
    client = LLMClient(make_cfg(llm_server), tmp_path)
    [res] = client.chat_many([msgs(0)], progress=False)
    assert res.error.startswith("UnprocessableEntityError (HTTP 422)")
    assert len(llm_server.requests) == 1 and client.stats["retries"] == 0


def test_json_mode_rejected_falls_back_once(llm_server, tmp_path):
    def responder(req):
        if "response_format" in req:
            return 400, error_body("response_format is not supported by this model", param="response_format"), {}
        return '{"fine": 1}'

    llm_server.set_responder(responder)
    client = LLMClient(make_cfg(llm_server, concurrency=1), tmp_path)
    out = client.chat_many([msgs(i) for i in range(3)], progress=False)
    assert all(r.ok for r in out)
    with_rf = [r for r in llm_server.requests if "response_format" in r]
    assert len(with_rf) == 1 and len(llm_server.requests) == 4  # rejected once, then remembered
    assert client.stats["json_mode_fallbacks"] == 1


def test_rerun_hits_cache_with_zero_requests(llm_server, tmp_path):
    batch = [msgs(i) for i in range(10)]
    first = LLMClient(make_cfg(llm_server), tmp_path).chat_many(batch, progress=False)
    assert len(llm_server.requests) == 10 and not any(r.cached for r in first)
    llm_server.reset()
    again = LLMClient(make_cfg(llm_server), tmp_path)  # a fresh process would do the same
    second = again.chat_many(batch, progress=False)
    assert llm_server.requests == []
    assert [r.text for r in second] == [r.text for r in first] and all(r.cached for r in second)
    assert again.stats["requests"] == 0 and again.stats["cache_hits"] == 10
    # different parameters are a different key
    other = LLMClient(make_cfg(llm_server, temperature=0.7), tmp_path)
    other.chat_many(batch[:2], progress=False)
    assert len(llm_server.requests) == 2


def test_failures_are_not_cached(llm_server, tmp_path):
    llm_server.set_responder(lambda req: (400, error_body("nope"), {}))
    LLMClient(make_cfg(llm_server), tmp_path).chat_many([msgs(0)], progress=False)
    llm_server.set_responder(None)
    [res] = LLMClient(make_cfg(llm_server), tmp_path).chat_many([msgs(0)], progress=False)
    assert res.ok and not res.cached and len(llm_server.requests) == 2


def test_usage_summed_and_cost(llm_server, tmp_path):
    llm_server.set_responder(lambda req: completion_body('{"a": 1}', req, prompt_tokens=100, completion_tokens=20))
    client = LLMClient(make_cfg(llm_server), tmp_path)
    out = client.chat_many([msgs(i) for i in range(5)], progress=False)
    assert out[0].usage == {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    s = client.stats
    assert (s["prompt_tokens"], s["completion_tokens"], s["total_tokens"]) == (500, 100, 600)
    assert s["cost_usd"] == pytest.approx((500 * 2.5 + 100 * 10.0) / 1e6)
    assert s["priced"] is True


def test_price_lookup_prefix():
    prices = {"gpt-4o": {"input": 2.5, "output": 10.0}, "gpt-4o-mini": {"input": 0.15, "output": 0.6}}
    assert price_for("gpt-4o-mini-2024-07-18", prices)["input"] == 0.15
    assert price_for("gpt-4o-2024-08-06", prices)["input"] == 2.5
    assert price_for("qwen2.5-72b", prices) is None


def test_api_key_never_written(llm_server, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    out_dir = tmp_path / "OUT"
    client = LLMClient(make_cfg(llm_server), out_dir / ".cache")
    llm_server.set_responder(lambda req: (500, error_body("x"), {"retry-after-ms": "1"})
                             if len(llm_server.requests) == 1 else '{"q": 1}')
    out = client.chat_many([msgs(i) for i in range(3)], progress=False)
    assert all(r.ok for r in out)
    (out_dir / "stats.json").write_text(json.dumps(client.stats))
    client.close()
    files = [p for p in out_dir.rglob("*") if p.is_file()]
    assert any(p.name.startswith("responses.sqlite3") for p in files)
    for p in files:
        assert SECRET.encode() not in p.read_bytes(), p
    assert SECRET not in caplog.text
    assert SECRET not in repr(out) and SECRET not in json.dumps(client.stats)


def test_missing_key_uses_placeholder(llm_server, tmp_path, monkeypatch, caplog):
    monkeypatch.delenv(KEY_ENV)
    client = LLMClient(make_cfg(llm_server, api_key_env="FINCPRG_UNSET_KEY_ENV"), tmp_path)
    with caplog.at_level(logging.WARNING):
        [res] = client.chat_many([msgs(0)], progress=False)
    assert res.ok and llm_server.headers[0]["authorization"] == "Bearer EMPTY"
    assert "FINCPRG_UNSET_KEY_ENV" in caplog.text


def test_chat_many_inside_running_loop_and_achat(llm_server, tmp_path):
    client = LLMClient(make_cfg(llm_server), tmp_path)

    async def main():
        direct = await client.achat(msgs(1))
        await client.aclose()
        return client.chat_many([msgs(2)], progress=False), direct

    many, direct = asyncio.run(main())
    assert direct.ok and many[0].ok and len(llm_server.requests) == 2


def test_cache_disabled(llm_server, tmp_path: Path):
    cfg = make_cfg(llm_server, cache=False)
    LLMClient(cfg, tmp_path).chat_many([msgs(0)], progress=False)
    LLMClient(cfg, tmp_path).chat_many([msgs(0)], progress=False)
    assert len(llm_server.requests) == 2 and not (tmp_path / "llm").exists()


def test_refused_answers_are_not_cached_and_stale_entries_are_asked_again(llm_server, tmp_path):
    # an answer the caller's validation refuses is returned but never cached ...
    llm_server.set_responder(lambda req: '{"bad": 1}')
    refuse_bad = lambda i, res: "bad" not in res.text  # noqa: E731
    [res] = LLMClient(make_cfg(llm_server), tmp_path).chat_many([msgs(0)], progress=False, accept=refuse_bad)
    assert res.ok and res.text == '{"bad": 1}'
    again = LLMClient(make_cfg(llm_server), tmp_path)
    again.chat_many([msgs(0)], progress=False, accept=refuse_bad)
    assert len(llm_server.requests) == 2 and again.stats["rejected"] == 1 and again.stats["cache_hits"] == 0
    # ... and an entry cached without validation (an older fincprg) is not replayed as a success
    LLMClient(make_cfg(llm_server), tmp_path).chat_many([msgs(1)], progress=False)  # cached: no accept
    llm_server.set_responder(lambda req: '{"good": 1}')
    fixed = LLMClient(make_cfg(llm_server), tmp_path)
    [res] = fixed.chat_many([msgs(1)], progress=False, accept=refuse_bad)
    assert res.text == '{"good": 1}' and not res.cached and fixed.stats["stale_cache"] == 1
    [res] = LLMClient(make_cfg(llm_server), tmp_path).chat_many([msgs(1)], progress=False, accept=refuse_bad)
    assert res.cached and res.text == '{"good": 1}'  # the accepted answer replaced the stale one


def test_answers_cut_off_at_max_tokens_are_not_cached(llm_server, tmp_path):
    llm_server.set_responder(lambda req: completion_body('{"a": "cut', req, finish_reason="length"))
    for _ in range(2):
        [res] = LLMClient(make_cfg(llm_server), tmp_path).chat_many([msgs(0)], progress=False)
        assert res.ok and res.finish_reason == "length" and not res.cached
    assert len(llm_server.requests) == 2


def test_a_raising_validator_refuses_the_answer(llm_server, tmp_path):
    def boom(i, res):
        raise KeyError("validator bug")

    client = LLMClient(make_cfg(llm_server), tmp_path)
    out = client.chat_many([msgs(0), msgs(1)], progress=False, accept=boom)
    assert all(r.ok for r in out) and client.stats["rejected"] == 2 and len(client.cache) == 0
