"""The mine stage end to end on the hand-built fixture written as stage outputs."""
from __future__ import annotations

import json

from fincprg.config import PipelineConfig
from fincprg.io import atomic_write_json, atomic_write_jsonl, read_jsonl
from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext
from fincprg.records import Qrel, Report, ScoredPair
from tests.unit._mine_fixture import SUBTREE, build

TEXTS = {
    "qs:R1#p0#s0": "贵州茅台2023年营业收入是多少",
    "qs:R1#p2#s1": "贵州茅台2023年营业收入是多少？",
    "qs:R1#p1#s0": "贵州茅台2022年营业收入是多少",  # same wording, other year: vetoed
    "qt:t0:0:0": "白酒行业龙头2023年营业收入",
    "qp:R1#p1": "白酒行业龙头2023年营业收入",  # identical text: equivalent by definition
}
# the sources of the two identical questions state the figure asked (else: source_unstated)
SOURCES = {"R1#p0#s0": "2023年公司实现营业收入1505亿元。", "R1#p2#s1": "公司2023年营业收入1505亿元，同比增长18%。"}


def _write_inputs(out, fx, report_type="industry"):
    qs = [q.model_copy(update={"text": TEXTS.get(q.id, q.text)}) for q in fx["queries"]]
    tq = [q.model_copy(update={"text": TEXTS.get(q.id, q.text)}) for q in fx["topic_queries"]]
    reports = sorted({p.report_id for p in fx["passages"]})
    # industry reports: their passages may answer the industry subquery qt:t0:0:0 (see test_topic_rules_*)
    atomic_write_jsonl(out / "ingest" / "reports.jsonl", [Report(id=r, title=r, text="-", report_type=report_type)
                                                          for r in reports])
    atomic_write_jsonl(out / "chunk" / "passages.jsonl", fx["passages"])
    atomic_write_jsonl(out / "chunk" / "sentences.jsonl",
                       [s.model_copy(update={"text": SOURCES.get(s.id, s.text)}) for s in fx["sentences"]])
    atomic_write_jsonl(out / "generate" / "queries.jsonl", qs)
    atomic_write_jsonl(out / "generate" / "qrels.jsonl", fx["qrels"])
    atomic_write_json(out / "topics" / "tree.json", {"nodes": [n.model_dump() for n in fx["nodes"].values()],
                                                     "root": "h1"})
    atomic_write_jsonl(out / "topics" / "assignments.jsonl", [
        {"report_id": r, "title": r, "date": None, "industry": "食品饮料", "leaf_topic": t, "subtree_topic": t}
        for r, t in SUBTREE.items()])
    atomic_write_jsonl(out / "topics" / "queries.jsonl", tq)
    atomic_write_jsonl(out / "verify" / "queries.jsonl", qs + tq)  # mine reads the queries verify kept: all
    atomic_write_jsonl(out / "verify" / "qrels.jsonl", fx["qrels"])


def _run(tmp_path, report_type="industry", **mine):
    out = tmp_path / "out"
    _write_inputs(out, build(), report_type)
    cfg = PipelineConfig.model_validate({"mine": mine})
    ctx = StageContext(STAGE_BY_NAME["mine"], out, cfg, "sig", show_progress=False)
    ctx.dir.mkdir(parents=True, exist_ok=True)
    from fincprg.mine.stage import run

    return run(ctx), ctx.dir


def test_stage_writes_pairs_qrels_histogram_and_counts(tmp_path):
    # a low threshold so the finance veto has above-threshold pairs to act on (on this 20-text
    # inventory the IDF is extreme and the year mismatch scores ~0.76)
    counts, d = _run(tmp_path, reranker={"threshold": 0.6})
    sp = counts["spaces"]
    assert {k: (v["pairs"], v["expected_pairs"]) for k, v in sp.items()} == {
        "sentence": (24, 24), "passage": (14, 14), "topic": (20, 20)}
    assert counts["reranker"] == "lexical" and counts["threshold"] == 0.6
    assert counts["passage_queries_unassigned"] == 1
    pairs = list(read_jsonl(d / "pairs.jsonl", ScoredPair))
    by = {(p.query_a, p.query_b): p for p in pairs}
    assert by[("qs:R1#p0#s0", "qs:R1#p2#s1")].accepted
    assert by[("qs:R1#p0#s0", "qs:R1#p1#s0")].veto == "period_year"
    assert counts["vetoed"]["period_year"] >= 2
    mined = list(read_jsonl(d / "qrels.jsonl", Qrel))
    got = {(m.query_id, m.passage_id, m.via) for m in mined}
    assert ("qs:R1#p0#s0", "R1#p2", "qs:R1#p2#s1") in got
    assert ("qt:t0:0:0", "R1#p1", "qp:R1#p1") in got  # topic subquery gains the passage
    assert all(m.provenance == "mined" and m.relevance == 1 and m.score >= 0.6 for m in mined)
    assert counts["mined_qrels_by_level"]["topic"] >= 1
    hist = json.loads((d / "histogram.json").read_text())
    assert [sum(hist["counts"][k]) for k in ("sentence", "passage", "topic")] == [24, 14, 20]
    # deterministic: a second run writes the same bytes
    first = (d / "pairs.jsonl").read_bytes(), (d / "qrels.jsonl").read_bytes()
    _, d2 = _run(tmp_path / "again", reranker={"threshold": 0.6})
    assert ((d2 / "pairs.jsonl").read_bytes(), (d2 / "qrels.jsonl").read_bytes()) == first


