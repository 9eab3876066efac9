"""The sentence-transformers side of ``fincprg train``: the loss, the evaluator, the batch sampler and the
trainer. Imports sentence-transformers and torch inside its functions only.

The losses themselves are :mod:`fincprg.train.losses` (one class each).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fincprg.train.settings import DISTILL, IN_BATCH

log = logging.getLogger(__name__)


def column_prompts(columns: list[str], prompts: dict[str, str]) -> dict[str, str] | None:
    """The trainer's per-column prompts: the query column gets the query prompt, every other text column
    (positive, negatives) the passage prompt; None when the model has no prompts."""
    out = {}
    for c in columns:
        if c in ("score", "label"):
            continue
        p = prompts.get("query" if c in ("anchor", "sentence1") else "passage", "")
        if p:
            out[c] = p
    return out or None


def make_loss(st: Any, settings: Any, guide: Any = None) -> Any:
    """The ``--loss`` object (:data:`fincprg.train.losses.LOSSES`)."""
    from fincprg.train.losses import LOSSES

    return LOSSES[settings.loss].build(st, settings, guide)


def ir_evaluator(queries: dict[str, str], corpus: dict[str, str], relevant: dict[str, set[str]], name: str,
                 st: Any, batch_size: int) -> Any:
    from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator

    from fincprg.models import prompt_name

    # its per-call report (ten INFO lines) would bury the training log; the summary prints the dev curve
    logging.getLogger(InformationRetrievalEvaluator.__module__).setLevel(logging.WARNING)
    return InformationRetrievalEvaluator(queries, corpus, relevant, name=name, batch_size=batch_size,
                                         show_progress_bar=False, write_csv=False,
                                         query_prompt_name=prompt_name(st, "query"),
                                         corpus_prompt_name=prompt_name(st, "passage"),
                                         ndcg_at_k=[10], mrr_at_k=[10], accuracy_at_k=[1, 10],
                                         precision_recall_at_k=[10], map_at_k=[100])


def test_evaluator(st: Any, dataset: Path, settings: Any) -> Any:
    """The dataset's test-split evaluator, or None (no test labels)."""
    from fincprg.errors import InputError
    from fincprg.train.data import ir_eval_data

    try:
        q, corpus, rel = ir_eval_data(dataset, settings.subsets, split="test")
    except InputError as e:
        log.warning("train: no test-split evaluation (%s)", e)
        return None
    return ir_evaluator(q, corpus, rel, "test", st, settings.batch_size) if rel else None


