"""bench_train's held-out human benchmarks (issue 37): the training build and the benchmarks it is scored on.

Split by report, with a fixed hash, before anything is built:
- AlphaFin: sha1 of the title mod 4 = 0 is held out (eval/_alphafin.py, as before);
- CFBenchmark bodies: sha1 of the body id mod 4 = 0 is held out.
The training build is ``fincprg build`` (the user's path: a subprocess of the CLI, offline config, with
``finance.stock_table`` set to ../shared/data's copy of the table the package bundles, same content) over the other AlphaFin reports, the other CFBenchmark bodies and the 2019
annual report. The benchmarks hold human queries only:
- ``alphafin_summary``: analysts' titles of the held-out AlphaFin reports -> their passages;
- ``cfb_summary``: CFBenchmark's analyst key-point summaries of the held-out bodies -> the summarised body's
  passages (chunked as a build chunks; the documents are every passage of every held-out body);
- ``disc_finllm``: 61 real questions (no report overlaps the build).
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from eval._cfb_split import held_out
from eval._train_titles import title_benchmarks
from eval._alphafin import (DATA, input_rows, read_jsonl, split_alphafin, summary_benchmark, write_beir,
                            write_jsonl)

CFB_REPORTS = DATA / "reports" / "cfbenchmark_reports.jsonl"
CFB_SUMMARY = DATA / "beir" / "cfb_summary"
ANNUAL = DATA / "annual_report" / "annual_report_300617_2019.json"
DISC = DATA / "beir" / "disc_finllm"
STOCKS = DATA / "taxonomy" / "stock_basic.csv"
BUCKETS = 4
BENCHES = ("alphafin_summary", "cfb_summary", "disc_finllm", "titles_held_out", "titles_no_company")


def needed() -> list[Path]:
    return [CFB_REPORTS, CFB_SUMMARY, ANNUAL, DISC, STOCKS]


cfb_held_out = held_out  # the bodies readings draw from (eval/_cfb_split.py) are never trained on either


def split_cfb() -> tuple[list[dict], list[dict]]:
    train, held = [], []
    for row in read_jsonl(CFB_REPORTS):
        (held if cfb_held_out(row["id"]) else train).append({"id": row["id"], "text": row["text"]})
    return train, held


def cli(*args: str) -> None:
    """``fincprg ARGS`` in a subprocess (as a user runs it); stops the benchmark with its output on failure."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(root)}
    res = subprocess.run([sys.executable, "-m", "fincprg", *args], cwd=root, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    if res.returncode != 0:
        raise SystemExit(f"fincprg {' '.join(args)} failed ({res.returncode}):\n{res.stderr[-3000:]}")


def build_training(work: Path, af_train: list[dict], cfb_train: list[dict]) -> Path:
    from fincprg.ingest.public import annual_report_to_jsonl

    annual = work / "annual.jsonl"
    annual_report_to_jsonl(ANNUAL, annual, report_id="300617-2019", title="安靠智电（300617）：2019年年度报告",
                           date="2020-04-20")
    rows = input_rows(af_train) + cfb_train + [json.loads(annual.read_text(encoding="utf-8"))]
    corpus = work / "train_reports.jsonl"
    write_jsonl(corpus, rows)
    cli("build", str(corpus), "-o", str(work / "build"), "--set", "topics.viz=none",
        "--set", f"finance.stock_table={STOCKS}", "-q")
    return work / "build" / "dataset"


def _chunks(work: Path, name: str, rows: list[dict]) -> list[dict]:
    src = work / f"{name}_reports.jsonl"
    write_jsonl(src, rows)
    cli("build", str(src), "-o", str(work / f"{name}_chunks"), "--upto", "chunk", "-q")
    return read_jsonl(work / f"{name}_chunks" / "chunk" / "passages.jsonl")


def cfb_benchmark(work: Path, held: list[dict]) -> tuple[Path, dict[str, int]]:
    """BEIR folder: each held-out body's summary -> every passage of that body."""
    passages = _chunks(work, "cfb_held_out", held)
    by_report: dict[str, list[str]] = {}
    corpus = []
    for p in passages:
        pid = p.get("_id", p.get("id"))
        corpus.append({"_id": pid, "title": "", "text": p["text"], "report_id": p["report_id"]})
        by_report.setdefault(p["report_id"], []).append(pid)
    queries = {json.loads(x)["_id"]: json.loads(x)["text"]
               for x in (CFB_SUMMARY / "queries.jsonl").read_text("utf-8").splitlines() if x.strip()}
    qrels: list[tuple] = []
    used = []
    for line in (CFB_SUMMARY / "qrels" / "test.tsv").read_text("utf-8").splitlines()[1:]:
        q, doc, _ = line.split("\t")
        for pid in by_report.get(doc, []):
            qrels.append((q, pid))
        if doc in by_report:
            used.append(q)
    out = write_beir(work / "cfb_summary", corpus, [{"_id": q, "text": queries[q]} for q in sorted(set(used))],
                     {"all": qrels})
    return out, {"reports": len(held), "passages": len(corpus), "queries": len(set(used))}


def prepare(work: Path) -> dict[str, Any]:
    """Build the training dataset and the held-out benchmarks (reused when WORK already holds them)."""
    work.mkdir(parents=True, exist_ok=True)
    af_train, af_held = split_alphafin()
    cfb_train, cfb_held = split_cfb()
    dataset = work / "build" / "dataset"
    if not (dataset / "manifest.json").exists():
        dataset = build_training(work, af_train, cfb_train)
    af_passages = _chunks(work, "alphafin_held_out", input_rows(af_held))
    af_bench, af_info = summary_benchmark(af_held, af_passages, work / "alphafin_summary")
    cfb_bench, cfb_info = cfb_benchmark(work, cfb_held)
    manifest = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))["counts"]
    titles, titles_info = title_benchmarks(dataset, work)  # the build's own held-out reports (issue 49)
    return {"dataset": dataset, "manifest": manifest,
            "benches": {"alphafin_summary": af_bench, "cfb_summary": cfb_bench, "disc_finllm": DISC, **titles},
            "held_out": {"alphafin_summary": af_info, "cfb_summary": cfb_info, **titles_info},
            "train_reports": {"alphafin": len(af_train), "cfbenchmark": len(cfb_train), "annual": 1}}


