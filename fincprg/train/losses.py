"""The losses of ``fincprg train --loss``: one class each, documented where it is defined.

A loss says which rows it trains on and what it reads (a guide model, GradCache's mini-batch, a teacher); the
settings' checks, the trainer, the batch sampler and ``--loss``'s help all read :data:`LOSSES`, so a new loss is
one class here. sentence-transformers and torch are imported inside :meth:`Loss.build` only.
"""
from __future__ import annotations

from typing import Any, ClassVar


class Loss:
    """Base: a ``--loss`` choice. The first paragraph of a subclass's docstring is its ``--help`` line."""

    name: ClassVar[str]
    rows: ClassVar[str]  # "pairs": sentence1/sentence2/score; "contrastive": anchor/positive/negative_k; "distill": + label
    in_batch: ClassVar[bool] = False  # every other row's positive is a negative: no duplicate texts in a batch
    guided: ClassVar[bool] = False  # reads --guide
    cached: ClassVar[bool] = False  # encodes the batch in --mini-batch-size pieces (GradCache, or accumulation)
    mini_batch: ClassVar[int] = 16  # --mini-batch-size's default

    @classmethod
    def help(cls) -> str:
        return " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())

    def build(self, st: Any, settings: Any, guide: Any = None) -> Any:
        raise NotImplementedError

    @staticmethod
    def _scale(settings: Any) -> dict[str, float]:
        return {"scale": settings.scale} if settings.scale else {}


class CoSENT(Loss):
    """CoSENT on positive pairs plus random negatives scored 0, mean pooling (the paper's setting)."""

    name, rows = "cosent", "pairs"

    def build(self, st: Any, settings: Any, guide: Any = None) -> Any:
        from sentence_transformers.sentence_transformer import losses

        return losses.CoSENTLoss(st, **self._scale(settings))


class MNRL(Loss):
    """MultipleNegativesRanking with the hard negatives and in-batch negatives."""

    name, rows, in_batch = "mnrl", "contrastive", True

    def build(self, st: Any, settings: Any, guide: Any = None) -> Any:
        from sentence_transformers.sentence_transformer import losses

        return losses.MultipleNegativesRankingLoss(st, **self._scale(settings))


class CachedMNRL(MNRL):
    """The same with GradCache: a large --batch-size in the memory of --mini-batch-size."""

    name, cached = "cmnrl", True

    def build(self, st: Any, settings: Any, guide: Any = None) -> Any:
        from sentence_transformers.sentence_transformer import losses

        return losses.CachedMultipleNegativesRankingLoss(st, mini_batch_size=settings.value("mini_batch_size"),
                                                         **self._scale(settings))


class GIST(Loss):
    """GISTEmbed: a frozen --guide model (the base by default) drops the in-batch and hard negatives it scores above
    the positive (likely unlabelled positives).

    --scale is the inverse of GIST's temperature (e5: 100 = 0.01, GIST's own).
    """

    name, rows, in_batch, guided = "gist", "contrastive", True, True

    def build(self, st: Any, settings: Any, guide: Any = None) -> Any:
        from sentence_transformers.sentence_transformer import losses

        return losses.GISTEmbedLoss(st, guide, **({"temperature": 1.0 / settings.scale} if settings.scale else {}))


class CachedGIST(GIST):
    """GISTEmbed with GradCache (--mini-batch-size)."""

    name, cached = "cgist", True

    def build(self, st: Any, settings: Any, guide: Any = None) -> Any:
        from sentence_transformers.sentence_transformer import losses

        return losses.CachedGISTEmbedLoss(st, guide, mini_batch_size=settings.value("mini_batch_size"),
                                          **({"temperature": 1.0 / settings.scale} if settings.scale else {}))


class KL(Loss):
    """Listwise distillation of a --teacher's ranking (DistillKLDivLoss over the positive and --negatives of the
    teacher's lower ranks; fincprg.train.distill). Memory follows --mini-batch-size rows (default 2).

    The KL's student-temperature² factor is divided out again (see :func:`fincprg.train.distill.kl_loss`). Its
    rows are independent (no in-batch negatives), so a --batch-size of rows is accumulated over mini-batches of
    --mini-batch-size rows with the same gradient: each row holds 1 + --negatives passages, and 16 rows of 8 at 256
    tokens took e5-small past 22 GB.
    """

    name, rows, cached, mini_batch = "kl", "distill", True, 2

    def build(self, st: Any, settings: Any, guide: Any = None) -> Any:
        from fincprg.train.distill import kl_loss

        return kl_loss(st, settings.value("student_temperature"), settings.value("teacher_temperature"))


class MarginMSE(KL):
    """MarginMSE on a --teacher's ranking (sentence-transformers MarginMSELoss): the student's score margin
    positive − negative matches the teacher's, for each of the --negatives; same rows, temperatures and
    --mini-batch-size as kl.

    The margins are taken on the scale the KL's softmax sees: the student's cosine / --student-temperature, the
    teacher's [0, 1]-normalised score / --teacher-temperature (:func:`fincprg.train.distill.margin_mse_loss`). KL
    matches the shape of the whole ranking; MarginMSE matches each gap, so a teacher that is sure of its top
    passage pulls harder (GPL, Hofstätter et al. 2020).
    """

    name = "marginmse"

    def build(self, st: Any, settings: Any, guide: Any = None) -> Any:
        from fincprg.train.distill import margin_mse_loss

        return margin_mse_loss(st, settings.value("student_temperature"), settings.value("teacher_temperature"))


LOSSES: dict[str, Loss] = {c.name: c() for c in (CoSENT, MNRL, CachedMNRL, GIST, CachedGIST, KL, MarginMSE)}


def names(**kind: Any) -> tuple[str, ...]:
    """The losses whose class attributes match ``kind`` (``names(cached=True)``, ``names(rows="distill")``)."""
    return tuple(n for n, loss in LOSSES.items() if all(getattr(loss, k) == v for k, v in kind.items()))


def help_text() -> str:
    return " ".join(f"{n}: {loss.help()}" for n, loss in LOSSES.items())
