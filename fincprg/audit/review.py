"""The audit review page and the small local server that saves a person's decisions.

``review.html`` is self-contained: opened as a file it keeps decisions in the page and offers a
"download decisions.jsonl" button; served by :func:`make_review_server` (``fincprg audit OUT
--review``) each click is POSTed to ``/decisions`` and appended to ``audit/decisions.jsonl``.

Decision lines: ``{"key", "decision": "confirm"|"override", "score": 1-5, "judge_score", "note",
"time"}``; the latest line per key wins when decisions are applied. The server validates and
bounds every field and header it reads (see :func:`make_review_server`).
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.io import read_jsonl

log = logging.getLogger(__name__)

MAX_BODY = 1 << 20
MAX_NOTE = 2000
MAX_TIME = 40  # "2024-05-01T09:30:00.123456+08:00" is 32
MAX_ITEMS = 10_000  # decisions per POST
DECISION_FIELDS = frozenset({"key", "decision", "score", "judge_score", "note", "time"})


def render_review(summary: dict[str, Any], judged: list[dict[str, Any]], samples: list[dict[str, Any]],
                  decisions: dict[str, dict[str, Any]]) -> str:
    """The review page HTML (every text autoescaped; the page's only script is allowed by its CSP hash)."""
    from markupsafe import Markup

    from fincprg.report.html import csp_hash, render, static_text

    text = {s["key"]: s for s in samples}
    groups: dict[str, list[dict[str, Any]]] = {}
    for j in judged:
        s = text.get(j["key"], {})
        groups.setdefault(j["space"], []).append({
            **j, "query_a": s.get("query_a", ""), "query_b": s.get("query_b", ""),
            "text_a": s.get("text_a"), "text_b": s.get("text_b"), "decision": decisions.get(j["key"])})
    script = static_text("review.js")
    return render("review.html.j2", summary=summary, groups=list(groups.items()), script=Markup(script),
                  script_hash=csp_hash(script))


def _read(path: Path) -> list[dict[str, Any]]:
    return list(read_jsonl(path)) if path.is_file() else []


def write_review_page(audit_dir: Path, summary: dict[str, Any], judged: list[dict[str, Any]],
                      decisions: dict[str, dict[str, Any]]) -> Path:
    from fincprg.io import atomic_write_text

    path = audit_dir / L.REVIEW_HTML
    atomic_write_text(path, render_review(summary, judged, _read(audit_dir / L.SAMPLES), decisions))
    return path


def _text_field(obj: dict[str, Any], name: str, limit: int) -> str | None:
    value = obj.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise ValueError(f"{name} must be text of at most {limit} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{name} is not valid Unicode (a lone surrogate)") from None
    return value


def _small_int(obj: dict[str, Any], name: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        raise ValueError(f"{name} must be an integer from 1 to 5")
    return value


def validate_decision(obj: Any, keys: set[str]) -> dict[str, Any]:
    """A clean decision record, or ValueError saying what is wrong.

    Every field is checked and bounded: ``key`` one of the audited pairs, ``decision`` confirm or
    override, ``score`` and ``judge_score`` integers 1-5 (or null), ``note`` at most 2000
    characters, ``time`` an ISO 8601 timestamp (the server's time when absent); no other fields.
    """
    if not isinstance(obj, dict):
        raise ValueError("a decision is a JSON object")
    unknown = set(obj) - DECISION_FIELDS
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)[:5]}; a decision has {sorted(DECISION_FIELDS)}")
    key, decision = obj.get("key"), obj.get("decision")
    if not isinstance(key, str) or key not in keys:
        raise ValueError(f"unknown pair key {str(key)[:80]!r}")
    if decision not in ("confirm", "override"):
        raise ValueError('decision must be "confirm" or "override"')
    score = _small_int(obj, "score")
    if decision == "override" and score is None:
        raise ValueError("score must be an integer from 1 to 5")
    judge_score = _small_int(obj, "judge_score")
    note = _text_field(obj, "note", MAX_NOTE) or ""
    time = _text_field(obj, "time", MAX_TIME)
    if time is not None:
        try:
            dt.datetime.fromisoformat(time)
        except ValueError:
            raise ValueError("time must be an ISO 8601 timestamp such as 2024-05-01T09:30:00Z") from None
    return {"key": key, "decision": decision, "score": score, "judge_score": judge_score, "note": note,
            "time": time or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}


