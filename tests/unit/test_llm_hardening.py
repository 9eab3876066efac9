"""Issue 21, the LLM layer: keys never reach disk or the terminal, a refused key stops the build at once,
--retry-failed and rebuilds ask only what has no valid answer, and an unusable cache is a clear error.

Everything runs against the real local server (tests/llm_server.py); nothing is mocked.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.config import GenerateConfig, LLMConfig, load_config
from fincprg.generate.llm_tree import LLMTreeGenerator
from fincprg.llm import LLMClient
from fincprg.llm.cache import CacheError, ResponseCache
from fincprg.llm.auth import LLMAuthError
from fincprg.llm.redact import MASK, redact, register_secret
from fincprg.pipeline.runner import run_pipeline
from fincprg.generate.base import QueryTree
from fincprg.records import Failure
from tests.llm_faults import FaultInjector, RejectFirstAnswer, auth_failure
from tests.llm_server import error_body
from tests.unit.test_llm_tree import make_items

KEY_ENV = "FINCPRG_TEST_HARDENING_KEY"
SECRET = "sk-hardening-93be1c0a7d5f4e26-do-not-leak"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)


def cfg(srv, **kw) -> LLMConfig:
    return LLMConfig(**{"base_url": srv.base_url, "model": "m", "api_key_env": KEY_ENV, "concurrency": 4,
                        "max_retries": 0, "timeout": 5.0, **kw})


def gen(srv, cache: Path, **kw) -> LLMTreeGenerator:
    return LLMTreeGenerator(LLMClient(cfg(srv, **kw), cache), GenerateConfig(backend="llm"), progress=False)


def files_holding(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


# -- redaction ----------------------------------------------------------------------------------------
def test_redact_masks_registered_keys_and_key_shapes():
    register_secret("plain-secret-value-123")
    register_secret("EMPTY")  # the placeholder is not a key: masking it would garble messages
    text = ("key plain-secret-value-123, header Authorization: Bearer abc.DEF-123_xyz, sk-proj-AbC123xyz789, "
            "masked sk-abc1*****xyz9, api_key=qwerty12345, {'token': 'x'}, https://me:hunter2pw@host/v1, EMPTY stays")
    out = redact(text)
    for leaked in ("plain-secret-value-123", "abc.DEF-123_xyz", "sk-proj-AbC123xyz789", "sk-abc1", "qwerty12345",
                   "hunter2pw"):
        assert leaked not in out
    assert "Bearer " + MASK in out and "api_key=" + MASK in out and "EMPTY stays" in out
    assert f"https://me:{MASK}@host/v1" in out
    # a model's answer is data: only the registered keys go
    assert redact("sk-looks-like-a-key plain-secret-value-123", patterns=False) == f"sk-looks-like-a-key {MASK}"


# -- 401 / 403 -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [401, 403])
def test_refused_key_stops_the_batch_after_the_requests_in_flight(llm_server, tmp_path, status):
    llm_server.latency = 0.05
    llm_server.set_responder(auth_failure(status, echo_key=True))
    client = LLMClient(cfg(llm_server), tmp_path / "cache")
    with pytest.raises(LLMAuthError) as err:
        client.chat_many([[{"role": "user", "content": f"问题 {i}"}] for i in range(40)], progress=False)
    assert 1 <= len(llm_server.requests) <= 4  # those in flight when the first refusal came back
    msg = str(err.value)
    assert SECRET not in msg and f"HTTP {status}" in msg and MASK in msg  # the echo is there, masked
    assert KEY_ENV in msg and llm_server.base_url in msg and "llm.api_key_env" in msg
    assert not files_holding(tmp_path, SECRET)


def test_refused_key_stops_the_generator_stream(llm_server, tmp_path):
    llm_server.set_responder(auth_failure(401))
    g = gen(llm_server, tmp_path / "cache")
    with pytest.raises(LLMAuthError):
        list(g.stream(make_items([2] * 100)))  # a window of 64 passages is started ahead
    assert len(llm_server.requests) <= 4


def test_unset_key_is_named_in_the_auth_error(llm_server, tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    llm_server.set_responder(auth_failure(401, echo_key=False))
    with pytest.raises(LLMAuthError, match=f"{KEY_ENV} .*which is not set"):
        LLMClient(cfg(llm_server), tmp_path).chat_many([[{"role": "user", "content": "q"}]], progress=False)


def test_build_with_a_refused_key_exits_non_zero_and_writes_no_key(llm_server, tmp_path, sample_corpus):
    llm_server.set_responder(auth_failure(401, echo_key=True))
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["build", str(sample_corpus), "-o", str(out), "-q", "--set", "generate.backend=llm",
                                   "--set", f"llm.base_url={llm_server.base_url}", "--set", f"llm.api_key_env={KEY_ENV}",
                                   "--set", "llm.concurrency=4", "--set", "topics.viz=none"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and SECRET not in res.output
    [line] = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert "refused the API key" in line and KEY_ENV in line
    assert len(llm_server.requests) <= 4
    assert not files_holding(out, SECRET)
    assert not (out / "generate" / "manifest.json").exists() and not (out / "export").exists()


def test_other_error_texts_are_redacted_in_failure_records(llm_server, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    llm_server.set_responder(lambda req: (500, error_body(f"upstream rejected Bearer {SECRET}"), {}))
    [fail] = gen(llm_server, tmp_path / "cache").generate(make_items([2]))
    assert isinstance(fail, Failure) and fail.kind == "request_failed"
    assert "500" in fail.message and SECRET not in fail.message and MASK in fail.message
    # every other stage (topic intents, judges) records LLMResult.error: masked at the source
    [res] = LLMClient(cfg(llm_server), tmp_path / "cache").chat_many([[{"role": "user", "content": "q"}]],
                                                                      progress=False)
    assert "500" in res.error and SECRET not in res.error and MASK in res.error
    assert SECRET not in caplog.text


# -- re-ask answers are cached under the passage's own question -------------------------------------------
def test_reask_answer_serves_a_rebuild_without_requests(llm_server, tmp_path):
    llm_server.set_responder(RejectFirstAnswer())
    items = make_items([2, 3, 1])
    first = gen(llm_server, tmp_path / "cache").generate(items)
    assert all(isinstance(t, QueryTree) for t in first)
    assert len(llm_server.requests) == 2 * len(items)  # every passage was re-asked
    llm_server.reset()
    again = gen(llm_server, tmp_path / "cache").generate(items)
    assert len(llm_server.requests) == 0  # without remember(): one request per passage, then its re-ask from cache
    assert again == first  # provenance included: the output does not depend on the cache


def test_retry_failed_resends_only_the_failed_passages(llm_server, tmp_path, sample_corpus):
    # 500s (no retries) fail a passage outright; prose is re-asked, and most re-asks succeed
    faults = FaultInjector(rate=0.4, kinds=("500", "not_json"), seed=1, heal_after=1)
    llm_server.set_responder(faults)
    c = load_config(None, ["generate.backend=llm", f"llm.base_url={llm_server.base_url}", "llm.max_retries=0",
                           f"llm.api_key_env={KEY_ENV}", "run.sample_reports=8", "topics.viz=none"])
    out = tmp_path / "out"
    run_pipeline(sample_corpus, out, c, upto="generate", show_progress=False)
    counts = json.loads((out / "generate" / "manifest.json").read_text("utf-8"))["counts"]
    reasks = [r for r in llm_server.requests if any(m["role"] == "assistant" for m in r["messages"])]
    assert counts["retryable_failures"] > 0 and len(reasks) > counts["failures"].get("bad_json", 0)  # some recovered
    llm_server.reset()
    [gen_run] = [o for o in run_pipeline(sample_corpus, out, c, upto="generate", show_progress=False,
                                         retry_failed=True) if o.name == "generate"]
    assert gen_run.status == "retried"
    # each failed passage once, nothing else; report-level requests the faults failed are asked again too
    trees = [r for r in llm_server.requests if "report_queries" not in r["messages"][-1]["content"]
             and "report_queries" not in r["messages"][1]["content"]]
    assert len(trees) == counts["retryable_failures"]
    assert len(llm_server.requests) - len(trees) == counts["report_level"]["failures"]
    assert gen_run.counts["retryable_failures"] == 0, gen_run.counts
    assert gen_run.counts["retried"] == gen_run.counts["recovered"] == counts["retryable_failures"]


# -- the cache's disk ---------------------------------------------------------------------------------------
def test_unusable_cache_is_a_clear_error_before_any_request(llm_server, tmp_path):
    (tmp_path / "llm" / "responses.sqlite3").mkdir(parents=True)  # the cache file cannot be opened
    with pytest.raises(CacheError, match=r"responses\.sqlite3.*run\.cache_dir.*llm\.cache=false"):
        LLMClient(cfg(llm_server), tmp_path)
    assert not llm_server.requests


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders (eval/_faults_llm.py checks it "
                                              "as nobody)")
def test_read_only_cache_folder_is_a_clear_error(tmp_path):
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm").chmod(0o555)
    try:
        with pytest.raises(CacheError, match="run.cache_dir"):
            ResponseCache(tmp_path)
    finally:
        (tmp_path / "llm").chmod(0o755)


def test_cache_full_mid_run_warns_once_and_keeps_the_answers(llm_server, tmp_path, caplog):
    client = LLMClient(cfg(llm_server), tmp_path)
    db = client.cache._db  # a real SQLITE_FULL: the file may not grow past its current pages
    db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
    big = "长" * 20000
    with caplog.at_level(logging.WARNING):
        out = client.chat_many([[{"role": "user", "content": f"{big}{i}"}] for i in range(5)], progress=False)
    assert all(r.ok for r in out)  # the answers in hand are used
    assert client.stats["cache_errors"] == 5
    warned = [r for r in caplog.records if "cannot be written" in r.getMessage()]
    assert len(warned) == 1 and "disk is full" in warned[0].getMessage()


def test_reask_answers_of_the_verify_judge_and_topic_intents_are_cached_too(llm_server, tmp_path):
    """Every stage that re-asks stores a valid re-ask under the item's own question: a rerun sends nothing."""
    import json as _json

    from fincprg.config import IntentConfig, VerifyJudgeConfig
    from fincprg.topics.intents import TopicInput, llm_intents
    from fincprg.verify.judge import JudgeItem, judge

    llm_server.set_responder(RejectFirstAnswer(lambda req: _json.dumps(
        {"answerable": True, "reason": "来源给出"} if "answerable" in _json.dumps(req, ensure_ascii=False)
        else {"intents": [{"intent": "了解星河科技的业绩", "subqueries": ["星河科技2023年营收是多少？"]}]},
        ensure_ascii=False)))
    items = [JudgeItem("星河科技2023年营收是多少？", "sentence", "2023年公司实现营收12亿元。")]
    topics = [TopicInput("t0", ("营收",), ("星河科技：2023年营收高增",), "电子")]
    for run in range(2):
        llm_server.reset()
        verdicts, counts = judge(items, VerifyJudgeConfig(backend="llm"), cfg(llm_server), tmp_path / "cache",
                                 progress=False)
        done, failures, _ = llm_intents(topics, IntentConfig(backend="llm"), cfg(llm_server),
                                        tmp_path / "cache")
        assert verdicts == [None] and counts["judge_failures"] == 0 and "t0" in done and not failures
        assert len(llm_server.requests) == (4 if run == 0 else 0)  # first + re-ask each, then none


