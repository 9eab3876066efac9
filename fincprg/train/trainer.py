"""Fine-tune a sentence-transformers bi-encoder on a fincprg dataset (``fincprg train``).

- ``cosent``: CoSENT on (query, passage, 1.0) pairs plus random non-positive passages at 0.0, mean
  pooling: the FinCPRG paper's setting (Table 4), no hard negatives.
- ``mnrl``: MultipleNegativesRanking on (query, positive, hard negative...) with the exported
  ``train/flagembedding.jsonl`` negatives and in-batch negatives (no duplicate texts in a batch).

Checkpoints go to ``OUT/checkpoints/``; ``resume=True`` continues from the last one. The final
model is saved to ``OUT`` and loads with ``SentenceTransformer(OUT)``, FlagEmbedding
``FlagModel(OUT, pooling_method="mean")`` and ``fincprg eval -r dense:OUT``.

A model with query/passage prompts (e5: ``query: ``/``passage: ``) is trained and evaluated with
them (queries get the query prompt, passages and negatives the passage prompt) and saved with them.
For a large-vocabulary model on CPU, ``freeze_embeddings`` keeps the word-embedding table out of
the optimizer (250k×384 rows for e5) and ``group_by_length`` batches texts of similar length.
torch and sentence-transformers are imported inside :func:`train` only.
"""
from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fincprg.errors import ConfigError, InputError
from fincprg.evaluate.data import load_beir

log = logging.getLogger(__name__)

LOSSES = ("cosent", "mnrl")
SETTINGS_FILE = "fincprg_train.json"
# these change what is trained on; a resumed run must use the same values as the checkpoints
_DATA_KEYS = ("loss", "subsets", "max_pairs", "negatives", "seed", "add_cjk", "max_seq_length", "batch_size",
              "learning_rate", "epochs", "warmup_ratio", "freeze_embeddings", "group_by_length")
UNK_WARN_SHARE = 0.2


@dataclass
class TrainSettings:
    """Every knob of a training run (the CLI options of ``fincprg train``).

    Attributes:
        loss: ``cosent`` or ``mnrl``.
        subsets: qrels subsets whose train labels are the positives.
        negatives: per pair, random negatives (cosent, scored 0) or hard negatives (mnrl).
        max_pairs: train on a seeded sample of this many pairs (None: every pair).
        warmup_ratio: share of the steps with a linearly rising learning rate.
        precision: ``auto`` (bf16 or fp16 on CUDA, fp32 on CPU), ``fp32``, ``fp16``, ``bf16``.
        add_cjk: add the corpus's CJK characters the tokenizer maps to [UNK], resize the embeddings.
        eval_strategy: run the test-split IR evaluator every ``epoch``, every ``eval_steps`` or ``no``.
        freeze_embeddings: keep the word-embedding table fixed (not in the optimizer).
        group_by_length: batches of texts of similar length (shuffled pools), less padding.
        scale: the loss's similarity scale (inverse temperature); None: the loss's own (20). A model
            pre-trained at another temperature keeps its geometry at its own (e5: 0.01, so 100).
    """

    loss: str = "mnrl"
    subsets: list[str] = field(default_factory=lambda: ["all"])
    epochs: float = 1.0
    batch_size: int = 32
    learning_rate: float = 2e-5
    max_seq_length: int = 256
    warmup_ratio: float = 0.1
    seed: int = 42
    negatives: int = 1
    max_pairs: int | None = None
    precision: str = "auto"
    device: str | None = None
    add_cjk: bool = False
    eval_strategy: str = "epoch"
    eval_steps: int = 500
    save_steps: int = 500
    save_total_limit: int = 2
    logging_steps: int = 50
    show_progress: bool = True
    freeze_embeddings: bool = False
    group_by_length: bool = False
    scale: float | None = None

    def check(self) -> None:
        if self.loss not in LOSSES:
            raise ConfigError(f"--loss {self.loss!r} is not one of {', '.join(LOSSES)}")
        if self.eval_strategy not in ("epoch", "steps", "no"):
            raise ConfigError(f"--eval {self.eval_strategy!r} is not one of epoch, steps, no")
        if self.precision not in ("auto", "fp32", "fp16", "bf16"):
            raise ConfigError(f"--precision {self.precision!r} is not one of auto, fp32, fp16, bf16")
        for name in ("epochs", "batch_size", "learning_rate", "max_seq_length"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be > 0")
        if not 0 <= self.warmup_ratio < 1:
            raise ConfigError("--warmup must be a ratio in [0, 1)")
        if self.negatives < (1 if self.loss == "cosent" else 0):
            raise ConfigError("--negatives must be >= 1 with cosent (a batch needs pairs scored 0) and >= 0 with mnrl")
        if self.freeze_embeddings and self.add_cjk:
            raise ConfigError("--add-cjk adds embedding rows that must be trained; drop --freeze-embeddings "
                              "(or --add-cjk)")


def last_checkpoint(out: Path) -> Path | None:
    """The newest ``OUT/checkpoints/checkpoint-N`` folder, if any."""
    ck = sorted((out / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name.rsplit("-", 1)[-1])
                if p.name.rsplit("-", 1)[-1].isdigit() else -1)
    return ck[-1] if ck else None


def check_out(out: Path) -> None:
    """Refuse an ``-o`` that cannot become the model folder, before the data and the model are loaded."""
    if out.exists() and not out.is_dir():
        raise InputError(f"-o {out} is a file; the fine-tuned model is a folder: choose a folder path (or move "
                         "the file away)")
    parent = out
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"-o {out}: {parent} is a file, so no folder can be made under it; choose another path")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"-o {out}: {parent} is not writable (permissions or a read-only disk); choose a folder "
                         "you can write to")


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


