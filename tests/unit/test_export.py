"""Export: subsets, leak-free splits, hard negatives, BEIR + HF layouts, dataset card.

Every test builds a small build folder (ingest/chunk/generate/topics/mine outputs) in code.
"""
from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import pytest

from fincprg.config import PipelineConfig, load_config
from fincprg.export.beir import SUBSETS
from fincprg.export.negatives import bm25_negatives
from fincprg.export.splits import split_reports, split_topics, split_units
from fincprg.io import atomic_write_json, atomic_write_jsonl
from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext
from fincprg.records import Passage, Qrel, Query, Report, Topic, TopicAssignment

BOILER = "本报告仅供参考，投资有风险，入市需谨慎。评级说明：买入指未来六个月跑赢指数百分之十五以上。"
COMPANIES = ["贵州茅台", "五粮液", "宁德时代", "比亚迪", "中芯国际", "恒瑞医药", "迈瑞医疗", "招商银行", "中国平安", "万科"]
LEAF = {f"r{i}": ("t0" if i < 5 else "t1") for i in range(9)} | {"r9": "t-1"}


def _passage_text(i: int, k: int) -> str:
    c = COMPANIES[i]
    if k == 2 and i in (0, 6):
        return BOILER  # the same boilerplate passage in a train-ish and a test-ish report
    topics = ["营业收入同比增长百分之二十，毛利率提升", "归母净利润二零二三年预计创新高，产能扩张", "估值处于历史低位，维持买入评级"]
    return f"{c}{topics[k]}，公司{c}在第{k}段讨论了{'行业景气' if i % 2 else '渠道改革'}与{2020 + i}年的经营。"


