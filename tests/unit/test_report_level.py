"""Report-level queries (issue 50): made from the title's claim or, untitled, the lead; graded positives; the
verify rule that reads them; the export subset; the LLM path against a real local server."""
from __future__ import annotations

import datetime as dt
import json

from fincprg.config import GenerateConfig, LLMConfig, ReportLevelConfig
from fincprg.export.beir import SUBSET_RULES, SUBSETS, build_subset_qrels
from fincprg.generate.report_level import (ANSWERS, STATES, ReportInput, claim_of, group_reports, lead, questions,
                                           title_claim)
from fincprg.generate.stage import report_level
from fincprg.records import Passage, Report
from fincprg.verify.reportlevel import check_report_claim, copies_title
from fincprg.verify.verdict import Reason

TITLE = "景津装备（603279）：业绩符合预期，持续看好新兴市场拓展和配件业务放量"
P0 = ("事件 公司发布2021年年报，2021年全年实现营业收入46.51亿元，同比增长39.7%。"
      "点评 锂电、砂石新兴市场拓展卓有成效。")
P1 = "配件业务收入大幅增长，新兴市场拓展和配件业务放量打开新的成长极，我们持续看好配件业务。"
P2 = "风险提示：原材料价格大幅上涨。"


def _item(title: str = TITLE, company: str | None = None) -> ReportInput:
    r = Report(id="r1", title=title, text="", date=dt.date(2022, 4, 10), company=company)
    ps = tuple(Passage(id=f"r1#p{i}", report_id="r1", order=i, text=t) for i, t in enumerate((P0, P1, P2)))
    return ReportInput(r, ps)


def test_the_title_claim_drops_company_and_code_but_keeps_what_the_report_reviews():
    assert title_claim(TITLE) == "业绩符合预期，持续看好新兴市场拓展和配件业务放量"
    assert title_claim("扬农化工（600486）2022年三季报点评：农药量升价增") == "2022年三季报点评：农药量升价增"
    assert title_claim("贵州茅台（600519）") == ""


def test_a_titled_report_is_asked_its_claim_as_a_question_never_the_title():
    item = _item()
    c = claim_of(item)
    assert c is not None and c.origin == "title" and c.subject == "景津装备" and c.period == "2021年"
    asked = questions(c, "r1", 2)
    frames = [f for f, _ in asked]
    assert frames == ["expectation", "outlook"]
    for _, q in asked:
        assert q.startswith("景津装备") or "景津装备" in q
        assert q.endswith("？") and not copies_title(q, TITLE)
    # the claim's outlook clause is stated by the passage sharing most of its words
    assert c.states == "r1#p1"


def test_an_untitled_report_is_asked_from_its_lead_and_no_title_reaches_it():
    item = _item(title="", company="景津装备")
    assert lead(item.passages) == ("公司发布2021年年报，2021年全年实现营业收入46.51亿元，同比增长39.7%", "r1#p0")
    c = claim_of(item)
    assert c is not None and c.origin == "lead" and c.states == "r1#p0"
    asked = questions(c, "r1", 2)
    assert asked and asked[0][0] == "results" and "2021年" in asked[0][1]
    assert all("新兴市场" not in q for _, q in asked)  # the title's words are nowhere in an untitled report


def test_a_report_without_subject_gets_no_query_and_positives_are_graded():
    queries, qrels, counts = report_level([_item(title="", company=None)], GenerateConfig())
    assert queries == [] and counts["reports_without_query"] == 1
    queries, qrels, counts = report_level([_item()], GenerateConfig())
    assert {q.level for q in queries} == {"report"} and counts["queries"] == len(queries) == 2
    q = queries[0]
    grades = {r.passage_id: r.relevance for r in qrels if r.query_id == q.id}
    assert grades == {"r1#p1": STATES, "r1#p0": ANSWERS, "r1#p2": ANSWERS}
    assert q.source_ids[0] == "r1#p1" and set(q.source_ids) == set(grades)


def test_the_switch_turns_the_level_off():
    cfg = GenerateConfig(report=ReportLevelConfig(enabled=False))
    assert report_level([_item()], cfg) == ([], [], {"enabled": False})