# -- a server that never answers stops the build; one that answered once does not ----------------------------
def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again on exit: connections to it are refused


def test_unreachable_server_stops_the_batch_with_a_clear_error(tmp_path):
    from fincprg.llm.auth import UNREACHABLE_AFTER, LLMUnreachableError

    conf = LLMConfig(base_url=f"http://127.0.0.1:{_closed_port()}/v1", model="m", api_key_env=KEY_ENV,
                     concurrency=2, max_retries=0, timeout=2.0)
    client = LLMClient(conf, tmp_path)
    with pytest.raises(LLMUnreachableError, match="could not be reached") as err:
        client.chat_many([[{"role": "user", "content": f"q{i}"}] for i in range(40)], progress=False)
    assert "llm.base_url" in str(err.value) and SECRET not in str(err.value)
    assert UNREACHABLE_AFTER <= client.stats["failures"] < UNREACHABLE_AFTER + 2  # stopped, not 40 tries
    assert isinstance(err.value, LLMAuthError)  # every place that stops on a refused key stops on it too


def test_connection_failures_after_an_answer_are_per_item_failures(llm_server, tmp_path):
    from tests.llm_server import Delayed

    answers = iter(["ok"] + [Delayed(3.0, "late")] * 20)
    llm_server.set_responder(lambda req: next(answers))
    client = LLMClient(cfg(llm_server, concurrency=1, timeout=0.5), tmp_path)
    res = client.chat_many([[{"role": "user", "content": f"q{i}"}] for i in range(12)], progress=False)
    assert res[0].text == "ok" and all(r.text is None and "Timeout" in r.error for r in res[1:])


def test_build_against_an_unreachable_server_exits_non_zero(tmp_path, sample_corpus):
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["build", str(sample_corpus), "-o", str(out), "-q", "--set", "generate.backend=llm",
                                   "--set", f"llm.base_url=http://127.0.0.1:{_closed_port()}/v1",
                                   "--set", "llm.max_retries=0", "--set", "topics.viz=none"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    [line] = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert "could not be reached" in line
    assert not (out / "generate" / "manifest.json").exists() and not (out / "export").exists()
