"""Bootstrap round-robin regrouping with normalised Borda aggregation.

Each round shuffles the candidate pool (seeded) and cuts it into groups of ``g``; a scorer ranks each
group on its own, and a candidate at rank r (1-based) in a group of size g earns

    s = (g − r) / (g − 1)        (g = 4: ranks 1..4 earn 1, 2/3, 1/3, 0)

Scores are averaged over up to R rounds. The loop stops early once the top-K of the running average
overlaps the previous round's top-K with Jaccard ≥ 0.9. The per-candidate variance of s across
rounds (averaged over candidates) is reported as the "rank variance", a stability figure: 0 means
every grouping gave the candidate the same normalised rank.

Grouping matters for scorers that judge a list (an LLM, a listwise model) or that are noisy; a
pointwise scorer gives group-relative ranks, which is what the aggregation averages.

Scorers: ``cards`` (rule-based card alignment + first-stage score), ``first``, a cross-encoder
(``borda:ce:MODEL``: each pooled passage scored once, groups ranked by those scores) or the LLM
(``borda:llm[:CONFIG]``: each group graded 0–3 in one request, the groups of a round sent together);
see :mod:`fincprg.evaluate.retrievers.scorers`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from fincprg.evaluate.retrievers.base import PoolReranker, Results, Retriever, ranked
from fincprg.evaluate.retrievers.cards import ALPHAS, CardCache, alignment, make_card
from fincprg.evaluate.retrievers.fusion import minmax

# A group scorer gets (query text, candidate ids of one group) and returns one score per candidate.
GroupScorer = Callable[[str, str, Sequence[str]], Sequence[float]]


def borda_points(ranks: Sequence[int], g: int) -> list[float]:
    """Normalised Borda points ``(g − r) / (g − 1)`` for 1-based ranks in a group of size ``g``."""
    if g < 2:
        return [1.0 for _ in ranks]  # a lone candidate has nobody to beat; callers avoid singletons
    return [(g - r) / (g - 1) for r in ranks]


def regroup(items: Sequence[str], g: int, rng: np.random.Generator) -> list[list[str]]:
    """Shuffle ``items`` and cut them into groups of ``g``; a trailing singleton joins the previous group."""
    order = [items[i] for i in rng.permutation(len(items))]
    groups = [order[i:i + g] for i in range(0, len(order), g)]
    if len(groups) > 1 and len(groups[-1]) == 1:
        groups[-2].extend(groups.pop())
    return groups


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


@dataclass
class BordaResult:
    scores: dict[str, float]  # mean normalised Borda points over the rounds run
    rounds: int
    rank_variance: float  # mean over candidates of the variance of s across rounds
    stopped_early: bool


def bootstrap_borda(candidates: Sequence[str], score_group: Callable[[Sequence[str]], Sequence[float]] | None, *,
                    g: int = 4, rounds: int = 10, top_k: int = 10, stop_jaccard: float = 0.9,
                    seed: int = 42, min_rounds: int = 2,
                    score_round: Callable[[list[list[str]]], Sequence[Sequence[float]]] | None = None) -> BordaResult:
    """Aggregate group-wise ranks over bootstrap regroupings (see the module docstring).

    ``score_round`` (instead of ``score_group``) scores all groups of a round in one call (an LLM batch).
    """
    if score_round is None:
        if score_group is None:
            raise ValueError("bootstrap_borda needs score_group or score_round")
        sg = score_group

        def score_round(groups: list[list[str]]) -> list[Sequence[float]]:
            return [sg(grp) for grp in groups]

    cands = list(candidates)
    if not cands:
        return BordaResult({}, 0, 0.0, False)
    rng = np.random.default_rng(seed)
    points: dict[str, list[float]] = {c: [] for c in cands}
    prev_top: set[str] | None = None
    stopped = False
    t = 0
    for t in range(1, rounds + 1):
        groups = regroup(cands, g, rng)
        for group, group_scores in zip(groups, score_round(groups)):
            s = np.asarray(group_scores, dtype=float)
            # rank 1 = best; ties share the order they were shuffled into (stable argsort)
            order = np.argsort(-s, kind="stable")
            ranks = np.empty(len(group), dtype=int)
            ranks[order] = np.arange(1, len(group) + 1)
            for c, p in zip(group, borda_points(ranks.tolist(), len(group))):
                points[c].append(p)
        means = {c: float(np.mean(v)) for c, v in points.items()}
        top = set(sorted(cands, key=lambda c: -means[c])[:top_k])
        if prev_top is not None and t >= min_rounds and jaccard(top, prev_top) >= stop_jaccard:
            stopped = t < rounds
            break
        prev_top = top
    means = {c: float(np.mean(v)) for c, v in points.items()}
    var = float(np.mean([np.var(v) for v in points.values()]))
    return BordaResult(means, t, var, stopped)


class BordaRerank(PoolReranker):
    """Rerank a first-stage pool with bootstrap round-robin Borda over a group scorer.

    Scorers: ``cards`` (finance-card alignment + min-max first-stage score, the offline default),
    ``first`` (the first-stage score alone), a ``CrossEncoderScorer`` or ``LLMGroupScorer``
    (:mod:`~fincprg.evaluate.retrievers.scorers`), or any ``GroupScorer`` passed in. Candidates below the
    pool keep their first-stage order underneath the reranked ones. ``stats`` holds the mean rounds,
    the early-stop fraction and the mean rank variance of the last search.
    """

    def __init__(self, first_stage: Retriever, scorer: str | GroupScorer | object = "cards", pool: int = 30,
                 g: int = 4, rounds: int = 10, top_k: int = 10, stop_jaccard: float = 0.9, seed: int = 42, name: str = "borda"):
        self.first_stage, self.scorer, self.pool, self.g = first_stage, scorer, pool, g
        self.rounds, self.top_k, self.stop_jaccard, self.seed, self.name = rounds, top_k, stop_jaccard, seed, name
        self.stats: dict[str, float] = {}
        self.last_pool: Results = {}
        self.real = None if isinstance(scorer, str) or callable(scorer) else scorer  # CE or LLM scorer

    def fit(self, corpus: dict[str, dict]) -> None:
        super().fit(corpus)
        self.cards = CardCache(corpus)

    def _group_scorer(self, qid: str, text: str, first: dict[str, float]) -> Callable[[Sequence[str]], list[float]]:
        if self.real is not None:  # a cross-encoder: every pooled passage scored once, groups look them up
            pooled = list(first)
            by_doc = dict(zip(pooled, self.real.score(text, pooled, self.corpus)))
            return lambda group: [by_doc[d] for d in group]
        if callable(self.scorer):
            return lambda group: list(self.scorer(qid, text, group))  # type: ignore[operator]
        norm = minmax(first)
        if self.scorer == "first":
            return lambda group: [norm[d] for d in group]
        if self.scorer != "cards":
            raise ValueError(f"unknown Borda scorer {self.scorer!r}; use cards, first, or pass a callable")
        qc = make_card(text)

        def score(group: Sequence[str]) -> list[float]:
            return [alignment(qc, self.cards[d], text, ALPHAS) + norm[d] for d in group]

        return score

    def search(self, queries: dict[str, str], k: int) -> Results:
        first_runs = self.first_pool(queries, max(self.pool, k))
        out: Results = {}
        rounds, variances, early = [], [], []
        for qi, (q, text) in enumerate(queries.items()):
            first_run = first_runs.get(q, {})
            order = ranked(first_run)
            pool = order[: self.pool]
            if hasattr(self.real, "score_groups"):  # the LLM grades the groups of a round in one batch
                res = bootstrap_borda(pool, None, g=self.g, rounds=self.rounds, top_k=self.top_k,
                                      stop_jaccard=self.stop_jaccard, seed=self.seed + qi,
                                      score_round=lambda groups, t=text: self.real.score_groups(  # type: ignore[union-attr]
                                          [(t, grp) for grp in groups], self.corpus))
            else:
                res = bootstrap_borda(pool, self._group_scorer(q, text, {d: first_run[d] for d in pool}),
                                      g=self.g, rounds=self.rounds, top_k=self.top_k,
                                      stop_jaccard=self.stop_jaccard, seed=self.seed + qi)
            rounds.append(res.rounds)
            variances.append(res.rank_variance)
            early.append(res.stopped_early)
            # Borda mean in [0, 1] plus 1 keeps the pool above the tail; ties keep first-stage order
            scores = {d: 1.0 + res.scores[d] - i * 1e-9 for i, d in enumerate(pool)}
            scores.update({d: -float(i) * 1e-6 for i, d in enumerate(order[self.pool:k], 1)})
            out[q] = {d: scores[d] for d in ranked(scores)[:k]}
        if rounds:
            self.stats = {"rounds_mean": float(np.mean(rounds)), "early_stop_fraction": float(np.mean(early)),
                          "rank_variance": float(np.mean(variances))}
            if hasattr(self.real, "stats"):
                self.stats.update(self.real.stats())  # type: ignore[union-attr]
        if hasattr(self.real, "close"):  # the LLM scorer's response cache
            self.real.close()  # type: ignore[union-attr]
        return out
