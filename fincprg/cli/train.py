"""CLI command ``train``: fine-tune a bi-encoder on a dataset, then compare it with its base model.

Heavy imports (torch, sentence-transformers) stay inside the command body.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from fincprg.cli._common import guarded, setup_logging
from fincprg.train.losses import help_text

LOSS_HELP = help_text()  # one line per loss class (fincprg/train/losses.py)


# The options of `fincprg train` (one alias each, so the command's signature reads as a list).
_DatasetOpt = Annotated[Path, typer.Argument(
    help="A `fincprg build` dataset folder (OUT/dataset): corpus.jsonl, queries.jsonl, "
         "qrels/<subset>-train.tsv and, for --loss mnrl, train/flagembedding.jsonl.")]
_ModelOpt = Annotated[str, typer.Option("--model", "-m", help="Base model: a sentence-transformers folder or hub id "
    "(a plain transformers model gets mean pooling).")]
_OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Folder for the fine-tuned model, checkpoints/ and "
    "fincprg_train.json (checked before anything loads).")]
_LossOpt = Annotated[str, typer.Option(help=LOSS_HELP)]
_SubsetOpt = Annotated[Optional[list[str]], typer.Option(
    "--subset", "-s", help="Qrels subset(s) whose train labels are the positives, repeatable: all, sentence, "
                           "sentence-mined, passage, passage-mined, report, topic. Default: all.")]
_EpochsOpt = Annotated[float, typer.Option(min=0.01, help="Training epochs.")]
_BatchSizeOpt = Annotated[int, typer.Option(min=2, help="Pairs per batch (mnrl: also the in-batch negatives).")]
_LrOpt = Annotated[float, typer.Option("--lr", help="Peak learning rate (AdamW, linear decay).")]
_MaxSeqLengthOpt = Annotated[int, typer.Option(min=8, help="Tokens per text while training (longer texts are cut; "
    "at most what the model can embed, with a warning); the "
    "saved model keeps the base model's length when that is "
    "longer.")]
_WarmupOpt = Annotated[float, typer.Option(help="Warm-up as a share of all steps.")]
_ScaleOpt = Annotated[Optional[float], typer.Option(
    min=1, help="Similarity scale of the loss (inverse temperature); default: the loss's own, 20. Use the "
                "model's pre-training value to keep its geometry: multilingual-e5 was trained at temperature "
                "0.01, so --scale 100.")]
_SeedOpt = Annotated[int, typer.Option(help="Seed for sampling, shuffling, negatives and initialisation.")]
_NegativesOpt = Annotated[int, typer.Option(
    min=0, help="Per pair: random negatives scored 0 (cosent, >= 1) or hard negatives (the other losses; "
                "random fill when a query has fewer).")]
_NegativesFromOpt = Annotated[str, typer.Option(
    help="Where hard negatives come from: export (train/flagembedding.jsonl: BM25, with the export's "
         "guards) or dense (mined by --neg-model in the --neg-range window under --neg-margin; never a "
         "known positive nor a passage of the positive's report).")]
_NegModelOpt = Annotated[Optional[str], typer.Option(
    help="Model that mines dense negatives (default: the base model, before training). With "
         "--negatives-from dense only.")]
_NegRangeOpt = Annotated[Optional[str], typer.Option(
    help="MIN:MAX: dense negatives come from these ranks of the query's nearest passages (default 10:100; "
         "FlagEmbedding mines 2-200; skipping the nearest avoids unlabelled positives). With --negatives-from "
         "dense only.")]
_NegMarginOpt = Annotated[Optional[float], typer.Option(
    help="Relative margin: a dense negative scores at most (1 - MARGIN) x the query's best positive "
         "(default 0.05, sentence-transformers' relative_margin; NV-Retriever uses 0.05). With "
         "--negatives-from dense only.")]
_GuideOpt = Annotated[Optional[str], typer.Option(
    help="Guide model of --loss gist/cgist, frozen (default: the base model).")]
_MiniBatchSizeOpt = Annotated[Optional[int], typer.Option(
    min=1, help="Rows encoded at once by --loss cmnrl/cgist (GradCache, default 16) and kl/marginmse (accumulated, default "
                "2): memory follows it, not --batch-size.")]
_DevFractionOpt = Annotated[float, typer.Option(
    help="Hold out this share of the titled training reports as a dev split (by report, never a benchmark): "
         "their titles are the dev queries (human-written; generated queries never choose), every checkpoint "
         "is scored on them and the best one is kept; they also pick --merge-base auto. Without titles nothing "
         "is held out, the last step is kept and auto merges at 0.5; the run record says so. 0: no dev split.")]
_DevQueriesOpt = Annotated[int, typer.Option(min=1, help="At most this many dev queries (a seeded sample).")]
_MergeBaseOpt = Annotated[Optional[str], typer.Option(
    help="Merge the fine-tuned weights with the base (LM-Cocktail's weight interpolation): the fine-tuned "
         "model's weight in [0, 1], or auto (the best of 0, .25, .5, .75, 1 on the dev titles; needs "
         "--dev-fraction; 0.5 where the corpus has no titles). The merged model is saved to OUT, the unmerged one to OUT/unmerged.")]
_TeacherOpt = Annotated[Optional[str], typer.Option(
    help="--loss kl/marginmse: the teacher, a `fincprg eval` retriever SPEC (default hybrid:0.75:dense:MODEL, the BM25 + "
         "base hybrid; e.g. bm25, or a cross-encoder rerank SPEC). Its rankings are cached in OUT/teacher.")]
_TeacherKOpt = Annotated[Optional[int], typer.Option(
    min=2, help="--loss kl/marginmse: candidates the teacher ranks per query (default 30).")]
_StudentTemperatureOpt = Annotated[Optional[float], typer.Option(
    help="--loss kl/marginmse: the student's softmax temperature over its cosine scores (default 0.05).")]
_TeacherTemperatureOpt = Annotated[Optional[float], typer.Option(
    help="--loss kl/marginmse: the teacher's temperature over its scores, normalised to [0, 1] per row (default "
         "0.1).")]
_TeacherCacheOpt = Annotated[Optional[Path], typer.Option(
    help="--loss kl/marginmse: folder for the teacher's rankings (default OUT/teacher); give runs over one dataset the "
         "same folder and the teacher ranks once for all of them.")]
_ShuffleLabelsOpt = Annotated[bool, typer.Option(
    "--shuffle-labels", help="A control run whose labels carry nothing: kl/marginmse permute the teacher's scores "
                             "within each row, the other losses pair each query with another pair's positive; "
                             "what it loses is what the optimiser alone costs.")]
_MixOpt = Annotated[str, typer.Option(
    help="Query kinds to train on, comma-separated: generated (the --subset labels, every level with 'all'), "
         "titles (a training report's title -> each of its passages, shown without the title; titled reports "
         "only, never a dev or test report), crops (a sentence -> its passage with that sentence removed). "
         "The pairs of each kind go to fincprg_train.json's 'mix'.")]
_LogStepsOpt = Annotated[int, typer.Option(
    min=1, help="Steps between the loss and gradient-norm records (fincprg_train.json's 'log').")]
_MaxPairsOpt = Annotated[Optional[int], typer.Option(min=1, help="Train on a seeded sample of this many "
    "(query, positive) pairs.")]
_PrecisionOpt = Annotated[str, typer.Option(help="auto: bf16 (or fp16) on CUDA, fp32 on CPU; or fp32, fp16, "
    "bf16. Half precision is used on CUDA only.")]
_DeviceOpt = Annotated[Optional[str], typer.Option(help="cpu, cuda, cuda:1... (default: cuda when available).")]
_AddCjkOpt = Annotated[bool, typer.Option(
    "--add-cjk/--no-add-cjk", help="Add the corpus's CJK characters that the tokenizer maps to [UNK] as new "
                                   "tokens and resize the embeddings first (for English-vocabulary models "
                                   "such as all-MiniLM-L6-v2).")]
_FreezeEmbeddingsOpt = Annotated[bool, typer.Option(
    "--freeze-embeddings/--no-freeze-embeddings",
    help="Keep the word-embedding table fixed: for large-vocabulary models on CPU (multilingual-e5-small: "
         "96M of its 118M parameters are that table). Not with --add-cjk.")]
_GroupByLengthOpt = Annotated[bool, typer.Option(
    "--group-by-length/--no-group-by-length",
    help="Batch texts of similar length together (shuffled pools of 50 batches): less padding, faster "
         "steps on CPU; mnrl batches still hold no duplicate texts.")]
_GradientCheckpointingOpt = Annotated[bool, typer.Option(
    "--gradient-checkpointing/--no-gradient-checkpointing",
    help="Recompute each layer's activations in the backward pass instead of keeping them (~30% more compute). "
         "e5-small, batch 32, kl with 4 negatives on CPU: 3.35 instead of 3.83 GiB peak (eval/README.md).")]
_EvalOnOpt = Annotated[Optional[list[str]], typer.Option(
    "--eval-on", help="BEIR folder to score before and after training (nDCG@10, Recall@10), repeatable. The "
                      "dataset's own test split is always scored.")]
_EvalStrategyOpt = Annotated[str, typer.Option(
    "--eval", help="Test-split IR evaluator during training: epoch, steps (every --eval-steps) or no.")]
_EvalStepsOpt = Annotated[int, typer.Option(min=1, help="Steps between evaluations with --eval steps.")]
_SaveStepsOpt = Annotated[int, typer.Option(min=1, help="Steps between checkpoints in OUT/checkpoints.")]
_ResumeOpt = Annotated[bool, typer.Option(help="Continue from the newest checkpoint in OUT/checkpoints "
    "(same options as the first run).")]
_CompareOpt = Annotated[bool, typer.Option("--compare/--no-compare", help="Print the before/after table.")]
_QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars or logs; summary only.")]


def train_cmd(
    dataset: _DatasetOpt,
    model: _ModelOpt,
    out: _OutOpt,
    loss: _LossOpt = "mnrl",
    subset: _SubsetOpt = None,
    epochs: _EpochsOpt = 1.0,
    batch_size: _BatchSizeOpt = 32,
    lr: _LrOpt = 2e-5,
    max_seq_length: _MaxSeqLengthOpt = 256,
    warmup: _WarmupOpt = 0.1,
    scale: _ScaleOpt = None,
    seed: _SeedOpt = 42,
    negatives: _NegativesOpt = 1,
    negatives_from: _NegativesFromOpt = "export",
    neg_model: _NegModelOpt = None,
    neg_range: _NegRangeOpt = None,
    neg_margin: _NegMarginOpt = None,
    guide: _GuideOpt = None,
    mini_batch_size: _MiniBatchSizeOpt = None,
    dev_fraction: _DevFractionOpt = 0.0,
    dev_queries: _DevQueriesOpt = 300,
    merge_base: _MergeBaseOpt = None,
    teacher: _TeacherOpt = None,
    teacher_k: _TeacherKOpt = None,
    student_temperature: _StudentTemperatureOpt = None,
    teacher_temperature: _TeacherTemperatureOpt = None,
    teacher_cache: _TeacherCacheOpt = None,
    shuffle_labels: _ShuffleLabelsOpt = False,
    mix: _MixOpt = "generated",
    log_steps: _LogStepsOpt = 50,
    max_pairs: _MaxPairsOpt = None,
    precision: _PrecisionOpt = "auto",
    device: _DeviceOpt = None,
    add_cjk: _AddCjkOpt = False,
    freeze_embeddings: _FreezeEmbeddingsOpt = False,
    group_by_length: _GroupByLengthOpt = False,
    gradient_checkpointing: _GradientCheckpointingOpt = False,
    eval_on: _EvalOnOpt = None,
    eval_strategy: _EvalStrategyOpt = "epoch",
    eval_steps: _EvalStepsOpt = 500,
    save_steps: _SaveStepsOpt = 500,
    resume: _ResumeOpt = False,
    compare: _CompareOpt = True,
    quiet: _QuietOpt = False,
) -> None:
    """Fine-tune an embedding model on a fincprg dataset (sentence-transformers trainer).

    The model saved to OUT loads with SentenceTransformer(OUT), FlagEmbedding
    FlagModel(OUT, pooling_method="mean"), and `fincprg eval DATASET -r dense:OUT`.
    A model with query/passage prompts (e5) is trained with them and keeps them.

    Example: fincprg train runs/demo/dataset -m MODEL -o runs/demo/model --add-cjk --eval-on ../beir/x
    """
    opts = dict(locals())  # the options, before any other name is bound here
    setup_logging(quiet)
    guarded(lambda: _run(opts))


# CLI option -> TrainSettings field, where the names differ (the others are the same word)
_RENAMED = {"lr": "learning_rate", "warmup": "warmup_ratio", "subset": "subsets", "log_steps": "logging_steps"}
_NOT_SETTINGS = ("dataset", "model", "out", "eval_on", "resume", "compare", "quiet")


def _run(opts: dict[str, Any]) -> None:
    """Train with the command's options, print the summary and the before/after table."""
    from fincprg.train.trainer import TrainSettings, train

    kw = {_RENAMED.get(k, k): v for k, v in opts.items() if k not in _NOT_SETTINGS}
    kw.update(subsets=opts["subset"] or ["all"], show_progress=not opts["quiet"],
              teacher_cache=str(opts["teacher_cache"]) if opts["teacher_cache"] else None)
    settings = TrainSettings(**kw)
    dataset, model, out = opts["dataset"], opts["model"], opts["out"]
    summary = train(dataset, model, out, settings, resume=opts["resume"])
    _print_summary(summary, settings, model, out)
    if opts["compare"]:
        _compare(dataset, settings.subsets, opts["eval_on"] or [], model, out, opts["quiet"])