def write_build(out: Path) -> dict[str, list]:
    """Write a 10-report build folder; returns the records written (for assertions)."""
    reports = [Report(id=f"r{i}", title=f"{COMPANIES[i]}（60000{i}）：深度报告{i}", text="...",
                      date=dt.date(2023, 1, 1 + i), industry="食品饮料" if i < 5 else "电子") for i in range(10)]
    passages = [Passage(id=f"r{i}#p{k}", report_id=f"r{i}", order=k, text=_passage_text(i, k))
                for i in range(10) for k in range(3)]
    queries: list[Query] = []
    qrels: list[Qrel] = []
    for p in passages:
        qp = Query(id=f"qp:{p.id}", level="passage", text=f"{p.text[:12]}的情况如何", source_ids=(p.id,),
                   report_id=p.report_id, provenance={"generator": "templates", "template": "passage", "version": 1})
        queries.append(qp)
        qrels.append(Qrel(query_id=qp.id, passage_id=p.id))
        for s in range(2):
            qs = Query(id=f"qs:{p.id}#s{s}", level="sentence", text=f"{p.text[s * 5:s * 5 + 10]}（{p.id}）？",
                       source_ids=(p.id,), parent_id=qp.id, report_id=p.report_id,
                       provenance={"generator": "templates", "sentence_id": f"{p.id}#s{s}",
                                   "template": "sentence", "version": 1})
            queries.append(qs)
            qrels.append(Qrel(query_id=qs.id, passage_id=p.id))
    nodes = [
        Topic(id="t0", parent_id="h0", title_ids=tuple(f"r{i}" for i in range(5)), industry="食品饮料", size=5,
              is_leaf=True),
        Topic(id="t1", parent_id="h0", title_ids=tuple(f"r{i}" for i in range(5, 9)), industry="电子", size=4,
              is_leaf=True),
        Topic(id="t-1", parent_id="h0", title_ids=("r9",), size=1, is_leaf=True),
        Topic(id="h0", children=("t0", "t1", "t-1"), size=10),
    ]
    assignments = [{"report_id": r.id, "title": r.title, "date": str(r.date), "industry": r.industry,
                    "leaf_topic": LEAF[r.id], "subtree_topic": LEAF[r.id] if LEAF[r.id] != "t-1" else "t-1"}
                   for r in reports]
    topic_queries = []
    for tid in ("t0", "t1", "h0"):
        topic_queries.append(Query(id=f"qi:{tid}:0", level="intent", text=f"{tid}主题意图", source_ids=(tid,),
                                   provenance={"generator": "templates", "template": "topic_intent", "version": 2}))
        for j in range(2):
            topic_queries.append(Query(id=f"qt:{tid}:0:{j}", level="topic", text=f"{tid}的子问题{j}：盈利与估值",
                                       source_ids=(tid,), parent_id=f"qi:{tid}:0",
                                       provenance={"generator": "templates", "template": "topic_intent",
                                                   "version": 2}))
    mined = [
        Qrel(query_id="qs:r0#p0#s0", passage_id="r0#p1", provenance="mined", score=0.995, via="qs:r0#p1#s0"),
        Qrel(query_id="qs:r5#p0#s1", passage_id="r5#p2", provenance="mined", score=0.993, via="qs:r5#p2#s0"),
        Qrel(query_id="qp:r0#p0", passage_id="r1#p1", provenance="mined", score=0.991, via="qp:r1#p1"),
        Qrel(query_id="qp:r0#p0", passage_id="r7#p0", provenance="mined", score=0.992, via="qp:r7#p0"),
        Qrel(query_id="qp:r6#p1", passage_id="r7#p1", provenance="mined", score=0.992, via="qp:r7#p1"),
        Qrel(query_id="qp:r6#p1", passage_id="r6#p0", provenance="mined", score=0.992, via="qp:r6#p0"),
        Qrel(query_id="qp:r9#p0", passage_id="r9#p1", provenance="mined", score=0.992, via="qp:r9#p1"),
        Qrel(query_id="qp:r9#p0", passage_id="r5#p1", provenance="mined", score=0.992, via="qp:r5#p1"),
        Qrel(query_id="qt:t0:0:0", passage_id="r1#p0", provenance="mined", score=0.999, via="qp:r1#p0"),
        Qrel(query_id="qt:t0:0:0", passage_id="r2#p1", provenance="mined", score=0.999, via="qp:r2#p1"),
        Qrel(query_id="qt:t0:0:1", passage_id="r3#p0", provenance="mined", score=0.999, via="qp:r3#p0"),
        Qrel(query_id="qt:t1:0:0", passage_id="r5#p0", provenance="mined", score=0.999, via="qp:r5#p0"),
        Qrel(query_id="qt:t1:0:1", passage_id="r6#p1", provenance="mined", score=0.999, via="qp:r6#p1"),
        Qrel(query_id="qt:h0:0:0", passage_id="r0#p0", provenance="mined", score=0.999, via="qp:r0#p0"),
        Qrel(query_id="qt:h0:0:0", passage_id="r9#p0", provenance="mined", score=0.999, via="qp:r9#p0"),
        Qrel(query_id="qt:h0:0:1", passage_id="r8#p2", provenance="mined", score=0.999, via="qp:r8#p2"),
        Qrel(query_id="qp:r1#p0", passage_id="gone#p9", provenance="mined", score=0.999, via="qp:gone#p9"),
    ]
    atomic_write_jsonl(out / "ingest" / "reports.jsonl", reports)
    atomic_write_jsonl(out / "chunk" / "passages.jsonl", passages)
    atomic_write_jsonl(out / "generate" / "queries.jsonl", queries)
    atomic_write_jsonl(out / "generate" / "qrels.jsonl", qrels)
    atomic_write_jsonl(out / "topics" / "queries.jsonl", topic_queries)
    # export reads the queries verify kept: here all of them
    atomic_write_jsonl(out / "verify" / "queries.jsonl", queries + topic_queries)
    atomic_write_jsonl(out / "verify" / "qrels.jsonl", qrels)
    atomic_write_jsonl(out / "topics" / "assignments.jsonl", assignments)
    atomic_write_json(out / "topics" / "tree.json", {"nodes": [n.model_dump() for n in nodes], "root": "h0"})
    atomic_write_jsonl(out / "mine" / "qrels.jsonl", mined)
    write_manifests(out, {"mine": "minesig123"})
    return {"reports": reports, "passages": passages, "queries": queries + topic_queries, "qrels": qrels + mined}


def write_manifests(out: Path, signatures: dict[str, str], cfg: PipelineConfig | None = None) -> None:
    """Upstream manifests as the runner writes them: each records its stage's declared config."""
    from fincprg.contract import declared_config

    for stage in ("ingest", "chunk", "generate", "topics", "verify", "mine"):
        spec = STAGE_BY_NAME[stage]
        atomic_write_json(out / spec.dir / "manifest.json",
                          {"signature": signatures.get(stage, f"{stage}sig"),
                           "config": declared_config(cfg or PipelineConfig(), spec.config_keys)})


