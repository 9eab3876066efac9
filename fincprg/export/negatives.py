"""Hard negatives for training: BM25 (bm25s over finance tokens) or a dense sentence-transformers model.

A candidate is never a negative when it is a known positive of the query (any label, direct or
mined, from any subset or split) or when its text equals a positive's text (boilerplate
passages repeated across reports would otherwise teach the model that a positive is negative).

An unlabelled passage that answers the query is a *false* negative (FlagEmbedding#850, #1130). The
guards of ``export.negatives`` (:class:`Guard`) keep them out as sentence-transformers'
``mine_hard_negatives`` does: skip the ``range_min`` top-ranked candidates, look no deeper than
``range_max``, and keep a candidate only when it scores at most the query's best positive minus
``margin`` (and times ``1 - relative_margin``) and at most ``max_score``. With
``export.negatives.reranker`` a cross-encoder rescores the candidates and the positives first; the
margins then compare its scores, and the hardest candidates by its score are kept.
"""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from fincprg.errors import ConfigError
from fincprg.export.tokens import TokenIds
from fincprg.finance import tokenize

log = logging.getLogger(__name__)
_EXTRA = 16  # candidates fetched beyond n + |positives|, to survive the exclusions
_MAX_POS_FETCH = 256  # cap on extra candidates for queries with very many positives
# bm25s's numba backend retrieves ~10x faster than its numpy one but JIT-compiles for tens of
# seconds first; it pays off only for large query sets (paper scale: ~150k queries).
NUMBA_MIN_QUERIES = 20000


@dataclass
class Guard:
    """The false-negative guards (see the module docstring); the defaults guard nothing."""

    range_min: int = 0
    range_max: int | None = None
    margin: float | None = None
    relative_margin: float | None = None
    max_score: float | None = None
    reranker: Any = None  # anything with ``score(pairs) -> list[float]`` (fincprg.models.rerankers)
    dropped: Counter = field(default_factory=Counter)  # candidates dropped, by reason

    @property
    def active(self) -> bool:
        return bool(self.range_min or self.range_max or self.reranker is not None
                    or self.margin is not None or self.relative_margin is not None or self.max_score is not None)

    @property
    def needs_positive_scores(self) -> bool:
        return self.margin is not None or self.relative_margin is not None

    def depth(self, n: int) -> int:
        """Candidates to fetch per query before the exclusions: the window, with room for the filters."""
        return self.range_max if self.range_max else self.range_min + (3 * n if self.active else n)

    def select(self, query: str, cands: list[tuple[int, float]], texts: Sequence[str], pos_score: float | None,
               pos_texts: set[str], n: int) -> list[int]:
        """Pick up to ``n`` of a query's candidates (best first, positives already excluded)."""
        window = cands[self.range_min:self.range_max]
        self.dropped["range"] += len(cands) - len(window)
        if self.reranker is not None and window:
            scores = self.reranker.score([(query, texts[j]) for j, _ in window])
            window = sorted(zip((j for j, _ in window), scores), key=lambda x: (-x[1], x[0]))
            if self.needs_positive_scores:
                pos_score = max(self.reranker.score([(query, t) for t in sorted(pos_texts)]), default=None)
        out = []
        for j, s in window:
            if self.max_score is not None and s > self.max_score:
                self.dropped["max_score"] += 1
            elif pos_score is not None and self.margin is not None and s > pos_score - self.margin:
                self.dropped["margin"] += 1
            elif pos_score is not None and self.relative_margin is not None and s > pos_score * (1 - self.relative_margin):
                self.dropped["relative_margin"] += 1
            else:
                out.append(int(j))
                if len(out) >= n:
                    break
        return out


def make_guard(cfg: Any) -> Guard:
    """The :class:`Guard` of ``export.negatives`` (loads its reranker, if any)."""
    reranker = None
    rr = cfg.reranker
    if rr.backend != "none":
        from fincprg.registry import PAIR_SCORERS

        reranker = PAIR_SCORERS.get(rr.backend).factory(
            model=rr.model, batch_size=rr.batch_size, fp16=rr.fp16, device=rr.device,
            where="export.negatives.reranker.model", alternative="export.negatives.reranker.backend=none")
    return Guard(range_min=cfg.range_min, range_max=cfg.range_max, margin=cfg.margin,
                 relative_margin=cfg.relative_margin, max_score=cfg.max_score, reranker=reranker)


def _bm25_backend(n_queries: int) -> str:
    if n_queries < NUMBA_MIN_QUERIES:
        return "numpy"
    try:
        import numba  # noqa: F401
    except ImportError:
        return "numpy"
    return "numba"


