"""eval/bench_validity.py without ../shared/data: the statistics, the benchmark assembly on a 3-report toy
export, the traced code sharing and the README section."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from eval import bench_validity as bv
from eval._alphafin import read_jsonl, summary_benchmark, write_jsonl
from eval._code_sharing import finance_modules_run, generator_reads
from fincprg.evaluate.data import load_beir

HEADER = "研报题目是:{t}；目标价格是目标价格未公布，评分是7.0；研报摘要:"
REPORTS = {
    "r1": ("星河科技：营收高增，盈利能力提升", ["星河科技2023年营业收入同比增长35%，归母净利润4.1亿元，毛利率提升3个百分点。",
                                     "公司新建产能投产，订单饱满，预计2024年出货量继续增长。"]),
    "r2": ("云海银行：息差企稳，资产质量改善", ["云海银行一季度净息差1.9%，环比持平，不良贷款率下降至1.1%。",
                                     "拨备覆盖率提升至280%，零售贷款增速回升，存款成本下行。"]),
    "r3": ("海岳电子：消费电子复苏，汽车业务放量", ["海岳电子三季度营收同比增长18%，消费电子需求回暖。",
                                        "汽车电子订单快速增长，占营收比重升至25%。"]),
}


def test_pair_stats_on_toy_rankings():
    x = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}
    same = bv.pair_stats(x, {"a": 0.5, "b": 0.4, "c": 0.3, "d": 0.1})
    assert same["kendall"] == pytest.approx(1.0) and same["n"] == 4
    assert bv.pair_stats(x, {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4})["kendall"] == pytest.approx(-1.0)
    one_swap = bv.pair_stats(x, {"a": 0.8, "b": 0.9, "c": 0.7, "d": 0.6})  # 5 concordant, 1 discordant pair
    assert one_swap["kendall"] == pytest.approx(4 / 6)
    assert one_swap["pearson"] == pytest.approx(0.8)  # corr([.9,.8,.7,.6], [.8,.9,.7,.6])
    assert math.isnan(bv.pair_stats({"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 3})["kendall"])  # 2 shared


def test_bootstrap_tau_interval():
    retrievers = ["good", "mid", "bad"]
    per_q = {r: {f"q{i}": s + 0.01 * (i % 3) for i in range(30)} for r, s in zip(retrievers, (0.9, 0.5, 0.1))}
    assert bv.bootstrap_tau(per_q, per_q, retrievers, 200, 0) == (1.0, 1.0)  # far apart: every resample agrees
    flipped = {r: per_q[o] for r, o in zip(retrievers, reversed(retrievers))}
    assert bv.bootstrap_tau(per_q, flipped, retrievers, 200, 0) == (-1.0, -1.0)
    assert all(math.isnan(v) for v in bv.bootstrap_tau(per_q, per_q, retrievers[:2], 200, 0))


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> dict[str, Path]:
    """A 3-report export (title + header in the first passage, one header-only passage) and both benchmarks."""
    tmp = tmp_path_factory.mktemp("validity")
    ds = tmp / "export"
    corpus = []
    for rid, (title, texts) in REPORTS.items():
        for i, t in enumerate(texts):
            corpus.append({"_id": f"{rid}#p{i}", "title": title, "report_id": rid,
                           "text": (HEADER.format(t=title) if i == 0 else "") + t})
    corpus.append({"_id": "r3#p2", "title": REPORTS["r3"][0], "report_id": "r3", "text": HEADER.format(t="x")})
    write_jsonl(ds / "corpus.jsonl", corpus)
    queries = [{"_id": "q1", "text": "星河科技2023年营业收入增长多少？", "report_id": "r1", "level": "sentence"},
               {"_id": "q2", "text": "云海银行的不良贷款率是多少？", "report_id": "r2", "level": "sentence"},
               {"_id": "q3", "text": "海岳电子汽车电子业务占比多少？", "report_id": "r3", "level": "passage"},
               {"_id": "q4", "text": "只指向页眉的问题", "report_id": "r3", "level": "passage"}]
    write_jsonl(ds / "queries.jsonl", queries)
    (ds / "qrels").mkdir()
    tsv = lambda rows: "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows)  # noqa: E731
    (ds / "qrels" / "sentence-train.tsv").write_text(tsv([("q1", "r1#p0", 1)]), encoding="utf-8")
    (ds / "qrels" / "sentence-test.tsv").write_text(tsv([("q2", "r2#p0", 1), ("q2", "r2#p1", 0)]), encoding="utf-8")
    (ds / "qrels" / "passage-test.tsv").write_text(tsv([("q3", "r3#p1", 1), ("q4", "r3#p2", 1)]), encoding="utf-8")
    (ds / "qrels" / "all-train.tsv").write_text(tsv([("q1", "r1#p0", 1)]), encoding="utf-8")
    (ds / "qrels" / "all-test.tsv").write_text(tsv([("q2", "r2#p0", 1), ("q3", "r3#p1", 1), ("q4", "r3#p2", 1)]),
                                               encoding="utf-8")
    rows = [{"id": rid, "title": title} for rid, (title, _) in REPORTS.items()]
    human, info = summary_benchmark(rows, read_jsonl(ds / "corpus.jsonl"), tmp / "human")
    gen, gen_info = bv.generated_benchmark(ds, human / "corpus.jsonl", tmp / "generated")
    return {"export": ds, "human": human, "generated": gen, "info": info, "gen_info": gen_info}


def test_both_benchmarks_share_one_corpus_without_the_title(toy):
    h, g = load_beir(toy["human"]), load_beir(toy["generated"])
    assert h.corpus == g.corpus and len(h.corpus) == 6  # the header-only passage is dropped from both
    assert all(doc["title"] == "" and "研报题目是" not in doc["text"] for doc in h.corpus.values())
    assert toy["info"] == {"reports": 3, "queries": 3, "passages": 6, "labelled": 3}
    assert h.queries["q-r1"] == REPORTS["r1"][0]
    assert set(h.qrels["all"]["q-r3"]) == {"r3#p0", "r3#p1"}  # every passage of the title's report


def test_generated_benchmark_merges_splits_and_drops_missing_passages(toy):
    g = load_beir(toy["generated"])
    info = toy["gen_info"]
    assert info["splits"] == ["test", "train"]
    assert g.qrels["all"] == {"q1": {"r1#p0": 1}, "q2": {"r2#p0": 1}, "q3": {"r3#p1": 1}}
    assert g.qrels["sentence"] == {"q1": {"r1#p0": 1}, "q2": {"r2#p0": 1}}  # the score-0 pair is no label
    assert "q4" not in g.queries  # its only passage was the header
    assert info["dropped_pairs"] == 2 and info["queries_by_subset"] == {"all": 3, "passage": 1, "sentence": 2}


def test_score_correlate_and_render_on_the_toy_corpus(toy):
    specs = ["bm25", "lsa", "cards", "hier"]
    scores = {"human": bv.score(toy["human"], specs), "generated": bv.score(toy["generated"], specs)}
    assert set(scores["generated"]["ndcg"]) == {"all", "sentence", "passage"}
    assert scores["human"]["n"] == {"all": 3}
    corr = bv.correlations(scores["human"], scores["generated"], ["bm25", "lsa", "cards"], 50, 0)
    assert corr["all"]["fincprg offline"]["retrievers"] == ["bm25", "lsa", "cards"]
    assert corr["all"]["all"]["n"] == 4
    result = {"date": "2000-01-01", "commit": "abc", "machine": "x86_64", "cpus": 2, "reports": "held-out",
              "n_reports": 3, "held_out_buckets": 4, "build_sets": ["topics.viz=none"], "config": "offline",
              "stages": ["chunk"], "human": toy["info"], "generated": toy["gen_info"], "export_passages": 7,
              "specs": specs, "dense": {}, "ndcg": {b: s["ndcg"] for b, s in scores.items()},
              "failures": {}, "correlation": {"generated": corr},
              "shared_code": {"bm25": ["fincprg.finance.lexicon"], "lsa": ["fincprg.finance.lexicon"],
                              "cards": ["fincprg.finance.extract", "fincprg.finance.lexicon"], "hier": []},
              "generator_reads": {"generate": ["fincprg.finance.extract", "fincprg.finance.lexicon"]},
              "build_s": 1, "eval_s": 1, "wall": 2, "args": {"bootstrap": 50}}
    text = bv.render(json.loads(json.dumps(result)))
    assert "| cards |" in text and "finance code beyond the tokenizer that the generator also reads: cards" in text
    assert f"**Target** τ ≥ {bv.TARGET}" in text and "None: hier" in text


def test_traced_code_sharing():
    assert "fincprg.finance.extract" in finance_modules_run("cards")
    assert "fincprg.finance.extract" in finance_modules_run("cards")  # cached extract() results do not hide it
    assert "fincprg.finance.extract" not in finance_modules_run("bm25")
    assert "fincprg.finance.lexicon" in finance_modules_run("bm25")
    reads = generator_reads()
    assert "fincprg.finance.extract" in reads["generate"]
