"""A real local OpenAI-compatible HTTP server for tests (pytest plugin: fixture ``llm_server``).

The server runs ``http.server.ThreadingHTTPServer`` on 127.0.0.1 (random port) in a daemon thread,
so the real ``openai`` client and its httpx transport are exercised end to end; nothing is mocked.

Usage::

    def test_x(llm_server):
        llm_server.set_responder(lambda req: '{"passage_query": "q", "sentence_queries": ["a"]}')
        cfg = LLMConfig(base_url=llm_server.base_url, model="test-model")
        ...
        assert len(llm_server.requests) == 1

A responder gets the request JSON and returns one of:

* ``str``: the assistant message content (wrapped in a full chat.completion body with ``usage``);
* ``dict``: the full response body, sent as is with status 200;
* ``tuple``: ``(status, body)`` or ``(status, body, headers)``; body is a dict (sent as JSON) or a str
  (sent as text/plain unless ``headers`` names another ``Content-Type``);
* :class:`Delayed`: ``Delayed(seconds, value)`` sleeps before answering ``value`` (use it to hang a
  request past the client timeout).

A responder that needs the request headers (e.g. to echo the API key, as some servers do in a 401
message) reads them with :func:`request_headers` (lower-case names, this request's only).

``latency`` (seconds) is added to every request; ``max_in_flight`` is the peak number of requests
being handled at the same time (use it to check a client's concurrency limit).
"""
from __future__ import annotations

import json
import re
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import pytest

Responder = Callable[[dict[str, Any]], Any]
_CURRENT = threading.local()  # the headers of the request this handler thread is answering


def request_headers() -> dict[str, str]:
    """The headers (lower-case names) of the request being answered, for a responder."""
    return dict(getattr(_CURRENT, "headers", {}))


@dataclass
class Delayed:
    """Answer ``value`` (anything a responder may return) after sleeping ``seconds``."""

    seconds: float
    value: Any


