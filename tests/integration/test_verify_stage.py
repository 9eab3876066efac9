"""The verify stage in a build: LLM-generated queries with a contradicted premise, a wrong period and a
fragment subject are dropped with those reasons, the LLM judge drops what it finds unanswered, and mine and
export see only the kept queries. The LLM is the suite's real local HTTP server, never a mock."""
from __future__ import annotations

import json

from fincprg import layout as L
from fincprg.config import load_config
from fincprg.pipeline.runner import run_pipeline
from fincprg.report.data import verification
from fincprg.verify.summary import LEVELS, summary_lines

def _report(rid: str, company: str, code: str, date: str, title: str, text: str) -> dict:
    return {"id": rid, "title": f"{company}（{code}）：{title}", "company": company, "date": date, "text": text}


# one case per report: the chunker merges a report's short sentences into one sentence chunk
REPORTS = [
    _report("r1", "兆驰股份", "002429", "2020-04-20", "代工出货高增", "2019年公司代工出货量同比增长34%，出货结构持续优化。"),
    _report("r2", "兆驰股份", "002429", "2020-04-21", "代工收入增长", "2019年公司代工业务收入同比增长28%，盈利能力提升。"),
    _report("r3", "招商银行", "600036", "2020-04-22", "中收稳健", "代理保险收入占手续费收入的12%，同比提升2个百分点。"),
    _report("r4", "星河科技", "688321", "2021-08-30", "2021年中报点评",
            "公司发布2021年半年报，2021年上半年实现营业收入25.3亿元，同比增长30.2%。"),
    _report("r5", "恒芯存储", "688517", "2023-10-31", "业绩拐点显现", "2023年前三季度公司实现营业收入28.63亿元，同比下降18.9%。"),
    _report("r6", "恒芯存储", "688517", "2023-11-02", "出货回暖", "2023年三季度公司存储芯片出货量环比增长约22%，价格企稳。"),
]
# the report's sentence -> the query the "LLM" writes for it
QUERIES = {
    "代工出货量": "兆驰股份2019年代工出货量下降的主要原因是什么？",  # contradicted: shipments rose 34%
    "代工业务收入": "兆驰股份2019年代工业务收入增长了多少？",  # fine
    "代理保险": "代理保险2019年占手续费收入的比例是多少？",  # fragment subject
    "半年报": "星河科技2021年营业收入是多少？",  # wrong period: the source gives H1 only
    "前三季度": "恒芯存储2023年前三季度营业收入同比下降了多少？",  # fine
    "存储芯片出货量": "恒芯存储2023年三季度存储芯片出货量环比增长了多少？",  # fine by the rules
}
JUDGED_NO = QUERIES["存储芯片出货量"]


def _answer(request: dict) -> str:
    user = request["messages"][-1]["content"]
    if "可回答" in request["messages"][0]["content"] + user or "answerable" in user:  # the verify judge
        ok = JUDGED_NO not in user
        return json.dumps({"answerable": ok, "reason": "来源给出了该数据" if ok else "来源未给出环比数据"},
                          ensure_ascii=False)
    sentences, _ = json.JSONDecoder().raw_decode(user[user.index('["'):])
    report = next(r for r in REPORTS if sentences[0][:16] in r["text"])
    queries = [next((q for k, q in QUERIES.items() if k in s), "") for s in sentences]
    return json.dumps({"passage_query": f"{report['company']}{report['title'].split('：')[1]}的情况如何？",
                       "sentence_queries": queries}, ensure_ascii=False)


def _build(tmp_path, llm_server, monkeypatch, extra=()):
    tmp_path.mkdir(parents=True, exist_ok=True)
    corpus = tmp_path / "reports.jsonl"
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in REPORTS), encoding="utf-8")
    llm_server.set_responder(_answer)
    monkeypatch.setenv("FINCPRG_TEST_KEY", "sk-test")
    cfg = load_config(overrides=["generate.backend=llm", "generate.report.enabled=false", "generate.complete=false", f"llm.base_url={llm_server.base_url}",
                                 "llm.api_key_env=FINCPRG_TEST_KEY", "llm.max_retries=0", "topics.viz=none",
                                 "topics.cluster.min_cluster_size=2", "topics.cluster.min_samples=1",
                                 "chunk.min_passage_chars=10", *extra])
    out = tmp_path / "out"
    outcomes = run_pipeline(corpus, out, cfg, show_progress=False)
    dropped = {d["text"]: d for d in L.Build(out).dropped()}
    return out, {o.name: o for o in outcomes}, dropped


