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

import gc
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fincprg.errors import InputError
from fincprg.evaluate.data import load_beir
from fincprg.train.memory import memory_mark
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
    """(training pairs, dev split, counts): the dev reports leave training before the mix is drawn and before
    ``--max-pairs`` samples it, so no title or crop of a dev report is trained on."""
    from fincprg.train import mix
    from fincprg.train.data import load_pairs
    from fincprg.train.dev import split_dev

    pairs = load_pairs(dataset, settings.subsets, seed=settings.seed)
    pairs, dev = split_dev(pairs, settings.dev_fraction, max_queries=settings.dev_queries, seed=settings.seed)
    kinds = mix.parse_mix(settings.mix)
    pairs = mix.mix_pairs(pairs, kinds, seed=settings.seed)
    if settings.max_pairs is not None and settings.max_pairs < len(pairs):
        log.info("train: sampled %d of %d pairs (--max-pairs)", settings.max_pairs, len(pairs))
        pairs = pairs.head(settings.max_pairs)  # already shuffled by the seed
    if settings.shuffle_labels and settings.loss not in DISTILL:
        pairs = mix.shuffled_positives(pairs, settings.seed)
    info: dict[str, Any] = {"pairs": len(pairs), "queries": len(set(pairs.queries)),
                            "mix": mix.record(dataset, pairs, kinds)}
    if dev:
        info["dev"] = {"proxy": dev.proxy, "reports": len(dev.reports), "queries": len(dev.queries),
                       "passages": len(dev.corpus)}
    elif settings.dev_fraction > 0:
        info["dev"] = {"proxy": dev.proxy, "reports": 0, "queries": 0, "passages": 0}
        log.warning("train: --dev-fraction %g: %s; the last step is kept", settings.dev_fraction, dev.proxy)
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
    settings = settings or TrainSettings()
    settings.check()
    dataset, out = Path(dataset), Path(out)
    check_out(out)  # before anything slow
    ckpt = _check_resume(out, settings, model, resume)
    pairs, dev, info = _pairs(dataset, settings)
    run = _Run(dataset, model, out, settings, info)
    dense = settings.negatives_from == "dense" and settings.loss in IN_BATCH and settings.negatives > 0
    cols = {} if dense else _columns(run, pairs, None)  # the rows fail early, before the model loads
    memory_mark(run.info, "rows")
    _load(run)
    if dense:
        cols = _columns(run, pairs, _mine(pairs, settings, model, run.st, run.guide, run.device))
    _vocabulary(run, pairs)
    del pairs  # the rows hold what training reads
    memory_mark(run.info, "model")
    from fincprg.train.st_trainer import ir_evaluator, test_evaluator

    dev_eval = ir_evaluator(dev.queries, dev.corpus, dev.relevant, "dev", run.st, settings.batch_size) if dev else None
    curve = [{"step": 0, "ndcg@10": round(dev_eval(run.st)[dev_eval.primary_metric], 6)}] if dev_eval else []
    evaluator = dev_eval or (test_evaluator(run.st, dataset, settings) if settings.eval_strategy != "no" else None)
    trainer = _trainer(run, cols, evaluator, dev_eval.primary_metric if dev_eval else None)
    del cols  # the trainer's dataset holds them
    t0 = time.perf_counter()
    trainer.train(resume_from_checkpoint=str(ckpt) if ckpt else None)
    seconds = time.perf_counter() - t0
    memory_mark(run.info, "train")
    if dev_eval is not None:
        info["dev"].update(_dev_record(trainer, dev_eval.primary_metric, curve))
    _save(run, (lambda m: dev_eval(m)[dev_eval.primary_metric]) if dev_eval else None)
    return _summary(run, trainer, seconds, ckpt)


