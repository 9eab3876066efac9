"""Mine stage: indirect positives by reranking query pairs in local spaces (paper §4.2).

Input records: chunk/passages.jsonl (Passage), chunk/sentences.jsonl (Sentence),
verify/queries.jsonl + qrels.jsonl (the kept Query of every level, their direct Qrel),
topics/tree.json (Topic nodes), topics/assignments.jsonl (report -> subtree_topic).

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
import functools
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from fincprg.finance import extra_words, register_companies, use_words
from fincprg.mine.boilerplate import boilerplate_passages, boilerplate_queries, boilerplate_sentences
from fincprg.mine.facts import FactsCache, TextIndex, query_sources
from fincprg.mine.propagate import propagate
from fincprg.mine.rerankers import scorers_by_space, threshold_for
from fincprg.mine.scope import topic_scope
from fincprg.mine.spaces import (
    KINDS,
    Space,
    expected_pairs,
    passage_spaces,
    sentence_spaces,
    topic_spaces,
    window_space,
)
from fincprg.contract import Prepared, StageContext
from fincprg.mine.traverse import N_BINS, MineEnv, SpaceResult, score_spaces
from fincprg import layout as L
from fincprg.io import atomic_write_json, atomic_write_jsonl, read_jsonl
from fincprg.records import Passage, Qrel, Query, ScoredPair, Sentence, Topic

log = logging.getLogger(__name__)
_SCORED = ".scored.jsonl"  # scratch: scored batches, committed one by one, deleted at the end


def _load_topics(ctx: StageContext) -> tuple[dict[str, Topic], dict[str, str], dict[str, str | None]]:
    nodes = L.read_topic_tree(ctx.input_path(L.TOPICS, L.TREE)).by_id()
    assignments = list(ctx.read(L.TOPICS, L.ASSIGNMENTS))
    subtree = {a.report_id: a.subtree_topic for a in assignments if a.subtree_topic}
    industry = {a.report_id: a.industry for a in assignments}
    return nodes, subtree, industry


def build_spaces(kinds: list[str], queries: list[Query], nodes: dict[str, Topic], subtree: dict[str, str],
                 max_space_queries: int = 2000, direction: str = "both",
                 industry: dict[str, str | None] | None = None) -> tuple[dict[str, list[Space]], dict[str, int]]:
    """Spaces per configured kind, plus side counts (unassigned passage queries, windowed sentence spaces)."""
    spaces: dict[str, list[Space]] = {k: [] for k in KINDS}
    side: dict[str, int] = {}
    if "sentence" in kinds:
        full = sentence_spaces(queries)
        spaces["sentence"] = [w for s in full for w in window_space(s, max_space_queries)]
        cut = [s for s in full if len(s.left) > max_space_queries]
        side["sentence_spaces_windowed"] = len(cut)
        side["sentence_pairs_skipped_by_window"] = (expected_pairs(full, direction)["sentence"]
                                                    - expected_pairs(spaces["sentence"], direction)["sentence"])
    if "passage" in kinds:
        spaces["passage"], side["passage_queries_unassigned"], side["passage_spaces_windowed"] = passage_spaces(
            queries, subtree, industry, max_space_queries)
    if "topic" in kinds:
        spaces["topic"] = topic_spaces(queries, nodes)
    return spaces, side


def ray_gpus(cfg: Any, ray: Any) -> float | None:
    """The spec's ``gpus``: GPUs per mining actor with engine: ray. ``ray.mine_gpus_per_actor``, else none for
    a pair scorer whose registry entry wants no GPU (the lexical one), else None: one per actor when the cluster
    has GPUs."""
    from fincprg.registry import PAIR_SCORERS

    if ray.mine_gpus_per_actor is not None:
        return float(ray.mine_gpus_per_actor)
    return None if PAIR_SCORERS.get(cfg.mine.reranker.backend).gpu else 0.0


def run(ctx: StageContext) -> dict[str, Any]:
    """Traverse the configured spaces, veto, propagate; write pairs, histogram and mined qrels."""
    cfg = ctx.config.mine
    # one pass over the reports, their texts dropped: the tokenizer's company names and the topic rules' scopes
    reports = [r.model_copy(update={"text": ""}) for r in ctx.read(L.INGEST, L.REPORTS)]
    register_companies(reports)
    # the queries verify kept, of every level, and their direct qrels
    kept = list(ctx.read(L.VERIFY, L.QUERIES))
    gen_queries = [q for q in kept if q.level in ("sentence", "passage")]
    direct = list(ctx.read(L.VERIFY, L.QRELS))
    topics_needed = "topic" in cfg.spaces or "passage" in cfg.spaces
    nodes, subtree, industry = _load_topics(ctx) if topics_needed else ({}, {}, {})
    topic_queries = [q for q in kept if q.level in ("topic", "intent")] if topics_needed else []
    queries = gen_queries + topic_queries
    texts = {q.id: q.text for q in queries}
    bp = _boilerplate(ctx, gen_queries) if cfg.boilerplate.enabled else set()

    spaces, side = build_spaces(list(cfg.spaces), queries, nodes, subtree, cfg.max_space_queries, cfg.direction,
                                industry)
    facts = FactsCache()
    scorers = scorers_by_space(cfg.reranker, KINDS, facts=facts, workers=cfg.workers)
    reranker = scorers["sentence"]  # the configured model: its name and threshold describe the run
    threshold = threshold_for(cfg.reranker, reranker)
    # what was used, not what was configured: a backend's default threshold, the model it loaded
    ctx.record_used(reranker=reranker.name, model=getattr(reranker, "model_id", None), threshold=threshold,
                    keep_min_score=cfg.keep_min_score)
    inventory = _prepare_scorers(scorers, spaces, texts)
    neighbours = _prefilter(ctx, texts, inventory) if cfg.prefilter.enabled else None
    veto = cfg.veto.model_dump(exclude={"enabled"}) if cfg.veto.enabled else None
    # the topic rules read each passage query's report (company, type, title periods, date)
    topic = topic_scope(reports, gen_queries) \
        if veto and cfg.veto.topic and spaces["topic"] else None
    env = MineEnv(texts=texts, reranker=reranker, threshold=threshold, direction=cfg.direction,
                  keep_min_score=cfg.keep_min_score, boilerplate=frozenset(bp), facts=facts, veto=veto,
                  sources=query_sources(gen_queries, TextIndex(ctx.input_path(L.CHUNK, L.SENTENCES)),
                                        TextIndex(ctx.input_path(L.CHUNK, L.PASSAGES))),
                  neighbours=neighbours, topic=topic)

    envs = {kind: env if scorers[kind] is reranker else dataclasses.replace(env, reranker=scorers[kind], cache={})
            for kind in KINDS}
    results = _score_resumably(ctx, spaces, envs, cfg.batch_size)

    pairs: list[ScoredPair] = [p for kind in KINDS for r in results[kind] for p in r.pairs]
    mined = propagate(pairs, direct, cfg.direction)
    atomic_write_jsonl(ctx.output(L.PAIRS), pairs)
    atomic_write_jsonl(ctx.output(L.QRELS), mined)
    atomic_write_json(ctx.output(L.HISTOGRAM), {
        "threshold": threshold, "keep_min_score": cfg.keep_min_score, "bins": N_BINS, "range": [0.0, 1.0],
        "reranker": reranker.name,
        "counts": {k: _hist(results[k]).tolist() for k in KINDS if k in cfg.spaces},
    })
    return summarise(spaces, results, mined, queries, bp, side, cfg.direction, threshold, reranker.name,
                     prefilter_top_k=cfg.prefilter.top_k if cfg.prefilter.enabled else None)


def _boilerplate(ctx: StageContext, gen_queries: list[Query]) -> set[str]:
    """The ids of the queries asked of sentences and passages that many reports repeat (disclaimers, intros)."""
    cfg = ctx.config.mine

    # passages and sentences are streamed, never held: their texts are read back by offset when the veto asks
    def passages() -> Iterator[Passage]:
        return ctx.read(L.CHUNK, L.PASSAGES)

    def sentences() -> Iterator[Sentence]:
        return ctx.read(L.CHUNK, L.SENTENCES)

    report_of = {p.id: p.report_id for p in passages()}
    bp_s = boilerplate_sentences(sentences(), report_of, cfg.boilerplate.min_reports)
    bp_p = boilerplate_passages(passages(), sentences(), bp_s, cfg.boilerplate.min_reports)
    return boilerplate_queries(gen_queries, bp_s, bp_p)


def _prepare_scorers(scorers: dict[str, Any], spaces: dict[str, list[Space]], texts: dict[str, str]) -> list[str]:
    """Fix each scorer's statistics over every query text in a space; returns those texts (the inventory)."""
    in_spaces = [q for kind in KINDS for s in spaces[kind] for q in (*s.left, *s.right)]
    inventory = list(dict.fromkeys(texts[q] for q in in_spaces))
    for scorer in {id(s): s for s in scorers.values()}.values():
        if hasattr(scorer, "prepare"):  # BlockScorers and the coverage scorer
            # one IDF over every query text of the build, fixed before the first space: scores must not
            # depend on which spaces a process scored before (a resumed run, a Ray actor)
            scorer.prepare(inventory)
    return inventory


