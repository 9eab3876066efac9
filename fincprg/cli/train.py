"""CLI command ``train``: fine-tune a bi-encoder on a dataset, then compare it with its base model.

Heavy imports (torch, sentence-transformers) stay inside the command body.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from fincprg.cli._common import guarded, setup_logging


def train_cmd(
    dataset: Annotated[Path, typer.Argument(
        help="A `fincprg build` dataset folder (OUT/dataset): corpus.jsonl, queries.jsonl, "
             "qrels/<subset>-train.tsv and, for --loss mnrl, train/flagembedding.jsonl.")],
    model: Annotated[str, typer.Option("--model", "-m", help="Base model: a sentence-transformers folder or hub id "
                                                             "(a plain transformers model gets mean pooling).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the fine-tuned model, checkpoints/ and "
                                                          "fincprg_train.json (checked before anything loads).")],
    loss: Annotated[str, typer.Option(help="cosent: CoSENT on positive pairs + random negatives scored 0, mean "
                                           "pooling (the paper's setting). mnrl: MultipleNegativesRanking with the "
                                           "hard negatives and in-batch negatives. cmnrl: the same with GradCache "
                                           "(a large --batch-size in the memory of --mini-batch-size). gist / "
                                           "cgist: GISTEmbed (cached): a frozen --guide model drops the in-batch "
                                           "and hard negatives it scores above the positive (likely unlabelled "
                                           "positives).")] = "mnrl",
    subset: Annotated[Optional[list[str]], typer.Option(
        "--subset", "-s", help="Qrels subset(s) whose train labels are the positives, repeatable: all, sentence, "
                               "sentence-mined, passage, passage-mined, topic. Default: all.")] = None,
    epochs: Annotated[float, typer.Option(min=0.01, help="Training epochs.")] = 1.0,
    batch_size: Annotated[int, typer.Option(min=2, help="Pairs per batch (mnrl: also the in-batch negatives).")]
    = 32,
    lr: Annotated[float, typer.Option("--lr", help="Peak learning rate (AdamW, linear decay).")] = 2e-5,
    max_seq_length: Annotated[int, typer.Option(min=8, help="Tokens per text while training (longer texts are cut; "
                                                          "at most what the model can embed, with a warning); the "
                                                          "saved model keeps the base model's length when that is "
                                                          "longer.")] = 256,
    warmup: Annotated[float, typer.Option(help="Warm-up as a share of all steps.")] = 0.1,
    scale: Annotated[Optional[float], typer.Option(
        min=1, help="Similarity scale of the loss (inverse temperature); default: the loss's own, 20. Use the "
                    "model's pre-training value to keep its geometry: multilingual-e5 was trained at temperature "
                    "0.01, so --scale 100.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for sampling, shuffling, negatives and initialisation.")] = 42,
    negatives: Annotated[int, typer.Option(
        min=0, help="Per pair: random negatives scored 0 (cosent, >= 1) or hard negatives (the other losses; "
                    "random fill when a query has fewer).")] = 1,
    negatives_from: Annotated[str, typer.Option(
        help="Where hard negatives come from: export (train/flagembedding.jsonl: BM25, with the export's "
             "guards) or dense (mined by --neg-model in the --neg-range window under --neg-margin; never a "
             "known positive nor a passage of the positive's report).")] = "export",
    neg_model: Annotated[Optional[str], typer.Option(
        help="Model that mines dense negatives (default: the base model, before training). With "
             "--negatives-from dense only.")] = None,
    neg_range: Annotated[Optional[str], typer.Option(
        help="MIN:MAX: dense negatives come from these ranks of the query's nearest passages (default 10:100; "
             "FlagEmbedding mines 2-200; skipping the nearest avoids unlabelled positives). With --negatives-from "
             "dense only.")] = None,
    neg_margin: Annotated[Optional[float], typer.Option(
        help="Relative margin: a dense negative scores at most (1 - MARGIN) x the query's best positive "
             "(default 0.05, sentence-transformers' relative_margin; NV-Retriever uses 0.05). With "
             "--negatives-from dense only.")] = None,
    guide: Annotated[Optional[str], typer.Option(
        help="Guide model of --loss gist/cgist, frozen (default: the base model).")] = None,
    mini_batch_size: Annotated[Optional[int], typer.Option(
        min=1, help="GradCache mini-batch of --loss cmnrl/cgist (default 16): memory follows it, not "
                    "--batch-size.")] = None,
    dev_fraction: Annotated[float, typer.Option(
        help="Hold out this share of the training reports as a dev split (by report, never a benchmark): "
             "every checkpoint is scored on it and the best one is kept; it also picks --merge-base auto. "
             "0: no dev split.")] = 0.0,
    dev_queries: Annotated[int, typer.Option(min=1, help="At most this many dev queries (a seeded sample).")]
    = 300,
    merge_base: Annotated[Optional[str], typer.Option(
        help="Merge the fine-tuned weights with the base (LM-Cocktail's weight interpolation): the fine-tuned "
             "model's weight in [0, 1], or auto (the best of 0, .25, .5, .75, 1 on the dev split; needs "
             "--dev-fraction). The merged model is saved to OUT, the unmerged one to OUT/unmerged.")] = None,
    max_pairs: Annotated[Optional[int], typer.Option(min=1, help="Train on a seeded sample of this many "
                                                                  "(query, positive) pairs.")] = None,
    precision: Annotated[str, typer.Option(help="auto: bf16 (or fp16) on CUDA, fp32 on CPU; or fp32, fp16, "
                                                "bf16. Half precision is used on CUDA only.")] = "auto",
    device: Annotated[Optional[str], typer.Option(help="cpu, cuda, cuda:1... (default: cuda when available).")]
    = None,
    add_cjk: Annotated[bool, typer.Option(
        "--add-cjk/--no-add-cjk", help="Add the corpus's CJK characters that the tokenizer maps to [UNK] as new "
                                       "tokens and resize the embeddings first (for English-vocabulary models "
                                       "such as all-MiniLM-L6-v2).")] = False,
    freeze_embeddings: Annotated[bool, typer.Option(
        "--freeze-embeddings/--no-freeze-embeddings",
        help="Keep the word-embedding table fixed: for large-vocabulary models on CPU (multilingual-e5-small: "
             "96M of its 118M parameters are that table). Not with --add-cjk.")] = False,
    group_by_length: Annotated[bool, typer.Option(
        "--group-by-length/--no-group-by-length",
        help="Batch texts of similar length together (shuffled pools of 50 batches): less padding, faster "
             "steps on CPU; mnrl batches still hold no duplicate texts.")] = False,
    eval_on: Annotated[Optional[list[str]], typer.Option(
        "--eval-on", help="BEIR folder to score before and after training (nDCG@10, Recall@10), repeatable. The "
                          "dataset's own test split is always scored.")] = None,
    eval_strategy: Annotated[str, typer.Option(
        "--eval", help="Test-split IR evaluator during training: epoch, steps (every --eval-steps) or no.")]
    = "epoch",
    eval_steps: Annotated[int, typer.Option(min=1, help="Steps between evaluations with --eval steps.")] = 500,
    save_steps: Annotated[int, typer.Option(min=1, help="Steps between checkpoints in OUT/checkpoints.")] = 500,
    resume: Annotated[bool, typer.Option(help="Continue from the newest checkpoint in OUT/checkpoints "
                                              "(same options as the first run).")] = False,
    compare: Annotated[bool, typer.Option("--compare/--no-compare", help="Print the before/after table.")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars or logs; summary only.")] = False,
) -> None:
    """Fine-tune an embedding model on a fincprg dataset (sentence-transformers trainer).

    The model saved to OUT loads with SentenceTransformer(OUT), FlagEmbedding
    FlagModel(OUT, pooling_method="mean"), and `fincprg eval DATASET -r dense:OUT`.
    A model with query/passage prompts (e5) is trained with them and keeps them.

    Example: fincprg train runs/demo/dataset -m MODEL -o runs/demo/model --add-cjk --eval-on ../beir/x
    """
    setup_logging(quiet)

    def body() -> None:
        from fincprg.train.trainer import TrainSettings, train

        settings = TrainSettings(
            loss=loss, subsets=subset or ["all"], epochs=epochs, batch_size=batch_size, learning_rate=lr,
            max_seq_length=max_seq_length, warmup_ratio=warmup, seed=seed, negatives=negatives,
            max_pairs=max_pairs, precision=precision, device=device, add_cjk=add_cjk,
            eval_strategy=eval_strategy, eval_steps=eval_steps, save_steps=save_steps, show_progress=not quiet,
            freeze_embeddings=freeze_embeddings, group_by_length=group_by_length, scale=scale,
            negatives_from=negatives_from, neg_model=neg_model, neg_range=neg_range, neg_margin=neg_margin,
            guide=guide, mini_batch_size=mini_batch_size, dev_fraction=dev_fraction, dev_queries=dev_queries,
            merge_base=merge_base)
        summary = train(dataset, model, out, settings, resume=resume)
        _print_summary(summary, settings, model, out)
        if compare:
            _compare(dataset, settings.subsets, eval_on or [], model, out, quiet)

    guarded(body)


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
    if summary.get("dev"):
        d = summary["dev"]
        curve = ", ".join(f"{c['step']}: {c['ndcg@10']:.4f}" for c in d.get("curve", []))
        typer.echo(f"  dev split: {d['reports']} reports, {d['queries']} queries; nDCG@10 by step {curve}; kept "
                   f"{d.get('chosen_checkpoint') or 'the last step'}")
    if summary.get("merge"):
        m = summary["merge"]
        scores = ", ".join(f"{a}: {v:.4f}" for a, v in m["dev_ndcg@10"].items())
        typer.echo(f"  merged with the base at alpha {m['alpha']:g} (fine-tuned weight)"
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