def read_decisions(path: Path) -> dict[str, dict[str, Any]]:
    """Latest decision per pair key from decisions.jsonl (later lines win; lines that are not
    decisions, e.g. from a hand-edited or downloaded file, are skipped with a warning)."""
    out: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return out
    skipped = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):
                skipped += 1
                continue
            if isinstance(row, dict) and isinstance(row.get("key"), str) and row.get("decision") in ("confirm",
                                                                                                  "override"):
                out[row["key"]] = row
            else:
                skipped += 1
    if skipped:
        log.warning("%s: %d lines are not decisions and were skipped", path, skipped)
    return out


class ReviewServer(ThreadingHTTPServer):
    """The review page's server: what its handler needs (the audit folder, the judged keys, the addresses
    it answers to) lives here, one per server."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], audit_dir: Path, timeout: float) -> None:
        super().__init__(address, _ReviewHandler)
        self.audit_dir, self.read_timeout = audit_dir, timeout
        self.keys = {j["key"] for j in _read(audit_dir / L.JUDGEMENTS)}
        self.lock = threading.Lock()  # one append to decisions.jsonl at a time
        port = self.server_address[1]
        self.allowed_hosts = {f"{h}:{port}" for h in ("127.0.0.1", "localhost", "[::1]", address[0].lower())}
        self.allowed_origins = {f"http://{h}" for h in self.allowed_hosts}

    def handle_error(self, request: Any, client_address: Any) -> None:
        # the default prints a traceback to stderr; a dropped or hostile connection is not news
        log.debug("review server: error while serving %s", client_address, exc_info=True)


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def make_review_server(audit_dir: Path, host: str = "127.0.0.1", port: int = 0,
                       *, timeout: float = 10.0) -> ThreadingHTTPServer:
    """An HTTP server for the review page; call ``serve_forever()`` (tests run it in a thread).

    GET / renders the page with the decisions saved so far; GET /decisions.jsonl returns them;
    POST /decisions (``Content-Type: application/json``, one object or a list) appends them. The JSON
    content type cannot be sent cross-site without a CORS preflight, which this server never grants; a
    POST whose Origin is not this server's own address is refused (403) all the same, in case a browser
    lets a simple request through. The Host header must be one and name this server (127.0.0.1,
    localhost or [::1] with its port), which defeats DNS rebinding; a body must have exactly one
    Content-Length (two could be read differently by a proxy in front: request smuggling). Every request is
    bounded (body size, ``timeout`` seconds per read, field sizes and ranges) and every error is a JSON
    ``{"error": ...}`` with a 4xx status; no traceback ever reaches the client.
    """
    return ReviewServer((host, port), Path(audit_dir), timeout)


def _content_length(headers: Any) -> int:
    """The one Content-Length of a JSON body, checked (see :func:`make_review_server` for why each rule)."""
    if headers.get("Transfer-Encoding"):
        raise _BadRequest(411, "send the body with a Content-Length, not chunked")
    media, _, params = (headers.get("Content-Type") or "").partition(";")
    charset = params.strip().lower().replace(" ", "")
    if media.strip().lower() != "application/json" or charset not in ("", "charset=utf-8"):
        raise _BadRequest(415, "send Content-Type: application/json")
    lengths = headers.get_all("Content-Length") or []
    if len(lengths) > 1:
        raise _BadRequest(400, "send exactly one Content-Length header")
    raw_len = (lengths[0] if lengths else "").strip()
    if not raw_len:
        raise _BadRequest(411, "a Content-Length header is required")
    if not raw_len.isdigit() or len(raw_len) > 12:
        raise _BadRequest(400, "Content-Length must be a whole number of bytes")
    n = int(raw_len)
    if n == 0:
        raise _BadRequest(400, "empty body")
    if n > MAX_BODY:
        raise _BadRequest(413, f"body larger than {MAX_BODY} bytes")
    return n


def _decisions(data: bytes, keys: set[str]) -> list[dict[str, Any]]:
    """The validated decisions of a POST body (one object or a list)."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise _BadRequest(400, "the body is not UTF-8") from None
    except RecursionError:
        raise _BadRequest(400, "the JSON is nested too deeply") from None
    except ValueError as e:
        raise _BadRequest(400, f"the body is not JSON ({e})") from None
    items = obj if isinstance(obj, list) else [obj]
    if not items or len(items) > MAX_ITEMS:
        raise _BadRequest(400, f"send one decision or a list of 1 to {MAX_ITEMS}")
    try:
        return [validate_decision(o, keys) for o in items]
    except ValueError as e:
        raise _BadRequest(400, str(e)) from None