def _check_resume(out: Path, settings: TrainSettings, model: str, resume: bool) -> Path | None:
    ck = last_checkpoint(out)
    saved = out / "checkpoints" / SETTINGS_FILE
    if ck is None:
        if resume:
            log.info("train: no checkpoint in %s; starting from the base model", out / "checkpoints")
        return None
    if not resume:
        raise InputError(f"{out} holds checkpoints of an earlier run ({ck.name}); pass --resume to continue it, "
                         "or choose another -o folder")
    if saved.exists():
        old = json.loads(saved.read_text(encoding="utf-8"))
        default = asdict(TrainSettings())  # a key added since that run had its default value then
        diff = [k for k in _DATA_KEYS if old.get("settings", {}).get(k, default[k]) != asdict(settings)[k]]
        if old.get("model") != model:
            diff.insert(0, "model")
        if diff:
            raise InputError(f"--resume: {', '.join(diff)} differ from the run that wrote {ck} "
                             f"({saved}); use the same options, or another -o folder")
    from fincprg.train.checkpoints import check_checkpoint  # noqa: PLC0415
    check_checkpoint(ck)  # a damaged checkpoint: one line naming the file and the fix, not torch's traceback
    return ck


def _examples(dataset: Path, settings: TrainSettings) -> tuple[dict[str, list], dict[str, Any]]:
    from fincprg.train.data import cosent_rows, load_pairs, mnrl_rows, read_hard_negatives

    pairs = load_pairs(dataset, settings.subsets, max_pairs=settings.max_pairs, seed=settings.seed)
    info: dict[str, Any] = {"pairs": len(pairs), "queries": len(set(pairs.queries))}
    if settings.loss == "cosent":
        cols = cosent_rows(pairs, settings.negatives, seed=settings.seed)
        info["rows"] = len(cols["sentence1"])
        info["negative_rows"] = int(sum(1 for s in cols["score"] if s == 0.0))
    else:
        hard = read_hard_negatives(dataset) if settings.negatives else {}
        cols, src = mnrl_rows(pairs, hard, settings.negatives, seed=settings.seed)
        info["rows"] = len(cols["anchor"])
        info["negatives"] = src
        if settings.negatives and src["random"] > src["hard"]:
            log.warning("train: %d of %d negatives are random fill (the export had too few hard negatives)",
                        src["random"], src["random"] + src["hard"])
    return cols, info


