"""LLM fault injection for tests and ``eval/bench_faults.py``: a responder wrapper for tests/llm_server.py.

``FaultInjector(rate=0.3)`` answers a share ``rate`` of requests with one fault, drawn from
:data:`FAULT_KINDS`:

* ``429``: rate limited, with ``Retry-After`` (and ``retry-after-ms`` so runs stay quick);
* ``500``: a server error;
* ``timeout``: the answer comes after ``timeout_s`` seconds (set ``llm.timeout`` below it);
* ``truncated``: the valid answer cut at 60 % of its length, ``finish_reason="length"``;
* ``not_json``: a polite refusal in prose;
* ``misaligned``: the valid answer with its last sentence query dropped (query-tree prompts only;
  other prompts get ``not_json``).

The draw is a hash of (seed, request messages, how many times these messages were asked before), so
a run is reproducible whatever the request order, and ``heal_after=k`` makes a request fault at most
``k`` times (transient faults: a retry, a re-ask or ``--retry-failed`` then succeeds). ``counts``
says how many of each were injected. From the command line::

    python -m tests.llm_server --faults 0.3 --fault-seed 0 --heal-after 1
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from typing import Any, Callable

from tests.llm_server import Delayed, completion_body, default_responder, error_body

FAULT_KINDS = ("429", "500", "timeout", "truncated", "not_json", "misaligned")


class FaultInjector:
    """A responder that wraps ``inner`` (default: the server's valid answers) with injected faults."""

    def __init__(self, inner: Callable[[dict[str, Any]], Any] = default_responder, *, rate: float = 0.3,
                 kinds: tuple[str, ...] = FAULT_KINDS, seed: int = 0, timeout_s: float = 2.0,
                 heal_after: int | None = None) -> None:
        unknown = set(kinds) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; choose from {FAULT_KINDS}")
        self.inner, self.rate, self.kinds, self.seed = inner, rate, tuple(kinds), seed
        self.timeout_s, self.heal_after = timeout_s, heal_after
        self.counts: Counter[str] = Counter()
        self._asked: Counter[str] = Counter()
        self._lock = threading.Lock()

    def draw(self, request: dict[str, Any]) -> str | None:
        """The fault for this request (None = answer normally); counts the attempt."""
        key = json.dumps(request.get("messages"), ensure_ascii=False, sort_keys=True)
        with self._lock:
            attempt = self._asked[key]
            self._asked[key] += 1
            h = hashlib.sha256(f"{self.seed}:{attempt}:{key}".encode()).digest()
            healed = self.heal_after is not None and attempt >= self.heal_after
            kind = None
            if not healed and int.from_bytes(h[:4], "big") / 2**32 < self.rate:
                kind = self.kinds[int.from_bytes(h[4:8], "big") % len(self.kinds)]
            self.counts[kind or "ok"] += 1
        return kind

    def __call__(self, request: dict[str, Any]) -> Any:
        kind = self.draw(request)
        if kind is None:
            return self.inner(request)
        if kind == "429":
            return 429, error_body("rate limited (injected)", type_="rate_limit_error"), {
                "Retry-After": "1", "retry-after-ms": "50"}
        if kind == "500":
            return 500, error_body("injected server error", type_="server_error"), {"retry-after-ms": "20"}
        if kind == "timeout":
            return Delayed(self.timeout_s, self.inner(request))
        good = self.inner(request)
        text = good if isinstance(good, str) else None
        if kind == "truncated" and text:
            return completion_body(text[: max(1, int(len(text) * 0.6))], request, finish_reason="length")
        if kind == "misaligned" and text:
            try:
                tree = json.loads(text)
            except ValueError:
                tree = None
            if isinstance(tree, dict) and isinstance(tree.get("sentence_queries"), list):
                tree["sentence_queries"] = tree["sentence_queries"][:-1]
                return json.dumps(tree, ensure_ascii=False)
        return "抱歉，我现在无法按要求输出 JSON。"
