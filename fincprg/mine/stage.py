"""Mine stage: indirect positives by reranking query pairs in local spaces (paper §4.2).

Input records: chunk/passages.jsonl (Passage), chunk/sentences.jsonl (Sentence),
generate/queries.jsonl + qrels.jsonl (sentence/passage Query, direct Qrel),
topics/tree.json (Topic nodes), topics/assignments.jsonl (report -> subtree_topic),
topics/queries.jsonl (intent/topic Query).

Output records (OUT/mine):
- pairs.jsonl: ScoredPair for every pair with score >= ``mine.keep_min_score`` (0.85) or above
  the threshold, accepted or vetoed (veto reason in ``veto``). Lower-scoring pairs are not
  written one by one (tens of millions at paper scale); they are counted in histogram.json.
- histogram.json: ``{"threshold", "keep_min_score", "bins": 100, "range": [0, 1],
  "counts": {space: [100 ints]}}`` over EVERY traversed pair, for the score plot.
- qrels.jsonl: mined Qrel (relevance 1, provenance "mined", score, via).
"""
from __future__ import annotations

import dataclasses
import json
import logging
from collections import Counter
from typing import Any

import numpy as np

from fincprg.finance import register_companies
from fincprg.mine.boilerplate import boilerplate_passages, boilerplate_queries, boilerplate_sentences
from fincprg.mine.coverage import CoverageScorer
from fincprg.mine.facts import FactsCache, query_sources
from fincprg.mine.propagate import propagate
from fincprg.mine.rerankers import BlockScorer, make_reranker, threshold_for
from fincprg.mine.spaces import KINDS, Space, expected_pairs, passage_spaces, sentence_spaces, topic_spaces
from fincprg.mine.traverse import N_BINS, MineEnv, SpaceResult, score_spaces
from fincprg.pipeline.io import atomic_write_json, atomic_write_jsonl, read_jsonl
from fincprg.records import Passage, Qrel, Query, Report, ScoredPair, Sentence, Topic

log = logging.getLogger(__name__)


def _load_topics(ctx: Any) -> tuple[dict[str, Topic], dict[str, str], list[Query]]:
    tree = json.loads(ctx.input_path("topics", "tree.json").read_text(encoding="utf-8"))
    nodes = {t.id: t for t in (Topic.model_validate(n) for n in tree.get("nodes", []))}
    subtree = {row["report_id"]: row["subtree_topic"]
               for row in read_jsonl(ctx.input_path("topics", "assignments.jsonl"))
               if row.get("subtree_topic")}
    return nodes, subtree, list(ctx.read("topics", "queries.jsonl", Query))


def build_spaces(kinds: list[str], queries: list[Query], nodes: dict[str, Topic],
                 subtree: dict[str, str]) -> tuple[dict[str, list[Space]], dict[str, int]]:
    """Spaces per configured kind, plus side counts (unassigned passage queries)."""
    spaces: dict[str, list[Space]] = {k: [] for k in KINDS}
    side: dict[str, int] = {}
    if "sentence" in kinds:
        spaces["sentence"] = sentence_spaces(queries)
    if "passage" in kinds:
        spaces["passage"], side["passage_queries_unassigned"] = passage_spaces(queries, subtree)
    if "topic" in kinds:
        spaces["topic"] = topic_spaces(queries, nodes)
    return spaces, side