def _print_summary(summary: dict[str, Any], settings: Any, model: str, out: Path) -> None:
    typer.echo(f"\nfincprg train summary ({out}):")
    typer.echo(f"  loss {settings.loss} on {', '.join(settings.subsets)}: {summary['pairs']} pairs, "
               f"{summary['rows']} rows, {summary['steps']} steps, {summary['train_seconds']}s on "
               f"{summary['device']} ({summary['precision']})"
               + (f", resumed from {summary['resumed_from']}" if summary["resumed_from"] else ""))
    if summary.get("max_seq_length_clamped"):
        c = summary["max_seq_length_clamped"]
        typer.echo(f"  trained with {c['used']} tokens per text, the most {model} can embed "
                   f"(--max-seq-length {c['asked']} asked)")
    if summary.get("prompts"):
        typer.echo("  prompts: " + ", ".join(f"{k} {v!r}" for k, v in summary["prompts"].items()))
    if summary.get("negatives"):
        n = summary["negatives"]
        typer.echo(f"  negatives ({n['source']}): {n['hard']} hard, {n['random']} random fill")
    if summary.get("teacher"):
        t = summary["teacher"]
        typer.echo(f"  teacher {t['spec']}: top {t['k']} of {t['queries']} queries; {t['teacher']} teacher negatives, "
                   f"{t['random']} random fill, {t['rows_skipped']} rows skipped"
                   + ("; labels shuffled (control run)" if t["shuffled_labels"] else ""))
    m = summary.get("mix")
    if m:
        typer.echo("  mix: " + ", ".join(f"{k} {v}" for k, v in m["pairs"].items() if k in m["kinds"])
                   + (" (generated by level: " + ", ".join(f"{k} {v}" for k, v in m["levels"].items()) + ")"
                      if m["levels"] else ""))
    if summary.get("dev", {}).get("queries") == 0:
        typer.echo(f"  dev split: {summary['dev']['proxy']}; kept the last step")
    elif summary.get("dev"):
        d = summary["dev"]
        curve = ", ".join(f"{c['step']}: {c['ndcg@10']:.4f}" for c in d.get("curve", []))
        typer.echo(f"  dev split: {d['reports']} reports, {d['queries']} queries; nDCG@10 by step {curve}; kept "
                   f"{d.get('chosen_checkpoint') or 'the last step'}")
    if summary.get("merge"):
        m = summary["merge"]
        scores = ", ".join(f"{a}: {v:.4f}" for a, v in m["dev_ndcg@10"].items())
        typer.echo(f"  merged with the base at alpha {m['alpha']:g} (fine-tuned weight; {m['chosen_by']})"
                   + (f"; dev nDCG@10 by alpha {scores}" if scores else "") + f"; unmerged model in {out}/unmerged")
    if summary.get("frozen_parameters"):
        typer.echo(f"  word embeddings frozen: {summary['frozen_parameters']:,} parameters not trained")
    if "added" in summary["vocab"]:
        v = summary["vocab"]
        typer.echo(f"  vocabulary: +{v['added']} CJK tokens ({100 * v['unk_share_before']:.1f}% of CJK "
                   f"characters were [UNK]); {v['vocab_size']} tokens")


def _compare(dataset: Path, subsets: list[str], eval_on: list[str], model: str, out: Path, quiet: bool) -> None:
    """The before/after table: the dataset's test split and every --eval-on folder, base model vs trained."""
    from fincprg.train.compare import Bench, before_after, format_table

    benches = [Bench(dataset, subsets, label=f"{dataset} (test)")] + [Bench(Path(p)) for p in eval_on]
    rows = before_after(model, str(out), benches, show_progress=not quiet)
    typer.echo("")
    typer.echo(format_table(rows, model, str(out)))