@dataclass
class _Run:
    """What one training run carries from step to step of :func:`train`."""

    dataset: Path
    model: str
    out: Path
    settings: TrainSettings
    info: dict[str, Any]
    device: str = "cpu"
    precision: str = "fp32"
    st: Any = None
    base_len: int | None = None  # the base model's own max_seq_length, restored when saving
    guide: Any = None
    prompts: dict[str, str] = field(default_factory=dict)


def _columns(run: _Run, pairs: Any, hard: dict[str, list[str]] | None) -> dict[str, list]:
    cols, more = _rows(pairs, run.dataset, run.settings, hard, run.model, run.out)
    run.info.update(more)
    return cols


def _load(run: _Run) -> None:
    """The student (and the guide a guided loss reads), at the training length the model can embed."""
    from transformers import set_seed

    from fincprg.models import load_sentence_transformer, prompt_text, resolve_device, train_precision

    s = run.settings
    run.device = resolve_device(s.device)
    run.precision = train_precision(run.device, s.precision)
    set_seed(s.seed)  # the new CJK rows are drawn at random: the same seed draws the same rows
    st = run.st = load_sentence_transformer(run.model, where="--model", device=run.device, shared=False)
    run.base_len = st.max_seq_length
    st.max_seq_length = s.max_seq_length
    limit = model_max_positions(st)
    if limit and s.max_seq_length > limit:
        # longer inputs would not fit the position embeddings (a tensor-size error in the first long batch);
        # the settings keep the asked length, so a --resume with the same options compares equal
        log.warning("train: --max-seq-length %d is longer than %s can embed (%d tokens); training with %d",
                    s.max_seq_length, run.model, limit, limit)
        st.max_seq_length = limit
        run.info["max_seq_length_clamped"] = {"asked": s.max_seq_length, "used": limit}
    run.prompts = {role: prompt_text(st, role) for role in ("query", "passage")}
    run.info["prompts"] = {k: v for k, v in run.prompts.items() if v}
    if s.loss in GUIDED:
        run.guide = helper_model(s.guide or run.model, "--guide", st, run.device)


def _vocabulary(run: _Run, pairs: Any) -> None:
    """--add-cjk's new tokens, or a warning when the tokenizer misses many CJK characters; frozen embeddings."""
    from fincprg.train.vocab import cjk_counts, extend_with_cjk, unk_share

    texts = vocab_texts(run.dataset, sorted(set(pairs.queries)))
    if run.settings.add_cjk:
        run.info["vocab"] = extend_with_cjk(run.st, texts)
    else:
        share = unk_share(run.st.tokenizer, cjk_counts(texts))
        run.info["vocab"] = {"unk_share": round(share, 4)}
        if share > UNK_WARN_SHARE:
            log.warning("train: the tokenizer of %s maps %.0f%% of the corpus's CJK characters to [UNK]; "
                        "pass --add-cjk to add them to its vocabulary", run.model, 100 * share)
    if run.settings.freeze_embeddings:
        run.info["frozen_parameters"] = freeze_word_embeddings(run.st)


def _trainer(run: _Run, cols: dict[str, list], evaluator: Any, select_on: str | None) -> Any:
    """The trainer, after the run's settings are written beside its checkpoints (what --resume compares)."""
    from fincprg.io import atomic_write_text
    from fincprg.train.st_trainer import make_loss, make_trainer

    (run.out / "checkpoints").mkdir(parents=True, exist_ok=True)
    atomic_write_text(run.out / "checkpoints" / SETTINGS_FILE, json.dumps(
        {"model": run.model, "settings": asdict(run.settings)}, ensure_ascii=False, indent=2))
    return make_trainer(run.st, cols, run.out, run.settings, run.device, run.precision, run.prompts,
                        make_loss(run.st, run.settings, run.guide), evaluator, select_on)