def make_trainer(st: Any, cols: dict[str, list], out: Path, settings: Any, device: str, precision: str,
                 prompts: dict[str, str], loss: Any, evaluator: Any, select_on: str | None) -> Any:
    """The ``SentenceTransformerTrainer``. ``select_on`` (a dev evaluator's metric) makes every save an
    evaluation and loads the best checkpoint at the end."""
    import datasets
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers

    strategy = settings.eval_strategy if evaluator is not None else "no"
    if select_on:
        strategy = "steps"
    sampler: Any = BatchSamplers.NO_DUPLICATES if settings.loss in IN_BATCH else BatchSamplers.BATCH_SAMPLER
    if settings.group_by_length:
        from fincprg.train.st_sampler import LengthGroupedBatchSampler, LengthGroupedNoDuplicatesBatchSampler

        sampler = LengthGroupedNoDuplicatesBatchSampler if settings.loss in IN_BATCH else LengthGroupedBatchSampler
    # a loss whose rows are independent (kl) accumulates the batch over mini-batches: the same gradient in the
    # memory of --mini-batch-size rows (the in-batch losses need the whole batch at once: GradCache does that)
    accumulate = settings.loss in DISTILL
    rows = min(settings.value("mini_batch_size"), settings.batch_size) if accumulate else settings.batch_size
    args = SentenceTransformerTrainingArguments(
        output_dir=str(out / "checkpoints"),
        num_train_epochs=settings.epochs,
        per_device_train_batch_size=rows,
        gradient_accumulation_steps=-(-settings.batch_size // rows),
        per_device_eval_batch_size=settings.batch_size,
        learning_rate=settings.learning_rate,
        warmup_steps=settings.warmup_ratio,  # transformers 5: a float < 1 is a ratio of the total steps
        seed=settings.seed,
        data_seed=settings.seed,
        fp16=precision == "fp16",
        bf16=precision == "bf16",
        use_cpu=not device.startswith("cuda"),
        batch_sampler=sampler,
        prompts=column_prompts(list(cols), prompts),
        eval_strategy=strategy,
        eval_steps=(settings.save_steps if select_on else settings.eval_steps) if strategy == "steps" else None,
        save_strategy="steps",
        save_steps=settings.save_steps,
        save_total_limit=settings.save_total_limit,
        load_best_model_at_end=bool(select_on),
        metric_for_best_model=f"eval_{select_on}" if select_on else None,
        greater_is_better=True if select_on else None,
        logging_steps=settings.logging_steps,
        report_to="none",
        disable_tqdm=not settings.show_progress,
        dataloader_num_workers=0,
        # non-reentrant: with --freeze-embeddings no layer input requires grad, and the reentrant kind would then
        # drop every gradient of the layers it wraps
        activation_checkpointing=settings.gradient_checkpointing,  # transformers 5's name for it
        activation_checkpointing_kwargs={"use_reentrant": False} if settings.gradient_checkpointing else None,
    )
    trainer = SentenceTransformerTrainer(model=st, args=args, train_dataset=datasets.Dataset.from_dict(cols),
                                         loss=loss, evaluator=evaluator)
    _logs_to_stderr(trainer)
    if select_on:
        trainer.add_callback(_last_step_counts())
    return trainer


def _last_step_counts() -> Any:
    """A callback that evaluates and saves the last step too: with ``--save-steps`` not dividing the steps, the
    trainer would otherwise leave the final weights unscored and never choose them."""
    from transformers.trainer_callback import TrainerCallback

    class LastStep(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if state.global_step >= state.max_steps:
                control.should_evaluate = True
                control.should_save = True
            return control

    return LastStep()


def _logs_to_stderr(trainer: Any) -> None:
    """The HF trainer prints its loss lines to stdout (``print``, or ``tqdm.write`` under the bar); they go to
    the log (stderr) instead, so that stdout holds only the summary and the before/after table."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback, TrainerCallback

    class Bar(ProgressCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            pass

    class LogLines(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            if state.is_world_process_zero and logs:
                log.info("train: %s", ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                               for k, v in logs.items() if k != "total_flos"))

    if trainer.pop_callback(ProgressCallback) is not None:
        trainer.add_callback(Bar)
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(LogLines())


# models whose position ids start after the padding index (RoBERTa family): max_position_embeddings - 2 usable
_POSITION_OFFSET_TYPES = ("roberta", "xlm-roberta", "camembert", "mpnet", "longformer", "ibert", "data2vec-text")


def model_max_positions(st: Any) -> int | None:
    """The longest input, in tokens, ``st``'s transformer can embed (None when its config does not say)."""
    try:
        config = st[0].auto_model.config
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
    n = getattr(config, "max_position_embeddings", None)
    if not isinstance(n, int) or n <= 0:
        return None
    if getattr(config, "model_type", "") in _POSITION_OFFSET_TYPES:
        pad = getattr(config, "pad_token_id", None)
        n -= (1 if pad is None else pad) + 1
    # not the tokenizer's model_max_length: sentence-transformers sets it to its own max_seq_length
    return n


def freeze_word_embeddings(st: Any) -> int:
    """Take the word-embedding table of ``st``'s transformer out of training; returns its size."""
    weight = st[0].auto_model.get_input_embeddings().weight
    weight.requires_grad_(False)
    log.info("train: word embeddings frozen (%d parameters not trained)", weight.numel())
    return int(weight.numel())


def helper_model(name: str, where: str, st: Any, device: str) -> Any:
    """A frozen second model (the guide, or the negatives' miner) that reads what ``st`` reads."""
    from fincprg.models import load_sentence_transformer

    helper = load_sentence_transformer(name, where=where, device=device, shared=False)
    helper.max_seq_length = min(st.max_seq_length, helper.max_seq_length or st.max_seq_length)
    helper.eval()
    for p in helper.parameters():
        p.requires_grad_(False)
    return helper
