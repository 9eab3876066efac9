"""Benchmark: cluster all East Money report titles offline, and score the lexicon industry classifier.

Run: ``.venv/bin/python eval/bench_topics.py [--limit N] [--no-readme]`` (2 CPU cores by default).

Part 1 (topics): ~49k titles of ../shared/data/titles/eastmoney_industry_report_titles.jsonl through
the offline path of the topics stage with its default config except the flags below (min_cluster_size
30 and min_samples 5 suit 48k titles; the pipeline's defaults are for a few hundred reports): title
filter + dedup, lexicon classifier, jieba tokens (once), TF-IDF/LSA + CITIC one-hot + Time2Vec, HDBSCAN
(per industry after a per-industry PCA, by default), outlier reduction to the nearest topic of the
same industry, c-TF-IDF keywords and the Ward hierarchy (the config's engine, BERTopic by default: its
import is timed on its own and the fitted model is saved as the stage saves it; ``--engine native``
computes the same without BERTopic), dominant industries and subtrees. Records wall time (total, past
the BERTopic import, and per step), peak RSS (ru_maxrss), number of topics, outlier share (after reduction, and how many
titles it moved), and purity of the topics against the East Money industry labels (raw and mapped to
CITIC; also on the titles HDBSCAN clustered, without the moved ones). Neither the classifier nor the
clustering sees the East Money labels.

Part 2 (industry): the lexicon classifier's accuracy on ../shared/data/news/cfbenchmark_sector.jsonl
(Shenwan level-1 labels, mapped to CITIC; 采掘 counts as right for 煤炭 or 石油石化) and its agreement
with the East Money labels (mapped to CITIC) on the titles.

Results replace the ``<!-- topics:start -->`` … ``<!-- topics:end -->`` section of eval/README.md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("NUMBA_NUM_THREADS", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
TITLES = DATA / "titles" / "eastmoney_industry_report_titles.jsonl"
SECTOR = DATA / "news" / "cfbenchmark_sector.jsonl"
README = ROOT / "eval" / "README.md"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def purity(clusters: list[int], labels: list[str | None]) -> float:
    by: dict[int, Counter] = defaultdict(Counter)
    n = 0
    for c, lab in zip(clusters, labels, strict=True):
        if c != -1 and lab is not None:
            by[c][lab] += 1
            n += 1
    return sum(cnt.most_common(1)[0][1] for cnt in by.values()) / n if n else 0.0


def bench_topics(limit: int | None, cluster_overrides: dict, t2v_weight: float, embedder: str | None = None) -> dict:
    load_start = os.getloadavg()[0]
    from fincprg.config import TopicsConfig
    from fincprg.finance.industries import to_citic
    from fincprg.records import Report
    from fincprg.topics.cluster import cluster_titles
    from fincprg.topics.stage import embed_titles, label_industries
    from fincprg.topics.subtrees import build_nodes, subtree_for
    from fincprg.topics.titles import select_titles

    t0 = time.perf_counter()
    rows = [json.loads(line) for line in TITLES.open(encoding="utf-8")]
    if limit:
        rows = rows[:limit]
    em = {r["id"]: r["industry_name"] for r in rows}
    reports = [Report(id=r["id"], title=r["title"], text="", date=dt.date.fromisoformat(r["publish_date"]))
               for r in rows]
    emb_cfg = {"backend": "sentence-transformers", "model": embedder, "batch_size": 64} if embedder else {}
    cfg = TopicsConfig.model_validate({"cluster": cluster_overrides, "time2vec": {"weight": t2v_weight},
                                       **({"embedder": emb_cfg} if emb_cfg else {})})
    steps: dict[str, float] = {}
    s = time.perf_counter()
    kept, dropped = select_titles(reports, cfg.min_title_chars)
    kept, clf = label_industries(kept, reports, cfg)
    steps["filter+classify"] = time.perf_counter() - s
    s = time.perf_counter()
    if not embedder:  # as the stage does before LSA (with its progress bar): fills the tokenizer's cache
        from fincprg.finance import tokenize

        for t in kept:
            tokenize(t.title)
        steps["tokenise"] = time.perf_counter() - s
        s = time.perf_counter()
    emb = embed_titles(kept, cfg, 42, clf)
    steps["embed (e5+time2vec)" if embedder else "embed (LSA+time2vec)"] = time.perf_counter() - s
    if cfg.cluster.engine == "bertopic":
        s = time.perf_counter()
        import bertopic  # noqa: F401 - timed on its own: the import alone is slow

        steps["import bertopic"] = time.perf_counter() - s
    s = time.perf_counter()
    tree = cluster_titles([t.title for t in kept], emb, cfg.cluster, seed=42, industries=[t.industry for t in kept])
    steps["cluster + outliers + keywords + hierarchy"] = time.perf_counter() - s
    if tree.model is not None:  # the stage saves the fitted BERTopic (topics/bertopic/)
        import tempfile

        from fincprg.topics import bertopic_engine

        s = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            bertopic_engine.save(tree.model, Path(tmp) / "bertopic", {})
        steps["save BERTopic model"] = time.perf_counter() - s
    s = time.perf_counter()
    nodes = build_nodes(tree, [t.report_id for t in kept], [t.industry for t in kept], cfg.dominance)
    subs = [subtree_for(f"t{k}", t.industry, nodes) for t, k in zip(kept, tree.topics, strict=True)]
    steps["subtrees"] = time.perf_counter() - s
    total = time.perf_counter() - t0
    em_raw = [em[t.report_id] for t in kept]
    em_citic = [to_citic(x) for x in em_raw]
    return {
        "titles": len(rows), "kept": len(kept), "dropped": dict(Counter(t.reason for t in dropped)),
        "dims": int(emb.shape[1]), "cluster_config": cfg.cluster.model_dump(), "embedder": embedder or "lsa",
        "time2vec_weight": cfg.time2vec.weight,
        "engine": cfg.cluster.engine, "measured": dt.date.today().isoformat(),
        "wall_s": round(total, 1), "steps_s": {k: round(v, 1) for k, v in steps.items()},
        "wall_past_imports_s": round(total - steps.get("import bertopic", 0.0), 1),
        "peak_rss_mb": round(peak_rss_mb()),
        "cpu_s": round(sum(resource.getrusage(resource.RUSAGE_SELF)[:2]), 1), "topics": tree.n_topics, "tree_nodes": len(nodes),
        "outlier_share": round(tree.outlier_share, 4),
        "purity_eastmoney": round(purity(tree.topics, em_raw), 4),
        "eastmoney_industries": len(set(em_raw)),
        "purity_citic": round(purity(tree.topics, em_citic), 4),
        "reassigned_share": round(sum(tree.reassigned) / max(1, len(kept)), 4),
        "purity_citic_clustered": round(purity([-1 if m else k for k, m in zip(tree.topics, tree.reassigned or
                                                                                [False] * len(kept), strict=True)],
                                               em_citic), 4),
        "load_start": round(load_start, 2), "load_end": round(os.getloadavg()[0], 2),
        "subtree_above_leaf": round(sum(s_ != f"t{k}" for s_, k in zip(subs, tree.topics, strict=True))
                                    / max(1, len(subs)), 4),
        "notes": tree.notes,
    }


def bench_industry() -> dict:
    from fincprg.finance.industries import to_citic
    from fincprg.topics.classify import LexiconClassifier

    clf = LexiconClassifier()
    sec = [json.loads(line) for line in SECTOR.open(encoding="utf-8")]
    gold = [re.search(r"一级分类为：(\S+?)。", s["instruction"]).group(1) for s in sec]
    pred = clf.classify([s["input"] for s in sec])
    ok = [(p in ("煤炭", "石油石化")) if g == "采掘" else p == to_citic(g) for p, g in zip(pred, gold, strict=True)]
    rows = [json.loads(line) for line in TITLES.open(encoding="utf-8")]
    tp = clf.classify([r["title"] for r in rows])
    pairs = [(p, to_citic(r["industry_name"])) for p, r in zip(tp, rows, strict=True)]
    mapped = [(p, g) for p, g in pairs if g]
    return {
        "cfbenchmark_items": len(sec), "cfbenchmark_accuracy": round(sum(ok) / len(ok), 4),
        "cfbenchmark_unlabelled": round(sum(p is None for p in pred) / len(pred), 4),
        "eastmoney_titles_mapped": len(mapped),
        "eastmoney_agreement": round(sum(p == g for p, g in mapped) / len(mapped), 4),
        "eastmoney_unlabelled": round(sum(p is None for p, _ in mapped) / len(mapped), 4),
    }


def _other_engine(res: dict) -> str:
    """A line for the engine this run did not use, from its saved result (``--engine native`` or ``bertopic``)."""
    other = "native" if res.get("engine", "native") == "bertopic" else "bertopic"
    saved = RESULTS / f"result-lsa-{other}.json"
    if not saved.exists():
        return ""
    r = json.loads(saved.read_text("utf-8"))
    same = all(r.get(k) == res.get(k) for k in ("topics", "outlier_share", "purity_citic", "purity_eastmoney"))
    past = f" ({r['wall_past_imports_s']} s past the BERTopic import)" if other == "bertopic" else " (no BERTopic import)"
    return (f"- The `{other}` engine (`--engine {other}`, measured {r.get('measured', '?')}, median of {r.get('repeats', 1)} "
            f"runs at load {r.get('load_start', '?')}, range {r.get('load_start_range', '?')}): wall {r['wall_s']} s{past}, "
            f"{r['topics']} topics, outlier share {r['outlier_share']:.1%}, CITIC purity {r['purity_citic']:.1%}"
            f"{' (the same figures as above)' if same else ''}; steps {r['steps_s']}.")


def write_readme(res: dict, ind: dict) -> None:
    t = res
    engine = t.get("engine", "native")
    load = t.get("load_start", 0)
    busy = (" The machine was busy (other developers' jobs on the same 2 cores): the times are slower than on an "
            "idle machine." if isinstance(load, (int, float)) and load > 1.5 else "")
    lines = [
        "<!-- topics:start -->",
        "## Topics: clustering 49k report titles offline (eval/bench_topics.py)",
        "",
        f"Measured {dt.date.today().isoformat()} on a {os.cpu_count()}-core CPU box: median of {t.get('repeats', 1)} runs, "
        "each in a fresh process (imports and tokenizer start-up included; the wall time starts after the "
        "interpreter and fincprg's config module are up); 1-minute load average "
        f"{os.getloadavg()[0]:.1f} at the end (runs: median {t.get('load_start', '?')} at the start, range "
        f"{t.get('load_start_range', '?')}; above ~2 means other work shared the cores). "
        f"Identical topics and purity in every run: {t.get('same_result', 'n/a')}.{busy} "
        "Targets (issue 40, the default BERTopic engine): ≤ 20 s past the imports and ≤ 30 s with them, outlier "
        "share ≤ 10%, CITIC purity ≥ 0.85; < 4 GB.",
        "",
        f"- Titles: {t['titles']} read, {t['kept']} kept, dropped {t['dropped']}.",
        f"- Embedding: TF-IDF/LSA + CITIC one-hot {t['dims'] - 6} d + Time2Vec 6 d (weight {t['time2vec_weight']}); clustering config `{json.dumps(t['cluster_config'], ensure_ascii=False)}`.",
        f"- Engine `{engine}`" + (" (a BERTopic fitted on the per-industry clusters and saved in safetensors; "
                                  "fincprg.topics.bertopic_engine)" if engine == "bertopic" else "") + ".",
        f"- **Wall time {t['wall_s']} s** median with the imports, **{t.get('wall_past_imports_s', t['wall_s'])} s past "
        f"them** (range {t.get('wall_s_range')}; median steps: {t['steps_s']}); "
        f"**peak RSS {t['peak_rss_mb']} MB** (max ru_maxrss over runs); process CPU time {t.get('cpu_s', '?')} s median.",
        f"- **{t['topics']} topics**, {t['tree_nodes']} tree nodes, **outlier share {t['outlier_share']:.1%}**"
        + (f" after outlier reduction moved {t['reassigned_share']:.1%} of the titles to the nearest topic of "
           f"their industry (HDBSCAN alone: {t['outlier_share'] + t['reassigned_share']:.1%} outliers)"
           if t.get("reassigned_share") else "") + ".",
        f"- **Purity** of topics (non-outliers) against East Money labels: {t['purity_eastmoney']:.1%} on the "
        f"{t['eastmoney_industries']} raw East Money industries, {t['purity_citic']:.1%} after mapping them to CITIC level 1"
        + (f" ({t['purity_citic_clustered']:.1%} on the titles HDBSCAN clustered, without the moved ones)"
           if t.get("reassigned_share") else "") + ".",
        f"- Titles whose subtree is above their leaf topic: {t['subtree_above_leaf']:.1%}.",
        *([o] if (o := _other_engine(t)) else []),
        "",
        "Industry classifier (offline lexicon, `fincprg.topics.classify.LexiconClassifier`):",
        "",
        f"- CFBenchmark sector news ({ind['cfbenchmark_items']} items, Shenwan labels mapped to CITIC): "
        f"**accuracy {ind['cfbenchmark_accuracy']:.1%}** ({ind['cfbenchmark_unlabelled']:.1%} got no label). "
        "These are company news bodies, where a keyword lexicon is weak; FinBERT2-IC is the real backend.",
        f"- Agreement with East Money labels on {ind['eastmoney_titles_mapped']} titles (East Money mapped to "
        f"CITIC): **{ind['eastmoney_agreement']:.1%}** ({ind['eastmoney_unlabelled']:.1%} unlabelled). "
        "East Money's own labels are noisy (e.g. 传媒互联网 weeklies filed under 互联网服务).",
        "",
        "Reproduce: `.venv/bin/python eval/bench_topics.py` (needs ../shared/data).",
        "<!-- topics:end -->",
    ]
    block = "\n".join(lines)
    text = README.read_text(encoding="utf-8") if README.exists() else "# fincprg benchmarks\n"
    pat = re.compile(r"<!-- topics:start -->.*?<!-- topics:end -->", re.S)
    text = pat.sub(lambda _: block, text) if pat.search(text) else text.rstrip("\n") + "\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


RESULTS = ROOT / "runs" / "bench_topics"  # each full run's figures, result-lsa.json / result-e5.json
# the LSA figures as write_readme() words them, for a topics section written before result-lsa.json was saved
LSA_SECTION = re.compile(r"median of (?P<runs>\d+) runs.*?\*\*Wall time (?P<wall_s>[\d.]+) s\*\*.*?"
                         r"\*\*(?P<topics>\d+) topics\*\*.*?"
                         r"\*\*outlier share (?P<outlier>[\d.]+)%\*\*.*?: (?P<em>[\d.]+)% on the .*?"
                         r"(?P<citic>[\d.]+)% after mapping them to CITIC", re.S)


def lsa_figures() -> dict | None:
    """The LSA run the ``topics`` section shows: its saved result, else the figures parsed from that section only."""
    saved = RESULTS / "result-lsa.json"
    if saved.exists():
        r = json.loads(saved.read_text("utf-8"))
        return {"runs": r["repeats"], "wall_s": r["wall_s"], "topics": r["topics"],
                "outlier": f"{r['outlier_share']:.1%}", "citic": f"{r['purity_citic']:.1%}",
                "em": f"{r['purity_eastmoney']:.1%}"}
    section = re.search(r"<!-- topics:start -->(.*?)<!-- topics:end -->", README.read_text("utf-8"), re.S)
    m = LSA_SECTION.search(section.group(1)) if section else None
    if m is None:
        return None
    return {"runs": m["runs"], "wall_s": m["wall_s"], "topics": m["topics"], "outlier": f"{m['outlier']}%",
            "citic": f"{m['citic']}%", "em": f"{m['em']}%"}


def write_e5_section(res: dict) -> None:
    """The ``topics-e5`` section: e5 title vectors beside the LSA run recorded in the ``topics`` section."""
    from eval._readme import commit, write_section

    t = res
    rows = ["| title vectors | runs | wall s (median) | embed s | topics | outlier share | CITIC purity | "
            "East Money purity |", "|---|---:|---:|---:|---:|---:|---:|---:|",
            f"| e5-small + CITIC one-hot + Time2Vec ({t['dims']} d) | {t.get('repeats', 1)} | {t['wall_s']} | "
            f"{next(v for k, v in t['steps_s'].items() if k.startswith('embed'))} | {t['topics']} | "
            f"{t['outlier_share']:.1%} | {t['purity_citic']:.1%} | {t['purity_eastmoney']:.1%} |"]
    lsa = lsa_figures()
    if lsa:
        rows.append(f"| LSA + CITIC one-hot + Time2Vec (the topics section above) | {lsa['runs']} | {lsa['wall_s']} | – | "
                    f"{lsa['topics']} | {lsa['outlier']} | {lsa['citic']} | {lsa['em']} |")
    write_section("topics-e5", "\n".join([
        "## Topics with e5 title vectors (`eval/bench_topics.py --embedder E5`)", "",
        f"Measured {dt.date.today().isoformat()} at commit {commit()} on a {os.cpu_count()}-core CPU; "
        f"{t.get('repeats', 1)} run(s) in a fresh process; the same titles, filter, classifier and clustering "
        f"config as the LSA run (`{json.dumps(t['cluster_config'])}`); only the title vectors differ "
        "(multilingual-e5-small with its query prompt, batch 64).", "", *rows, "",
        f"Steps (s): {t['steps_s']}; peak RSS {t['peak_rss_mb']} MB."]))


def run_child(args: argparse.Namespace) -> dict:
    """One measured run in a fresh process, so imports and tokenizer caches are paid every time."""
    cmd = [sys.executable, __file__, "--child", "--min-cluster-size", str(args.min_cluster_size),
           "--min-samples", str(args.min_samples), "--t2v-weight", str(args.t2v_weight)]
    cmd += ["--engine", args.engine] if args.engine else []
    cmd += ["--pca", str(args.pca)] if args.pca is not None else []
    cmd += ["--outlier-threshold", str(args.outlier_threshold)] if args.outlier_threshold is not None else []
    cmd += ["--umap"] if args.umap else []
    cmd += ["--no-by-industry"] if args.no_by_industry else []
    cmd += ["--no-reduce-outliers"] if args.no_reduce_outliers else []
    cmd += ["--limit", str(args.limit)] if args.limit else []
    cmd += ["--embedder", args.embedder] if args.embedder else []
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument("--min-cluster-size", type=int, default=30)
    ap.add_argument("--min-samples", type=int, default=5)
    ap.add_argument("--pca", type=int, default=None, help="topics.cluster.pca_components (default: the config's)")
    ap.add_argument("--umap", action="store_true")
    ap.add_argument("--engine", choices=("native", "bertopic"), default=None,
                    help="topics.cluster.engine (default: the config's, bertopic)")
    ap.add_argument("--no-by-industry", action="store_true", help="one global HDBSCAN run (the old way)")
    ap.add_argument("--no-reduce-outliers", action="store_true")
    ap.add_argument("--outlier-threshold", type=float, default=None,
                    help="topics.cluster.outlier_threshold (default: the config's)")
    ap.add_argument("--t2v-weight", type=float, default=0.3)
    ap.add_argument("--repeats", type=int, default=3, help="measured runs, each in a fresh process; medians reported")
    ap.add_argument("--embedder", default=None,
                    help="a sentence-transformers title embedder (e.g. the e5 folder of `fincprg models import-e5`) "
                         "instead of LSA; results go to the topics-e5 section beside the LSA one")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not TITLES.exists() or not SECTOR.exists():
        print(f"SKIP: real data not found under {DATA} (only present in the team workspace)")
        return 0
    if args.child:
        overrides = {"min_cluster_size": args.min_cluster_size, "min_samples": args.min_samples, "umap": args.umap,
                     "workers": 2, "by_industry": not args.no_by_industry,
                     "reduce_outliers": not args.no_reduce_outliers, **({"engine": args.engine} if args.engine else {})}
        if args.umap or args.pca is not None:
            overrides["pca_components"] = 0 if args.umap else args.pca
        if args.outlier_threshold is not None:
            overrides["outlier_threshold"] = args.outlier_threshold
        print(json.dumps(bench_topics(args.limit, overrides, args.t2v_weight, args.embedder), ensure_ascii=False))
        return 0
    runs = [run_child(args) for _ in range(args.repeats)]
    res = dict(runs[0])  # clustering is seeded: topics, purity etc. are identical across runs
    for key in ("wall_s", "wall_past_imports_s", "cpu_s", "load_start", "load_end"):
        res[key] = round(statistics.median(r[key] for r in runs), 1)
        res[f"{key}_range"] = (min(r[key] for r in runs), max(r[key] for r in runs))
    res["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    res["steps_s"] = {k: round(statistics.median(r["steps_s"][k] for r in runs), 1) for k in runs[0]["steps_s"]}
    res["repeats"] = len(runs)
    res["same_result"] = all(r["topics"] == runs[0]["topics"] and r["purity_citic"] == runs[0]["purity_citic"]
                             for r in runs)
    print(json.dumps(res, ensure_ascii=False, indent=1))
    if not args.limit:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"result-{'e5' if args.embedder else 'lsa'}.json").write_text(
            json.dumps(res, ensure_ascii=False, indent=1), "utf-8")
        if not args.embedder:  # per engine too: the README section names the other engine's last figures
            (RESULTS / f"result-lsa-{res['engine']}.json").write_text(json.dumps(res, ensure_ascii=False, indent=1),
                                                                      "utf-8")
    if args.embedder:
        if not args.no_readme and not args.limit:
            write_e5_section(res)
        return 0
    ind = bench_industry()
    print(json.dumps(ind, ensure_ascii=False, indent=1))
    if not args.no_readme and not args.limit:
        write_readme(res, ind)
        print(f"wrote the topics section of {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
