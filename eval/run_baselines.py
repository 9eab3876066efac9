"""Seed baselines: every seed system's SPEC through `fincprg eval`, on real and generated datasets (issue 22).

Usage:  .venv/bin/python eval/run_baselines.py [--e5 PATH | --no-dense] [--no-readme] [--out DIR]

Datasets (each skipped with a message when its input is absent):
  disc_finllm         ../shared/data/beir/disc_finllm: 61 real questions, 159 documents (test qrels only)
  demo                runs/demo/dataset, the `fincprg demo` build of datasets/sample (built here when missing)
  alphafin_summary    the held-out quarter of the AlphaFin reports (eval/_alphafin.py): the analysts' title is the
                      query, every passage of its report is relevant; its train qrels are the generated queries
                      of the next dataset (so `linear` learns from fincprg's generated labels, tests on human ones)
  alphafin_generated  `fincprg build` (offline) over those reports, over the same corpus (titles and the body
                      header that repeats them removed), the export's train/test split kept

Retrievers: the offline defaults, the FiQA study's linear / rubric-point / rubric-list rerankers and rewrite
ablation; with a multilingual e5-small (``--e5``, default /tmp/e5_model when present, made by
`fincprg models import-e5`) also dense, hybrid and the three feature rerankers on its cosine, and hier with
dense stages. Embeddings are cached per model in OUT/embeddings-<model>.npz (the first run pays for them).
The section between <!-- baselines:start --> and <!-- baselines:end --> in eval/README.md is replaced.
"""
from __future__ import annotations

import argparse
import hashlib
import logging
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval._alphafin import ALPHAFIN, DATA, read_jsonl, split_alphafin, summary_benchmark, write_beir  # noqa: E402
from eval._baselines_report import FIQA_OFFLINE, render  # noqa: E402
from eval._readme import commit, fincprg_build, write_section  # noqa: E402

STOCKS = DATA / "taxonomy" / "stock_basic.csv"
DEMO = ROOT / "runs" / "demo" / "dataset"
OFFLINE = ["bm25", "bm25-report", "lsa", "hybrid", "rrf", "cards", "borda", "hier", *FIQA_OFFLINE[4:]]


def e5_specs(model: str) -> list[str]:
    return [f"dense:{model}", f"hybrid:0.75:dense:{model}", f"linear:dense:{model}",
            f"rubric-point:dense:{model}", f"rubric-list:dense:{model}",
            f"hier:10,docs=dense:{model},passages=dense:{model}"]


def build_demo(path: Path) -> str:
    if path.exists():
        return "existing build"
    t = time.perf_counter()
    import subprocess

    subprocess.run([sys.executable, "-m", "fincprg", "demo", "--out", str(path.parent)], cwd=ROOT, check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}, stdout=subprocess.DEVNULL)
    return f"built here in {time.perf_counter() - t:.0f}s"


def split_qrels(export: Path, corpus_ids: set[str]) -> dict[str, dict[str, list[tuple[str, str, int]]]]:
    """split -> subset -> (query, doc, grade) of an export's qrels whose document is in ``corpus_ids``."""
    from fincprg.evaluate.data import read_qrels

    out: dict[str, dict[str, list[tuple[str, str, int]]]] = {}
    for f in sorted((export / "qrels").glob("*.tsv")):
        subset, sep, split = f.stem.rpartition("-")
        subset, split = (subset, split) if sep else ("all", f.stem)
        rows = [(q, d, r) for q, docs in read_qrels(f).items() for d, r in docs.items() if r > 0 and d in corpus_ids]
        if rows:
            out.setdefault(split, {})[subset] = rows
    return out


def write_split_beir(out: Path, corpus: list[dict], queries: list[dict],
                     qrels: dict[str, dict[str, list[tuple]]]) -> Path:
    """A BEIR folder with qrels/<subset>-<split>.tsv (``all`` -> <split>.tsv) for every split."""
    write_beir(out, corpus, queries, {})
    for split, by_subset in qrels.items():
        for subset, rows in by_subset.items():
            name = split if subset == "all" else f"{subset}-{split}"
            (out / "qrels" / f"{name}.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
                f"{q}\t{d}\t{r}\n" for q, d, r in rows), encoding="utf-8")
    return out