def vocab_texts(dataset: Path, queries: list[str]) -> list[str]:
    """What ``--add-cjk`` reads: every corpus passage (title + text) and the training queries."""
    ds = load_beir(dataset, split="train", subsets=None)
    return [f"{d.get('title', '')}\n{d.get('text', '')}" for d in ds.corpus.values()] + queries


def train(dataset: str | Path, model: str, out: str | Path, settings: TrainSettings | None = None, *,
          resume: bool = False) -> dict[str, Any]:
    """Fine-tune ``model`` on ``dataset``'s train split and save it to ``out``.

    Args:
        dataset: a ``fincprg build`` dataset folder (BEIR layout + train/flagembedding.jsonl).
        model: local folder or hub id of a sentence-transformers model (a plain transformers
            checkpoint gets mean pooling).
        out: where the model, ``checkpoints/`` and ``fincprg_train.json`` go.
        resume: continue from the newest checkpoint in ``out/checkpoints``.

    Returns:
        a summary: data counts, vocabulary changes, device/precision, seconds, final test metrics.
    """
    from fincprg.models import load_sentence_transformer, prompt_text, resolve_device, train_precision
    from fincprg.io import atomic_write_text

    settings = settings or TrainSettings()
    settings.check()
    dataset, out = Path(dataset), Path(out)
    check_out(out)  # before anything slow
    ckpt = _check_resume(out, settings, model, resume)
    cols, info = _examples(dataset, settings)
    if not next(iter(cols.values())):
        raise InputError(f"{dataset}: no training rows could be built (every pair lacked negatives)")
    device = resolve_device(settings.device)
    precision = train_precision(device, settings.precision)

    from transformers import set_seed

    set_seed(settings.seed)  # the new CJK rows are drawn at random: the same seed draws the same rows
    st = load_sentence_transformer(model, where="--model", device=device, shared=False)
    base_len = st.max_seq_length
    st.max_seq_length = settings.max_seq_length
    limit = model_max_positions(st)
    if limit and settings.max_seq_length > limit:
        # longer inputs would not fit the position embeddings (a tensor-size error in the first long batch);
        # the settings keep the asked length, so a --resume with the same options compares equal
        log.warning("train: --max-seq-length %d is longer than %s can embed (%d tokens); training with %d",
                    settings.max_seq_length, model, limit, limit)
        st.max_seq_length = limit
        info["max_seq_length_clamped"] = {"asked": settings.max_seq_length, "used": limit}
    from fincprg.train.vocab import cjk_counts, extend_with_cjk, unk_share

    queries = cols["sentence1" if settings.loss == "cosent" else "anchor"]
    texts = vocab_texts(dataset, sorted(set(queries)))
    if settings.add_cjk:
        info["vocab"] = extend_with_cjk(st, texts)
    else:
        share = unk_share(st.tokenizer, cjk_counts(texts))
        info["vocab"] = {"unk_share": round(share, 4)}
        if share > UNK_WARN_SHARE:
            log.warning("train: the tokenizer of %s maps %.0f%% of the corpus's CJK characters to [UNK]; "
                        "pass --add-cjk to add them to its vocabulary", model, 100 * share)
    if settings.freeze_embeddings:
        info["frozen_parameters"] = freeze_word_embeddings(st)
    prompts = {role: prompt_text(st, role) for role in ("query", "passage")}
    info["prompts"] = {k: v for k, v in prompts.items() if v}

    out.mkdir(parents=True, exist_ok=True)
    (out / "checkpoints").mkdir(exist_ok=True)
    atomic_write_text(out / "checkpoints" / SETTINGS_FILE,
                      json.dumps({"model": model, "settings": asdict(settings)}, ensure_ascii=False, indent=2))
    trainer = _trainer(st, cols, dataset, out, settings, device, precision, prompts)
    t0 = time.perf_counter()
    trainer.train(resume_from_checkpoint=str(ckpt) if ckpt else None)
    seconds = time.perf_counter() - t0
    # the training length is a compute budget, not a property of the model: keep the base's length
    if base_len and base_len > st.max_seq_length:
        st.max_seq_length = base_len
    st.save(str(out))
    summary: dict[str, Any] = {"model": model, "dataset": str(dataset), "out": str(out), **info,
                               "device": device, "precision": precision, "steps": trainer.state.global_step,
                               "train_seconds": round(seconds, 1), "max_seq_length": st.max_seq_length, "resumed_from": ckpt.name if ckpt else None,
                               "settings": asdict(settings)}
    evals = [h for h in trainer.state.log_history if any(k.endswith("ndcg@10") for k in h)]
    if evals:
        summary["test_eval"] = {k.removeprefix("eval_"): v for k, v in evals[-1].items()
                                if "ndcg@10" in k or "recall@10" in k}
    atomic_write_text(out / SETTINGS_FILE, json.dumps(summary, ensure_ascii=False, indent=2))
    log.info("train: %d steps in %.0fs on %s (%s); saved %s", summary["steps"], seconds, device, precision, out)
    return summary