class _ReviewHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.0"  # errors for garbage request lines still get a status line
    server: ReviewServer

    def setup(self) -> None:
        self.timeout = self.server.read_timeout  # socket timeout for every read: a short body cannot hang a thread
        super().setup()

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet: logging, not stderr
        log.debug("review server: " + fmt, *args)

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if status >= 400:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode("utf-8"), "application/json")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # http.server's own errors (bad request line, oversized headers) as JSON, not HTML
        try:
            self._json(code, {"error": message or HTTPStatus(code).phrase})
        except OSError:
            self.close_connection = True

    def _guard(self, body: Any) -> None:
        try:
            hosts = self.headers.get_all("Host") or [""]
            if len(hosts) > 1 or hosts[0].strip().lower() not in self.server.allowed_hosts:
                raise _BadRequest(400, "unexpected Host header; open the page at the address the server printed")
            body()
        except _BadRequest as e:
            self._json(e.status, {"error": str(e)})
        except (TimeoutError, ConnectionError):
            self.close_connection = True
        except Exception:  # noqa: BLE001 - logged here, never sent to the client
            log.warning("review server: request failed", exc_info=True)
            self._json(500, {"error": "internal error; see the server's log"})

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self._guard(self._get)

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        self._guard(self._post)

    def _get(self) -> None:
        path, audit_dir = self.path.split("?", 1)[0], self.server.audit_dir
        if path in ("/", f"/{L.REVIEW_HTML}"):
            summary = json.loads((audit_dir / L.SUMMARY_JSON).read_text(encoding="utf-8"))
            html = render_review(summary, _read(audit_dir / L.JUDGEMENTS), _read(audit_dir / L.SAMPLES),
                                 read_decisions(audit_dir / L.DECISIONS))
            self._send(200, html.encode("utf-8"), "text/html; charset=utf-8")
        elif path == f"/{L.DECISIONS}":
            p = audit_dir / L.DECISIONS
            self._send(200, p.read_bytes() if p.is_file() else b"", "application/x-ndjson; charset=utf-8")
        else:
            self._json(404, {"error": "not found"})

    def _body(self) -> bytes:
        n = _content_length(self.headers)
        try:
            data = self.rfile.read(n)
        except TimeoutError:
            raise _BadRequest(408, f"the body did not arrive within {self.server.read_timeout:g} s") from None
        if len(data) < n:
            raise _BadRequest(400, "the body is shorter than its Content-Length")
        return data

    def _post(self) -> None:
        if self.path.split("?", 1)[0] != "/decisions":
            raise _BadRequest(404, "POST decisions to /decisions")
        # the page's own fetch sends this server's address; a browser on another site sends its own
        origins = self.headers.get_all("Origin") or []
        if any(o.strip().lower() not in self.server.allowed_origins for o in origins):
            raise _BadRequest(403, "cross-origin POST refused; decisions are saved only from the review page "
                                   "this server serves")
        rows = _decisions(self._body(), self.server.keys)
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        with self.server.lock, open(self.server.audit_dir / L.DECISIONS, "a", encoding="utf-8") as f:
            f.write(text)  # one write: a decision is saved whole or not at all
        self._json(200, {"saved": len(rows)})