def run_export(out: Path, cfg: PipelineConfig | None = None) -> dict:
    from fincprg.export.stage import run

    cfg = cfg or PipelineConfig()
    ctx = StageContext(STAGE_BY_NAME["export"], out, cfg, "exportsig42", show_progress=False)
    ctx.dir.mkdir(parents=True, exist_ok=True)
    return run(ctx)


def load_beir(folder: Path, qrels_name: str) -> tuple[dict, dict, dict]:
    """A BEIR GenericDataLoader look-alike: corpus/queries JSONL + qrels/<name>.tsv."""
    corpus, queries, qrels = {}, {}, {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["_id"]] = {"title": d["title"], "text": d["text"]}
    with open(folder / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            queries[d["_id"]] = d["text"]
    with open(folder / "qrels" / f"{qrels_name}.tsv", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter="\t")
        assert next(reader) == ["query-id", "corpus-id", "score"]
        for qid, pid, score in reader:
            qrels.setdefault(qid, {})[pid] = int(score)
    return corpus, {q: queries[q] for q in qrels}, qrels


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, dict, dict]:
    out = tmp_path_factory.mktemp("build")
    recs = write_build(out)
    # the boilerplate passages of r0 and r6 have identical queries on purpose (the negatives tests need
    # them); near-duplicate removal would merge them, and has its own tests (test_dedup_easiness.py)
    cfg = load_config(None, ["export.test_fraction=0.3", "export.negatives.n=3", "export.dedup.enabled=false"])
    counts = run_export(out, cfg)
    return out, recs, counts


def _pairs(out: Path, subset: str, split: str) -> set[tuple[str, str]]:
    _, _, qrels = load_beir(out / "dataset", f"{subset}-{split}")
    return {(q, p) for q, rels in qrels.items() for p in rels}


# --- splits -----------------------------------------------------------------------------------------


def test_report_split_is_deterministic_and_sized():
    ids = [f"rep{i}" for i in range(100)]
    a = split_reports(ids, {}, unit="report", seed=1, test_fraction=0.2)
    assert sum(v == "test" for v in a.values()) == 20
    assert a == split_reports(reversed(ids), {}, unit="report", seed=1, test_fraction=0.2)
    assert a != split_reports(ids, {}, unit="report", seed=2, test_fraction=0.2)
    assert set(split_reports(ids, {}, unit="report", seed=1, test_fraction=0.0).values()) == {"train"}
    assert set(split_reports(ids, {}, unit="report", seed=1, test_fraction=1.0).values()) == {"test"}


def test_units_move_whole_and_both_splits_get_something():
    leaves = {f"a{i}": "t0" for i in range(6)} | {f"b{i}": "t1" for i in range(3)} | {f"o{i}": "t-1" for i in range(3)}
    assign = {r: TopicAssignment(report_id=r, title="", leaf_topic=t) for r, t in leaves.items()}
    for seed in range(20):
        s = split_reports(assign, assign, unit="leaf", seed=seed, test_fraction=0.25)
        assert len({s[f"a{i}"] for i in range(6)}) == 1 and len({s[f"b{i}"] for i in range(3)}) == 1
        assert set(s.values()) == {"train", "test"}
    # outliers (t-1) are not a cluster: across seeds they land in different splits
    splits = [tuple(split_reports(assign, assign, unit="leaf", seed=k, test_fraction=0.25)[f"o{i}"]
                    for i in range(3)) for k in range(20)]
    assert any(len(set(t)) > 1 for t in splits)
    # a single unit never empties train
    assert split_units({"only": 5}, 0, 0.5) == {"only": "train"}


def test_topic_split_follows_majority_of_its_reports():
    nodes = {"t0": Topic(id="t0", title_ids=("a", "b", "c")), "h0": Topic(id="h0", children=("t0", "t1")),
             "t1": Topic(id="t1", title_ids=("d",))}
    rs = {"a": "test", "b": "test", "c": "train", "d": "train"}
    got = split_topics(["t0", "t1", "h0", "unknown"], nodes, rs, seed=0, test_fraction=0.5)
    assert got["t0"] == "test" and got["t1"] == "train"
    # ties (h0: 2 test vs 2 train; unknown: no reports) fall to the seeded hash, pinned for seed 0
    assert got["h0"] == "test" and got["unknown"] == "test"