def test_stage_direction_one_and_prefilter(tmp_path):
    counts, _ = _run(tmp_path, direction="one", prefilter={"enabled": True, "top_k": 1})
    sp = counts["spaces"]
    assert sp["sentence"]["expected_pairs"] == 12 and sp["topic"]["expected_pairs"] == 10
    assert all(v["pairs"] <= v["expected_pairs"] for v in sp.values())
    assert sp["passage"]["pairs"] < sp["passage"]["expected_pairs"]  # top-1 neighbours cut pairs
    pf = counts["prefilter"]
    assert pf["top_k"] == 1
    assert pf["pairs_full"] == sum(v["expected_pairs"] for v in sp.values())
    assert pf["pairs_scored"] == sum(v["pairs"] for v in sp.values())
    assert pf["pairs_saved"] == pf["pairs_full"] - pf["pairs_scored"] > 0
    assert pf["saved_share"] == round(pf["pairs_saved"] / pf["pairs_full"], 4) and 0 < pf["saved_share"] < 1
    # without the prefilter nothing is saved and the summary says so plainly
    assert _run(tmp_path / "full", direction="one")[0]["prefilter"] is False


def test_prefilter_passes_device_to_sentence_transformers(tmp_path, monkeypatch):
    import sys
    import types

    import numpy as np

    seen: dict[str, object] = {}

    class FakeST:  # stands in for sentence_transformers.SentenceTransformer (no model, no torch)
        def __init__(self, model, device=None):
            seen["model"], seen["device"] = model, device

        def encode(self, texts, batch_size=32, show_progress_bar=None, **kwargs):
            return np.array([[len(t), sum(map(ord, t)) % 97 + 1.0] for t in texts], dtype=np.float32)

    monkeypatch.setitem(sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=FakeST))
    emb = {"backend": "sentence-transformers", "model": "/models/fake-st"}
    counts, _ = _run(tmp_path, prefilter={"enabled": True, "top_k": 2, "embedder": emb, "device": "cuda:1"})
    assert seen == {"model": "/models/fake-st", "device": "cuda:1"}
    assert counts["prefilter"]["top_k"] == 2
    # no prefilter device: the reranker's device is the default (one knob for a GPU box)
    _run(tmp_path / "b", reranker={"device": "cuda:0"}, prefilter={"enabled": True, "embedder": emb})
    assert seen["device"] == "cuda:0"


def test_max_space_queries_bounds_the_sentence_spaces_and_counts_what_it_skips(tmp_path):
    full, _ = _run(tmp_path / "a")
    capped, _ = _run(tmp_path / "b", max_space_queries=2)
    assert full["sentence_spaces_windowed"] == 0 and full["sentence_pairs_skipped_by_window"] == 0
    assert capped["sentence_spaces_windowed"] > 0
    got = capped["spaces"]["sentence"]
    assert got["pairs"] == got["expected_pairs"]  # the cost model follows the windows
    assert got["pairs"] + capped["sentence_pairs_skipped_by_window"] == full["spaces"]["sentence"]["pairs"]


def test_topic_rules_veto_an_industry_subquery_on_company_reports(tmp_path):
    # the same build with company reports: 「白酒行业龙头2023年营业收入」 names no company, and R1's passage
    # says nothing about the industry, so the identical passage query does not answer it for the industry
    counts, d = _run(tmp_path, report_type="company", reranker={"threshold": 0.6})
    by = {(p.query_a, p.query_b): p for p in read_jsonl(d / "pairs.jsonl", ScoredPair)}
    assert by[("qt:t0:0:0", "qp:R1#p1")].veto == "topic_industry" and not by[("qt:t0:0:0", "qp:R1#p1")].accepted
    assert counts["vetoed"]["topic_industry"] >= 1 and counts["spaces"]["topic"]["vetoed"]["topic_industry"] >= 1
    mined = {(m.query_id, m.passage_id) for m in read_jsonl(d / "qrels.jsonl", Qrel)}
    assert ("qt:t0:0:0", "R1#p1") not in mined
    off, d2 = _run(tmp_path / "off", report_type="company", reranker={"threshold": 0.6}, veto={"topic": False})
    assert "topic_industry" not in off["vetoed"]
