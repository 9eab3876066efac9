"""Hard negatives mined by a dense model (``fincprg train --negatives-from dense``).

The window and margin follow sentence-transformers' ``util.mine_hard_negatives`` (``range_min``,
``range_max``, ``relative_margin``, ``sampling_strategy="top"``) and FlagEmbedding's ranks 2-200 advice.
It is written here rather than called because that function knows texts, not reports: a passage of
the positive's own report is the likeliest unlabelled positive (the template generator labels one
passage per query, and the report's other passages often answer it too), and the guard below keeps
such passages out. Known positives of the query are never negatives either.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fincprg.errors import ConfigError
from fincprg.train.data import Pairs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Window:
    """Which candidates may be negatives: ranks ``[lo, hi)`` of the query's nearest passages whose score is
    at most ``(1 - margin)`` × the query's best positive score; the nearest allowed ones are taken.
    ``same_report`` lets a passage of the positive's report be a negative (off by default)."""

    lo: int = 10
    hi: int = 100
    margin: float = 0.05
    same_report: bool = False

    @staticmethod
    def parse(text: str) -> tuple[int, int]:
        try:
            lo, hi = (int(x) for x in text.split(":"))
        except ValueError:
            raise ConfigError(f"--neg-range {text!r}: write MIN:MAX, two ranks (e.g. 10:100)") from None
        if not 0 <= lo < hi:
            raise ConfigError(f"--neg-range {text!r}: need 0 <= MIN < MAX")
        return lo, hi


def dense_negatives(pairs: Pairs, model: Any, k: int, window: Window, *, prompts: dict[str, str],
                    batch_size: int = 32, show_progress: bool = False) -> dict[str, list[str]]:
    """query text -> up to ``k`` negative passage texts (title + text), mined by ``model``.

    Args:
        pairs: the training pairs; ``pairs.pool`` is the candidate corpus (training reports only).
        model: a SentenceTransformer (the base model by default: it has not seen the labels).
        prompts: the model's ``query``/``passage`` prompt strings ("" for none).
    """
    import numpy as np

    ids = sorted(pairs.pool)
    queries = sorted(set(pairs.queries))
    if not ids or not queries or k <= 0:
        return {}
    enc = dict(batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
               show_progress_bar=show_progress)
    docs = model.encode([prompts.get("passage", "") + pairs.pool[p] for p in ids], **enc)
    qv = model.encode([prompts.get("query", "") + q for q in queries], **enc)
    col = {p: i for i, p in enumerate(ids)}
    out: dict[str, list[str]] = {}
    stats = {"margin": 0, "same_report": 0, "short": 0}
    hi = min(window.hi, len(ids))
    for start in range(0, len(queries), 256):
        sims = qv[start:start + 256] @ docs.T
        for row, q in zip(sims, queries[start:start + 256]):
            known = pairs.known.get(q, set())
            pos = [col[p] for p in known if p in col]
            # every training positive is in the pool (both come from the training reports)
            best = max(float(row[i]) for i in pos)
            reports = {pairs.report_of.get(p) for p in known} - {None}
            order = np.argsort(-row, kind="stable")[:hi]
            allowed = []
            for rank, i in enumerate(order):
                pid = ids[i]
                if pid in known:
                    continue
                if rank < window.lo:
                    continue
                if float(row[i]) > best - abs(best) * window.margin:
                    stats["margin"] += 1
                    continue
                if not window.same_report and pairs.report_of.get(pid) in reports:
                    stats["same_report"] += 1
                    continue
                allowed.append(pairs.pool[pid])
            if len(allowed) < k:
                stats["short"] += 1
            out[q] = allowed[:k]
    log.info("train: dense negatives for %d queries (ranks %d-%d); skipped %d within the margin, %d of the "
             "positive's report; %d queries have fewer than %d", len(queries), window.lo, window.hi,
             stats["margin"], stats["same_report"], stats["short"], k)
    return out