# --- the exported dataset ----------------------------------------------------------------------------


def test_all_files_and_counts(built):
    out, _, counts = built
    d = out / "dataset"
    for name in ("corpus.jsonl", "queries.jsonl", "README.md", "train/flagembedding.jsonl", "hf/README.md"):
        assert (d / name).exists(), name
    for subset in SUBSETS:
        for split in ("train", "test"):
            pairs = _pairs(out, subset, split)
            assert counts["qrels"][subset][split]["pairs"] == len(pairs)
    assert counts["corpus"] == 30
    assert counts["dropped"]["dangling"] == 1  # the label to gone#p9
    assert counts["reports"]["train"] + counts["reports"]["test"] == 10 and counts["reports"]["test"] >= 1


def test_no_dangling_ids_and_no_report_in_two_splits(built):
    out, recs, _ = built
    corpus_report = {p.id: p.report_id for p in recs["passages"]}
    query_report = {q.id: q.report_id for q in recs["queries"]}
    seen: dict[str, set[str]] = {"train": set(), "test": set()}
    for subset in SUBSETS:
        for split in ("train", "test"):
            corpus, queries, qrels = load_beir(out / "dataset", f"{subset}-{split}")
            for qid, rels in qrels.items():
                assert qid in queries and rels, qid
                assert all(pid in corpus for pid in rels)
                seen[split] |= {corpus_report[p] for p in rels}
                if query_report.get(qid):
                    seen[split].add(query_report[qid])
    assert seen["train"] and seen["test"]
    assert not seen["train"] & seen["test"]


def test_topic_clusters_not_split(built):
    out, recs, _ = built
    topic_of = {q.id: q.source_ids[0] for q in recs["queries"] if q.level == "topic"}
    where: dict[str, set[str]] = {}
    for split in ("train", "test"):
        for q, _ in _pairs(out, "topic", split):
            where.setdefault(topic_of[q], set()).add(split)
    assert where and all(len(s) == 1 for s in where.values())
    # leaf units: all t0 reports in one split, so t0's subqueries keep all their labels
    t0 = {(q, p) for split in ("train", "test") for q, p in _pairs(out, "topic", split) if q.startswith("qt:t0")}
    assert t0 == {("qt:t0:0:0", "r1#p0"), ("qt:t0:0:0", "r2#p1"), ("qt:t0:0:1", "r3#p0")}


def test_subset_definitions(built):
    out, recs, _ = built
    level = {q.id: q.level for q in recs["queries"]}
    direct = {(q.query_id, q.passage_id) for q in recs["qrels"] if q.provenance == "direct"}
    for split in ("train", "test"):
        p = {s: _pairs(out, s, split) for s in SUBSETS}
        assert p["sentence"] <= p["sentence-mined"] and p["passage"] <= p["passage-mined"]
        assert p["sentence"] <= direct and p["passage"] <= direct
        assert {level[q] for q, _ in p["sentence-mined"]} <= {"sentence"}
        assert {level[q] for q, _ in p["passage-mined"]} <= {"passage"}
        assert {level[q] for q, _ in p["topic"]} <= {"topic"}
        assert p["all"] == p["sentence-mined"] | p["passage-mined"] | p["topic"]
    mined_in = _pairs(out, "sentence-mined", "train") | _pairs(out, "sentence-mined", "test")
    assert ("qs:r0#p0#s0", "r0#p1") in mined_in  # a same-report mined label always survives
    # intent queries are exported but never labelled
    queries = [json.loads(x) for x in (out / "dataset" / "queries.jsonl").read_text("utf-8").splitlines()]
    assert sum(q["level"] == "intent" for q in queries) == 3
    all_q = {q for s in ("train", "test") for q, _ in _pairs(out, "all", s)}
    assert not {q for q in all_q if level[q] == "intent"}