def per_query_ndcg(spec: str, bench: Path) -> tuple[dict[str, float], float]:
    """query id -> nDCG@10 of one retriever SPEC (``fincprg eval`` machinery), and its CPU seconds."""
    import time

    from fincprg.evaluate.harness import run_eval
    from fincprg.evaluate.metrics import per_query

    t = time.process_time()
    res = run_eval(bench, [spec], split="test", k=100, show_progress=False, keep_runs=True)
    if res.failures:
        raise SystemExit(f"{spec} failed on {bench}: {res.failures}")
    from fincprg.evaluate.data import load_beir

    qrels = next(iter(load_beir(bench, split="test").qrels.values()))
    rows = per_query(qrels, res.runs[spec])
    return {q: r["nDCG@10"] for q, r in rows.items()}, time.process_time() - t


def bootstrap_mean_diff(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]], *, rounds: int = 2000,
                        seed: int = 0) -> tuple[float, float, float]:
    """(mean over benchmarks of mean nDCG@10 a - b, and its 95% interval): the queries of each benchmark are
    resampled with replacement, the benchmarks' means averaged, as the point figure is."""
    rng = random.Random(seed)
    names = sorted(a)
    diffs = {n: [a[n][q] - b[n][q] for q in sorted(a[n])] for n in names}
    point = sum(sum(d) / len(d) for d in diffs.values()) / len(names)
    draws = []
    for _ in range(rounds):
        total = 0.0
        for d in diffs.values():
            total += sum(d[rng.randrange(len(d))] for _ in range(len(d))) / len(d)
        draws.append(total / len(names))
    draws.sort()
    return point, draws[int(0.025 * rounds)], draws[int(0.975 * rounds) - 1]


