"""Fine-tune a sentence-transformers bi-encoder on a fincprg dataset (``fincprg train``).

The losses are :mod:`fincprg.train.losses` (one class each): CoSENT on pairs (the paper's setting), the
in-batch losses on (query, positive, hard negative...) rows with the exported BM25 negatives or dense-mined ones
(``negatives_from="dense"``), and ``kl``, the distillation of a teacher's ranking (:mod:`fincprg.train.distill`).

A dev split held out by report (``dev_fraction``) picks the checkpoint and, with ``merge_base``, the
weight of the fine-tuned model in a merge with the base (:mod:`fincprg.train.merge`).

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
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fincprg.errors import InputError
from fincprg.evaluate.data import load_beir
from fincprg.train.merge import parse_alpha
from fincprg.train.negatives import Window
from fincprg.train.settings import (CACHED, DATA_KEYS, DEFAULTS, DISTILL, GUIDED, IN_BATCH, LOSSES,  # noqa: F401
                                    NEGATIVE_SOURCES, TrainSettings)
from fincprg.train.st_trainer import freeze_word_embeddings, helper_model, model_max_positions

log = logging.getLogger(__name__)

SETTINGS_FILE = "fincprg_train.json"
UNMERGED = "unmerged"  # OUT/unmerged: the fine-tuned model before --merge-base
UNK_WARN_SHARE = 0.2


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
        diff = [k for k in DATA_KEYS if old.get("settings", {}).get(k, default[k]) != asdict(settings)[k]]
        if old.get("model") != model:
            diff.insert(0, "model")
        if diff:
            raise InputError(f"--resume: {', '.join(diff)} differ from the run that wrote {ck} "
                             f"({saved}); use the same options, or another -o folder")
    from fincprg.train.checkpoints import check_checkpoint  # noqa: PLC0415
    check_checkpoint(ck)  # a damaged checkpoint: one line naming the file and the fix, not torch's traceback
    return ck


def _pairs(dataset: Path, settings: TrainSettings) -> tuple[Any, Any, dict[str, Any]]:
    """(training pairs, dev split, counts): the dev reports leave training before ``--max-pairs`` samples it."""
    from fincprg.train.data import load_pairs
    from fincprg.train.dev import split_dev

    dev_on = settings.dev_fraction > 0
    pairs = load_pairs(dataset, settings.subsets, max_pairs=None if dev_on else settings.max_pairs,
                       seed=settings.seed)
    pairs, dev = split_dev(pairs, settings.dev_fraction, max_queries=settings.dev_queries, seed=settings.seed)
    if dev_on and settings.max_pairs is not None:
        pairs = pairs.head(settings.max_pairs)  # already shuffled by the seed
    info: dict[str, Any] = {"pairs": len(pairs), "queries": len(set(pairs.queries))}
    if dev:
        info["dev"] = {"reports": len(dev.reports), "queries": len(dev.queries), "passages": len(dev.corpus)}
    return pairs, dev, info


def _rows(pairs: Any, dataset: Path, settings: TrainSettings, hard: dict[str, list[str]] | None, model: str,
          out: Path) -> tuple[dict[str, list], dict[str, Any]]:
    """The loss's columns; ``hard`` holds dense negatives (None: the exported ones)."""
    from fincprg.train.data import cosent_rows, mnrl_rows, read_hard_negatives

    info: dict[str, Any] = {}
    if settings.loss in DISTILL:
        cols, info["teacher"] = _distill(pairs, settings, model, out)
        info["rows"] = len(cols["anchor"])
    elif settings.loss == "cosent":
        cols = cosent_rows(pairs, settings.negatives, seed=settings.seed)
        info["rows"] = len(cols["sentence1"])
        info["negative_rows"] = int(sum(1 for s in cols["score"] if s == 0.0))
    else:
        if hard is None:
            hard = read_hard_negatives(dataset) if settings.negatives else {}
        cols, src = mnrl_rows(pairs, hard, settings.negatives, seed=settings.seed)
        info["rows"] = len(cols["anchor"])
        info["negatives"] = {**src, "source": settings.negatives_from if settings.negatives else "none"}
        if settings.negatives and src["random"] > src["hard"]:
            log.warning("train: %d of %d negatives are random fill (too few hard negatives)",
                        src["random"], src["random"] + src["hard"])
    if not next(iter(cols.values())):
        raise InputError(f"{dataset}: no training rows could be built (every pair lacked negatives)")
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
    pairs, dev, info = _pairs(dataset, settings)
    dense = settings.negatives_from == "dense" and settings.loss in IN_BATCH and settings.negatives > 0
    cols: dict[str, list] = {}
    if not dense:  # the rows fail early, before the model loads
        cols, more = _rows(pairs, dataset, settings, None, model, out)
        info.update(more)
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
    prompts = {role: prompt_text(st, role) for role in ("query", "passage")}
    info["prompts"] = {k: v for k, v in prompts.items() if v}
    guide = helper_model(settings.guide or model, "--guide", st, device) if settings.loss in GUIDED else None
    if dense:
        cols, more = _rows(pairs, dataset, settings, _mine(pairs, settings, model, st, guide, device), model, out)
        info.update(more)
    from fincprg.train.vocab import cjk_counts, extend_with_cjk, unk_share

    texts = vocab_texts(dataset, sorted(set(pairs.queries)))
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

    from fincprg.train.st_trainer import ir_evaluator, make_loss, make_trainer, test_evaluator

    dev_eval = ir_evaluator(dev.queries, dev.corpus, dev.relevant, "dev", st, settings.batch_size) if dev else None
    curve: list[dict[str, Any]] = []
    if dev_eval is not None:
        curve.append({"step": 0, "ndcg@10": round(dev_eval(st)[dev_eval.primary_metric], 6)})
    evaluator = dev_eval or (test_evaluator(st, dataset, settings) if settings.eval_strategy != "no" else None)

    out.mkdir(parents=True, exist_ok=True)
    (out / "checkpoints").mkdir(exist_ok=True)
    atomic_write_text(out / "checkpoints" / SETTINGS_FILE,
                      json.dumps({"model": model, "settings": asdict(settings)}, ensure_ascii=False, indent=2))
    trainer = make_trainer(st, cols, out, settings, device, precision, prompts, make_loss(st, settings, guide),
                           evaluator, dev_eval.primary_metric if dev_eval else None)
    t0 = time.perf_counter()
    trainer.train(resume_from_checkpoint=str(ckpt) if ckpt else None)
    seconds = time.perf_counter() - t0
    if dev_eval is not None:
        info["dev"].update(_dev_record(trainer, dev_eval.primary_metric, curve))
    # the training length is a compute budget, not a property of the model: keep the base's length
    train_len = st.max_seq_length
    if base_len and base_len > st.max_seq_length:
        st.max_seq_length = base_len
    if settings.merge_base is not None:
        st.save(str(out / UNMERGED))
        # the base's weights: the guide's when the guide is the base (no second copy held through training)
        same = guide is not None and (settings.guide or model) == model
        base_state = (guide if same else helper_model(model, "--model", st, device)).state_dict()
        from fincprg.train.merge import merge

        st.max_seq_length = train_len  # dev scores at the length the curve was scored at
        info["merge"] = merge(st, base_state, parse_alpha(settings.merge_base),
                              (lambda m: dev_eval(m)[dev_eval.primary_metric]) if dev_eval else None)
        st.max_seq_length = max(base_len or 0, train_len)
    st.save(str(out))
    summary: dict[str, Any] = {"model": model, "dataset": str(dataset), "out": str(out), **info,
                               "device": device, "precision": precision, "steps": trainer.state.global_step,
                               "train_seconds": round(seconds, 1), "max_seq_length": st.max_seq_length,
                               "resumed_from": ckpt.name if ckpt else None, "settings": asdict(settings)}
    # the loss and gradient norm per logged step: a run's signal against the optimiser's noise (issue 49)
    summary["log"] = [{k: h[k] for k in ("step", "loss", "grad_norm", "learning_rate") if k in h}
                      for h in trainer.state.log_history if "loss" in h]
    evals = [h for h in trainer.state.log_history if any(k.startswith("eval_test") and k.endswith("ndcg@10")
                                                         for k in h)]
    if evals:
        summary["test_eval"] = {k.removeprefix("eval_"): v for k, v in evals[-1].items()
                                if "ndcg@10" in k or "recall@10" in k}
    atomic_write_text(out / SETTINGS_FILE, json.dumps(summary, ensure_ascii=False, indent=2))
    log.info("train: %d steps in %.0fs on %s (%s); saved %s", summary["steps"], seconds, device, precision, out)
    return summary


