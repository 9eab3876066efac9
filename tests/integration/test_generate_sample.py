"""The offline generate stage on the bundled sample corpus (ingest -> chunk -> generate)."""
from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from fincprg.config import load_config
from fincprg.generate.complete import has_vague_subject
from fincprg.pipeline.runner import run_pipeline

pytestmark = pytest.mark.slow


def _read(p: Path) -> list[dict]:
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    sample = Path(__file__).resolve().parents[2] / "datasets" / "sample" / "reports.jsonl"
    assert sample.exists(), "datasets/sample/reports.jsonl is part of the repository"
    out = tmp_path_factory.mktemp("gen") / "out"
    run_pipeline(sample, out, load_config(), upto="generate", show_progress=False)
    return out


def test_sentence_and_passage_queries_with_direct_qrels(built):
    queries = _read(built / "generate" / "queries.jsonl")
    qrels = _read(built / "generate" / "qrels.jsonl")
    passages = {p["id"] for p in _read(built / "chunk" / "passages.jsonl")}
    by_level = defaultdict(list)
    for q in queries:
        by_level[q["level"]].append(q)
    assert by_level["passage"] and by_level["sentence"]
    failures = _read(built / "generate" / "failures.jsonl")
    # every passage has a query or a failure that says why not (an industry passage with nothing but its risk
    # list: 「医药行业面临哪些主要风险？」 matches every report on the industry, so it is not asked)
    asked = {q["source_ids"][0] for q in by_level["passage"]}
    assert asked | {f["item_id"] for f in failures} == passages and len(asked) == len(by_level["passage"])
    assert {f["kind"] for f in failures} <= {"nothing_askable"} and len(failures) < len(passages) / 5
    ids = {q["id"] for q in queries}
    for q in by_level["sentence"]:
        sid = q["provenance"]["sentence_id"]
        assert q["id"] == f"qs:{sid}" and q["source_ids"] == [sid.rsplit("#", 1)[0]]
        assert q["parent_id"] == f"qp:{q['source_ids'][0]}" and q["parent_id"] in ids
        assert q["provenance"]["generator"] == "templates" and q["provenance"]["template"] == "finance-templates"
        assert q["text"]
    assert {(r["query_id"], r["passage_id"]) for r in qrels} == {(q["id"], q["source_ids"][0]) for q in queries}
    assert all(r["provenance"] == "direct" and r["relevance"] == 1 for r in qrels)
    manifest = json.loads((built / "generate" / "manifest.json").read_text(encoding="utf-8"))
    counts = manifest["counts"]
    assert counts["queries"]["sentence"] == len(by_level["sentence"])
    assert 0 <= counts["empty_share"] < 0.5 and sum(counts["failures"].values()) == len(failures)


def test_bm25_self_retrieval_of_template_sentence_queries(built):
    """Done-when: >= 80% of non-empty template sentence queries find their own passage in BM25 top 10."""
    import bm25s

    from fincprg.finance import tokenize

    passages = _read(built / "chunk" / "passages.jsonl")
    queries = [q for q in _read(built / "generate" / "queries.jsonl") if q["level"] == "sentence"]
    vocab: dict[str, int] = {}
    docs = [[vocab.setdefault(t, len(vocab)) for t in tokenize(p["text"])] for p in passages]
    bm = bm25s.BM25()
    bm.index(bm25s.tokenization.Tokenized(ids=docs, vocab=vocab), show_progress=False)
    hits = 0
    for q in queries:
        ids = [vocab[t] for t in tokenize(q["text"]) if t in vocab]
        if not ids:
            continue
        res, scores = bm.retrieve(bm25s.tokenization.Tokenized(ids=[ids], vocab=vocab),
                                  k=min(10, len(passages)), show_progress=False)
        top = [passages[i]["id"] for i, s in zip(res[0], scores[0]) if s > 0]  # bm25s pads with zeros
        hits += q["source_ids"][0] in top
    share = hits / len(queries)
    assert share >= 0.8, f"only {share:.1%} of {len(queries)} sentence queries retrieve their passage"


def test_completed_queries_have_no_bare_company_subject(built):
    queries = _read(built / "generate" / "queries.jsonl")
    reports = {r["id"]: r for r in _read(built / "ingest" / "reports.jsonl")}
    with_company = [q for q in queries if reports[q["report_id"]].get("company")]
    assert with_company
    bad = [q["text"] for q in with_company if has_vague_subject(q["text"])]
    assert not bad, bad[:5]
    assert any("original" in q["provenance"] for q in queries)  # some queries were completed


def test_output_bytes_do_not_depend_on_batch_size_or_rerun(built, tmp_path):
    """The runner resumes by batches, so queries.jsonl and hierarchy.json must not depend on batch
    boundaries, and a forced re-run must reproduce them (the kill/resume test is test_resume.py)."""
    out = tmp_path / "out"
    shutil.copytree(built / "ingest", out / "ingest")
    shutil.copytree(built / "chunk", out / "chunk")
    sample = Path(__file__).resolve().parents[2] / "datasets" / "sample" / "reports.jsonl"
    cfg = load_config(overrides=["generate.batch_size=5"])
    names = ("queries.jsonl", "hierarchy.json")
    run_pipeline(sample, out, cfg, upto="generate", show_progress=False)
    first = {n: (out / "generate" / n).read_bytes() for n in names}
    for n in names:
        assert first[n] == (built / "generate" / n).read_bytes(), n
    run_pipeline(sample, out, cfg, upto="generate", show_progress=False, force=True)
    for n in names:
        assert (out / "generate" / n).read_bytes() == first[n], n