def freeze_word_embeddings(st: Any) -> int:
    """Take the word-embedding table of ``st``'s transformer out of training; returns its size."""
    weight = st[0].auto_model.get_input_embeddings().weight
    weight.requires_grad_(False)
    log.info("train: word embeddings frozen (%d parameters not trained)", weight.numel())
    return int(weight.numel())


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


def _trainer(st: Any, cols: dict[str, list], dataset: Path, out: Path, settings: TrainSettings, device: str,
             precision: str, prompts: dict[str, str]) -> Any:
    import datasets
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers
    from sentence_transformers.sentence_transformer import losses

    train_ds = datasets.Dataset.from_dict(cols)
    kw = {"scale": settings.scale} if settings.scale else {}
    loss = losses.CoSENTLoss(st, **kw) if settings.loss == "cosent" else losses.MultipleNegativesRankingLoss(st, **kw)
    evaluator = None
    strategy = settings.eval_strategy
    if strategy != "no":
        from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator

        from fincprg.train.data import ir_eval_data

        try:
            q, corpus, rel = ir_eval_data(dataset, settings.subsets, split="test")
        except InputError as e:
            q, rel, corpus = {}, {}, {}
            log.warning("train: no test-split evaluation (%s)", e)
        if rel:
            from fincprg.models import prompt_name

            evaluator = InformationRetrievalEvaluator(q, corpus, rel, name="test", batch_size=settings.batch_size,
                                                      show_progress_bar=False, write_csv=False,
                                                      query_prompt_name=prompt_name(st, "query"),
                                                      corpus_prompt_name=prompt_name(st, "passage"))
        else:
            strategy = "no"
    sampler: Any = BatchSamplers.NO_DUPLICATES if settings.loss == "mnrl" else BatchSamplers.BATCH_SAMPLER
    if settings.group_by_length:
        from fincprg.train.st_sampler import LengthGroupedBatchSampler, LengthGroupedNoDuplicatesBatchSampler

        sampler = LengthGroupedNoDuplicatesBatchSampler if settings.loss == "mnrl" else LengthGroupedBatchSampler
    args = SentenceTransformerTrainingArguments(
        output_dir=str(out / "checkpoints"),
        num_train_epochs=settings.epochs,
        per_device_train_batch_size=settings.batch_size,
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
        eval_steps=settings.eval_steps if strategy == "steps" else None,
        save_strategy="steps",
        save_steps=settings.save_steps,
        save_total_limit=settings.save_total_limit,
        logging_steps=settings.logging_steps,
        report_to="none",
        disable_tqdm=not settings.show_progress,
        dataloader_num_workers=0,
    )
    trainer = SentenceTransformerTrainer(model=st, args=args, train_dataset=train_ds, loss=loss, evaluator=evaluator)
    _logs_to_stderr(trainer)
    return trainer


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
