"""`fincprg eval` on a tiny BEIR folder prints the table and writes Markdown + CSV."""
from __future__ import annotations

import csv

from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.evaluate.data import available_subsets, load_beir
from tests.unit import _eval_fixture as fx

runner = CliRunner()


def test_loader_understands_both_qrels_layouts(tmp_path):
    a = fx.write_beir(tmp_path / "a")
    b = fx.write_beir(tmp_path / "b", fincprg_layout=False)
    assert list(available_subsets(a)) == ["sentence", "all"]  # paper order
    assert set(available_subsets(b)) == {"all"}
    ds = load_beir(a, subsets=["sentence"])
    assert set(ds.qrels) == {"sentence"} and len(ds.qrels["sentence"]) == 3
    assert ds.query_meta["q1"]["report_id"] == "r1" and ds.corpus["r1#p0"]["report_id"] == "r1"


def test_empty_subsets_are_left_out_by_default(tmp_path):
    data = fx.write_beir(tmp_path / "ds")
    (data / "qrels" / "topic-test.tsv").write_text("query-id\tcorpus-id\tscore\n", encoding="utf-8")
    assert "topic" not in load_beir(data).qrels
    assert load_beir(data, subsets=["topic"]).qrels == {"topic": {}}  # asked for by name: kept


def test_eval_prints_table_and_writes_files(tmp_path):
    data = fx.write_beir(tmp_path / "ds")
    out = tmp_path / "out"
    res = runner.invoke(app, ["eval", str(data), "-r", "bm25", "-r", "bm25-report", "-r", "cards", "--k", "10",
                              "--out", str(out), "--save-runs", "-q"])
    assert res.exit_code == 0, res.output
    assert "| retriever | R@1 | R@5 | R@10 | R@100 | nDCG@10 | MRR@10 | MAP@100 |" in res.output
    assert "### all (6 queries)" in res.output and "### sentence (3 queries)" in res.output
    assert "| bm25 | 1.0000 |" in res.output  # every obvious query finds its passage first
    assert "pool_recall@" in res.output  # rerankers report their candidate pool separately
    rows = list(csv.DictReader(open(out / "results.csv", encoding="utf-8")))
    assert {(r["retriever"], r["subset"]) for r in rows} == {(s, t) for s in ("bm25", "bm25-report", "cards")
                                                               for t in ("all", "sentence")}
    assert (out / "results.md").read_text(encoding="utf-8").count("| bm25 |") == 3  # 2 subsets + overview
    assert (out / "runs" / "bm25.trec").read_text(encoding="utf-8").startswith("q1 Q0 r1#p0 1 ")


def test_eval_default_set_on_plain_beir_and_correlate(tmp_path):
    data = fx.write_beir(tmp_path / "ds", fincprg_layout=False)
    ext = tmp_path / "ext.csv"
    ext.write_text("retriever,score\nbm25,0.5\nlsa,0.3\nhybrid,0.45\nrrf,0.4\ncards,0.2\n", encoding="utf-8")
    out = tmp_path / "out"
    res = runner.invoke(app, ["eval", str(data), "--out", str(out), "--correlate", str(ext), "-q"])
    assert res.exit_code == 0, res.output
    for spec in ("bm25", "bm25-report", "lsa", "hybrid", "rrf", "cards", "borda", "hier"):
        assert f"| {spec} |" in res.output
    assert "Pearson correlation" in res.output and "| external |" in res.output
    # reuse the CSV without re-running retrievers
    res2 = runner.invoke(app, ["eval", "--results", str(out / "results.csv"), "--correlate", str(ext),
                               "--metric", "R@1"])
    assert res2.exit_code == 0, res2.output
    assert "Correlation of R@1" in res2.output and "Kendall correlation" in res2.output


def test_eval_errors_are_clear(tmp_path):
    res = runner.invoke(app, ["eval", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "does not exist" in res.output
    data = fx.write_beir(tmp_path / "ds")
    res = runner.invoke(app, ["eval", str(data), "-r", "bogus"])
    assert res.exit_code == 2 and "unknown retriever spec" in res.output
    res = runner.invoke(app, ["eval", str(data), "--subset", "topic"])
    assert res.exit_code == 2 and "available: sentence, all" in res.output


def test_eval_help_explains_the_spec_grammar():
    res = runner.invoke(app, ["eval", "--help"], terminal_width=200)
    assert res.exit_code == 0
    for word in ("hybrid", "rrf", "dense-flag", "rerank", "cards", "borda", "hier", "--correlate", "--subset"):
        assert word in res.output
