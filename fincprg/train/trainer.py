"""Fine-tune a sentence-transformers bi-encoder on a fincprg dataset (``fincprg train``).

- ``cosent``: CoSENT on (query, passage, 1.0) pairs plus random non-positive passages at 0.0, mean
  pooling: the FinCPRG paper's setting (Table 4), no hard negatives.
- ``mnrl``: MultipleNegativesRanking on (query, positive, hard negative...) with the exported
  ``train/flagembedding.jsonl`` negatives (BM25) or negatives mined by a dense model
  (``negatives_from="dense"``), and in-batch negatives (no duplicate texts in a batch).
- ``cmnrl``, ``gist``, ``cgist``: the same rows with GradCache and/or a guide model
  (:mod:`fincprg.train.st_trainer`).

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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fincprg.errors import ConfigError, InputError
from fincprg.evaluate.data import load_beir
from fincprg.train.merge import parse_alpha
from fincprg.train.negatives import Window
from fincprg.train.st_trainer import (GUIDED, IN_BATCH, freeze_word_embeddings, helper_model,
                                     model_max_positions)

log = logging.getLogger(__name__)

LOSSES = ("cosent", "mnrl", "cmnrl", "gist", "cgist")
NEGATIVE_SOURCES = ("export", "dense")
CACHED = ("cmnrl", "cgist")  # the GradCache losses, which read --mini-batch-size
DEFAULTS = {"neg_range": "10:100", "neg_margin": 0.05, "mini_batch_size": 16}  # knobs that are None when unset
SETTINGS_FILE = "fincprg_train.json"
UNMERGED = "unmerged"  # OUT/unmerged: the fine-tuned model before --merge-base
# these change what is trained on; a resumed run must use the same values as the checkpoints
_DATA_KEYS = ("loss", "subsets", "max_pairs", "negatives", "seed", "add_cjk", "max_seq_length", "batch_size",
              "learning_rate", "epochs", "warmup_ratio", "freeze_embeddings", "group_by_length", "negatives_from",
              "neg_model", "neg_range", "neg_margin", "guide", "mini_batch_size", "dev_fraction", "scale")
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
        scale: the loss's similarity scale (inverse temperature); None: the loss's own (20; GIST 100). A
            model pre-trained at another temperature keeps its geometry at its own (e5: 0.01, so 100).
        negatives_from: ``export`` (the dataset's BM25 negatives) or ``dense`` (mined by ``neg_model``).
        neg_model: the model that mines dense negatives (None: the base model, before training).
        neg_range: ``MIN:MAX``, the ranks dense negatives come from.
        neg_margin: a dense negative scores at most ``(1 - neg_margin)`` × the query's best positive.
        guide: the frozen guide model of ``gist``/``cgist`` (None: the base model).
        mini_batch_size: GradCache's mini-batch (``cmnrl``, ``cgist``).
        dev_fraction: share of the training reports held out as a dev split (0: none).
        dev_queries: at most this many dev queries (a seeded sample).
        merge_base: None, a weight in [0, 1] of the fine-tuned model in a merge with the base, or ``auto``.
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
    negatives_from: str = "export"
    neg_model: str | None = None
    neg_range: str | None = None  # None: DEFAULTS; set only with negatives_from dense (check())
    neg_margin: float | None = None  # None: DEFAULTS
    guide: str | None = None
    mini_batch_size: int | None = None  # None: DEFAULTS; set only with a cached loss (check())
    dev_fraction: float = 0.0
    dev_queries: int = 300
    merge_base: str | None = None

    def value(self, name: str) -> Any:
        """A knob's value, or its default where it was left unset (None: not given, see check())."""
        v = getattr(self, name)
        return DEFAULTS[name] if v is None else v

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
        if self.negatives_from not in NEGATIVE_SOURCES:
            raise ConfigError(f"--negatives-from {self.negatives_from!r} is not one of {', '.join(NEGATIVE_SOURCES)}")
        given = [f"--{k.replace('_', '-')}" for k in ("neg_model", "neg_range", "neg_margin")
                 if getattr(self, k) is not None]
        if given and self.negatives_from != "dense":
            raise ConfigError(f"{', '.join(given)} shape dense negatives, which --negatives-from "
                              f"{self.negatives_from} does not mine: add --negatives-from dense, or drop them")
        if self.mini_batch_size is not None and self.loss not in CACHED:
            raise ConfigError(f"--mini-batch-size is GradCache's, read by the cached losses ({', '.join(CACHED)}) "
                              f"only, not {self.loss}")
        Window.parse(self.value("neg_range"))
        if not 0 <= self.value("neg_margin") < 1:
            raise ConfigError("--neg-margin must be in [0, 1)")
        if not 0 <= self.dev_fraction < 1:
            raise ConfigError("--dev-fraction must be a share in [0, 1)")
        if self.mini_batch_size is not None and self.mini_batch_size < 1:
            raise ConfigError("--mini-batch-size must be >= 1")
        if self.guide and self.loss not in GUIDED:
            raise ConfigError(f"--guide is read by the gist and cgist losses only, not {self.loss}")
        if self.loss == "cosent" and self.negatives_from == "dense":
            raise ConfigError("--negatives-from dense feeds the in-batch losses (mnrl, cmnrl, gist, cgist); cosent "
                              "draws random negatives")
        if parse_alpha(self.merge_base) == "auto" and self.dev_fraction <= 0:
            raise ConfigError("--merge-base auto picks the weight on the dev split: pass --dev-fraction > 0 (e.g. "
                              "0.1), or a fixed weight such as --merge-base 0.5")
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


def _rows(pairs: Any, dataset: Path, settings: TrainSettings, hard: dict[str, list[str]] | None
          ) -> tuple[dict[str, list], dict[str, Any]]:
    """The loss's columns; ``hard`` holds dense negatives (None: the exported ones)."""
    from fincprg.train.data import cosent_rows, mnrl_rows, read_hard_negatives

    info: dict[str, Any] = {}
    if settings.loss == "cosent":
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
        cols, more = _rows(pairs, dataset, settings, None)
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
        cols, more = _rows(pairs, dataset, settings, _mine(pairs, settings, model, st, guide, device))
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