def test_cross_split_labels_dropped(built):
    out, recs, counts = built
    split_of_report = {}
    for split in ("train", "test"):
        for q, p in _pairs(out, "all", split):
            split_of_report[p.split("#")[0]] = split
    mined = [q for q in recs["qrels"] if q.provenance == "mined" and not q.passage_id.startswith("gone")]
    crossing = 0
    for q in mined:
        qsplit = next((s for s in ("train", "test") if any(a == q.query_id for a, _ in _pairs(out, "all", s))), None)
        if qsplit and split_of_report.get(q.passage_id.split("#")[0], qsplit) != qsplit:
            crossing += 1
            assert (q.query_id, q.passage_id) not in _pairs(out, "all", qsplit)
    assert crossing > 0 and counts["dropped"]["cross_split"] == crossing


def test_hard_negatives_never_positive(built):
    out, recs, _ = built
    text = {p.id: p.text for p in recs["passages"]}
    qtext = {q.id: q.text for q in recs["queries"]}
    known: dict[str, set[str]] = {}
    for q in recs["qrels"]:
        if q.passage_id in text:
            known.setdefault(qtext[q.query_id], set()).add(text[q.passage_id])
    train_texts = {text[p] for s in SUBSETS for _, p in _pairs(out, s, "train")}
    test_reports = {p.split("#")[0] for s in SUBSETS for _, p in _pairs(out, s, "test")}
    test_only_texts = {text[p] for p in text if p.split("#")[0] in test_reports} - {
        text[p] for p in text if p.split("#")[0] not in test_reports}
    lines = [json.loads(x) for x in (out / "dataset/train/flagembedding.jsonl").read_text("utf-8").splitlines()]
    assert lines and sum(len(x["neg"]) for x in lines) > 0
    for x in lines:
        assert set(x) == {"query", "pos", "neg"}
        assert x["pos"] and set(x["pos"]) <= train_texts
        assert not set(x["neg"]) & known[x["query"]], x["query"]
        assert not set(x["neg"]) & test_only_texts
        assert len(x["neg"]) <= 3 and len(set(x["neg"])) == len(x["neg"])
    # the mined positive r0#p1 of qs:r0#p0#s0 is excluded even though it shares its report
    mined_q = qtext["qs:r0#p0#s0"]
    assert not [x for x in lines if x["query"] == mined_q and text["r0#p1"] in x["neg"]]


def test_bm25_excludes_positives_ranked_first_and_equal_texts():
    texts = ["贵州茅台营业收入增长", "贵州茅台营业收入增长", "五粮液毛利率下降", "宁德时代电池出货", "招商银行净息差"]
    got = bm25_negatives(["贵州茅台营业收入"], [{0}], texts, 3)
    # 1 has the positive's text and 2-4 share no term with the query (zero score): no negative left
    assert got == [[]]
    got = bm25_negatives(["贵州茅台营业收入 五粮液 宁德时代"], [{0}], texts, 5, positive_texts=[{"五粮液毛利率下降"}])
    assert 0 not in got[0] and 1 not in got[0] and 2 not in got[0] and 3 in got[0]
    assert 4 not in got[0]  # zero-score padding from bm25s is not a negative


def test_card_has_table_models_and_signatures(built):
    out, _, counts = built
    card = (out / "dataset" / "README.md").read_text("utf-8")
    assert "| subset | split | queries | avg query length (chars) |" in card
    for subset in SUBSETS:
        s = counts["qrels"][subset]["test"]
        # an empty split is said in words, not listed (this fixture has no report-level query)
        assert (f"| {subset} | test | {s['queries']} |" in card) == bool(s["queries"])
    assert counts["qrels"]["passage"]["test"]["queries"]
    assert "offline templates" in card and "minesig123" in card and "exportsig42" in card
    assert "templates/sentence@1" in card and "templates/topic_intent@2" in card
    assert "Licence" in card
    from fincprg.export.card import config_hash

    assert config_hash(load_config(None, ["export.test_fraction=0.3", "export.negatives.n=3",
                                         "export.dedup.enabled=false"])) in card
    assert config_hash(PipelineConfig()) not in card


