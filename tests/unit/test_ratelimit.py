"""The client-side rate limit: evenly spaced reservations for requests and tokens per minute."""
from __future__ import annotations

import asyncio
import time

from fincprg.config import load_config
from fincprg.llm import LLMClient
from fincprg.llm.ratelimit import RateLimiter, make_limiter


def test_requests_per_minute_spaces_requests_evenly():
    lim = RateLimiter(rpm=120, tpm=None)  # one request per 0.5 s
    waits = [lim.reserve(10, now=100.0) for _ in range(4)]
    assert waits == [0.0, 0.5, 1.0, 1.5]
    assert lim.reserve(10, now=103.0) == 0.0  # idle time is not banked into a burst
    assert lim.reserve(10, now=103.0) == 0.5


def test_tokens_per_minute_counts_the_request_size():
    lim = RateLimiter(rpm=None, tpm=600)  # 10 tokens per second
    assert lim.reserve(50, now=0.0) == 0.0
    assert lim.reserve(50, now=0.0) == 5.0  # the first request's 50 tokens take 5 s of the budget
    assert lim.reserve(10_000, now=0.0) == 10.0  # larger than a minute's tokens: still sent, alone
    assert lim.reserve(1, now=0.0) == 70.0


def test_no_limit_configured_means_no_limiter():
    assert make_limiter(None, None) is None


def test_client_paces_real_requests(tmp_path, llm_server):
    cfg = load_config(overrides=[f"llm.base_url={llm_server.base_url}", "llm.model=m", "llm.concurrency=8",
                                 "llm.requests_per_minute=600", "llm.cache=false"]).llm
    client = LLMClient(cfg, tmp_path)
    msgs = [[{"role": "user", "content": f"问题{i}"}] for i in range(6)]
    t0 = time.perf_counter()
    out = asyncio.run(client.achat_many(msgs, progress=False))
    assert all(r.ok for r in out)
    assert time.perf_counter() - t0 >= 5 * 0.1 - 0.02  # 6 requests at 10/s: 5 gaps, despite concurrency 8
