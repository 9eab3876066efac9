"""The audit review server under malformed and hostile requests (issue 12, case 9), over raw sockets.

Every bad request gets a 4xx JSON error (never a dropped connection or a traceback), nothing is
written, and the server keeps serving."""
from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from fincprg.audit.judge import RulesJudge
from fincprg.audit.review import make_review_server
from fincprg.audit.run import run_audit
from tests.unit._report_fixture import make_build


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    out = make_build(tmp_path_factory.mktemp("review"), n_pairs=90)
    run_audit(out, judge=RulesJudge(), per_interval=4, seed=0)
    srv = make_review_server(out / "audit", port=0, timeout=0.5)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    key = json.loads((out / "audit" / "judgements.jsonl").read_text().splitlines()[0])["key"]
    yield srv.server_address[1], out / "audit", key
    srv.shutdown()
    srv.server_close()


def raw(port: int, data: bytes, *, wait: float = 5.0) -> tuple[int, dict | str, str]:
    """Send bytes, read the whole answer; (status, body (decoded when JSON), headers)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(data)
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except TimeoutError:
                break
            if not b:
                break
            chunks.append(b)
    resp = b"".join(chunks).decode("utf-8", "replace")
    head, _, body = resp.partition("\r\n\r\n")
    assert head.startswith("HTTP/1."), resp[:200]
    return int(head.split()[1]), json.loads(body) if "application/json" in head else body, head


def get(port: int, path: str, host: str | None = None) -> tuple[int, dict | str, str]:
    host = host if host is not None else f"localhost:{port}"
    return raw(port, f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())


def post(port: int, body: bytes, *, ctype: str = "application/json", host: str | None = None,
         length: str | None = None, extra: str = "") -> tuple[int, dict, str]:
    host = host if host is not None else f"127.0.0.1:{port}"
    head = (f"POST /decisions HTTP/1.1\r\nHost: {host}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n{extra}Connection: close\r\n\r\n")
    return raw(port, head.encode() + body)


def decision(key_: str, **kw) -> bytes:
    return json.dumps({"key": key_, "decision": "confirm", "score": 3, **kw}).encode()


@pytest.fixture(autouse=True)
def _nothing_written_and_still_serving(server, capfd):
    port, audit, _ = server
    yield
    assert not (audit / "decisions.jsonl").exists()
    status, page, _ = get(port, "/")
    assert status == 200 and "download decisions.jsonl" in page
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("length,status", [("abc", 400), ("-5", 400), ("1e3", 400), ("99999999999999999999", 400),
                                           (str(2 << 20), 413), ("0", 400)])
def test_bad_content_length(server, length, status):
    port, _, key = server
    code, body, _ = post(port, decision(key), length=length)
    assert code == status and body["error"]


@pytest.mark.parametrize("second", ["0", "5", None])
def test_two_content_lengths_are_refused(server, second):
    """Two Content-Length headers (request smuggling: a proxy may read the other one) are a 400, even equal ones."""
    port, _, key = server
    body = decision(key)
    code, answer, _ = post(port, body, extra=f"Content-Length: {second or len(body)}\r\n")
    assert code == 400 and "one Content-Length" in answer["error"]


def test_two_host_headers_are_refused(server):
    port, _, key = server
    code, body, _ = post(port, decision(key), extra="Host: evil.example\r\n")
    assert code == 400 and "Host" in body["error"]


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:{port}",
                                    "http://localhost:{port}.evil.example", ""])
def test_foreign_origin_post_is_refused(server, origin):
    port, _, key = server
    code, body, _ = post(port, decision(key), extra=f"Origin: {origin.format(port=port)}\r\n")
    assert code == 403 and "cross-origin" in body["error"]


def test_chunked_body_is_refused(server):
    port, _, key = server
    code, body, _ = post(port, b"", length="0", extra="Transfer-Encoding: chunked\r\n")
    assert code == 411


def test_deeply_nested_body(server):
    port, _, _ = server
    code, body, _ = post(port, b"[" * 200_000 + b"]" * 200_000)
    assert code == 400 and "nested too deeply" in body["error"]


@pytest.mark.parametrize("fields,word", [
    ({"time": "2" * 500_000}, "time"),
    ({"time": "yesterday"}, "ISO 8601"),
    ({"judge_score": 1e30}, "judge_score"),
    ({"judge_score": 3.5}, "judge_score"),
    ({"note": "长" * 2001}, "note"),
    ({"note": 7}, "note"),
    ({"note": "\ud800"}, "Unicode"),
    ({"score": 10**30}, "score"),
    ({"extra": "x"}, "unknown field"),
    ({"key": ["a"]}, "unknown pair key"),
])
def test_every_field_is_bounded(server, fields, word):
    port, _, key = server
    code, body, _ = post(port, decision(key, **fields))
    assert code == 400 and word in body["error"]


def test_empty_or_oversized_lists(server):
    port, _, key = server
    assert post(port, b"[]")[0] == 400
    assert post(port, json.dumps([json.loads(decision(key))] * 10_001).encode())[0] in (400, 413)


@pytest.mark.parametrize("ctype", ["application/jsonx", "text/plain", "application/json-patch+json",
                                   "application/json; charset=latin-1", ""])
def test_wrong_content_types(server, ctype):
    port, _, key = server
    assert post(port, decision(key), ctype=ctype)[0] == 415


@pytest.mark.parametrize("host", ["evil.example:80", "127.0.0.1", "127.0.0.1:1", ""])
def test_host_header_must_name_this_server(server, host):
    port, _, key = server
    code, body, _ = post(port, decision(key), host=host)
    assert code == 400 and "Host" in body["error"]
    code, body, _ = get(port, "/", host=host)
    assert code == 400 and "Host" in body["error"]


def test_short_body_times_out(server):
    port, _, key = server
    t0 = time.perf_counter()
    head = (f"POST /decisions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: 100\r\n\r\n").encode()
    code, body, _ = raw(port, head + b'{"key": ')
    assert code == 408 and time.perf_counter() - t0 < 4


def test_garbage_request_line_is_a_json_400(server):
    port, _, _ = server
    code, body, _ = raw(port, b"NOT HTTP AT ALL\r\n\r\n")
    assert code == 400 and body["error"]


def test_good_requests_still_work(server):
    port, audit, key = server
    try:
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            # the page's own fetch sends its origin (the address it was opened at)
            code, body, _ = post(port, decision(key, time="2024-05-01T09:30:00.000Z", judge_score=3, note="同义"),
                                 ctype="application/json; charset=UTF-8", host=host, extra=f"Origin: http://{host}\r\n")
            assert (code, body) == (200, {"saved": 1})
        code, saved, _ = get(port, "/decisions.jsonl")
        assert code == 200 and len(saved.splitlines()) == 2
        rows = [json.loads(x) for x in (audit / "decisions.jsonl").read_text().splitlines()]
        assert len(rows) == 2 and rows[0]["time"] == "2024-05-01T09:30:00.000Z" and rows[0]["note"] == "同义"
    finally:
        (audit / "decisions.jsonl").unlink(missing_ok=True)