def test_card_describes_the_config_that_produced_the_data(tmp_path):
    """The card names the models recorded in the upstream manifests, not the config loaded at export time."""
    out = tmp_path / "b"
    write_build(out)
    producer = load_config(None, ["mine.reranker.backend=flag", "mine.reranker.model=/models/bge-rr"])
    write_manifests(out, {}, producer)
    run_export(out, load_config(None, ["export.hf=false"]))  # today's config says lexical
    card = (out / "dataset" / "README.md").read_text("utf-8")
    assert "flag /models/bge-rr" in card and "offline lexical scorer" not in card
    from fincprg.export.card import config_hash

    assert config_hash(load_config(None, ["mine.reranker.backend=flag", "mine.reranker.model=/models/bge-rr",
                                          "export.hf=false"])) in card


def test_hf_layout_loads_with_datasets(built, tmp_path):
    import datasets

    out, _, counts = built
    hf = str(out / "dataset" / "hf")
    # datasets fixes its cache folder at import, so HF_HOME isolation per test does not reach it;
    # a cache of its own keeps another test's same-named "hf" folder from answering
    cache = str(tmp_path / "datasets-cache")
    corpus = datasets.load_dataset(hf, "corpus", split="corpus", cache_dir=cache)
    assert len(corpus) == 30 and set(corpus.column_names) == {"_id", "title", "text", "report_id", "date",
                                                               "industry"}
    queries = datasets.load_dataset(hf, "queries", split="queries", cache_dir=cache)
    assert json.loads(queries[0]["provenance"])["generator"] == "templates"
    ids = set(corpus["_id"])
    qids = set(queries["_id"])
    for subset in SUBSETS:
        for split in ("train", "test"):
            n = counts["qrels"][subset][split]["pairs"]
            if n == 0:
                continue
            ds = datasets.load_dataset(hf, subset, split=split, cache_dir=cache)
            assert len(ds) == n
            assert set(ds["corpus-id"]) <= ids and set(ds["query-id"]) <= qids


def test_negatives_none_and_split_unit_report(tmp_path):
    write_build(tmp_path)
    cfg = load_config(None, ["export.negatives.method=none", "export.split_unit=report", "export.hf=false"])
    counts = run_export(tmp_path, cfg)
    lines = [json.loads(x) for x in (tmp_path / "dataset/train/flagembedding.jsonl").read_text("utf-8").splitlines()]
    # no mining, but FlagEmbedding cannot read an empty neg list: random training passages, never a positive
    assert lines and all(len(x["neg"]) == 7 and not set(x["neg"]) & set(x["pos"]) for x in lines)
    assert "7 were mined" not in (tmp_path / "dataset" / "README.md").read_text("utf-8")
    assert ", 0 were mined" in (tmp_path / "dataset" / "README.md").read_text("utf-8")
    assert not (tmp_path / "dataset" / "hf").exists()
    # 20% of 10 reports would be 2, but the hash put no labelled topic node in test: topic t1 (its
    # reports r5-r8) moves there whole, so the topic subset has a test set (splits.ensure_topic_test)
    assert counts["reports"]["test"] == 4
    assert counts["qrels"]["topic"]["test"]["pairs"] == 2 and counts["qrels"]["topic"]["train"]["pairs"] >= 1


def test_model_ids_name_real_models_when_configured():
    from fincprg.export.card import model_ids

    cfg = load_config(Path(__file__).resolve().parents[2] / "pipelines" / "paper.yaml")
    ids = model_ids(cfg)
    assert "gpt-4o" in ids["query generator"] and "gpt-4o" in ids["topic intents"]
    assert "FinBERT2-IC" in ids["industry classifier"]
    assert "bge-reranker-v2-m3" in ids["reranker"] and "0.99" in ids["reranker"]
    offline = model_ids(load_config(None, ["topics.classifier.model=some/model"]))
    assert offline["industry classifier"] == "offline CITIC keyword lexicon"  # lexicon backend ignores model
    assert offline["query generator"].startswith("offline templates")


def test_card_says_when_a_mined_subset_adds_nothing():
    from fincprg.export.card import _mined_notes

    s = {"pairs": 5}
    same = {"sentence": {"train": s}, "sentence-mined": {"train": s},
            "passage": {"train": {"pairs": 3}}, "passage-mined": {"train": {"pairs": 4}}}
    notes = "\n".join(_mined_notes(same))
    assert "`sentence-mined` equals `sentence`" in notes and "passage-mined" not in notes
