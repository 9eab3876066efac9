"""Issue 41, the LLM layer: answers that are not chat completions, a key inside an answer, and a build
in which no request succeeded.

Everything runs against the real local server (tests/llm_server.py); nothing is mocked.
"""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.llm import LLMClient
from fincprg.llm.auth import LLMAuthError
from fincprg.llm.redact import MASK
from tests.llm_faults import PROXY_PAGE, EchoKeyInAnswer, html_page, status_everywhere
from tests.llm_server import error_body
from tests.unit.test_llm_hardening import KEY_ENV, SECRET, cfg, files_holding

pytestmark = pytest.mark.usefixtures("_key")


@pytest.fixture
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)


def ask(client: LLMClient, n: int = 1):
    return client.chat_many([[{"role": "user", "content": f"问题 {i}"}] for i in range(n)], progress=False)


# -- 1. an answer that is not a chat completion is a failed item with its cause ---------------------------
@pytest.mark.parametrize("answer,says", [
    ((200, PROXY_PAGE, {"Content-Type": "text/html; charset=utf-8"}), ["HTTP 200", "text/html", "502 Bad Gateway"]),
    ((200, error_body("upstream overloaded"), {}), ["HTTP 200", "application/json", "upstream overloaded"]),
    ((200, "{not json", {"Content-Type": "application/json"}), ["HTTP 200", "application/json", "{not json"]),
    ((200, {"choices": "none"}, {}), ["HTTP 200", "choices"]),
    ((200, f"<html>key {SECRET}</html>", {"Content-Type": "text/html"}), ["HTTP 200", "text/html", MASK]),
])
def test_an_answer_that_is_not_a_completion_is_a_failed_item(llm_server, tmp_path, answer, says):
    llm_server.set_responder(lambda req: answer)
    client = LLMClient(cfg(llm_server), tmp_path / "cache")
    [res] = ask(client)
    assert not res.ok and res.text is None
    assert "not a chat completion" in res.error
    for word in says:
        assert word in res.error, res.error
    assert SECRET not in res.error and len(res.error) <= 500
    assert client.stats["failures"] == 1
    llm_server.set_responder(None)  # nothing was cached: the same question is asked again
    [again] = ask(LLMClient(cfg(llm_server), tmp_path / "cache"))
    assert again.ok and not again.cached


# -- 2. the configured key, or anything shaped like one, inside an answer's text --------------------------
def test_a_key_inside_an_answer_is_masked_before_anything_keeps_it(llm_server, tmp_path):
    llm_server.set_responder(lambda req: f'{{"q": "问 {SECRET} 与 {EchoKeyInAnswer.OTHER}"}}')
    client = LLMClient(cfg(llm_server), tmp_path / "cache")
    [res] = ask(client)
    assert res.ok and SECRET not in res.text and EchoKeyInAnswer.OTHER not in res.text and MASK in res.text
    client.close()
    [cached] = ask(LLMClient(cfg(llm_server), tmp_path / "cache"))
    assert cached.cached and cached.text == res.text
    assert not files_holding(tmp_path, SECRET)


def test_a_build_whose_answers_echo_the_key_writes_it_nowhere(llm_server, tmp_path, sample_corpus):
    llm_server.set_responder(EchoKeyInAnswer())
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["build", str(sample_corpus), "-o", str(out), "--limit", "4",
                                   *_llm_sets(llm_server, "topics.intents.backend=llm")])
    assert res.exit_code == 0, res.output
    assert any(SECRET in str(r) for r in llm_server.headers)  # the server did echo it
    assert not files_holding(out, SECRET) and not files_holding(out, EchoKeyInAnswer.OTHER)
    assert SECRET not in res.output
    assert files_holding(out / "dataset", MASK)  # the queries are there, masked


# -- 3. a build in which no request succeeded stops with one line -----------------------------------------
def _llm_sets(srv, *extra: str) -> list[str]:
    sets = ["generate.backend=llm", f"llm.base_url={srv.base_url}", f"llm.api_key_env={KEY_ENV}",
            "llm.concurrency=4", "llm.max_retries=0", "topics.viz=none", *extra]
    return [a for s in sets for a in ("--set", s)]


@pytest.mark.parametrize("responder,says", [
    (html_page(200), "text/html"),
    (html_page(502), "HTTP 502"),
    (status_everywhere(500), "HTTP 500"),
    (status_everywhere(429), "HTTP 429"),
])
@pytest.mark.parametrize("limit", [None, 1])  # 1 report: fewer requests than the early stop needs
def test_a_build_with_no_successful_request_exits_non_zero_with_one_line(llm_server, tmp_path, sample_corpus,
                                                                         responder, says, limit):
    llm_server.set_responder(responder)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["build", str(sample_corpus), "-o", str(out), "-q",
                                   *(["--limit", str(limit)] if limit else []), *_llm_sets(llm_server)])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    [line] = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert llm_server.base_url in line and says in line and "none" in line
    assert len(llm_server.requests) <= 8 + 4  # the early stop, plus those in flight
    assert not (out / "generate" / "manifest.json").exists() and not (out / "dataset").exists()


def test_no_answer_stop_is_an_error_the_batch_raises(llm_server, tmp_path):
    llm_server.set_responder(status_everywhere(500))
    client = LLMClient(cfg(llm_server, concurrency=1), tmp_path / "cache")
    with pytest.raises(LLMAuthError, match="answered none"):
        ask(client, 20)
    assert len(llm_server.requests) == 8


def test_failures_after_a_success_stay_per_item(llm_server, tmp_path):
    llm_server.set_responder(lambda req: '{"ok": 1}' if len(llm_server.requests) == 1
                             else (500, error_body("later failure"), {}))
    out = ask(LLMClient(cfg(llm_server, concurrency=1), tmp_path / "cache"), 20)
    assert out[0].ok and all(not r.ok and "HTTP 500" in r.error for r in out[1:])


def test_estimate_probe_against_an_html_page_says_why_in_one_line(llm_server, tmp_path, sample_corpus):
    llm_server.set_responder(html_page(200))
    res = CliRunner().invoke(app, ["estimate", str(sample_corpus), "-o", str(tmp_path / "est"), "--probe", "2", "-q",
                                   *_llm_sets(llm_server)])
    assert res.exit_code == 2, res.output
    [line] = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert "not a chat completion" in line and "text/html" in line and llm_server.base_url in line
