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

More responders: :func:`auth_failure` (every request refused with 401/403, the message echoing
the API key), :class:`RejectFirstAnswer` (every first answer is prose, every re-ask is answered),
:func:`html_page` (a proxy's HTML page, with 200 or 502), :func:`status_everywhere` (500 or 429 to every
request) and :class:`EchoKeyInAnswer` (valid answers whose text carries the API key).
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from typing import Any, Callable

from tests.llm_server import Delayed, completion_body, default_responder, error_body, request_headers

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


def auth_failure(status: int = 401, *, echo_key: bool = True) -> Callable[[dict[str, Any]], Any]:
    """A responder refusing every request with ``status`` (401 bad key, 403 no permission); with
    ``echo_key`` its message quotes the key from the Authorization header verbatim, as some servers do."""
    def respond(request: dict[str, Any]) -> Any:
        auth = request_headers().get("authorization", "")
        key = auth.split(" ", 1)[1] if " " in auth else auth
        said = f"Incorrect API key provided: {key}." if echo_key else "Incorrect API key provided."
        kind = "invalid_request_error" if status == 401 else "permission_denied"
        return status, error_body(f"{said} You can find your API key in your account settings.", type_=kind), {}

    return respond


class RejectFirstAnswer:
    """A responder answering prose (not JSON) to every first question and ``inner``'s answer to a re-ask
    (a conversation that already holds an assistant turn): every passage is recovered by its re-ask."""

    def __init__(self, inner: Callable[[dict[str, Any]], Any] = default_responder) -> None:
        self.inner = inner
        self.counts: Counter[str] = Counter()

    def __call__(self, request: dict[str, Any]) -> Any:
        reask = any(m.get("role") == "assistant" for m in request.get("messages") or [])
        self.counts["reask" if reask else "rejected"] += 1
        return self.inner(request) if reask else "抱歉，我现在无法按要求输出 JSON。"


PROXY_PAGE = ("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad "
              "Gateway</h1></center><hr><center>nginx</center></body></html>\n")


def html_page(status: int = 200) -> Callable[[dict[str, Any]], Any]:
    """A responder answering every request with a proxy's HTML error page and ``status`` (200: a captive
    portal or a misrouted base_url; 502: a gateway whose upstream is down)."""
    def respond(request: dict[str, Any]) -> Any:
        return status, PROXY_PAGE, {"Content-Type": "text/html; charset=utf-8"}

    return respond


def status_everywhere(status: int = 500) -> Callable[[dict[str, Any]], Any]:
    """A responder refusing every request with ``status`` (500, 429...) and a short retry delay."""
    def respond(request: dict[str, Any]) -> Any:
        return status, error_body(f"injected HTTP {status} on every request", type_="server_error"), {
            "Retry-After": "0", "retry-after-ms": "5"}

    return respond


class EchoKeyInAnswer:
    """A responder whose valid answers carry the request's API key (and a key-shaped token) inside the
    generated queries, as a server that templates its own headers into the output might."""

    OTHER = "sk-proj-Zq81ExampleOfAKeyShape42"  # not the configured key, but shaped like one

    def __init__(self, inner: Callable[[dict[str, Any]], Any] = default_responder) -> None:
        self.inner = inner

    def __call__(self, request: dict[str, Any]) -> Any:
        auth = request_headers().get("authorization", "")
        key = auth.split(" ", 1)[1] if " " in auth else auth
        good = self.inner(request)
        if not isinstance(good, str):
            return good
        try:
            tree = json.loads(good)
        except ValueError:
            return good
        if isinstance(tree, dict) and isinstance(tree.get("passage_query"), str):
            tree["passage_query"] += f" {key} {self.OTHER}"
            return json.dumps(tree, ensure_ascii=False)
        if isinstance(tree, list):  # topic intents
            for t in tree:
                if isinstance(t, dict) and isinstance(t.get("intent"), str):
                    t["intent"] += f" {key}"
            return json.dumps(tree, ensure_ascii=False)
        return good
