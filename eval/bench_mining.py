"""Mining at paper scale (~26k passages, ~130k sentence queries) with the offline lexical scorer.

Corpus (built once, cached under --work): 1,300 synthetic reports x 20 passages x 5 sentences.
- Report titles and industries: 1,300 real East Money titles from ../shared/data/titles, drawn
  from the 30 largest industries (industry = the report's largest subtree, 30 subtrees like the
  30 CITIC level-1 industries); one leaf topic per 10 titles of an industry, the industry node
  as the inner topic; 5 subqueries per topic node, synthesised from its titles.
- Sentences: real sentences from ../shared/data (AlphaFin report bodies + the 2019 annual
  report), drawn with a per-report offset; every digit run is re-drawn per report so repeated
  sentences are distinct facts (otherwise every sentence would be cross-report boilerplate),
  and each report gets a real company name from taxonomy/stock_basic.csv.
- Queries: synthesised from the real sentences directly ("<company><sentence[:36]>的原因是什么？",
  passage: "<company><first sentence[:24]>等方面的情况如何？"). The template generator
  (fincprg.generate.templates) was tried first but took over 15 minutes for the 156k queries
  on 2 cores, so the benchmark does not use it; the mining cost does not depend on how the
  query texts were written, only on their number and length.

Then the mine stage runs in a subprocess (2 BLAS threads) for wall time and ru_maxrss, full
traversal and with the LSA top-k prefilter; recall = mined qrels of the full run kept.
Usage: python eval/bench_mining.py [--repeats 3] [--work /tmp/fincprg-bench-mining]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
N_REPORTS, N_PASSAGES, N_SENTS, N_INDUSTRIES, TOPIC_SIZE, N_SUBQ = 1300, 20, 5, 30, 10, 5


def _sentences() -> list[str]:
    out = []
    for r in json.loads((DATA / "reports" / "alphafin_reports.json").read_text(encoding="utf-8")):
        out += re.split(r"[。；;！？\n]", r["content"])
    for items in json.loads((DATA / "annual_report" / "annual_report_300617_2019.json").read_text(
            encoding="utf-8")).values():
        out += [i["content"] for i in items if i.get("content_type") == "text"]
    return [s.strip() for s in dict.fromkeys(out) if 15 <= len(s.strip()) <= 120]


def _gen(job):
    """Queries synthesised from the real sentences directly (see the module docstring for why)."""
    rid, company, passages = job
    rows = []
    for pi, sents in enumerate(passages):
        pid = f"{rid}#p{pi}"
        pq = f"{company}{sents[0][:24]}等方面的情况如何？"
        sq = [f"{company}{s[:36]}的原因是什么？" for s in sents]
        rows.append((pid, sents, pq, sq))
    return rid, rows


def build_corpus(out: Path, seed: int = 0) -> None:
    from fincprg.pipeline.io import atomic_write_json, atomic_write_jsonl
    from fincprg.records import Passage, Qrel, Query, Sentence, Topic

    rng = random.Random(seed)
    titles = [json.loads(x) for x in open(DATA / "titles" / "eastmoney_industry_report_titles.jsonl", encoding="utf-8")]
    by_ind: dict[str, list[dict]] = {}
    for t in titles:
        by_ind.setdefault(t["industry_name"], []).append(t)
    inds = sorted(by_ind, key=lambda k: -len(by_ind[k]))[:N_INDUSTRIES]
    pool = [t for k in inds for t in by_ind[k]]
    chosen = sorted(rng.sample(pool, N_REPORTS), key=lambda t: t["id"])
    with open(DATA / "taxonomy" / "stock_basic.csv", encoding="utf-8") as f:
        companies = [r["name"] for r in csv.DictReader(f)]
    sents = _sentences()
    jobs = []
    for i, t in enumerate(chosen):
        r = random.Random(f"{seed}:{i}")
        start = r.randrange(len(sents))
        ps = []
        for pi in range(N_PASSAGES):
            row = []
            for si in range(N_SENTS):
                s = sents[(start + pi * N_SENTS + si) % len(sents)]
                row.append(re.sub(r"\d+", lambda m: str(r.randrange(10 ** len(m.group()))), s))
            ps.append(row)
        jobs.append((t["id"], companies[r.randrange(len(companies))], ps))
    gen = dict(map(_gen, jobs))
    passages, sentences, queries, qrels = [], [], [], []
    for rid, company, _ in jobs:
        for pi, (pid, ss, pq, sq) in enumerate(gen[rid]):
            passages.append(Passage(id=pid, report_id=rid, order=pi, text="".join(ss)))
            queries.append(Query(id=f"qp:{pid}", level="passage", text=pq, source_ids=(pid,), report_id=rid))
            qrels.append(Qrel(query_id=f"qp:{pid}", passage_id=pid))
            for si, (s, q) in enumerate(zip(ss, sq, strict=True)):
                sid = f"{pid}#s{si}"
                sentences.append(Sentence(id=sid, passage_id=pid, order=si, text=s))
                queries.append(Query(id=f"qs:{sid}", level="sentence", text=q, source_ids=(pid,),
                                     parent_id=f"qp:{pid}", report_id=rid, provenance={"sentence_id": sid}))
                qrels.append(Qrel(query_id=f"qs:{sid}", passage_id=pid))
    nodes, tq, assign = [], [], []
    for hi, ind in enumerate(inds):
        members = [t for t in chosen if t["industry_name"] == ind]
        leaves = []
        for k in range(0, len(members), TOPIC_SIZE):
            grp = members[k:k + TOPIC_SIZE]
            tid = f"t{hi * 100 + k // TOPIC_SIZE}"
            leaves.append(tid)
            nodes.append(Topic(id=tid, parent_id=f"h{hi}", title_ids=tuple(t["id"] for t in grp),
                               industry=ind, size=len(grp), is_leaf=True))
            for t in grp:
                assign.append({"report_id": t["id"], "title": t["title"], "date": t["publish_date"],
                               "industry": ind, "leaf_topic": tid, "subtree_topic": f"h{hi}"})
        nodes.append(Topic(id=f"h{hi}", children=tuple(leaves), title_ids=tuple(t["id"] for t in members),
                           industry=ind, size=len(members)))
    for n in nodes:
        titles_n = [t["title"] for t in chosen if t["id"] in set(n.title_ids)]
        tq.append(Query(id=f"qi:{n.id}:0", level="intent", text=f"{n.industry}行业的主要观点", source_ids=(n.id,)))
        for j in range(N_SUBQ):
            head = re.split(r"[：:，,]", titles_n[j % len(titles_n)])[-1][:30]
            tq.append(Query(id=f"qt:{n.id}:0:{j}", level="topic", text=f"{n.industry}{head}的原因是什么？",
                            source_ids=(n.id,), parent_id=f"qi:{n.id}:0"))
    atomic_write_jsonl(out / "chunk" / "passages.jsonl", passages)
    atomic_write_jsonl(out / "chunk" / "sentences.jsonl", sentences)
    atomic_write_jsonl(out / "generate" / "queries.jsonl", queries)
    atomic_write_jsonl(out / "generate" / "qrels.jsonl", qrels)
    atomic_write_json(out / "topics" / "tree.json", {"nodes": [n.model_dump() for n in nodes], "root": "h0"})
    atomic_write_jsonl(out / "topics" / "assignments.jsonl", assign)
    atomic_write_jsonl(out / "topics" / "queries.jsonl", tq)


def run_stage(out: Path, overrides: list[str]) -> None:
    """Child process: run the mine stage, print {"seconds", "counts"} as the last line."""
    from fincprg.config import load_config
    from fincprg.mine.stage import run
    from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext

    cfg = load_config(None, overrides)
    ctx = StageContext(STAGE_BY_NAME["mine"], out, cfg, "bench", show_progress=False)
    ctx.dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    counts = run(ctx)
    secs = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: KiB)
    print(json.dumps({"seconds": secs, "maxrss_mib": rss, "counts": counts}, ensure_ascii=False))


def _child(out: Path, overrides: list[str]) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", MKL_NUM_THREADS="2", HF_HUB_OFFLINE="1")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, __file__, "--child", str(out), *overrides], env=env, cwd=ROOT,
                       capture_output=True, text=True, check=True)
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["process_seconds"] = time.perf_counter() - t0
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/fincprg-bench-mining"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--top-k", type=int, default=20)
    ap.add_argument("--child", type=Path)
    ap.add_argument("overrides", nargs="*")
    a = ap.parse_args()
    if a.child:
        run_stage(a.child, a.overrides)
        return
    t0 = time.perf_counter()
    if not (a.work / "topics" / "queries.jsonl").exists():
        build_corpus(a.work)
    print(f"corpus ready in {time.perf_counter() - t0:.0f}s at {a.work}")
    full = [_child(a.work, []) for _ in range(a.repeats)]
    mined_full = {tuple(json.loads(x).values())[:2] for x in open(a.work / "mine" / "qrels.jsonl")}
    pre = _child(a.work, ["mine.prefilter.enabled=true", f"mine.prefilter.top_k={a.top_k}"])
    mined_pre = {tuple(json.loads(x).values())[:2] for x in open(a.work / "mine" / "qrels.jsonl")}
    report(a, full, pre, mined_full, mined_pre)


def report(a, full, pre, mined_full, mined_pre) -> None:
    c = full[0]["counts"]
    n_pass = sum(1 for _ in open(a.work / "chunk" / "passages.jsonl"))
    qlev: dict[str, int] = {}
    for line in open(a.work / "generate" / "queries.jsonl"):
        lv = json.loads(line)["level"]
        qlev[lv] = qlev.get(lv, 0) + 1
    med = statistics.median(r["seconds"] for r in full)
    rss = max(r["maxrss_mib"] for r in full)
    rows = ["| space | spaces | pairs scored | cost model | text pairs / block cells computed | identical | accepted | vetoed |",
            "|---|---|---|---|---|---|---|---|"]
    for k, v in c["spaces"].items():
        rows.append(f"| {k} | {v['spaces']} | {v['pairs']:,} | {v['expected_pairs']:,} | {v['text_pairs_scored'] + v.get('block_cells_scored', 0):,} "
                    f"| {v['identical_text_pairs']:,} | {v['accepted']:,} | {sum(v['vetoed'].values()):,} |")
    tot_full = sum(v["pairs"] for v in c["spaces"].values())
    tot_pre = sum(v["pairs"] for v in pre["counts"]["spaces"].values())
    kept = len(mined_full & mined_pre) / max(len(mined_full), 1)
    text = f"""## Mining at paper scale (offline lexical scorer, 2 cores)