def test_group_reports_keeps_chunk_order():
    ps = [Passage(id=f"{r}#p{i}", report_id=r, order=i, text="x") for r, i in (("a", 0), ("a", 1), ("b", 0))]
    reports = {r: Report(id=r, title="", text="") for r in "ab"}
    assert [[p.id for p in g.passages] for g in group_reports(ps, reports)] == [["a#p0", "a#p1"], ["b#p0"]]


def test_report_claim_rule_reads_period_copy_and_direction():
    body = P0 + P1
    date = dt.date(2022, 4, 10)
    assert check_report_claim("景津装备2021年业绩是否符合预期？", TITLE, body, date) is None
    assert check_report_claim("景津装备2019年业绩表现如何？", TITLE, body, date).reason == Reason.WRONG_PERIOD
    assert check_report_claim("景津装备2023年业绩表现如何？", TITLE, body + "2023年", date).reason == Reason.WRONG_PERIOD
    assert check_report_claim("景津装备2021年上半年业绩如何？", TITLE, body, date).reason == Reason.WRONG_PERIOD
    copied = "景津装备业绩符合预期，持续看好新兴市场拓展和配件业务放量吗？"
    assert check_report_claim(copied, TITLE, body, date).reason == Reason.GARBLED
    down = "景津装备（603279）：业绩大幅下滑，静待拐点"
    assert check_report_claim("景津装备2021年业绩增长的驱动因素是什么？", down, body, date).reason == Reason.CONTRADICTED


def test_the_report_subset_takes_report_queries_with_graded_labels_and_joins_all():
    assert "report" in SUBSETS and SUBSET_RULES["report"][0] == frozenset({"report"})
    assert "report" in SUBSET_RULES["all"][0]
    queries, qrels, _ = report_level([_item()], GenerateConfig())
    qs = {q.id: q for q in queries}
    split = {q: "test" for q in qs}
    out, dropped = build_subset_qrels(qs, qrels, split, {f"r1#p{i}": "test" for i in range(3)}, ("train", "test"))
    assert dropped["unlabelled_level"] == 0
    got = out["report"]["test"][queries[0].id]
    assert sorted(got.values()) == [1, 1, 2] and out["all"]["test"][queries[0].id] == got
    assert out["passage"]["test"] == {}


def test_llm_report_queries_against_local_server(llm_server, tmp_path):
    def responder(req):
        user = req["messages"][1]["content"]
        if len(req["messages"]) > 2:  # the re-ask
            return json.dumps({"report_queries": ["景津装备2021年业绩是否符合预期？"]}, ensure_ascii=False)
        assert "景津装备" in user and "2021年" in user
        return json.dumps({"report_queries": [TITLE]}, ensure_ascii=False)  # the title copied: re-asked

    llm_server.set_responder(responder)
    llm = LLMConfig(base_url=llm_server.base_url, model="test-model", max_retries=0, cache=False)
    cfg = GenerateConfig(backend="llm")
    queries, qrels, counts = report_level([_item()], cfg, llm=llm, cache_dir=tmp_path / "cache")
    assert [q.text for q in queries] == ["景津装备2021年业绩是否符合预期？"]
    assert queries[0].provenance["generator"] == "llm" and queries[0].provenance["template"] == "report_query.zh"
    assert counts["failures"] == 0 and len(llm_server.requests) == 2
    assert sorted(r.relevance for r in qrels) == [1, 1, 2]


def test_report_level_llm_failures_are_warned_about_not_only_counted(llm_server, sample_corpus, tmp_path, caplog):
    import logging

    from fincprg.config import load_config
    from fincprg.pipeline.runner import read_manifest, run_pipeline
    from tests.llm_server import default_responder

    def responder(req):  # every report-level answer is invalid, the re-ask's too; the trees are fine
        if any("report_queries" in m["content"] for m in req["messages"]):
            return json.dumps({"report_queries": []})
        return default_responder(req)

    llm_server.set_responder(responder)
    cfg = load_config(overrides=["generate.backend=llm", f"llm.base_url={llm_server.base_url}", "llm.max_retries=0",
                                 "llm.api_key_env=FINCPRG_NO_KEY"])
    with caplog.at_level(logging.WARNING):
        run_pipeline(sample_corpus, tmp_path / "out", cfg, upto="generate", show_progress=False)
    failed = read_manifest(tmp_path / "out", "generate")["counts"]["report_level"]["failures"]
    assert failed > 0
    assert any(f"{failed} reports have no valid report-level LLM answer" in r.getMessage() for r in caplog.records)