def _prefilter(ctx: StageContext, texts: dict[str, str], inventory: list[str]) -> Callable[[Space], Any]:
    """The prefilter's neighbours: per space, the embedding top-k mask the scorer keeps to."""
    from fincprg.mine.prefilter import TextEmbedder, neighbour_mask  # noqa: PLC0415

    cfg = ctx.config.mine
    emb = TextEmbedder(cfg.prefilter.embedder, seed=ctx.config.run.seed,
                       device=cfg.prefilter.device or cfg.reranker.device)
    emb.prepare(inventory)

    def neighbours(space: Space):  # noqa: ANN202 - closure handed to the pure scorer
        left = emb.embed([texts[q] for q in space.left])
        right = emb.embed([texts[q] for q in space.right]) if space.right else None
        return neighbour_mask(space, left, right, cfg.prefilter.top_k)

    return neighbours


def _score_resumably(ctx: StageContext, spaces: dict[str, list[Space]], envs: dict[str, MineEnv],
                     batch_size: int) -> dict[str, list[SpaceResult]]:
    """Score every space in batches, committing each batch's results to a scratch file, so a killed run
    resumes after its last committed batch (scores are a pure function of the pair, so a resumed run
    writes the same bytes)."""
    def fn(batch: list[Space]) -> dict[str, list[dict[str, Any]]]:
        rows = []
        for kind in KINDS:
            todo = [s for s in batch if s.kind == kind]
            rows += [{"kind": r.kind, "key": r.key, "pairs": [p.model_dump(mode="json") for p in r.pairs],
                      "counts": dict(r.counts), "hist": r.hist.tolist()} for r in score_spaces(todo, envs[kind])]
        return {_SCORED: rows}

    todo = [s for kind in KINDS for s in spaces[kind]]
    # Ray actors get this process's tokenizer words (company names) before their first batch
    ctx.map_batches(todo, Prepared(fn, functools.partial(use_words, extra_words())), outputs=(_SCORED,),
                    batch_size=batch_size, total=len(todo), desc="mine spaces")
    results: dict[str, list[SpaceResult]] = {k: [] for k in KINDS}
    scratch = ctx.output(_SCORED)
    for row in read_jsonl(scratch):
        results[row["kind"]].append(SpaceResult(row["kind"], row["key"],
                                                [ScoredPair.model_validate(p) for p in row["pairs"]],
                                                Counter(row["counts"]), np.asarray(row["hist"], dtype=np.int64)))
    return results  # the scratch file goes once the manifest is written (the runner removes it)


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
