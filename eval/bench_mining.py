"""Mining at paper scale (~26k passages, ~130k sentence queries) with the offline lexical scorer.

Corpus (built once, cached under --work): 1,300 synthetic reports x 20 passages x 5 sentences.
- Report titles and industries: 1,300 real East Money titles from ../shared/data/titles, drawn
  from the 30 largest industries (industry = the report's largest subtree, 30 subtrees like the
  30 CITIC level-1 industries); one leaf topic per 10 titles of an industry, the industry node
  as the inner topic; 5 subqueries per topic node, synthesised from its titles (the topics
  stage's LLM/offline subqueries are not what is measured here).
- Sentences: real sentences from ../shared/data (AlphaFin report bodies + the 2019 annual
  report), drawn with a per-report offset; every digit run is re-drawn per report so repeated
  sentences are distinct facts (otherwise every sentence would be cross-report boilerplate),
  and each report gets a real company name from taxonomy/stock_basic.csv.
  Written as stage outputs: ingest/reports.jsonl, chunk/passages.jsonl, chunk/sentences.jsonl.
- Queries (--queries):
  templates (default): the real generate stage (fincprg.generate.stage.run: TemplateGenerator +
  query completion, resumable map_batches) runs once over those passages in a child process and
  writes generate/queries.jsonl + direct qrels; its wall time and counts are kept in
  generate/bench.json, so repeats (and re-runs with the same --work) do not regenerate.
  Sentences the generator finds unclear get no query, so there are somewhat fewer than 130k.
  sentences: query texts synthesised from the real sentences directly
  ("<company><sentence[:36]>的原因是什么？", passage: "<company><first sentence[:24]>等方面的情况如何？").

Measured: the mine stage in a subprocess (2 BLAS threads): wall time of the stage (median of
--repeats runs) and ru_maxrss, full traversal, pairs scored per space against the cost model,
accepted/vetoed pairs; then once with the LSA top-k prefilter: pairs saved and the share of the
full run's mined qrels it keeps.
Usage: python eval/bench_mining.py [--queries templates|sentences] [--repeats 3] [--work DIR]
(default --work /tmp/fincprg-bench-mining-<queries>)
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
from collections import Counter
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


def build_corpus(out: Path, queries: str, seed: int = 0) -> None:
    """Write ingest, chunk and topics outputs; with ``queries="sentences"`` also generate/."""
    import datetime as dt

    from fincprg.io import atomic_write_json, atomic_write_jsonl
    from fincprg.records import Passage, Qrel, Query, Report, Sentence, Topic

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
    meta = {t["id"]: t for t in chosen}
    reports, passages, sentences, qs, qrels = [], [], [], [], []
    for rid, company, ps in jobs:
        t = meta[rid]
        reports.append(Report(id=rid, title=t["title"], text="\n".join("".join(ss) for ss in ps),
                              date=dt.date.fromisoformat(t["publish_date"]), company=company,
                              industry=t["industry_name"], source="bench_mining"))
        for pi, (pid, ss, pq, sq) in enumerate(gen[rid]):
            passages.append(Passage(id=pid, report_id=rid, order=pi, text="".join(ss)))
            qs.append(Query(id=f"qp:{pid}", level="passage", text=pq, source_ids=(pid,), report_id=rid))
            qrels.append(Qrel(query_id=f"qp:{pid}", passage_id=pid))
            for si, (s, q) in enumerate(zip(ss, sq, strict=True)):
                sid = f"{pid}#s{si}"
                sentences.append(Sentence(id=sid, passage_id=pid, order=si, text=s))
                qs.append(Query(id=f"qs:{sid}", level="sentence", text=q, source_ids=(pid,),
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
    atomic_write_jsonl(out / "ingest" / "reports.jsonl", reports)
    atomic_write_jsonl(out / "chunk" / "passages.jsonl", passages)
    atomic_write_jsonl(out / "chunk" / "sentences.jsonl", sentences)
    if queries == "sentences":
        atomic_write_jsonl(out / "generate" / "queries.jsonl", qs)
        atomic_write_jsonl(out / "generate" / "qrels.jsonl", qrels)
    atomic_write_json(out / "topics" / "tree.json", {"nodes": [n.model_dump() for n in nodes], "root": "h0"})
    atomic_write_jsonl(out / "topics" / "assignments.jsonl", assign)
    atomic_write_jsonl(out / "topics" / "queries.jsonl", tq)
    atomic_write_json(out / "corpus.json", {"queries": queries, "seed": seed, "reports": len(reports)})


def run_stage(out: Path, stage: str, overrides: list[str]) -> None:
    """Child process: run one stage (mine or generate), print {"seconds", "counts"} as the last line.

    The signature is fixed, so an interrupted generate run resumes from its committed batches.
    """
    import importlib

    from fincprg.config import load_config
    from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext

    run = importlib.import_module(f"fincprg.{stage}.stage").run
    cfg = load_config(None, overrides)
    ctx = StageContext(STAGE_BY_NAME[stage], out, cfg, "bench", show_progress=False)
    ctx.dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    counts = run(ctx)
    secs = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: KiB)
    print(json.dumps({"seconds": secs, "maxrss_mib": rss, "counts": counts}, ensure_ascii=False))


def _child(out: Path, overrides: list[str], stage: str = "mine") -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", MKL_NUM_THREADS="2", HF_HUB_OFFLINE="1")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, __file__, "--child", str(out), "--child-stage", stage, *overrides],
                       env=env, cwd=ROOT, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"{stage} child failed (rc={p.returncode}):\n{p.stderr[-4000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["process_seconds"] = time.perf_counter() - t0
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", choices=("templates", "sentences"), default="templates")
    ap.add_argument("--work", type=Path, help="default /tmp/fincprg-bench-mining-<queries>")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--top-k", type=int, default=20)
    ap.add_argument("--note", default="", help="free text appended to the README section")
    ap.add_argument("--child", type=Path)
    ap.add_argument("--child-stage", choices=("mine", "generate"), default="mine")
    ap.add_argument("overrides", nargs="*")
    a = ap.parse_args()
    if a.child:
        run_stage(a.child, a.child_stage, a.overrides)
        return
    a.work = a.work or Path(f"/tmp/fincprg-bench-mining-{a.queries}")
    t0 = time.perf_counter()
    marker = a.work / "corpus.json"
    if not marker.exists() or json.loads(marker.read_text())["queries"] != a.queries:
        build_corpus(a.work, a.queries)
    print(f"corpus ready in {time.perf_counter() - t0:.0f}s at {a.work}", flush=True)
    a.gen = None
    if a.queries == "templates":
        a.gen = generate_queries(a.work)
    full = [_child(a.work, []) for _ in range(a.repeats)]
    mined_full = {tuple(json.loads(x).values())[:2] for x in open(a.work / "mine" / "qrels.jsonl")}
    pre = _child(a.work, ["mine.prefilter.enabled=true", f"mine.prefilter.top_k={a.top_k}"])
    mined_pre = {tuple(json.loads(x).values())[:2] for x in open(a.work / "mine" / "qrels.jsonl")}
    report(a, full, pre, mined_full, mined_pre)


def generate_queries(work: Path) -> dict:
    """Run the real generate stage once (child process); cached in generate/bench.json."""
    cache = work / "generate" / "bench.json"
    if cache.exists():
        res = json.loads(cache.read_text(encoding="utf-8"))
        print(f"generate: cached ({res['seconds']:.0f} s when it ran)", flush=True)
        return res
    print("generate: running the template generator over the corpus...", flush=True)
    res = _child(work, [], stage="generate")
    cache.write_text(json.dumps(res, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"generate: {res['seconds']:.0f} s, {json.dumps(res['counts'], ensure_ascii=False)}", flush=True)
    return res


def repeated_texts(queries_path: Path) -> dict:
    """How often sentence-query texts repeat, within a report and across reports."""
    per_report: Counter = Counter()
    reports_of: dict[str, set[str]] = {}
    for line in open(queries_path, encoding="utf-8"):
        q = json.loads(line)
        if q["level"] == "sentence":
            per_report[(q["report_id"], q["text"])] += 1
            reports_of.setdefault(q["text"], set()).add(q["report_id"])
    top = max(per_report.items(), key=lambda kv: (kv[1], kv[0]), default=(("", ""), 0))
    return {"within_report": sum(n - 1 for n in per_report.values() if n > 1), "max_in_report": top[1],
            "example": top[0][1], "distinct": len(reports_of),
            "repeated_texts": sum(1 for r in reports_of.values() if len(r) > 1)}


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
    qlev_t = sum(1 for _ in open(a.work / "topics" / "queries.jsonl"))
    tot_pre = sum(v["pairs"] for v in pre["counts"]["spaces"].values())
    kept = len(mined_full & mined_pre) / max(len(mined_full), 1)
    if a.gen:
        g = a.gen["counts"]
        how = (f"queries and direct qrels written by the real generate stage (TemplateGenerator + completion): "
               f"**{a.gen['seconds']:.0f} s** for {g['passages']:,} passages "
               f"({g['passages'] / a.gen['seconds']:.0f} passages/s, one process; whole child process "
               f"{a.gen['process_seconds']:.0f} s, peak RSS {a.gen['maxrss_mib']:,.0f} MiB); "
               f"{g['empty_sentence_queries']:,} of {g['sentences']:,} sentences unclear (no query, "
               f"{g['empty_share']:.1%}), {g['completed']:,} queries changed by completion, "
               f"failures {json.dumps(g['failures'])}")
    else:
        how = "query texts synthesised from the sentences directly (`--queries sentences`)"
    same = all(v["pairs"] == v["expected_pairs"] for v in c["spaces"].values())
    rep = repeated_texts(a.work / "generate" / "queries.jsonl")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    text = f"""## Mining at paper scale (offline lexical scorer, {os.cpu_count()} cores)