def _mine(pairs: Any, settings: TrainSettings, model: str, st: Any, guide: Any, device: str) -> dict[str, list[str]]:
    """Dense negatives by ``--neg-model``: by default the base model (``st`` before training, or the guide when
    it is the base)."""
    from fincprg.models import prompt_text
    from fincprg.train.negatives import dense_negatives

    name = settings.neg_model or model
    if name == model:
        miner = st
    elif guide is not None and name == (settings.guide or model):
        miner = guide
    else:
        miner = helper_model(name, "--neg-model", st, device)
    lo, hi = Window.parse(settings.value("neg_range"))
    return dense_negatives(pairs, miner, settings.negatives, Window(lo, hi, settings.value("neg_margin")),
                           prompts={r: prompt_text(miner, r) for r in ("query", "passage")},
                           batch_size=settings.batch_size, show_progress=settings.show_progress)


def _dev_record(trainer: Any, metric: str, curve: list[dict[str, Any]]) -> dict[str, Any]:
    """The dev curve (step 0 is the base model) and the checkpoint the trainer kept."""
    for h in trainer.state.log_history:
        if f"eval_{metric}" in h:
            curve.append({"step": h.get("step"), "ndcg@10": round(h[f"eval_{metric}"], 6)})
    best = trainer.state.best_model_checkpoint
    return {"curve": curve, "chosen_checkpoint": Path(best).name if best else None,
            "best_ndcg@10": trainer.state.best_metric}


def _distill(pairs: Any, settings: TrainSettings, model: str, out: Path) -> tuple[dict[str, list], dict[str, Any]]:
    """Teacher rankings (cached in OUT/teacher) and the distillation rows; counts for the summary."""
    from fincprg.train.distill import distill_rows
    from fincprg.train.teacher import rank

    spec = settings.teacher_spec(model)
    corpus = {pid: {"text": text} for pid, text in pairs.pool.items()}
    cache = Path(settings.teacher_cache) if settings.teacher_cache else out / "teacher"
    ranks = rank(pairs.queries, corpus, spec, settings.value("teacher_k"), cache,
                 show_progress=settings.show_progress)
    cols, counts = distill_rows(pairs, ranks, settings.negatives, seed=settings.seed,
                                shuffle_labels=settings.shuffle_labels)
    return cols, {"spec": spec, "k": settings.value("teacher_k"), "queries": len(ranks), **counts,
                  "shuffled_labels": settings.shuffle_labels}