def alphafin(work: Path) -> tuple[dict[str, Path], str]:
    """Build the held-out AlphaFin reports and write alphafin_summary and alphafin_generated under ``work``."""
    from eval._alphafin import input_rows, write_jsonl

    _, held = split_alphafin()
    src = work / "reports.jsonl"
    write_jsonl(src, input_rows(held))
    build = work / "build"
    if not (build / "dataset" / "queries.jsonl").exists():
        secs = fincprg_build(src, build, sets=[f"finance.stock_table={STOCKS}", "topics.viz=none"])
        note = f"built here in {secs:.0f}s"
    else:
        note = "existing build"
    export = build / "dataset"
    human, _ = summary_benchmark(held, read_jsonl(export / "corpus.jsonl"), work / "alphafin_summary")
    corpus = read_jsonl(human / "corpus.jsonl")
    ids = {str(c["_id"]) for c in corpus}
    qrels = split_qrels(export, ids)
    asked = {q for by in qrels.values() for rows in by.values() for q, _, _ in rows}
    gen_queries = [q for q in read_jsonl(export / "queries.jsonl") if str(q["_id"]) in asked]
    gen = write_split_beir(work / "alphafin_generated", corpus, gen_queries, qrels)
    # the human benchmark learns from the generated labels: its train split is every generated pair
    train = [t for by in qrels.values() for rows in by.values() for t in rows]
    write_split_beir(human, corpus, read_jsonl(human / "queries.jsonl") + gen_queries,
                     {"test": {"all": [(q, d, 1) for q, d in _pairs(human / "qrels" / "test.tsv")]},
                      "train": {"all": sorted(set(train))}})
    return {"alphafin_summary": human, "alphafin_generated": gen}, note


def _pairs(path: Path) -> list[tuple[str, str]]:
    from fincprg.evaluate.data import read_qrels

    return [(q, d) for q, docs in read_qrels(path).items() for d, r in docs.items() if r > 0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--e5", type=Path, default=Path("/tmp/e5_model"),
                    help="multilingual e5-small folder (`fincprg models import-e5 DIR`); skipped when missing")
    ap.add_argument("--no-dense", action="store_true", help="no e5 rows (the offline part only)")
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "baselines", help="results per dataset, work files")
    ap.add_argument("--only", action="append", default=[], help="run only this dataset (repeatable)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["TQDM_DISABLE"] = "1"
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    from fincprg.evaluate.data import load_beir
    from fincprg.evaluate.harness import format_markdown, run_eval, write_outputs
    from fincprg.models.encoders import MEMO

    out = args.out.resolve()
    e5 = None if args.no_dense or not args.e5.is_dir() else str(args.e5.resolve())
    if e5:
        tag = hashlib.sha1(e5.encode()).hexdigest()[:8]
        MEMO.persist(out / f"embeddings-{tag}.npz")  # a re-run encodes only what changed
    t_all, cpu_all = time.time(), time.process_time()
    datasets: dict[str, Path | None] = {"disc_finllm": DATA / "beir" / "disc_finllm"}
    notes: dict[str, str] = {}
    datasets["demo"] = DEMO
    notes["demo"] = build_demo(DEMO)
    if ALPHAFIN.exists() and STOCKS.exists():
        built, note = alphafin(out / "alphafin")
        datasets.update(built)
        notes.update(dict.fromkeys(built, note))
    else:
        datasets.update({"alphafin_summary": None, "alphafin_generated": None})
    results, skipped = {}, {}
    for name, path in datasets.items():
        if args.only and name not in args.only:
            continue
        if path is None or not path.exists():
            skipped[name] = f"input not found under {DATA} (only present in the team workspace)"
            print(f"[{name}] skipped: {skipped[name]}")
            continue
        ds = load_beir(path)
        has_reports = any(m.get("report_id") for m in ds.query_meta.values())
        # bm25-report searches the query's own report: for a title query (alphafin_summary) that is the answer
        specs = [s for s in OFFLINE if s != "bm25-report" or (has_reports and name != "alphafin_summary")]
        specs += e5_specs(e5) if e5 else []
        print(f"[{name}] {path}: {len(specs)} retrievers ...", flush=True)
        t0 = time.perf_counter()
        misses = MEMO.misses
        res = run_eval(path, specs, show_progress=False)
        write_outputs(res, out / name)
        MEMO.save()  # nothing without --e5 (no file set)
        n_q = len(set().union(*ds.qrels.values()))
        results[name] = {"res": res, "seconds": time.perf_counter() - t0, "queries": n_q,
                         "docs": len(ds.corpus), "note": notes.get(name, ""),
                         "encoded": (MEMO.misses - misses) if e5 else None}
        print(format_markdown(res).replace(e5 or "\0", "e5-small"), flush=True)
    section = render(results, skipped, e5=e5, when=time.strftime("%Y-%m-%d"), commit=commit(),
                     machine=f"{platform.machine()} CPU ({os.cpu_count()} cores)",
                     wall=time.time() - t_all, cpu=time.process_time() - cpu_all)
    print(section)
    if not args.no_readme:
        write_section("baselines", section)
        print(f"updated {ROOT / 'eval' / 'README.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