`python eval/bench_mining.py --queries {a.queries} --repeats {a.repeats}` ({time.strftime('%Y-%m-%d')}, commit {commit}).
Corpus: {n_pass:,} passages, {qlev.get('sentence', 0):,} sentence queries, {qlev.get('passage', 0):,} passage
queries; {N_REPORTS:,} real East Money titles ({N_INDUSTRIES} industries = {N_INDUSTRIES} subtrees) and real sentences from
../shared/data with re-drawn numbers (see the script docstring); {how}.
Intent and topic subqueries ({qlev_t:,}) are synthesised from the titles. Direction `both`, threshold {c['threshold']},
veto and boilerplate on.

- wall time of the mine stage: median **{med:.1f} s** of {len(full)} runs
  ({', '.join(f"{r['seconds']:.1f}" for r in full)}); whole process incl. imports and reading inputs
  {statistics.median(r['process_seconds'] for r in full):.1f} s. Target < 300 s.
- peak memory (ru_maxrss of the stage process): **{rss:,.0f} MiB**. Target < 4 GiB.

{chr(10).join(rows)}

Pairs scored {"equal" if same else "DIFFER FROM"} the §7.1 cost model {"in every space" if same else "(see table)"}. Vetoes by reason: {json.dumps(c['vetoed'], ensure_ascii=False)};
boilerplate queries: {c['boilerplate_queries']:,}; mined qrels: {c['mined_qrels']:,} {json.dumps(c['mined_qrels_by_level'])}.
`pairs.jsonl` keeps every pair scoring >= 0.85 (and every accepted/vetoed pair); the rest are counted in
`histogram.json` (100 bins per space) — the full pair list would be {tot_full:,} lines.

Prefilter (LSA top-{a.top_k} neighbours per query inside each space): {tot_pre:,} pairs scored instead of
{tot_full:,} (**{1 - tot_pre / max(tot_full, 1):.1%} saved**), stage time {pre['seconds']:.1f} s
(includes the LSA fit), mined positives kept: **{kept:.1%}** ({len(mined_full & mined_pre):,} of {len(mined_full):,}).

Repeated sentence-query texts (identical texts are equivalent by definition, so they drive the sentence-space
accepts): {rep['within_report']:,} sentence queries repeat a text of their own report (at most
{rep['max_in_report']} times, e.g. `{rep['example']}`); {rep['repeated_texts']:,} of {rep['distinct']:,} distinct
sentence-query texts occur in more than one report.
{a.note + chr(10) if a.note else ""}"""
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
