"""fincprg report: one self-contained page, every document text escaped, sections from each stage."""
from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.audit.run import run_audit
from fincprg.audit.judge import RulesJudge
from fincprg.report import svg
from fincprg.report.page import write_report
from tests.unit._report_fixture import IMG, SCRIPT, make_build, write_eval


def _full(tmp_path):
    out = make_build(tmp_path)
    run_audit(out, judge=RulesJudge(), per_interval=5, seed=0)
    ev = write_eval(tmp_path / "eval")
    return out, write_report(out, tmp_path / "report.html", [ev]).read_text(encoding="utf-8")


def test_document_text_is_escaped_and_nothing_executable_is_emitted(tmp_path):
    out, html = _full(tmp_path)
    assert SCRIPT not in html and IMG not in html
    assert "<script" not in html.lower()  # the report has no script at all
    assert not re.search(r"\son\w+\s*=", html.replace("onerror=&#34;", ""))  # no live event handler attributes
    assert "&lt;script&gt;window.__pwned=1;document.title=&#39;PWNED&#39;&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;document.title=&#39;PWNED&#39;&#34;&gt;" in html
    assert "&lt;b&gt;恶意&lt;/b&gt;公司" in html  # markup in a company name stays text too
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_report_is_self_contained(tmp_path):
    _, html = _full(tmp_path)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html
    assert "<link" not in html


def test_report_sections(tmp_path):
    _, html = _full(tmp_path)
    # subset statistics from dataset/qrels
    assert re.search(r"<td>sentence</td><td>test</td><td class=\"num\">12</td>", html)
    # histogram per space, with the threshold line
    assert html.count('aria-label="score histogram') == 3 and "threshold 0.9" in html and 'class="thr"' in html
    # audit FP/FN per level and the judge label
    assert html.count('aria-label="false positives and negatives') == 3 and "not an LLM" in html
    # topic tree, query trees, eval tables
    assert "<code>h0</code>" in html and "<code>t1</code>" in html
    assert "行业景气度如何" in html and "子问题1" in html
    assert "营业收入" in html and "generator templates" in html
    assert "<td>bm25</td>" in html and "nDCG@10" in html and 'class="num best"' in html
    assert "x&lt;script&gt;" in html  # a hostile retriever name from results.csv


def test_partial_build_reports_what_is_missing(tmp_path):
    out = tmp_path / "partial"
    (out / "ingest").mkdir(parents=True)
    html = write_report(out).read_text(encoding="utf-8")
    assert (out / "report.html").is_file()
    for msg in ("run the export stage", "run the mine stage", "No audit", "run the topics stage",
                "run the generate stage", "No eval results"):
        assert msg in html, msg


def test_histogram_geometry():
    c = svg.histogram([0] * 50 + [9] + [0] * 48 + [999], threshold=0.9)
    assert c["total"] == 1008 and len(c["bars"]) == 2
    assert c["threshold"]["x"] == round(svg.ML + c["pw"] * 0.9, 2)
    tall, short = c["bars"][1], c["bars"][0]
    assert tall["h"] > short["h"] > 0 and abs(tall["h"] / short["h"] - 3.0) < 0.01  # log10(1000) / log10(10)
    assert svg.histogram([], None)["bars"] == []


def test_fp_fn_bars_order_and_scale():
    rows = [{"interval": "0.95-1.00", "lo": 0.95, "judged": 4, "fp": 2, "fn": 0},
            {"interval": "0.90-0.95", "lo": 0.9, "judged": 4, "fp": 0, "fn": 4}]
    c = svg.fp_fn_bars(rows)
    assert [g["label"] for g in c["groups"]] == ["0.90-0.95", "0.95-1.00"]
    fn_full = c["groups"][0]["bars"][1]
    assert fn_full["kind"] == "fn" and fn_full["h"] == c["ph"]
    assert c["groups"][1]["bars"][0]["h"] == c["ph"] / 2


