"""Scoring of traversal spaces: a pure function over batches of spaces.

``score_spaces(spaces, env)`` touches no files, so the stage can run it in a loop today and in
a Ray ``map_batches`` later. Per space it enumerates exactly the pairs of
:func:`fincprg.mine.spaces.base_mask` (optionally narrowed by the prefilter), scores each
distinct text pair once, applies the threshold, then the boilerplate and finance vetoes, and in the
topic space the rules of :mod:`fincprg.mine.scope` (whose passage, which period).

Identical texts: two queries with the same text are the same question, so the pair is
equivalent by definition (score 1.0) and is not sent to the reranker; it still counts as a
traversed pair in the cost model and is still subject to the vetoes (boilerplate mostly).

Kept records: every pair with score >= ``keep_min_score`` (0.85: the audit samples 0.85-1.00)
or above the threshold; every other pair is only counted in a 100-bin score histogram, which
is what makes the paper-scale output fit on disk.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from fincprg.mine.facts import FactsCache
from fincprg.mine.rerankers import BlockScorer, Reranker
from fincprg.mine.scope import TopicScope, topic_veto
from fincprg.mine.spaces import Space, base_mask
from fincprg.mine.veto import veto_reason
from fincprg.records import ScoredPair

N_BINS = 100
BLOCK_ROWS = 256


@dataclass
class MineEnv:
    """Everything the pure scoring function needs (no I/O)."""

    texts: dict[str, str]  # query id -> text
    reranker: Reranker
    threshold: float
    direction: str = "both"
    keep_min_score: float = 0.85
    boilerplate: frozenset[str] = frozenset()
    facts: FactsCache | None = None
    veto: dict[str, bool] | None = None  # {"company", "period", "metric", "numbers", "topic"}; None = veto off
    neighbours: Callable[[Space], sp.csr_matrix | None] | None = None  # prefilter
    sources: dict[str, str] | None = None  # query id -> the sentence/passage it was generated from (veto)
    topic: TopicScope | None = None  # topic space: passage query -> its report's scope (veto)
    cache: dict[tuple[str, str], float] = field(default_factory=dict)  # pairwise backends


@dataclass
class SpaceResult:
    kind: str
    key: str
    pairs: list[ScoredPair]
    counts: Counter
    hist: np.ndarray


def _pairwise_block(env: MineEnv, a: Sequence[str], b: Sequence[str], mask: np.ndarray,
                    counts: Counter) -> np.ndarray:
    """Score the masked cells with a pair reranker, each distinct text pair once."""
    out = np.full(mask.shape, np.nan, dtype=np.float32)
    ii, jj = np.nonzero(mask)
    todo: dict[tuple[str, str], None] = {}
    keys = []
    for i, j in zip(ii.tolist(), jj.tolist(), strict=True):
        ta, tb = a[i], b[j]
        key = (ta, tb) if env.direction == "both" or ta <= tb else (tb, ta)
        keys.append(key)
        if ta != tb and key not in env.cache:
            todo[key] = None
    if todo:
        pairs = list(todo)
        for key, s in zip(pairs, env.reranker.score(pairs), strict=True):
            env.cache[key] = float(s)
        counts["text_pairs_scored"] += len(pairs)
    for i, j, key in zip(ii.tolist(), jj.tolist(), keys, strict=True):
        out[i, j] = 1.0 if key[0] == key[1] else env.cache[key]
    return out


def _direction_pass(space: Space, env: MineEnv, reverse: bool, allowed: sp.csr_matrix | None,
                    counts: Counter, hist: np.ndarray, kept: list[tuple[str, str, float]]) -> None:
    left = space.right if reverse else space.left
    right = space.left if reverse else (space.right or space.left)
    lt = [env.texts[q] for q in left]
    rt = [env.texts[q] for q in right]
    # text codes within the space, to spot identical texts without string compares in the loop
    codes = {t: i for i, t in enumerate(dict.fromkeys(lt + rt))}
    lc = np.fromiter((codes[t] for t in lt), dtype=np.int64, count=len(lt))
    rc = np.fromiter((codes[t] for t in rt), dtype=np.int64, count=len(rt))
    scorer = env.reranker if isinstance(env.reranker, BlockScorer) else None  # narrowed for typing
    if scorer is not None:
        # no-op when the stage prepared the whole inventory; otherwise one IDF fit over both sides
        # (rows() alone would fit on the left texts and only transform the right ones)
        scorer.prepare(lt + rt)
        # distinct texts only: score the unique block, then gather back per query
        ul, linv = np.unique(lc, return_inverse=True)
        ur, rinv = np.unique(rc, return_inverse=True)
        inv_text = {i: t for t, i in codes.items()}
        rows_l = scorer.rows([inv_text[int(c)] for c in ul])
        rows_r = scorer.rows([inv_text[int(c)] for c in ur])
    for r0 in range(0, len(left), BLOCK_ROWS):
        rows = slice(r0, r0 + BLOCK_ROWS)
        mask = base_mask(space, rows, env.direction, reverse=reverse)
        if allowed is not None:
            sub = (allowed.T if reverse else allowed)[rows]
            mask &= sub.toarray() if sp.issparse(sub) else np.asarray(sub)
        if not mask.any():
            continue
        if scorer is not None:
            lu = np.unique(linv[rows], return_inverse=True)
            s_u = scorer.score_rows(rows_l[lu[0]], rows_r)
            # the vectorised scorer computes whole blocks of distinct texts, masked cells included
            counts["block_cells_scored"] += s_u.size
            scores = s_u[lu[1]][:, rinv]
        else:
            scores = _pairwise_block(env, lt[rows], rt, mask, counts)
        ident = mask & (lc[rows][:, None] == rc[None, :])
        if ident.any():
            scores = np.where(ident, np.float32(1.0), scores)
            counts["identical_text_pairs"] += int(ident.sum())
        vals = scores[mask]
        counts["pairs"] += int(vals.size)
        hist += np.histogram(np.clip(vals, 0.0, 1.0), bins=N_BINS, range=(0.0, 1.0))[0]
        keep_at = min(env.keep_min_score, env.threshold)
        ii, jj = np.nonzero(mask & (scores >= keep_at))
        for i, j in zip(ii.tolist(), jj.tolist(), strict=True):
            kept.append((left[r0 + i], right[j], float(scores[i, j])))


def score_space(space: Space, env: MineEnv) -> SpaceResult:
    """Traverse one space: counts, histogram and the kept ScoredPairs (accepted, vetoed, >= 0.85)."""
    counts: Counter = Counter()
    hist = np.zeros(N_BINS, dtype=np.int64)
    kept: list[tuple[str, str, float]] = []
    allowed = env.neighbours(space) if env.neighbours else None
    _direction_pass(space, env, False, allowed, counts, hist, kept)
    if space.bipartite and env.direction == "both":
        _direction_pass(space, env, True, allowed, counts, hist, kept)
    pairs = []
    subqueries = frozenset(space.left) if space.kind == "topic" else frozenset()
    for a, b, s in kept:
        accepted = s >= env.threshold
        reason = None
        if accepted:
            counts["above_threshold"] += 1
            reason = _veto(env, a, b) or (_topic_veto(env, a, b, subqueries) if subqueries else None)
            if reason:
                counts[f"veto_{reason}"] += 1
                accepted = False
            else:
                counts["accepted"] += 1
        pairs.append(ScoredPair(space=space.kind, query_a=a, query_b=b, score=round(s, 6),
                                accepted=accepted, veto=reason))
    return SpaceResult(space.kind, space.key, pairs, counts, hist)


def _veto(env: MineEnv, a: str, b: str) -> str | None:
    if a in env.boilerplate or b in env.boilerplate:
        return "boilerplate"
    if env.veto is None or env.facts is None:
        return None
    ta, tb = env.texts[a], env.texts[b]
    src = env.sources or {}
    checks = {k: v for k, v in env.veto.items() if k != "topic"}  # the topic rules run on their own
    return veto_reason(env.facts.get(ta), env.facts.get(tb), text_a=ta, text_b=tb,
                       source_a=src.get(a), source_b=src.get(b), **checks)


def _topic_veto(env: MineEnv, a: str, b: str, subqueries: frozenset[str]) -> str | None:
    """The topic space's own rules (:mod:`fincprg.mine.scope`): the subquery's subject and period."""
    if env.veto is None or env.facts is None or env.topic is None or not env.veto.get("topic", True):
        return None
    sub, pq = (a, b) if a in subqueries else (b, a)
    text = env.texts[sub]
    return topic_veto(text, env.facts.get(text), (env.sources or {}).get(pq), env.topic.by_query.get(pq),
                      env.topic.names)


def score_spaces(spaces: list[Space], env: MineEnv) -> list[SpaceResult]:
    """Pure batch function: one SpaceResult per space, in input order."""
    return [score_space(s, env) for s in spaces]