def _candidates(cand_row: np.ndarray, score_row: np.ndarray, pos: set[int], pos_texts: set[str],
                texts: Sequence[str], drop_zero: bool) -> list[tuple[int, float]]:
    """A query's retrieved candidates minus its positives (by index and by text), best first."""
    out: list[tuple[int, float]] = []
    seen: set[int] = set()
    for j, s in zip(cand_row.tolist(), score_row.tolist()):
        if drop_zero and s <= 0:
            break  # bm25s pads k with zero-score documents: they match nothing
        if j >= len(texts) or j in pos or j in seen or texts[j] in pos_texts:
            continue  # (indices past the pool are positives indexed only to score them)
        seen.add(j)
        out.append((j, float(s)))
    return out


def _positive_texts(i: int, positives: Sequence[set[int]], texts: Sequence[str],
                    positive_texts: Sequence[set[str]] | None) -> set[str]:
    return {texts[j] for j in positives[i]} | (positive_texts[i] if positive_texts is not None else set())


def bm25_negatives(
    queries: Sequence[str],
    positives: Sequence[set[int]],
    texts: Sequence[str],
    n: int,
    *,
    positive_texts: Sequence[set[str]] | None = None,
    chunk: int = 4096,
    show_progress: bool = False,
    guard: Guard | None = None,
    tokens: TokenIds | None = None,
) -> list[list[int]]:
    """Top-scoring non-positive passages (indices into ``texts``) per query under BM25.

    Tokens come from ``fincprg.finance.tokenize`` (jieba + the finance dictionary), as in the
    lexical mining scorer; ``tokens`` shares passages already cut (:class:`~fincprg.export.tokens.TokenIds`).
    With ``show_progress`` two tqdm bars (passages tokenised, queries retrieved) show the minutes this
    takes at paper scale. ``guard``: see :class:`Guard` (BM25 scores).
    """
    import bm25s

    if not texts or n <= 0:
        return [[] for _ in queries]
    guard = guard or Guard()
    # margins compare with the positives' BM25 scores, so positives outside the pool are indexed too
    extra = sorted({t for ts in (positive_texts or []) for t in ts} - set(texts)) \
        if guard.needs_positive_scores and guard.reranker is None else []
    at = {t: len(texts) + k for k, t in enumerate(extra)}
    retriever = bm25s.BM25(backend=_bm25_backend(len(queries)))
    tokens = tokens or TokenIds(lambda t: tokenize(t, cache=False))  # each passage is cut once, never memoised
    docs = [*texts, *extra]
    for t in tqdm(docs, desc="export: BM25 negatives, tokenise passages", unit="passage",
                  disable=not show_progress, leave=False):
        tokens.ids(t)
    retriever.index(tokens.corpus(docs), show_progress=False)
    n_index = len(texts) + len(extra)
    out: list[list[int]] = []
    with tqdm(total=len(queries), desc="export: BM25 negatives, queries", unit="query",
              disable=not show_progress) as bar:
        for start in range(0, len(queries), chunk):
            qs = queries[start : start + chunk]
            pos = positives[start : start + chunk]
            k = min(n_index, guard.depth(n) + min(max((len(p) for p in pos), default=0), _MAX_POS_FETCH) + _EXTRA)
            qtok = [tokenize(q) or ["\0"] for q in qs]  # an empty query still needs one token; it matches nothing
            ids, scores = retriever.retrieve(qtok, k=k, show_progress=False)
            for r, q in enumerate(qs):
                i = start + r
                ptexts = _positive_texts(i, positives, texts, positive_texts)
                cands = _candidates(ids[r], scores[r], positives[i], ptexts, texts, drop_zero=True)
                pos_score = None
                if guard.needs_positive_scores and guard.reranker is None:
                    idx = [*positives[i], *(at[t] for t in ptexts if t in at)]
                    full = retriever.get_scores(qtok[r]) if idx and qtok[r] != ["\0"] else None
                    pos_score = float(max(full[idx])) if full is not None else 0.0
                out.append(guard.select(q, cands, texts, pos_score, ptexts, n))
            bar.update(len(qs))
    return out


