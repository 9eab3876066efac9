"""The review server: decisions POSTed over real HTTP land in audit/decisions.jsonl and change the estimates."""
from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from fincprg.audit.run import reapply, run_audit
from fincprg.audit.judge import RulesJudge
from fincprg.audit.review import make_review_server
from tests.unit._report_fixture import make_build


@pytest.fixture
def served(tmp_path):
    out = make_build(tmp_path, n_pairs=90)
    run_audit(out, judge=RulesJudge(), per_interval=4, seed=0)
    server = make_review_server(out / "audit", port=0)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    host, port = server.server_address[:2]
    yield out, f"http://{host}:{port}"
    server.shutdown()
    server.server_close()


_OPEN = urllib.request.build_opener(urllib.request.ProxyHandler({})).open  # never via an env proxy


def _post(url, body, ctype="application/json"):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": ctype})
    try:
        with _OPEN(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_post_decisions_are_saved_and_applied(served):
    out, base = served
    judged = [json.loads(x) for x in (out / "audit" / "judgements.jsonl").read_text().splitlines()]
    target = next(j for j in judged if j["score"] >= 0.9 and j["judge_score"] >= 3)
    other = next(j for j in judged if j["key"] != target["key"] and j["judge_score"] is not None)

    with _OPEN(base + "/", timeout=5) as r:
        page = r.read().decode()
    assert r.status == 200 and "download decisions.jsonl" in page and "&lt;script&gt;" in page

    status, body = _post(base + "/decisions", {"key": target["key"], "decision": "override", "score": 1,
                                               "note": "不同公司"})
    assert (status, body) == (200, {"saved": 1})
    status, body = _post(base + "/decisions", [{"key": other["key"], "decision": "confirm",
                                                "score": other["judge_score"]}])
    assert (status, body) == (200, {"saved": 1})
    lines = [json.loads(x) for x in (out / "audit" / "decisions.jsonl").read_text().splitlines()]
    assert [(d["key"], d["decision"], d["score"]) for d in lines] == [
        (target["key"], "override", 1), (other["key"], "confirm", other["judge_score"])]
    assert lines[0]["note"] == "不同公司" and lines[0]["time"]

    with _OPEN(base + "/decisions.jsonl", timeout=5) as r:
        assert len(r.read().decode().splitlines()) == 2
    with _OPEN(base + "/", timeout=5) as r:  # the page shows saved decisions
        assert "override: 1" in r.read().decode()

    before = json.loads((out / "audit" / "summary.json").read_text())["levels"][target["space"]]
    after = reapply(out)["levels"][target["space"]]
    assert after["fp"] == before["fp"] + 1 and after["human_decided"] >= 1


@pytest.mark.parametrize("body,ctype,code,msg", [
    ({"key": "nope", "decision": "override", "score": 2}, "application/json", 400, "unknown pair key"),
    ({"key": None, "decision": "maybe"}, "application/json", 400, "unknown pair key"),
    (b"not json", "application/json", 400, ""),
    (b"{}", "text/plain", 415, "Content-Type"),
])
def test_bad_posts_are_refused_and_nothing_is_written(served, body, ctype, code, msg):
    out, base = served
    status, resp = _post(base + "/decisions", body, ctype)
    assert status == code and msg in resp["error"]
    assert not (out / "audit" / "decisions.jsonl").exists()


def test_override_needs_a_score_from_1_to_5(served):
    out, base = served
    key = json.loads((out / "audit" / "judgements.jsonl").read_text().splitlines()[0])["key"]
    for score in (0, 6, "4", None, True):
        status, resp = _post(base + "/decisions", {"key": key, "decision": "override", "score": score})
        assert status == 400 and "score" in resp["error"]
    assert _post(base + "/nowhere", {})[0] == 404