`python eval/bench_mining.py --repeats {a.repeats}` ({time.strftime('%Y-%m-%d')}). Corpus: {n_pass:,} passages,
{qlev.get('sentence', 0):,} sentence queries, {qlev.get('passage', 0):,} passage queries from 1,300 real
East Money titles (30 industries = 30 subtrees) and real sentences from ../shared/data with re-drawn numbers;
queries synthesised from the sentences directly, not by the template generator (too slow at
this scale: over 15 min; see the script docstring).
Direction `both`, threshold {c['threshold']}, veto and boilerplate on.

- wall time of the mine stage: median **{med:.1f} s** of {len(full)} runs
  ({', '.join(f"{r['seconds']:.1f}" for r in full)}); whole process incl. imports and reading inputs
  {statistics.median(r['process_seconds'] for r in full):.1f} s. Target < 300 s.
- peak memory (ru_maxrss of the stage process): **{rss:,.0f} MiB**. Target < 4 GiB.

{chr(10).join(rows)}

Pairs scored equal the §7.1 cost model in every space. Vetoes by reason: {json.dumps(c['vetoed'], ensure_ascii=False)};
boilerplate queries: {c['boilerplate_queries']:,}; mined qrels: {c['mined_qrels']:,} {json.dumps(c['mined_qrels_by_level'])}.
`pairs.jsonl` keeps every pair scoring >= 0.85 (and every accepted/vetoed pair); the rest are counted in
`histogram.json` (100 bins per space) — the full pair list would be {tot_full:,} lines.

Prefilter (LSA top-{a.top_k} neighbours per query inside each space): {tot_pre:,} pairs scored instead of
{tot_full:,} (**{1 - tot_pre / max(tot_full, 1):.1%} saved**), stage time {pre['seconds']:.1f} s
(includes the LSA fit), mined positives kept: **{kept:.1%}** ({len(mined_full & mined_pre):,} of {len(mined_full):,}).
"""
    print(text)
    readme = ROOT / "eval" / "README.md"
    body = readme.read_text(encoding="utf-8") if readme.exists() else "# fincprg benchmarks\n"
    block = f"<!-- mining:start -->\n{text}<!-- mining:end -->"
    if "<!-- mining:start -->" in body:
        body = re.sub(r"<!-- mining:start -->.*<!-- mining:end -->", lambda _: block, body, flags=re.S)
    else:
        body = body.rstrip("\n") + "\n\n" + block + "\n"
    readme.write_text(body, encoding="utf-8")


if __name__ == "__main__":
    main()