def test_verify_drops_with_reasons_and_mine_and_export_see_only_kept_queries(tmp_path, llm_server, monkeypatch):
    out, outcomes, dropped = _build(tmp_path, llm_server, monkeypatch)
    assert dropped[QUERIES["代工出货量"]]["reason"] == "contradicted"
    assert dropped[QUERIES["半年报"]]["reason"] == "wrong_period"
    assert dropped[QUERIES["代理保险"]]["reason"] == "fragment_subject"
    build = L.Build(out)
    kept = {q.text for q in build.queries(L.VERIFY)}
    assert {QUERIES["代工业务收入"], QUERIES["前三季度"], JUDGED_NO} <= kept
    kept_ids = {q.id for q in build.queries(L.VERIFY)}
    assert not kept_ids & {d["query_id"] for d in dropped.values()}
    # only kept queries have direct qrels, and the dataset holds only kept queries
    assert {r.query_id for r in build.kept_qrels()} <= kept_ids
    exported = {json.loads(line)["_id"] for line in build.dataset.queries.read_text("utf-8").splitlines()}
    assert exported <= kept_ids and not exported & {d["query_id"] for d in dropped.values()}
    counts = outcomes["verify"].counts
    assert counts["levels"]["sentence"]["generated"] == counts["levels"]["sentence"]["kept"] + sum(
        counts["reasons_by_level"]["sentence"].values())
    assert counts["reasons"]["contradicted"] >= 1 and counts["examples"]["wrong_period"]
    assert "Query verification" in build.dataset.card.read_text("utf-8")
    # the build report lists the levels in pipeline order (the manifest stores them by name) with the
    # manifest's examples of each reason
    report = verification(out)
    assert [lv["level"] for lv in report["levels"]] == [lv for lv in LEVELS if lv in counts["levels"]]
    rows = {e["reason"]: [r["text"] for r in e["rows"]] for e in report["examples"]}
    assert QUERIES["代工出货量"] in rows["contradicted"] and list(rows) == report["reasons"]
    assert summary_lines(counts)[0].startswith("sentence: kept ")


def test_the_llm_judge_drops_what_it_finds_unanswered(tmp_path, llm_server, monkeypatch):
    out, outcomes, dropped = _build(tmp_path, llm_server, monkeypatch, ["verify.judge.backend=llm"])
    assert dropped[JUDGED_NO]["reason"] == "judge_not_answered"
    assert dropped[JUDGED_NO]["detail"] == "来源未给出环比数据"
    assert dropped[QUERIES["代工出货量"]]["reason"] == "contradicted"  # rules first: the judge is not asked
    judge = outcomes["verify"].counts["judge"]
    assert judge["not_answerable"] == 1 and judge["asked"] >= 3 and judge["llm"]["requests"] == judge["asked"]
    asked = [r for r in llm_server.requests if "可回答" in json.dumps(r, ensure_ascii=False)]
    assert not any(QUERIES["代工出货量"] in json.dumps(r, ensure_ascii=False) for r in asked)


