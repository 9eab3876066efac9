"""A small build OUT folder written in code, for the audit and report tests.

Some documents, queries and topic keywords carry HTML/JS payloads, so tests can prove the report
and review pages escape them.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from fincprg.records import Passage, Qrel, Query, ScoredPair, Sentence, Topic

SCRIPT = "<script>window.__pwned=1;document.title='PWNED'</script>"
IMG = "<img src=x onerror=\"document.title='PWNED'\">"
THRESHOLD = 0.9
SPACES = ("sentence", "passage", "topic")


def _jsonl(path: Path, rows: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write((r.model_dump_json() if hasattr(r, "model_dump_json") else json.dumps(r, ensure_ascii=False))
                    + "\n")


def _json(path: Path, obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")


def make_build(root: Path, *, n_pairs: int = 400, seed: int = 0) -> Path:
    """Write OUT with chunk/, generate/, topics/, mine/, dataset/ and manifests; returns OUT."""
    out = root / "out"
    rng = random.Random(seed)
    companies = ["星河科技", "远山医药", "北辰电子", "<b>恶意</b>公司"]
    metrics = ["营业收入", "归母净利润", "毛利率", "ROE"]
    passages, sentences, queries, qrels = [], [], [], []
    for r in range(4):
        rid = f"r{r}"
        for p in range(3):
            pid = f"{rid}#p{p}"
            text = f"{companies[r]}2024年{metrics[p]}同比增长{10 + p}%。"
            if r == 0 and p == 0:
                text += f"正文含有攻击文本{SCRIPT}以及{IMG}结束。"
            passages.append(Passage(id=pid, report_id=rid, order=p, text=text))
            queries.append(Query(id=f"qp:{pid}", level="passage", text=f"{companies[r]}2024年{metrics[p]}表现如何？",
                                 source_ids=(pid,), report_id=rid, provenance={"generator": "templates"}))
            qrels.append(Qrel(query_id=f"qp:{pid}", passage_id=pid))
            for s in range(2):
                sid = f"{pid}#s{s}"
                sentences.append(Sentence(id=sid, passage_id=pid, order=s, text=text[:20]))
                qtext = f"{companies[r]}2024年{metrics[(p + s) % 4]}增速是多少？"
                if r == 0 and p == 0 and s == 0:
                    qtext += SCRIPT
                queries.append(Query(id=f"qs:{sid}", level="sentence", text=qtext, source_ids=(pid,),
                                     parent_id=f"qp:{pid}", report_id=rid,
                                     provenance={"generator": "templates", "sentence_id": sid}))
                qrels.append(Qrel(query_id=f"qs:{sid}", passage_id=pid))
    _jsonl(out / "chunk" / "passages.jsonl", passages)
    _jsonl(out / "chunk" / "sentences.jsonl", sentences)
    _jsonl(out / "generate" / "queries.jsonl", queries)
    _jsonl(out / "generate" / "qrels.jsonl", qrels)
    _jsonl(out / "ingest" / "reports.jsonl", [
        {"id": f"r{r}", "title": f"{companies[r]}：2024年业绩点评", "text": "..."} for r in range(4)])

    nodes = [
        Topic(id="h0", children=("t0", "t1"), keywords=("科技", "医药"), size=4, title_ids=("r0", "r1", "r2", "r3")),
        Topic(id="t0", parent_id="h0", keywords=("科技", SCRIPT), industry="电子", size=2, is_leaf=True,
              title_ids=("r0", "r2")),
        Topic(id="t1", parent_id="h0", keywords=("医药",), industry="医药", size=2, is_leaf=True,
              title_ids=("r1", "r3")),
    ]
    _json(out / "topics" / "tree.json", {"nodes": [n.model_dump(mode="json") for n in nodes], "root": "h0"})
    tq = []
    for t in ("t0", "t1"):
        tq.append(Query(id=f"qi:{t}:0", level="intent", text=f"{t}行业景气度如何？", source_ids=(t,)))
        for j in range(2):
            tq.append(Query(id=f"qt:{t}:0:{j}", level="topic", text=f"{t}子问题{j}{IMG if j == 0 else ''}",
                            parent_id=f"qi:{t}:0", source_ids=(t,)))
    _jsonl(out / "topics" / "queries.jsonl", tq)

    ids = {"sentence": [q.id for q in queries if q.level == "sentence"],
           "passage": [q.id for q in queries if q.level == "passage"],
           "topic": [q.id for q in tq if q.level == "topic"]}
    pairs = []
    for i in range(n_pairs):
        space = SPACES[i % 3]
        a, b = rng.sample(ids[space], 2)
        score = round(0.85 + 0.15 * rng.random(), 4)
        veto = "period" if score >= THRESHOLD and i % 17 == 0 else None
        pairs.append(ScoredPair(space=space, query_a=a, query_b=b, score=score,
                                accepted=score >= THRESHOLD and veto is None, veto=veto))
    _jsonl(out / "mine" / "pairs.jsonl", pairs)
    counts = {s: [0] * 100 for s in SPACES}
    for s in SPACES:
        for k in range(100):
            counts[s][k] = int(1000 * (0.9 ** k)) if k < 85 else 0
    for p in pairs:
        counts[p.space][min(99, int(p.score * 100))] += 1
    _json(out / "mine" / "histogram.json", {"threshold": THRESHOLD, "keep_min_score": 0.85, "bins": 100,
                                            "range": [0.0, 1.0], "reranker": "lexical", "counts": counts})
    _json(out / "mine" / "manifest.json", {"counts": {"threshold": THRESHOLD, "mined_qrels": 12}})
    mined = [Qrel(query_id=p.query_a, passage_id="r1#p0", provenance="mined", score=p.score, via=p.query_b)
             for p in pairs if p.accepted and p.space != "topic"][:10]
    _jsonl(out / "mine" / "qrels.jsonl", mined)

    ds = out / "dataset"
    _jsonl(ds / "corpus.jsonl", [{"_id": p.id, "title": "", "text": p.text} for p in passages])
    _jsonl(ds / "queries.jsonl", [{"_id": q.id, "text": q.text} for q in queries + tq])
    (ds / "qrels").mkdir(parents=True, exist_ok=True)
    for subset, level in (("sentence", "sentence"), ("passage", "passage")):
        rows = [q for q in qrels if q.query_id.startswith("qs:" if level == "sentence" else "qp:")]
        for split, part in (("train", rows[: len(rows) // 2]), ("test", rows[len(rows) // 2:])):
            (ds / "qrels" / f"{subset}-{split}.tsv").write_text(
                "query-id\tcorpus-id\tscore\n" + "".join(f"{q.query_id}\t{q.passage_id}\t1\n" for q in part),
                encoding="utf-8")
    (ds / "README.md").write_text("# dataset card\n", encoding="utf-8")
    _json(ds / "manifest.json", {"counts": {"corpus": len(passages), "queries": len(queries) + len(tq)}})
    return out


def write_eval(folder: Path) -> Path:
    """An eval --out folder (results.csv + results.md) with one hostile retriever name."""
    folder.mkdir(parents=True, exist_ok=True)
    metrics = ["R@1", "R@5", "R@10", "R@100", "nDCG@10", "MRR@10", "MAP@100"]
    lines = ["retriever,subset,n," + ",".join(metrics)]
    for r, base in (("bm25", 0.5), ("lsa", 0.3), (f"x{SCRIPT}", 0.1)):
        for s in ("sentence", "passage"):
            lines.append(f"\"{r}\",{s},6," + ",".join(f"{base + 0.01 * i:.6f}" for i in range(len(metrics))))
    (folder / "results.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "results.md").write_text("| table |\n", encoding="utf-8")
    return folder
