"""Reranker pairs per mining space, counted by the mine stage's own traversal code, with no scoring.

The queries do not exist yet, so they are stood in for: one sentence query per sentence and one
passage query per passage (an upper bound: a generator may leave a sentence without a query), and
per topic the subqueries the intent backend will write (exact for the offline templates; measured by
``--probe`` or the ``max_intents x max_subqueries`` bound for the LLM). The spaces are then built by
:func:`fincprg.mine.stage.build_spaces` (windows of huge reports included) and counted by the
paper's cost model :func:`fincprg.mine.spaces.expected_pairs`, which the mine stage's summary also
reports next to the pairs it scored.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fincprg.records import Passage, Query, Sentence, Topic


def stand_in_queries(passages: Sequence[Passage], sentences: Sequence[Sentence],
                     subqueries: Mapping[str, int]) -> list[Query]:
    """Queries with the ids, levels, sources and reports the build will give its real ones (texts are empty)."""
    report_of = {p.id: p.report_id for p in passages}
    out = [Query(id=f"qp:{p.id}", level="passage", text="", source_ids=(p.id,), report_id=p.report_id)
           for p in passages]
    out += [Query(id=f"qs:{s.id}", level="sentence", text="", source_ids=(s.passage_id,),
                  report_id=report_of.get(s.passage_id)) for s in sentences if s.passage_id in report_of]
    out += [Query(id=f"qt:{tid}:0:{j}", level="topic", text="", source_ids=(tid,))
            for tid, k in sorted(subqueries.items()) for j in range(k)]
    return out


def mine_pairs(mine_cfg: Any, passages: Sequence[Passage], sentences: Sequence[Sentence],
               nodes: Mapping[str, Topic], subtree: Mapping[str, str], subqueries: Mapping[str, int],
               industry: Mapping[str, str | None] | None = None) -> dict[str, Any]:
    """``{"pairs": {space: n}, "spaces": {space: n}, ...side counts}`` of the configured traversal."""
    from fincprg.mine.spaces import expected_pairs
    from fincprg.mine.stage import build_spaces

    queries = stand_in_queries(passages, sentences, subqueries)
    spaces, side = build_spaces(list(mine_cfg.spaces), queries, dict(nodes), dict(subtree),
                                mine_cfg.max_space_queries, mine_cfg.direction, dict(industry or {}))
    pairs = expected_pairs([s for v in spaces.values() for s in v], mine_cfg.direction)
    return {"pairs": {k: pairs[k] for k in spaces if k in mine_cfg.spaces},
            "spaces": {k: len(v) for k, v in spaces.items() if k in mine_cfg.spaces},
            "reranker": mine_cfg.reranker.backend,
            "prefilter_top_k": mine_cfg.prefilter.top_k if mine_cfg.prefilter.enabled else None, **side}