def run(ctx: Any) -> dict[str, Any]:
    """Traverse the configured spaces, veto, propagate; write pairs, histogram and mined qrels."""
    cfg = ctx.config.mine
    register_companies(ctx.read("ingest", "reports.jsonl", Report))
    passages = list(ctx.read("chunk", "passages.jsonl", Passage))
    sentences = list(ctx.read("chunk", "sentences.jsonl", Sentence))
    gen_queries = list(ctx.read("generate", "queries.jsonl", Query))
    direct = list(ctx.read("generate", "qrels.jsonl", Qrel))
    nodes, subtree, topic_queries = _load_topics(ctx) if "topic" in cfg.spaces or "passage" in cfg.spaces \
        else ({}, {}, [])
    queries = gen_queries + topic_queries
    texts = {q.id: q.text for q in queries}

    bp: set[str] = set()
    if cfg.boilerplate.enabled:
        report_of = {p.id: p.report_id for p in passages}
        bp_s = boilerplate_sentences(sentences, report_of, cfg.boilerplate.min_reports)
        bp_p = boilerplate_passages(passages, sentences, bp_s, cfg.boilerplate.min_reports)
        bp = boilerplate_queries(gen_queries, bp_s, bp_p)

    spaces, side = build_spaces(list(cfg.spaces), queries, nodes, subtree)
    facts = FactsCache()
    reranker = make_reranker(cfg.reranker, facts=facts, workers=cfg.workers)
    threshold = threshold_for(cfg.reranker, reranker)
    in_spaces = [q for kind in KINDS for s in spaces[kind] for q in (*s.left, *s.right)]
    inventory = list(dict.fromkeys(texts[q] for q in in_spaces))
    if isinstance(reranker, BlockScorer):
        reranker.prepare(inventory)  # one IDF over every query text of the build

    neighbours = None
    if cfg.prefilter.enabled:
        from fincprg.mine.prefilter import TextEmbedder, neighbour_mask  # noqa: PLC0415

        emb = TextEmbedder(cfg.prefilter.embedder, seed=ctx.config.run.seed,
                           device=cfg.prefilter.device or cfg.reranker.device)
        emb.prepare(inventory)

        def neighbours(space: Space):  # noqa: ANN202 - closure handed to the pure scorer
            left = emb.embed([texts[q] for q in space.left])
            right = emb.embed([texts[q] for q in space.right]) if space.right else None
            return neighbour_mask(space, left, right, cfg.prefilter.top_k)

    veto = cfg.veto.model_dump(include={"company", "period", "metric", "numbers"}) if cfg.veto.enabled else None
    env = MineEnv(texts=texts, reranker=reranker, threshold=threshold, direction=cfg.direction,
                  keep_min_score=cfg.keep_min_score, boilerplate=frozenset(bp), facts=facts, veto=veto,
                  sources=query_sources(gen_queries, sentences, passages),
                  neighbours=neighbours)

    envs = {kind: env for kind in KINDS}
    if reranker.name == "lexical":
        # broad topic subqueries are never lexically *similar* to passage queries; the offline
        # stand-in for the reranker's judgement there is coverage (see fincprg/mine/coverage.py)
        envs["topic"] = dataclasses.replace(env, reranker=CoverageScorer(), cache={})
    results: dict[str, list[SpaceResult]] = {k: [] for k in KINDS}
    for kind in KINDS:
        todo = spaces[kind]
        batches = [todo[i:i + cfg.batch_size] for i in range(0, len(todo), cfg.batch_size)]
        for batch in ctx.progress(batches, total=len(batches), desc=f"mine {kind} spaces"):
            results[kind].extend(score_spaces(batch, envs[kind]))

    pairs: list[ScoredPair] = [p for kind in KINDS for r in results[kind] for p in r.pairs]
    mined = propagate(pairs, direct, cfg.direction)
    atomic_write_jsonl(ctx.dir / "pairs.jsonl", pairs)
    atomic_write_jsonl(ctx.dir / "qrels.jsonl", mined)
    atomic_write_json(ctx.dir / "histogram.json", {
        "threshold": threshold, "keep_min_score": cfg.keep_min_score, "bins": N_BINS, "range": [0.0, 1.0],
        "reranker": reranker.name,
        "counts": {k: _hist(results[k]).tolist() for k in KINDS if k in cfg.spaces},
    })
    return summarise(spaces, results, mined, queries, bp, side, cfg.direction, threshold, reranker.name,
                     prefilter_top_k=cfg.prefilter.top_k if cfg.prefilter.enabled else None)


def _hist(rs: list[SpaceResult]) -> np.ndarray:
    h = np.zeros(N_BINS, dtype=np.int64)
    for r in rs:
        h += r.hist
    return h


def summarise(spaces: dict[str, list[Space]], results: dict[str, list[SpaceResult]], mined: list[Qrel],
              queries: list[Query], bp: set[str], side: dict[str, int], direction: str, threshold: float,
              reranker: str, prefilter_top_k: int | None = None) -> dict[str, Any]:
    """Build summary counts: per space pairs (and cost-model expectation), accepted, vetoes, mined qrels.

    ``prefilter`` is ``False``, or (``prefilter_top_k`` given) what the top-k prefilter saved:
    ``{top_k, pairs_full, pairs_scored, pairs_saved, saved_share}`` where ``pairs_full`` is the
    cost model's count for the full traversal. Mined positives kept compared with the full
    traversal need a second, unfiltered run: ``eval/bench_mining.py`` measures them.
    """
    expected = expected_pairs([s for k in KINDS for s in spaces[k]], direction)
    per_space: dict[str, Any] = {}
    vetoes: Counter = Counter()
    for kind in KINDS:
        c: Counter = Counter()
        for r in results[kind]:
            c.update(r.counts)
        v = {k[5:]: n for k, n in sorted(c.items()) if k.startswith("veto_")}
        vetoes.update(v)
        per_space[kind] = {
            "spaces": len(spaces[kind]), "pairs": c["pairs"], "expected_pairs": expected[kind],
            # pairwise rerankers: distinct text pairs sent; block scorers: dense cells computed
            "text_pairs_scored": c["text_pairs_scored"], "block_cells_scored": c["block_cells_scored"],
            "identical_text_pairs": c["identical_text_pairs"],
            "above_threshold": c["above_threshold"], "accepted": c["accepted"], "vetoed": v,
        }
    prefilter: dict[str, Any] | bool = False
    if prefilter_top_k is not None:
        full = sum(v["expected_pairs"] for v in per_space.values())
        scored = sum(v["pairs"] for v in per_space.values())
        prefilter = {"top_k": prefilter_top_k, "pairs_full": full, "pairs_scored": scored,
                     "pairs_saved": full - scored, "saved_share": round((full - scored) / full, 4) if full else 0.0}
    level = {q.id: q.level for q in queries}
    by_level = Counter(level.get(m.query_id, "?") for m in mined)
    counts = {
        "reranker": reranker, "threshold": threshold, "direction": direction, "prefilter": prefilter,
        "spaces": per_space, "vetoed": dict(sorted(vetoes.items())), "boilerplate_queries": len(bp),
        "mined_qrels": len(mined), "mined_qrels_by_level": dict(sorted(by_level.items())), **side,
    }
    log.info("mine: %s pairs, %s accepted, %d mined qrels, vetoes %s",
             {k: v["pairs"] for k, v in per_space.items()}, {k: v["accepted"] for k, v in per_space.items()},
             len(mined), dict(vetoes))
    return counts