def dense_negatives(
    queries: Sequence[str],
    positives: Sequence[set[int]],
    texts: Sequence[str],
    n: int,
    *,
    model: str,
    positive_texts: Sequence[set[str]] | None = None,
    batch_size: int = 64,
    device: str | None = None,
    chunk: int = 1024,
    show_progress: bool = False,
    guard: Guard | None = None,
) -> list[list[int]]:
    """Nearest non-positive passages by cosine similarity of a sentence-transformers model."""
    if not texts or n <= 0:
        return [[] for _ in queries]
    from fincprg.models import TextEncoder

    guard = guard or Guard()
    enc = TextEncoder(model, where="export.negatives.model", batch_size=batch_size, device=device,
                      alternative="export.negatives.method=bm25")
    p = enc.encode(list(texts), show_progress=show_progress, role="passage")  # the model's prompts, if any
    q = enc.encode(list(queries), show_progress=show_progress, role="query")
    extra = sorted({t for ts in (positive_texts or []) for t in ts} - set(texts)) \
        if guard.needs_positive_scores and guard.reranker is None else []
    at = {t: k for k, t in enumerate(extra)}
    pe = enc.encode(extra, show_progress=False, role="passage") if extra else None
    out: list[list[int]] = []
    for start in range(0, len(queries), chunk):
        pos = positives[start : start + chunk]
        k = min(len(texts), guard.depth(n) + min(max((len(x) for x in pos), default=0), _MAX_POS_FETCH) + _EXTRA)
        sims = q[start : start + chunk] @ p.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k < len(texts) else np.tile(
            np.arange(len(texts)), (len(sims), 1))
        order = np.take_along_axis(sims, top, axis=1).argsort(axis=1)[:, ::-1]
        top = np.take_along_axis(top, order, axis=1)
        for r in range(len(top)):
            i = start + r
            ptexts = _positive_texts(i, positives, texts, positive_texts)
            cands = _candidates(top[r], sims[r][top[r]], positives[i], ptexts, texts, drop_zero=False)
            pos_score = None
            if guard.needs_positive_scores and guard.reranker is None:
                vals = [float(sims[r][j]) for j in positives[i]]
                if pe is not None:
                    vals += [float(q[i] @ pe[at[t]]) for t in ptexts if t in at]
                pos_score = max(vals, default=None)
            out.append(guard.select(queries[i], cands, texts, pos_score, ptexts, n))
    return out


def mine_negatives(
    queries: Sequence[str],
    positives: Sequence[set[int]],
    texts: Sequence[str],
    *,
    method: str,
    n: int,
    positive_texts: Sequence[set[str]] | None = None,
    model: str | None = None,
    batch_size: int = 64,
    device: str | None = None,
    show_progress: bool = False,
    cfg: Any = None,
    tokens: TokenIds | None = None,
) -> list[list[int]]:
    """Hard negatives per query, as indices into ``texts``.

    Args:
        queries: query texts.
        positives: per query, indices (into ``texts``) of its known positives; never returned.
        texts: the negative pool (passage texts).
        method: ``export.negatives.method`` ("bm25" | "dense" | "none").
        n: negatives wanted per query (fewer when the pool has fewer matching passages).
        positive_texts: per query, texts of known positives outside the pool; equal texts are excluded too.
        model, batch_size, device: for the dense method.
        show_progress: tqdm bars (the build's ``run.show_progress`` / ``-q``).
        cfg: the whole ``export.negatives`` section: its false-negative guards (:class:`Guard`) apply.
        tokens: passages already cut (BM25), shared with the overlap measure.
    """
    if method == "none":
        return [[] for _ in queries]
    if method == "dense" and not model:
        raise ConfigError("export.negatives.method=dense needs export.negatives.model (a sentence-transformers "
                          "path or hub id); or set export.negatives.method: bm25")
    if method not in ("bm25", "dense"):
        raise ConfigError(f"export.negatives.method={method!r} is not one of bm25, dense, none")
    guard = make_guard(cfg) if cfg is not None else Guard()
    if method == "bm25":
        out = bm25_negatives(queries, positives, texts, n, positive_texts=positive_texts,
                             show_progress=show_progress, guard=guard, tokens=tokens)
    else:
        out = dense_negatives(queries, positives, texts, n, model=model or "", positive_texts=positive_texts,
                              batch_size=batch_size, device=device, show_progress=show_progress, guard=guard)
    if guard.active:
        short = sum(len(x) < n for x in out)
        log.info("export: hard-negative guards dropped candidates %s; %d of %d queries got fewer than %d negatives",
                 dict(guard.dropped), short, len(out), n)
    return out


def card_lines(cfg: Any) -> list[str]:
    """The dataset card's note on the false-negative guards of ``export.negatives`` (empty when none is set)."""
    parts = []
    if cfg.range_min or cfg.range_max:
        parts.append(f"candidates ranked {cfg.range_min + 1} to {cfg.range_max or 'the fetch depth'} only")
    if cfg.reranker.backend != "none":
        parts.append(f"rescored by the {cfg.reranker.backend} reranker {cfg.reranker.model}")
    if cfg.margin is not None:
        parts.append(f"at most the best positive's score minus {cfg.margin}")
    if cfg.relative_margin is not None:
        parts.append(f"at most {1 - cfg.relative_margin:.0%} of the best positive's score")
    if cfg.max_score is not None:
        parts.append(f"score at most {cfg.max_score}")
    if not parts or cfg.method == "none":
        return []
    return ["## Hard negatives", "", "Hard negatives are guarded against unlabelled positives: " + "; ".join(parts)
            + ".", ""]