# ---- the run: train the recipe, score every model on every held-out benchmark ----

def merged_copy(base: Path, unmerged: Path, alpha: float, out: Path) -> Path:
    """The base and the unmerged fine-tuned model interpolated at ``alpha`` (``fincprg.train.merge``), saved."""
    if (out / "modules.json").exists():
        return out
    from fincprg.models import load_sentence_transformer
    from fincprg.train.merge import interpolate

    b = load_sentence_transformer(str(base), where="bench base", device="cpu", shared=False)
    t = load_sentence_transformer(str(unmerged), where="bench unmerged", device="cpu", shared=False)
    t.load_state_dict(interpolate(b.state_dict(), t.state_dict(), alpha))
    t.save(str(out))
    return out


def score_all(models: dict[str, str], benches: dict[str, Path]) -> tuple[dict, dict, dict]:
    """(per-query nDCG@10: model -> bench -> query -> value, means: bench -> model -> value, CPU s per model)."""
    pq: dict[str, dict[str, dict[str, float]]] = {}
    means: dict[str, dict[str, float]] = {}
    cpu: dict[str, float] = {}
    for label, spec in models.items():
        for bname, path in benches.items():
            rows, secs = per_query_ndcg(spec, path)
            pq.setdefault(label, {})[bname] = rows
            means.setdefault(bname, {})[label] = sum(rows.values()) / len(rows)
            cpu[label] = cpu.get(label, 0.0) + secs
        print(label, {b: round(means[b][label], 4) for b in benches}, flush=True)
    return pq, means, cpu


def compare(pq: dict, a: str, b: str) -> dict[str, float]:
    point, lo, hi = bootstrap_mean_diff(pq[a], pq[b])
    return {"diff": point, "lo": lo, "hi": hi}


def present(means: dict[str, Any]) -> list[str]:
    """The benchmarks a run scored, in :data:`BENCHES` order (runs before issue 49 have the first three)."""
    return [b for b in BENCHES if b in means]


def titles_line(held: dict[str, Any]) -> str:
    """The held-out-titles benchmarks' sentence, where the build had titled held-out reports."""
    t = held.get("titles_held_out")
    if not t:
        return ""
    nc = held.get("titles_no_company", {})
    return (f" `titles_held_out`: the build's own {t['titled_reports']} titled held-out reports (no training label), "
            f"{t['queries']} titles → their report's passages (over all {t['passages']} passages of its "
            f"{t['reports']} held-out reports, shown without titles); `titles_no_company`: {nc.get('queries', 0)} "
            "of those titles with the company's name and code removed (eval/_train_titles.py).")