def _tiny_encoder(folder) -> str:
    """A 1-layer random BERT over this corpus's characters with e5's prompts, saved as sentence-transformers."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizer

    chars = {c for r in REPORTS for c in r["title"] + r["text"]} | {c for q in QUERIES.values() for c in q}
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "query", "passage", ":"] + sorted(
        c for c in chars if not c.isspace())
    hf = folder / "hf"
    hf.mkdir(parents=True)
    (hf / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n", encoding="utf-8")
    tok = BertTokenizer.from_pretrained(str(hf))
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=256)).save_pretrained(str(hf))
    tok.save_pretrained(str(hf))
    SentenceTransformer(str(hf), device="cpu", prompts={"query": "query: ", "passage": "passage: "}).save(
        str(folder / "st"))
    return str(folder / "st")


def test_the_dense_round_trip_drops_what_the_bi_encoder_does_not_retrieve(tmp_path, llm_server, monkeypatch):
    """verify.dense.model: a query BM25 kept must also find its own passage in the model's top k (its
    query/passage prompts applied); checked against the model's own ranking, computed here."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    model = _tiny_encoder(tmp_path / "model")
    out, outcomes, dropped = _build(tmp_path, llm_server, monkeypatch,
                                    [f"verify.dense.model={model}", "verify.top_k=1", "verify.checks=[round_trip]"])
    build = L.Build(out)
    passages = list(build.passages())
    titles = {r["id"]: r["title"] for r in REPORTS}
    st = SentenceTransformer(model, device="cpu")
    docs = st.encode([f"passage: {titles[p.report_id]}\n{p.text}" for p in passages], normalize_embeddings=True)
    at = {p.id: i for i, p in enumerate(passages)}
    bm25_dropped = {d["query_id"] for d in dropped.values() if d["reason"] != "not_retrieved_dense"}
    checked = 0
    for q in [*build.queries(L.GENERATE)]:
        if q.id in bm25_dropped or q.level not in ("sentence", "passage"):
            continue
        sims = docs @ st.encode([f"query: {q.text}"], normalize_embeddings=True)[0]
        own = at[q.source_ids[0]]
        missed = sims[own] < np.max(sims) - 1e-6  # another passage ranks first
        assert (dropped.get(q.text, {}).get("reason") == "not_retrieved_dense") == missed, q.text
        checked += 1
    reasons = outcomes["verify"].counts["reasons"]
    assert checked >= 4 and reasons.get("not_retrieved_dense", 0) >= 1


def test_dropped_rows_name_their_rule_and_verify_disable_switches_rules_off(tmp_path, llm_server, monkeypatch):
    """Each dropped row carries the id of the rule that dropped it (counted by rule in the manifest); a rule named
    in verify.disable no longer drops anything, and an id that names no rule is a config error."""
    import pytest

    from fincprg.errors import ConfigError

    out, outcomes, dropped = _build(tmp_path / "on", llm_server, monkeypatch)
    assert dropped[QUERIES["代工出货量"]]["rule"] == "answer"
    assert all(d["rule"] for d in dropped.values())
    counts = outcomes["verify"].counts
    assert sum(counts["rules"].values()) == counts["dropped"]
    out, outcomes, dropped = _build(tmp_path / "off", llm_server, monkeypatch, ["verify.disable=[answer]"])
    assert not any(d["rule"] == "answer" for d in dropped.values())
    assert dropped.get(QUERIES["代工出货量"], {}).get("reason") != "contradicted"
    with pytest.raises(ConfigError, match="verify.disable"):
        _build(tmp_path / "bad", llm_server, monkeypatch, ["verify.disable=[no_such_rule]"])


def test_a_rule_declared_in_the_registry_runs_in_verify_and_is_listed(tmp_path, llm_server, monkeypatch):
    """The stage runs what the registry holds: a rule declared with ``@rule`` (here a test's, right after
    ``subject``) drops the query it fails with its id stamped, and ``fincprg rules`` lists it."""
    from typer.testing import CliRunner

    from fincprg.cli import app
    from fincprg.verify import registry
    from fincprg.verify.verdict import Reason, Verdict

    target = QUERIES["代工业务收入"]  # kept by every built-in rule (the first test above)

    @registry.rule("test_dummy", registry.SP, (Reason.VAGUE,), "query", "a test's rule", kind="stage",
                   after="subject")
    def _dummy(r):  # noqa: ANN001, ANN202 - a test's check
        return Verdict(Reason.VAGUE, "the test's rule read it") if r.query == target else None

    try:
        _, outcomes, dropped = _build(tmp_path, llm_server, monkeypatch)
        assert (dropped[target]["rule"], dropped[target]["detail"]) == ("test_dummy", "the test's rule read it")
        assert outcomes["verify"].counts["rules"]["test_dummy"] == 1
        listed = CliRunner().invoke(app, ["rules"])
        assert listed.exit_code == 0 and "test_dummy  [stage; sentence, passage; switch answer]" in listed.output
        # listed in its place: after subject, before the rules that follow subject in ORDER
        ids = [line.split()[0] for line in listed.output.splitlines() if line and not line.startswith(" ")]
        assert ids[ids.index("subject") + 1] == "test_dummy"
    finally:
        registry.unregister("test_dummy")
    assert "test_dummy" not in [r.id for r in registry.ordered()]