def _save(run: _Run, dev_score: Any) -> None:
    """The model to OUT at the base's length (the training length is a compute budget, not a property of the
    model); with --merge-base, the unmerged one to OUT/unmerged and the merge to OUT."""
    st, s = run.st, run.settings
    train_len = st.max_seq_length
    if run.base_len and run.base_len > st.max_seq_length:
        st.max_seq_length = run.base_len
    if s.merge_base is not None:
        st.save(str(run.out / UNMERGED))
        # the base's weights: the guide's when the guide is the base (no second copy held through training)
        same = run.guide is not None and (s.guide or run.model) == run.model
        base_state = (run.guide if same else helper_model(run.model, "--model", st, run.device)).state_dict()
        from fincprg.train.merge import merge

        st.max_seq_length = train_len  # dev scores at the length the curve was scored at
        run.info["merge"] = merge(st, base_state, parse_alpha(s.merge_base), dev_score)
        st.max_seq_length = max(run.base_len or 0, train_len)
    st.save(str(run.out))


def _summary(run: _Run, trainer: Any, seconds: float, ckpt: Path | None) -> dict[str, Any]:
    """OUT/fincprg_train.json: data counts, the device, steps and seconds, the loss log and the last test scores."""
    from fincprg.io import atomic_write_text

    summary: dict[str, Any] = {"model": run.model, "dataset": str(run.dataset), "out": str(run.out), **run.info,
                               "device": run.device, "precision": run.precision, "steps": trainer.state.global_step,
                               "train_seconds": round(seconds, 1),
                               "seconds_per_step": round(seconds / max(trainer.state.global_step, 1), 2),
                               "max_seq_length": run.st.max_seq_length,
                               "resumed_from": ckpt.name if ckpt else None, "settings": asdict(run.settings)}
    # the loss and gradient norm per logged step: a run's signal against the optimiser's noise (issue 49)
    summary["log"] = [{k: h[k] for k in ("step", "loss", "grad_norm", "learning_rate") if k in h}
                      for h in trainer.state.log_history if "loss" in h]
    evals = [h for h in trainer.state.log_history if any(k.startswith("eval_test") and k.endswith("ndcg@10")
                                                         for k in h)]
    if evals:
        summary["test_eval"] = {k.removeprefix("eval_"): v for k, v in evals[-1].items()
                                if "ndcg@10" in k or "recall@10" in k}
    atomic_write_text(run.out / SETTINGS_FILE, json.dumps(summary, ensure_ascii=False, indent=2))
    log.info("train: %d steps in %.0fs on %s (%s); saved %s", summary["steps"], seconds, run.device, run.precision,
             run.out)
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
    """Teacher rankings (cached in OUT/teacher) and the distillation rows; counts for the summary.

    Title queries are ranked over the bare passages (their rows show passages without the title). The teacher is
    let go before the student loads: a dense teacher is a second copy of the model plus its encodings, which
    nothing reads once the rankings are cached (issue 49's memory bound)."""
    from fincprg.models.load import clear_cache
    from fincprg.train.distill import distill_rows
    from fincprg.train.teacher import rank

    spec, k = settings.teacher_spec(model), settings.value("teacher_k")
    cache = Path(settings.teacher_cache) if settings.teacher_cache else out / "teacher"
    titled = {pid: {"text": text} for pid, text in pairs.pool.items()}
    bare = {pid: {"text": pairs.bare.get(pid) or text} for pid, text in pairs.pool.items()}
    ranks: dict[str, Any] = {}
    for corpus, queries in ((titled, [q for q in pairs.queries if q not in pairs.plain]),
                            (bare, [q for q in pairs.queries if q in pairs.plain])):
        if queries:
            ranks.update(rank(queries, corpus, spec, k, cache, show_progress=settings.show_progress))
    clear_cache()
    gc.collect()
    cols, counts = distill_rows(pairs, ranks, settings.negatives, seed=settings.seed,
                                shuffle_labels=settings.shuffle_labels)
    return cols, {"spec": spec, "k": k, "queries": len(ranks), **counts, "shuffled_labels": settings.shuffle_labels}
