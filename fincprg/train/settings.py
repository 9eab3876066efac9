"""Every knob of ``fincprg train`` (:class:`TrainSettings`) and the checks that refuse what cannot work together.

Kept apart from :mod:`fincprg.train.trainer` so the knobs and their checks read in one place, without torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fincprg.errors import ConfigError
from fincprg.train import losses as _losses
from fincprg.train.merge import parse_alpha
from fincprg.train.mix import parse_mix
from fincprg.train.negatives import Window

LOSSES = tuple(_losses.LOSSES)
GUIDED, CACHED = _losses.names(guided=True), _losses.names(cached=True)  # read --guide; read --mini-batch-size
IN_BATCH, DISTILL = _losses.names(in_batch=True), _losses.names(rows="distill")  # in-batch negatives; a teacher
NEGATIVE_SOURCES = ("export", "dense")
# knobs that are None when unset; "teacher" is the BM25 + base-model hybrid (see teacher_spec)
DEFAULTS = {"neg_range": "10:100", "neg_margin": 0.05, "teacher_k": 30,
            "student_temperature": 0.05, "teacher_temperature": 0.1}
# these change what is trained on; a resumed run must use the same values as the checkpoints
DATA_KEYS = ("loss", "subsets", "max_pairs", "negatives", "seed", "add_cjk", "max_seq_length", "batch_size",
             "learning_rate", "epochs", "warmup_ratio", "freeze_embeddings", "group_by_length", "negatives_from",
             "neg_model", "neg_range", "neg_margin", "guide", "mini_batch_size", "dev_fraction", "scale",
             "teacher", "teacher_k", "student_temperature", "teacher_temperature", "shuffle_labels", "mix")


@dataclass
class TrainSettings:
    """Every knob of a training run (the CLI options of ``fincprg train``).

    Attributes:
        loss: a name of :data:`fincprg.train.losses.LOSSES`.
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
        mini_batch_size: rows encoded at once by the losses that split a batch (``cmnrl``, ``cgist``: GradCache;
            ``kl``: accumulation); None: the loss's own default.
        dev_fraction: share of the training reports held out as a dev split (0: none).
        dev_queries: at most this many dev queries (a seeded sample).
        merge_base: None, a weight in [0, 1] of the fine-tuned model in a merge with the base, or ``auto``.
        teacher: ``kl``'s teacher, a ``fincprg eval`` retriever SPEC (None: ``hybrid:0.75:dense:<base model>``).
        teacher_k: the teacher ranks this many candidates per query.
        student_temperature / teacher_temperature: ``kl``'s softmax temperatures (student cosine scores; teacher
            scores normalised to [0, 1] per row).
        shuffle_labels: the control run: a distillation loss's teacher scores permuted within each row, another
            loss's positives permuted across the pairs (the labels carry nothing; what is lost is the optimiser's).
        mix: the query kinds trained on, comma-separated (:mod:`fincprg.train.mix`): generated, titles, crops.
        gradient_checkpointing: keep each layer's input only and recompute its activations in the backward pass
            (~30% more compute). e5-small, kl, batch 32 on CPU: 3.35 instead of 3.83 GiB peak (eval/README.md).
        teacher_cache: the folder of the teacher's cached rankings (None: ``OUT/teacher``).
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
    mini_batch_size: int | None = None  # None: the loss's default; set only with a loss that splits its batch
    dev_fraction: float = 0.0
    dev_queries: int = 300
    merge_base: str | None = None
    teacher: str | None = None  # these five: set only with a distillation loss (check())
    teacher_k: int | None = None
    student_temperature: float | None = None
    teacher_temperature: float | None = None
    shuffle_labels: bool = False
    teacher_cache: str | None = None  # None: OUT/teacher (not a data key: where, not what)
    mix: str = "generated"
    gradient_checkpointing: bool = False  # not a data key: the same gradient, recomputed instead of stored

    def teacher_spec(self, model: str) -> str:
        """The teacher SPEC: ``teacher``, or the BM25 + base hybrid (which beats the base on held-out titles)."""
        return self.teacher or f"hybrid:0.75:dense:{model}"

    def value(self, name: str) -> Any:
        """A knob's value, or its default where it was left unset (None: not given, see check()); the mini-batch's
        default is the loss's own."""
        v = getattr(self, name)
        if v is None and name == "mini_batch_size":
            return _losses.LOSSES[self.loss].mini_batch
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
            raise ConfigError(f"--mini-batch-size is read by the losses that split a batch ({', '.join(CACHED)}) "
                              f"only, not {self.loss}")
        Window.parse(self.value("neg_range"))
        if not 0 <= self.value("neg_margin") < 1:
            raise ConfigError("--neg-margin must be in [0, 1)")
        if not 0 <= self.dev_fraction < 1:
            raise ConfigError("--dev-fraction must be a share in [0, 1)")
        if self.mini_batch_size is not None and self.mini_batch_size < 1:
            raise ConfigError("--mini-batch-size must be >= 1")
        if self.guide and self.loss not in GUIDED:
            raise ConfigError(f"--guide is read by the {' and '.join(GUIDED)} losses only, not {self.loss}")
        if self.loss == "cosent" and self.negatives_from == "dense":
            raise ConfigError(f"--negatives-from dense feeds the in-batch losses ({', '.join(IN_BATCH)}); cosent "
                              "draws random negatives")
        if parse_alpha(self.merge_base) == "auto" and self.dev_fraction <= 0:
            raise ConfigError("--merge-base auto picks the weight on the dev reports' titles: pass --dev-fraction > 0 "
                              "(e.g. 0.1), or a fixed weight such as --merge-base 0.5")
        parse_mix(self.mix)
        self._check_distill()
        if self.freeze_embeddings and self.add_cjk:
            raise ConfigError("--add-cjk adds embedding rows that must be trained; drop --freeze-embeddings "
                              "(or --add-cjk)")

    def _check_distill(self) -> None:
        given = [f"--{k.replace('_', '-')}" for k in ("teacher", "teacher_k", "student_temperature",
                                                       "teacher_temperature", "teacher_cache")
                 if getattr(self, k) is not None]
        if given and self.loss not in DISTILL:
            raise ConfigError(f"{', '.join(given)} shape a teacher's ranking, read by --loss {'/'.join(DISTILL)} only, "
                              f"not {self.loss}")
        if self.loss in DISTILL and self.negatives < 1:
            raise ConfigError(f"--negatives must be >= 1 with --loss {self.loss} (a ranking needs candidates below "
                              "the positive)")
        if self.value("teacher_k") < 2:
            raise ConfigError("--teacher-k must be >= 2")
        for k in ("student_temperature", "teacher_temperature"):
            if not self.value(k) > 0:
                raise ConfigError(f"--{k.replace('_', '-')} must be > 0")