def _approx_tokens(text: str) -> int:
    # Deterministic and roughly realistic: ~1 token per CJK char, ~1 per 4 other chars.
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return max(1, cjk + (len(text) - cjk + 3) // 4)


def _messages_text(request: dict[str, Any]) -> str:
    parts = []
    for m in request.get("messages") or []:
        c = m.get("content")
        parts.append(c if isinstance(c, str) else json.dumps(c, ensure_ascii=False))
    return "\n".join(parts)


def completion_body(
    content: str,
    request: dict[str, Any] | None = None,
    *,
    finish_reason: str = "stop",
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> dict[str, Any]:
    """Build a realistic ``chat.completion`` response body for ``content``."""
    request = request or {}
    pt = _approx_tokens(_messages_text(request)) if prompt_tokens is None else prompt_tokens
    ct = _approx_tokens(content) if completion_tokens is None else completion_tokens
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "local-test-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
    }


def error_body(message: str, *, type_: str = "invalid_request_error", param: str | None = None) -> dict:
    """An OpenAI-style error body, e.g. for ``(400, error_body("..."), {})``."""
    return {"error": {"message": message, "type": type_, "param": param, "code": None}}


def _json_lists(text: str) -> list[list[str]]:
    """Every JSON list of strings embedded in ``text``, in order."""
    dec, out, i = json.JSONDecoder(), [], 0
    while i < len(text):
        if text[i] == "[":
            try:
                items, end = dec.raw_decode(text, i)
            except ValueError:
                i += 1
                continue
            if isinstance(items, list) and all(isinstance(x, str) for x in items):
                out.append(items)
            i = end
            continue
        i += 1
    return out


def default_responder(request: dict[str, Any]) -> str:
    """Answer with valid JSON.

    * topic_intent prompts (the question shows an ``"intent"`` key): a list of intents built from
      the titles, ``[{"intent", "subqueries"}]``;
    * report_query prompts (``"report_queries"``): one question about the report's subject;
    * synonymy_judge prompts (``"score"``): ``{"score": 3, "reason": ...}``;
    * a user message holding a JSON list of strings (the hierarchical query prompt's input): an
      aligned query tree ``{"passage_query", "sentence_queries"}``;
    * otherwise the last user message echoed as ``{"echo": ...}``.
    """
    msgs = request.get("messages") or []
    users = [m.get("content") or "" for m in msgs if m.get("role") == "user"]
    users = [u if isinstance(u, str) else json.dumps(u, ensure_ascii=False) for u in users]
    last = users[-1] if users else ""
    first = users[0] if users else ""
    if '"intent"' in first:  # prompts/topic_intent.*: intents with sub-queries from the titles
        lists = _json_lists(first)
        titles = lists[-1] if lists else ["主题"]
        return json.dumps([{"intent": f"了解{t[:12]}", "subqueries": [f"{t[:12]}的情况如何？"]}
                           for t in titles[:2]], ensure_ascii=False)
    if '"report_queries"' in first:  # prompts/report_query.*: one question about the report's subject
        m = re.search(r"(?:研究对象：|Subject: )(.+)", first)
        subject = m.group(1).strip() if m else "该公司"
        return json.dumps({"report_queries": [f"{subject}的业绩表现如何？"]}, ensure_ascii=False)
    if '"score"' in first:  # prompts/synonymy_judge.*: a fixed middle score
        return json.dumps({"score": 3, "reason": "local test server default"}, ensure_ascii=False)
    dec = json.JSONDecoder()
    for text in reversed(users):  # a re-ask turn has no list: look back to the original question
        for i, ch in enumerate(text):
            if ch != "[":
                continue
            try:
                items, _ = dec.raw_decode(text, i)
            except ValueError:
                continue
            if isinstance(items, list) and all(isinstance(s, str) for s in items):
                return json.dumps(
                    {
                        "passage_query": "关于" + (items[0][:10] if items else "本段") + "的问题",
                        "sentence_queries": [f"{s[:12]}是什么？" if s.strip() else "" for s in items],
                    },
                    ensure_ascii=False,
                )
    return json.dumps({"echo": last}, ensure_ascii=False)


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: a client opening 16+ connections at once would
    # see refused/reset connects (and 1 s SYN retransmits), which no real server does.
    request_queue_size = 512
    daemon_threads = True

    def handle_error(self, request, client_address):  # noqa: ANN001 - socketserver's signature
        # a client that hangs up mid-request (fincprg stopping at a refused key closes its pool) is no
        # server fault; socketserver would print a traceback into the output the tests read
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class LocalLLMServer:
    """The server object the ``llm_server`` fixture yields."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.arrivals: list[float] = []  # time.monotonic() of each request, in arrival order
        self.in_flight = 0
        self.max_in_flight = 0
        self._responder: Responder = default_responder
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="llm-server", daemon=True)
        self._thread.start()

    # -- public API -------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def set_responder(self, fn: Responder | None) -> None:
        """Replace the responder (``None`` restores :func:`default_responder`)."""
        self._responder = fn or default_responder

    def reset(self) -> None:
        """Forget received requests and the in-flight peak."""
        with self._lock:
            self.requests.clear()
            self.headers.clear()
            self.arrivals.clear()
            self.max_in_flight = 0

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- internals --------------------------------------------------------------------------------
    def _enter(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.arrivals.append(time.monotonic())
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like real servers
            wbufsize = -1  # buffered: headers and body leave in one write, not two small packets

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
                pass

            def setup(self) -> None:
                super().setup()
                # Without TCP_NODELAY, Nagle + the client's delayed ACK add ~40 ms to small answers.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
                raw = data.encode("utf-8")
                try:
                    self.send_response(status)
                    ctype = "application/json" if not isinstance(body, str) else "text/plain"
                    extra = dict(headers or {})
                    # a responder may name its own type (an HTML error page from a proxy): it replaces the default
                    given = [k for k in extra if k.lower() == "content-type"]
                    self.send_header("Content-Type", extra.pop(given[0]) if given else f"{ctype}; charset=utf-8")
                    self.send_header("Content-Length", str(len(raw)))
                    for k, v in extra.items():
                        self.send_header(k, str(v))
                    self.end_headers()
                    self.wfile.write(raw)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (e.g. its timeout fired); nothing to do

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/_stats":
                    faults = dict(getattr(server._responder, "counts", {}))  # a FaultInjector's tally
                    self._send(200, {"requests": len(server.requests), "max_in_flight": server.max_in_flight,
                                     "faults": faults})
                elif self.path.rstrip("/").endswith("/v1/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": "local-test-model", "object": "model", "created": 0, "owned_by": "tests"}
                    ]})
                else:
                    self._send(404, error_body(f"no route {self.path}", type_="not_found"))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path == "/_reset":
                    server.reset()
                    self._send(200, {"reset": True})
                    return
                if not self.path.rstrip("/").endswith("/v1/chat/completions"):
                    self._send(404, error_body(f"no route {self.path}", type_="not_found"))
                    return
                try:
                    body = json.loads(raw.decode("utf-8") or "{}")
                except ValueError:
                    self._send(400, error_body("request body is not JSON"))
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                server._enter(body, headers)
                _CURRENT.headers = headers
                try:
                    if server.latency:
                        time.sleep(server.latency)
                    try:
                        out = server._responder(body)
                        while isinstance(out, Delayed):
                            time.sleep(out.seconds)
                            out = out.value
                    except Exception as e:  # a broken responder is a 500, like a crashing server
                        self._send(500, error_body(f"responder failed: {e!r}", type_="server_error"))
                        return
                    if isinstance(out, str):
                        self._send(200, completion_body(out, body))
                    elif isinstance(out, dict):
                        self._send(200, out)
                    elif isinstance(out, tuple):
                        status, payload, *rest = out
                        self._send(int(status), payload, rest[0] if rest else None)
                    else:
                        self._send(500, error_body(f"bad responder value {out!r}", type_="server_error"))
                finally:
                    server._leave()

        return Handler


@pytest.fixture
def llm_server():
    """A fresh local OpenAI-compatible server per test (see the module docstring)."""
    srv = LocalLLMServer()
    try:
        yield srv
    finally:
        srv.close()


def main() -> None:
    """Serve from the command line (for benchmarks that keep the server out of their process)::

        python -m tests.llm_server --latency 0.2

    prints the base URL on its first stdout line and serves until killed. Extra routes:
    ``GET /_stats`` -> ``{"requests", "max_in_flight", "faults"}`` and ``POST /_reset``. ``--faults RATE``
    injects faults (see tests/llm_faults.py), e.g. ``--faults 0.3 --fault-seed 0 --heal-after 1``.
    """
    import argparse
    import sys

    ap = argparse.ArgumentParser(description="local OpenAI-compatible test server")
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--faults", type=float, default=0.0, help="share of requests answered with a fault")
    ap.add_argument("--fault-kinds", default="429,500,timeout,truncated,not_json,misaligned")
    ap.add_argument("--fault-seed", type=int, default=0)
    ap.add_argument("--fault-timeout", type=float, default=2.0, help="seconds a 'timeout' fault hangs")
    ap.add_argument("--heal-after", type=int, default=None, help="a request faults at most this many times")
    args = ap.parse_args()
    srv = LocalLLMServer(latency=args.latency)
    if args.faults > 0:
        from tests.llm_faults import FaultInjector

        srv.set_responder(FaultInjector(rate=args.faults, kinds=tuple(args.fault_kinds.split(",")),
                                        seed=args.fault_seed, timeout_s=args.fault_timeout,
                                        heal_after=args.heal_after))
    print(srv.base_url, flush=True)
    try:
        srv._thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        srv.close()
    sys.exit(0)


if __name__ == "__main__":
    main()
