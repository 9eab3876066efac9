"""Pluggable passage quality scorers (paper §3.1.1: a BERT filter trained on low-quality passages).

A scorer returns, per passage, the probability that it is *low* quality; the chunk stage
removes passages whose score is above ``chunk.quality.threshold`` (rule "quality").
"""
from __future__ import annotations

import logging
import re
from typing import Protocol, runtime_checkable

from fincprg.chunking.rules import cjk_share
from fincprg.config import QualityConfig

log = logging.getLogger(__name__)

_WORDISH = re.compile(r"[\u4e00-\u9fffA-Za-z0-9]")


@runtime_checkable
class QualityScorer(Protocol):
    """Scores passages; higher = more likely low quality, in [0, 1]."""

    name: str

    def score(self, texts: list[str]) -> list[float]: ...


class HeuristicScorer:
    """Offline default: flags garbled, symbol-heavy, non-Chinese or repetitive passages.

    score = max(low CJK share, symbol share, 4-gram repetition), each mapped to [0, 1]:
    - CJK share of non-space characters below 0.25 scores 1 (>= 0.5 scores 0);
    - punctuation/symbol share above 0.4 scores 1;
    - fewer than 35% distinct character 4-grams (text repeating itself) scores 1.
    It does not judge content; the paper's BERT filter (backend "transformers") does.
    """

    name = "heuristic"

    def score(self, texts: list[str]) -> list[float]:
        return [self._one(t) for t in texts]

    @staticmethod
    def _one(text: str) -> float:
        chars = [c for c in text if not c.isspace()]
        n = len(chars)
        if n == 0:
            return 1.0
        cjk = cjk_share(text)
        low_cjk = min(1.0, max(0.0, (0.5 - cjk) / 0.25))
        symbols = 1 - len(_WORDISH.findall(text)) / n
        sym = min(1.0, max(0.0, (symbols - 0.2) / 0.2))
        rep = 0.0
        s = "".join(chars)
        if len(s) >= 40:
            grams = [s[i:i + 4] for i in range(len(s) - 3)]
            distinct = len(set(grams)) / len(grams)
            rep = min(1.0, max(0.0, (0.6 - distinct) / 0.25))
        return max(low_cjk, sym, rep)


class TransformersScorer:
    """A BERT-style sequence classifier (label 1 = low quality), loaded with transformers.

    ``model`` is a local folder or a hub id; tokenizer and model load with ``AutoTokenizer`` and
    ``AutoModelForSequenceClassification``. Passages are scored in batches of ``batch_size``;
    the score is softmax(logits)[1] (sigmoid of the single logit for one-label models).
    """

    name = "transformers"

    def __init__(self, model: str, *, batch_size: int = 32, max_length: int = 512, device: str | None = None):
        import torch

        from fincprg.models import load_sequence_classifier

        self.tokenizer, self.model, self.device = load_sequence_classifier(
            model, where="chunk.quality.model", device=device, alternative="chunk.quality.backend=heuristic")
        self.batch_size = batch_size
        self.max_length = min(max_length, getattr(self.tokenizer, "model_max_length", max_length) or max_length)
        self._torch = torch

    def score(self, texts: list[str]) -> list[float]:
        torch = self._torch
        out: list[float] = []
        for i in range(0, len(texts), self.batch_size):
            batch = texts[i:i + self.batch_size]
            enc = self.tokenizer(batch, padding=True, truncation=True, max_length=self.max_length,
                                 return_tensors="pt").to(self.device)
            with torch.inference_mode():
                logits = self.model(**enc).logits.float()
            if logits.shape[-1] == 1:
                probs = torch.sigmoid(logits[:, 0])
            else:
                probs = torch.softmax(logits, dim=-1)[:, 1]
            out.extend(float(p) for p in probs.cpu())
        return out


class NoScorer:
    """backend "none": keeps everything."""

    name = "none"

    def score(self, texts: list[str]) -> list[float]:
        return [0.0] * len(texts)


def make_scorer(cfg: QualityConfig) -> QualityScorer:
    """Build the scorer named by ``chunk.quality.backend``."""
    if cfg.backend == "heuristic":
        return HeuristicScorer()
    if cfg.backend == "none":
        return NoScorer()
    assert cfg.model, "QualityConfig's validator requires chunk.quality.model for the transformers backend"
    return TransformersScorer(cfg.model, batch_size=cfg.batch_size, max_length=cfg.max_length, device=cfg.device)
