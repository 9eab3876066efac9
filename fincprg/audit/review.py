"""The audit review page and the small local server that saves a person's decisions.

``review.html`` is self-contained: opened as a file it keeps decisions in the page and offers a
"download decisions.jsonl" button; served by :func:`make_review_server` (``fincprg audit OUT
--review``) each click is POSTed to ``/decisions`` and appended to ``audit/decisions.jsonl``.

Decision lines: ``{"key", "decision": "confirm"|"override", "score": 1-5, "judge_score", "note",
"time"}``; the latest line per key wins when decisions are applied.
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.pipeline.io import read_jsonl

log = logging.getLogger(__name__)

MAX_BODY = 1 << 20
MAX_NOTE = 2000


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
    from fincprg.pipeline.io import atomic_write_text

    path = audit_dir / L.REVIEW_HTML
    atomic_write_text(path, render_review(summary, judged, _read(audit_dir / L.SAMPLES), decisions))
    return path


def validate_decision(obj: Any, keys: set[str]) -> dict[str, Any]:
    """A clean decision record, or ValueError saying what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError("a decision is a JSON object")
    key, decision = obj.get("key"), obj.get("decision")
    if key not in keys:
        raise ValueError(f"unknown pair key {key!r}")
    if decision not in ("confirm", "override"):
        raise ValueError('decision must be "confirm" or "override"')
    score = obj.get("score")
    if decision == "override" or score is not None:
        if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 5:
            raise ValueError("score must be an integer from 1 to 5")
    note = obj.get("note") or ""
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise ValueError(f"note must be text of at most {MAX_NOTE} characters")
    judge_score = obj.get("judge_score")
    return {"key": key, "decision": decision, "score": score,
            "judge_score": judge_score if isinstance(judge_score, int) else None, "note": note,
            "time": obj.get("time") if isinstance(obj.get("time"), str) else
            dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}


def read_decisions(path: Path) -> dict[str, dict[str, Any]]:
    """Latest decision per pair key from decisions.jsonl (later lines win; rows that are not decisions skipped)."""
    out: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return out
    for row in read_jsonl(path):
        if isinstance(row, dict) and row.get("key") and row.get("decision") in ("confirm", "override"):
            out[row["key"]] = row
    return out


def make_review_server(audit_dir: Path, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server for the review page; call ``serve_forever()`` (tests run it in a thread).

    GET / renders the page with the decisions saved so far; GET /decisions.jsonl returns them;
    POST /decisions (``Content-Type: application/json``, one object or a list) appends them. The JSON
    content type cannot be sent cross-site without a CORS preflight, which this server never grants.
    """
    audit_dir = Path(audit_dir)
    judged_path = audit_dir / L.JUDGEMENTS
    keys = {j["key"] for j in _read(judged_path)}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt: str, *args: Any) -> None:  # quiet: logging, not stderr
            log.debug("review server: " + fmt, *args)

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, obj: Any) -> None:
            self._send(status, json.dumps(obj, ensure_ascii=False).encode("utf-8"), "application/json")

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            path = self.path.split("?", 1)[0]
            if path in ("/", f"/{L.REVIEW_HTML}"):
                summary = json.loads((audit_dir / L.SUMMARY_JSON).read_text(encoding="utf-8"))
                html = render_review(summary, _read(judged_path), _read(audit_dir / L.SAMPLES),
                                     read_decisions(audit_dir / L.DECISIONS))
                self._send(200, html.encode("utf-8"), "text/html; charset=utf-8")
            elif path == f"/{L.DECISIONS}":
                p = audit_dir / L.DECISIONS
                self._send(200, p.read_bytes() if p.is_file() else b"", "application/x-ndjson; charset=utf-8")
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802 - http.server API
            if self.path.split("?", 1)[0] != "/decisions":
                return self._json(404, {"error": "POST decisions to /decisions"})
            if not (self.headers.get("Content-Type") or "").startswith("application/json"):
                return self._json(415, {"error": "send Content-Type: application/json"})
            n = int(self.headers.get("Content-Length") or 0)
            if n <= 0 or n > MAX_BODY:
                return self._json(413 if n else 400, {"error": "empty or too large body"})
            try:
                obj = json.loads(self.rfile.read(n).decode("utf-8"))
                rows = [validate_decision(o, keys) for o in (obj if isinstance(obj, list) else [obj])]
            except (ValueError, UnicodeDecodeError) as e:
                return self._json(400, {"error": str(e)})
            with lock, open(audit_dir / L.DECISIONS, "a", encoding="utf-8") as f:
                for r in rows:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")
            return self._json(200, {"saved": len(rows)})

    return ThreadingHTTPServer((host, port), Handler)
