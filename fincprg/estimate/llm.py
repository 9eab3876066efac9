"""LLM requests of a build, counted before it runs: the real prompts, rendered over the chunked corpus.

Each :class:`Request` is one call the build will make (its messages are exactly what the stage sends,
so the client's cache tells which are already answered). Prompt tokens come from the
:class:`~fincprg.estimate.tokens.TokenCounter`; completion tokens from a synthetic answer of
``estimate.query_chars`` characters per query. ``--probe N`` sends the first N requests of each stage
for real (their answers are cached, so the build does not pay for them twice) and replaces the
guesses by measurements: the server's token counts correct the prompt counts, a least-squares line
over the answers gives completion tokens, the answers give the re-ask share, the empty-query share,
the share of queries a rewrite would take and the subqueries per topic, and their wall time the latency.
"""
from __future__ import annotations

import math
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fincprg.estimate.tokens import TokenCounter

REASK_EXTRA_TOKENS = 60  # the re-ask turn: the validation error and the instruction


@dataclass
class Request:
    """One LLM call the build will make."""

    stage: str  # the stage that sends it: "generate" or "topics"
    kind: str  # "tree", "rewrite", "report", "intents"
    messages: list[dict[str, Any]]
    json_mode: bool | None
    prompt_base: int  # tokens by the counter
    completion_base: float  # tokens of the synthetic answer
    n: int = 0  # sentences of the passage (tree) - the size the answer grows with
    batch: int = 0  # generate batch (requests of one batch go out together)
    weight: float = 1.0  # expected number of such calls (rewrites: the share of queries that need one)
    cached: dict[str, Any] | None = None  # the cached answer, when the cache already holds it
    item: Any = None  # what it was rendered from (the PassageInput of a tree request)


@dataclass
class Probe:
    """A request sent (or found in the cache) by ``--probe``, with what its answer showed."""

    request: Request
    prompt_tokens: int
    completion_tokens: int
    seconds: float | None  # None: answered from the cache (no latency measured)
    text: str | None


@dataclass
class Measured:
    """What the probes of one kind measured (None: not measured, the configured guess is used)."""

    factor: float | None = None  # server prompt tokens / counted prompt tokens
    completion: Callable[[Request], float] | None = None
    reask_share: float | None = None
    extra: dict[str, float] = field(default_factory=dict)  # empty_share, rewrite_share, subqueries_per_topic


# kinds whose answers no probe measured (the probes send trees and intents): their synthetic answer's tokens stand
UNFITTED = ("rewrite", "report")


def fit_completion(probes: Sequence[Probe]) -> Callable[[Request], float] | None:
    """Completion tokens as a + b * sentences (least squares; proportional when the sizes do not vary)."""
    pts = [(p.request.n, p.completion_tokens) for p in probes if p.completion_tokens]
    if not pts:
        return None
    xs, ys = [x for x, _ in pts], [y for _, y in pts]
    if len(set(xs)) >= 2:
        slope, intercept = statistics.linear_regression(xs, ys)
        if intercept >= 0 and slope >= 0:
            return lambda r: intercept + slope * r.n
    per = sum(ys) / sum(x + 1 for x in xs)
    return lambda r: per * (r.n + 1)


def probe(client: Any, requests: Sequence[Request], n: int) -> list[Probe]:
    """Send the first ``n`` requests one at a time (cached answers are reused and not timed)."""
    out = []
    for r in requests[:n]:
        t0 = time.perf_counter()
        res = client.chat_many([r.messages], json_mode=r.json_mode, desc=f"estimate: probe {r.kind}", progress=False)[0]
        secs = time.perf_counter() - t0
        if not res.ok or not res.usage:
            continue
        out.append(Probe(r, int(res.usage.get("prompt_tokens", 0)), int(res.usage.get("completion_tokens", 0)),
                         None if res.cached else secs, res.text))
    if (check := getattr(client, "check_answered", None)) is not None:
        check()  # no probe answered (an HTML page, 500s): say why, rather than estimate from the guesses silently
    return out


def measure(probes: Sequence[Probe]) -> Measured:
    """Token correction and completion model from the probes' server-reported usage."""
    if not probes:
        return Measured()
    base = sum(p.request.prompt_base for p in probes)
    return Measured(factor=sum(p.prompt_tokens for p in probes) / base if base else None,
                    completion=fit_completion(probes))


def mark_cached(client: Any, requests: Sequence[Request]) -> None:
    """Attach the cached answer to every request the cache already holds."""
    if client.cache is None:
        return
    for r in requests:
        r.cached = client.cache.get(client.cache_key_for(r.messages, json_mode=r.json_mode))


def account(requests: Sequence[Request], m: Measured, *, reask_share: float, price: dict[str, float] | None,
            concurrency: int, latency: float) -> dict[str, Any]:
    """Requests, tokens, cost and wall time of one stage's requests (all of them, and those still to send)."""
    tot = {"requests": 0.0, "cached": 0, "to_send": 0.0, "prompt_tokens": 0.0, "completion_tokens": 0.0,
           "to_send_prompt_tokens": 0.0, "to_send_completion_tokens": 0.0}
    per_round: dict[tuple[int, str], float] = defaultdict(float)  # (batch, kind) -> requests to send
    for r in requests:
        usage = (r.cached or {}).get("usage") or {}
        if r.cached is not None and usage:
            pt, ct, send = float(usage.get("prompt_tokens", 0)), float(usage.get("completion_tokens", 0)), 0.0
            tot["cached"] += 1
        else:
            pt = r.prompt_base * (m.factor or 1.0)
            ct = m.completion(r) if m.completion is not None and r.kind not in UNFITTED else r.completion_base
            send = r.weight
        # re-asks: the conversation so far plus the error, answered again
        share = reask_share if r.kind != "rewrite" else 0.0
        calls = r.weight * (1 + share)
        p_all = r.weight * (pt + share * (pt + ct + REASK_EXTRA_TOKENS))
        c_all = calls * ct
        tot["requests"] += calls
        tot["prompt_tokens"] += p_all
        tot["completion_tokens"] += c_all
        if send:
            tot["to_send"] += calls
            tot["to_send_prompt_tokens"] += p_all
            tot["to_send_completion_tokens"] += c_all
            per_round[(r.batch, r.kind)] += r.weight
    wall = sum((math.ceil(k / concurrency) + (math.ceil(k * reask_share / concurrency) if kind != "rewrite" else 0))
               * latency for (_, kind), k in per_round.items() if k)
    out: dict[str, Any] = {k: (round(v) if isinstance(v, float) else v) for k, v in tot.items()}
    out["wall_s"] = round(wall, 1)
    if price is not None:
        cost = lambda p, c: round((p * price.get("input", 0.0) + c * price.get("output", 0.0)) / 1e6, 4)  # noqa: E731
        out["cost_usd"] = cost(tot["prompt_tokens"], tot["completion_tokens"])
        out["to_send_cost_usd"] = cost(tot["to_send_prompt_tokens"], tot["to_send_completion_tokens"])
    return out


def counter_for(cfg: Any) -> TokenCounter:
    return TokenCounter(cfg.estimate.tokenizer, cfg.estimate.chars_per_token)