def render_human(r: dict[str, Any], also: list[dict[str, Any]]) -> str:
    """The eval/README.md ``train-human`` section from a saved result.json (plus earlier runs as ablation rows)."""
    means, models, s = r["means"], r["models"], r["train"]["settings"]
    benches = present(means)
    mean_of = {m: sum(means[b][m] for b in benches) / len(benches) for m in models}
    base, rec, rech, bm, baseh = "e5 base", r["recipe_label"], r["recipe_label"] + " + BM25", "bm25", "e5 base + BM25"
    gain = r["compare"][f"{rec} vs {base}"]
    worst = min(means[b][rec] - means[b][base] for b in benches)
    ok = (gain["diff"] >= 0.03 and worst >= -0.005 and mean_of[rech] > mean_of[bm] and mean_of[rech] > mean_of[baseh])
    t = r["train"]
    lines = [
        "## Fine-tuning e5 that helps on held-out human queries (`eval/bench_train.py --human`)", "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']} CPU ({r['cpus']} cores, shared with other "
        f"work), offline; total wall time {r['wall']:.0f} s (training {t['train_seconds']:.0f} s wall, "
        f"{r['train_cpu']:.0f} s CPU, peak RSS {r['peak_rss_gb']:.1f} GB).", "",
        f"- **Training build:** `fincprg build` (offline config, `finance.stock_table` set to the stock table) over "
        f"{r['train_reports']['alphafin']} AlphaFin reports, {r['train_reports']['cfbenchmark']} CFBenchmark bodies "
        f"and the 2019 annual report: {r['manifest']['corpus']} passages. Trained on the `all` train labels; "
        f"{t.get('dev', {}).get('reports', 0)} reports held out as the dev split.",
        f"- **Held out** (sha1 mod {BUCKETS} = 0, never in the build): `alphafin_summary` "
        f"{r['held_out']['alphafin_summary']['queries']} analysts' titles → their report's passages "
        f"({r['held_out']['alphafin_summary']['passages']}); `cfb_summary` "
        f"{r['held_out']['cfb_summary']['queries']} analysts' key-point summaries → the summarised body's passages "
        f"({r['held_out']['cfb_summary']['passages']} passages of {r['held_out']['cfb_summary']['reports']} bodies); "
        "`disc_finllm` 61 questions. Human queries only." + titles_line(r["held_out"]),
        f"- **Recipe:** `{r['command']}`: {t['pairs']} pairs, {t['steps']} steps.",
        f"- **Dev curve** (nDCG@10 on the dev split by step; step 0 is the base): "
        + ", ".join(f"{c['step']}: {c['ndcg@10']:.4f}" for c in t.get("dev", {}).get("curve", []))
        + f"; kept {t.get('dev', {}).get('chosen_checkpoint') or 'the last step'}."
        + (f" Merge weight by dev nDCG@10: " + ", ".join(f"{a}: {v:.4f}" for a, v in t['merge']['dev_ndcg@10'].items())
           + f"; chosen {t['merge']['alpha']:g}." if t.get("merge") else ""), "",
        "| model | " + " | ".join(f"{b} nDCG@10" for b in benches) + " | mean |",
        "|---|" + "---:|" * (len(benches) + 1)]
    for m in models:
        lines.append(f"| {m} | " + " | ".join(f"{means[b][m]:.4f}" for b in benches) + f" | {mean_of[m]:.4f} |")
    lines += ["", f"Differences in the mean over the {len(benches)} benchmarks (bootstrap 95% interval over queries, "
              "2,000 resamples):", ""]
    lines += [f"- {k}: {v['diff']:+.4f} [{v['lo']:+.4f}, {v['hi']:+.4f}]" for k, v in r["compare"].items()]
    lines += ["", f"**Target** (recipe ≥ base + 0.03 mean nDCG@10, no benchmark below the base by more than 0.005, "
              f"its BM25 hybrid above BM25 and the base's hybrid): {'met' if ok else 'not met'} in this run "
              f"({gain['diff']:+.4f}; worst benchmark {worst:+.4f}; hybrid {mean_of[rech]:.4f} vs BM25 "
              f"{mean_of[bm]:.4f} and base hybrid {mean_of[baseh]:.4f})."]
    if also:
        lines += ["", "Ablation (one run each; mean nDCG@10 over the held-out benchmarks of each run, and its difference "
                  "from the base in the same run):", "", "| run | seed | recipe | mean | vs base | hybrid mean |",
                  "|---|---:|---|---:|---:|---:|"]
        for x in [r, *also]:
            xb = present(x["means"])
            mo = {m: sum(x["means"][b][m] for b in xb) / len(xb) for m in x["models"]}
            for m in x["models"]:
                if m.startswith("e5 base") or m == "bm25" or m.endswith("+ BM25"):
                    continue
                hy = mo.get(m + " + BM25")
                lines.append(f"| {x['commit']} | {x['train']['settings']['seed']} | {m}: `{x['command']}` | "
                             f"{mo[m]:.4f} | {mo[m] - mo['e5 base']:+.4f} | "
                             + (f"{hy:.4f}" if hy is not None else "–") + " |")
    return "\n".join(lines)