def test_cli_report_reads_out_eval_by_default(tmp_path):
    out = make_build(tmp_path)
    write_eval(out / "eval" / "demo")
    res = CliRunner().invoke(app, ["report", str(out), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<td>lsa</td>" in html and str(out / "eval" / "demo") in html
    res = CliRunner().invoke(app, ["report", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "not a folder" in res.output


def test_damaged_jsonl_keeps_the_rows_before_it_and_warns(tmp_path, caplog):
    from fincprg.report.data import _jsonl

    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n\n{"a": 2}\n{"a": \n{"a": 4}\n', encoding="utf-8")
    with caplog.at_level("WARNING", logger="fincprg.report.data"):
        rows = list(_jsonl(p))
    assert rows == [{"a": 1}, {"a": 2}]
    assert "x.jsonl:4" in caplog.text
    assert list(_jsonl(tmp_path / "missing.jsonl")) == []


def test_subset_stats_skip_zero_relevance_and_damaged_qrels(tmp_path, caplog):
    from fincprg.report.data import subset_stats

    ds = tmp_path / "dataset"
    (ds / "qrels").mkdir(parents=True)
    (ds / "queries.jsonl").write_text('{"_id": "q1", "text": "abcd"}\n{"_id": "q2", "text": "ab"}\n', encoding="utf-8")
    (ds / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n{"_id": "d2", "text": "xyz"}\n', encoding="utf-8")
    (ds / "qrels" / "passage-test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\nq2\td2\t0\n", encoding="utf-8")
    (ds / "qrels" / "topic-test.tsv").write_text("q1\td1\n", encoding="utf-8")  # no score column
    with caplog.at_level("WARNING", logger="fincprg.report.data"):
        rows = subset_stats(ds)
    assert rows == [{"subset": "passage", "split": "test", "queries": 1, "pairs": 2, "rel_per_query": 2.0,
                     "avg_query_chars": 4.0, "avg_passage_chars": 2.0}]
    assert "topic-test.tsv:1" in caplog.text


def test_eval_results_of_another_dataset_are_marked_stale(tmp_path):
    """Results written by ``fincprg eval`` carry the dataset's content hash; a rebuild makes them stale."""
    from fincprg.evaluate.harness import run_eval, write_outputs

    out = make_build(tmp_path)
    write_outputs(run_eval(out / "dataset", ["bm25"], show_progress=False), out / "eval")
    html = write_report(out).read_text(encoding="utf-8")
    assert 'class="stale"' not in html and "<td>bm25</td>" in html
    queries = out / "dataset" / "queries.jsonl"  # a rebuild changed the dataset after eval ran
    queries.write_text(queries.read_text(encoding="utf-8").replace("表现如何", "怎么样"), encoding="utf-8")
    html = write_report(out).read_text(encoding="utf-8")
    assert 'class="stale"' in html and "re-run fincprg eval" in html


def test_report_names_the_backends_and_flags_offline_stand_ins(tmp_path):
    from fincprg.config import PipelineConfig, load_config
    from fincprg.contract import STAGE_BY_NAME, declared_config

    out = make_build(tmp_path)
    producer = load_config(None, ["mine.reranker.backend=flag", "mine.reranker.model=/m/bge-reranker-v2-m3"])
    for stage in ("generate", "topics", "mine"):
        spec = STAGE_BY_NAME[stage]
        (out / spec.dir).mkdir(parents=True, exist_ok=True)
        cfg = producer if stage == "mine" else PipelineConfig()
        (out / spec.dir / "manifest.json").write_text(
            json.dumps({"signature": "s", "config": declared_config(cfg, spec.config_keys)}), encoding="utf-8")
    html = write_report(out).read_text(encoding="utf-8")
    backends = html[html.index('id="backends"'):html.index('id="stats"')]
    assert "flag /m/bge-reranker-v2-m3" in backends
    assert "offline templates (no LLM)" in backends and "offline stand-in" in backends
