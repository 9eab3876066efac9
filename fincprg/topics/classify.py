"""Industry classifiers on the CITIC level-1 scheme.

Two built-in backends behind the ``IndustryClassifier`` protocol (registered in
:data:`fincprg.registry.CLASSIFIERS`, where a user adds their own):

* ``LexiconClassifier`` (offline default): keyword lexicon per CITIC industry
  (``fincprg.finance.industries.lexicon``), matched leftmost-longest; each hit scores its length
  (longer keywords are more specific), doubled inside the title head (before the first colon, where
  reports name their industry or company). Company names learnt from report metadata score as
  strong keywords. No hit -> None.
* ``TransformersClassifier``: a HuggingFace sequence-classification model (e.g. FinBERT2-IC) from a
  local path or hub id. Labels come from ``config.id2label``; each is mapped onto CITIC with
  ``to_citic`` (a model trained on Shenwan or CITIC names works as is); a label that maps to
  nothing is returned unchanged (and logged once). Its pooled hidden states (the [CLS] vector of
  the last hidden layer, or the masked mean with ``pooling="mean"``) are the title embeddings
  (``embed``), so the embedding space is the one that separates industries.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from fincprg.config_sections import ClassifierConfig
from fincprg.errors import BackendError
from fincprg.finance.industries import CITIC_INDUSTRIES, lexicon, to_citic
from fincprg.registry import CLASSIFIERS

log = logging.getLogger(__name__)


@runtime_checkable
class IndustryClassifier(Protocol):
    name: str

    def classify(self, texts: Sequence[str]) -> list[str | None]:
        """One CITIC level-1 industry (or None when unknown) per text."""
        ...


class LexiconClassifier:
    """Offline keyword classifier; ``companies`` maps company names to CITIC industries."""

    name = "lexicon"
    head_weight = 2.0
    company_weight = 3.0

    def __init__(self, companies: Mapping[str, str] | None = None,
                 keywords: Mapping[str, Sequence[str]] | None = None):
        table: dict[str, tuple[str, float]] = {}
        for ind, words in (keywords or lexicon()).items():
            for w in words:
                table.setdefault(w.upper(), (ind, float(len(w))))
        for comp, ind in (companies or {}).items():
            citic = to_citic(ind)
            if citic and len(comp) >= 2:
                table[comp.upper()] = (citic, self.company_weight * len(comp))
        self._table = table
        # Leftmost-longest scan: keyword lengths grouped by first character, longest first, so
        # 电力设备 wins over 电力 at the same position (a 1,000-way regex alternation is 3x slower).
        by_first: dict[str, set[int]] = {}
        for u in table:
            by_first.setdefault(u[0], set()).add(len(u))
        self._first = {c: sorted(ls, reverse=True) for c, ls in by_first.items()}

    def scores(self, text: str) -> dict[str, float]:
        """Score per industry for one text (empty when no keyword matches)."""
        out: dict[str, float] = {}
        if not text:
            return out
        head_end = min((i for i in (text.find("："), text.find(":")) if i >= 0), default=len(text))
        up = text.upper()
        i, n = 0, len(up)
        while i < n:
            step = 1
            for ln in self._first.get(up[i], ()):
                hit = self._table.get(up[i:i + ln])
                if hit is not None:
                    ind, w = hit
                    out[ind] = out.get(ind, 0.0) + (w * self.head_weight if i < head_end else w)
                    step = ln
                    break
            i += step
        return out

    def classify(self, texts: Sequence[str]) -> list[str | None]:
        res: list[str | None] = []
        for t in texts:
            s = self.scores(t)
            # ties break on CITIC order, so the result is deterministic
            res.append(max(s, key=lambda k: (s[k], -CITIC_INDUSTRIES.index(k))) if s else None)
        return res


class TransformersClassifier:
    """A HF ``AutoModelForSequenceClassification``; ``classify`` and ``embed`` share one forward pass."""

    name = "transformers"

    def __init__(self, model: str, *, batch_size: int = 32, max_length: int = 64,
                 device: str | None = None, pooling: str = "cls"):
        import torch

        from fincprg.models import load_sequence_classifier

        self.tokenizer, self.model, self.device = load_sequence_classifier(
            model, where="topics.classifier.model", device=device, alternative="topics.classifier.backend=lexicon")
        self.batch_size, self.max_length, self.pooling = batch_size, max_length, pooling
        self._torch = torch
        id2label: dict[Any, str] = dict(self.model.config.id2label or {})
        self.raw_labels = [id2label.get(i, id2label.get(str(i), f"LABEL_{i}"))
                           for i in range(self.model.config.num_labels)]
        unmapped = [lab for lab in self.raw_labels if to_citic(lab) is None]
        if unmapped:
            log.warning("classifier labels not on the CITIC scheme are kept as is: %s", unmapped[:5])
        self.labels = tuple(to_citic(lab) or lab for lab in self.raw_labels)
        self._memo: dict[str, tuple[str, np.ndarray]] = {}

    def _run(self, texts: Sequence[str]) -> None:
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        torch = self._torch
        for i in range(0, len(todo), self.batch_size):
            batch = todo[i:i + self.batch_size]
            enc = self.tokenizer(batch, padding=True, truncation=True, max_length=self.max_length,
                                 return_tensors="pt").to(self.device)
            with torch.inference_mode():
                out = self.model(**enc, output_hidden_states=True)
            last = out.hidden_states[-1]
            if self.pooling == "mean":
                mask = enc["attention_mask"].unsqueeze(-1).to(last.dtype)
                pooled = (last * mask).sum(1) / mask.sum(1).clamp(min=1)
            else:
                pooled = last[:, 0]
            pred = out.logits.argmax(-1).tolist()
            vecs = pooled.float().cpu().numpy()
            for t, p, v in zip(batch, pred, vecs, strict=True):
                self._memo[t] = (self.labels[p], v)

    def classify(self, texts: Sequence[str]) -> list[str | None]:
        self._run(texts)
        return [self._memo[t][0] for t in texts]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self._run(texts)
        if not texts:
            return np.zeros((0, self.model.config.hidden_size), dtype=np.float32)
        return np.stack([self._memo[t][1] for t in texts]).astype(np.float32)


def company_map(pairs: Sequence[tuple[str | None, str | None]]) -> dict[str, str]:
    """company -> CITIC industry from (company, industry) metadata pairs; the majority label wins."""
    votes: dict[str, dict[str, int]] = {}
    for comp, ind in pairs:
        citic = to_citic(ind)
        if comp and citic:
            votes.setdefault(comp, {}).setdefault(citic, 0)
            votes[comp][citic] += 1
    return {c: max(v, key=lambda k: (v[k], -CITIC_INDUSTRIES.index(k))) for c, v in votes.items()}


def make_classifier(cfg: Any, companies: Mapping[str, str] | None = None) -> IndustryClassifier:
    """Build the classifier named by ``topics.classifier`` (a ``ClassifierConfig``), a
    :data:`~fincprg.registry.CLASSIFIERS` entry."""
    entry = CLASSIFIERS.get(cfg.backend)
    if entry.needs_model and not cfg.model:
        raise BackendError(f"topics.classifier.backend={cfg.backend} needs topics.classifier.model "
                           "(a local folder or hub id of a sequence classifier, e.g. FinBERT2-IC)")
    return entry.factory(cfg, companies=companies)


CLASSIFIERS.register("lexicon", lambda cfg, companies=None, **_: LexiconClassifier(companies=companies),
                     config=ClassifierConfig, description="offline CITIC keyword lexicon")
CLASSIFIERS.register("transformers", lambda cfg, **_: TransformersClassifier(cfg.model, batch_size=cfg.batch_size),
                     config=ClassifierConfig, gpu=True, needs_model=True,
                     description="transformers sequence classifier (FinBERT2-IC style); its labels mapped onto CITIC")
