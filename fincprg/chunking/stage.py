"""Chunk stage: clean reports and cut them into ~500-char passages and ~100-char sentence chunks.

Input records: ``OUT/ingest/reports.jsonl`` (Report).
Output records (appended resumably with ``ctx.map_batches``):
``passages.jsonl`` (Passage, id ``<report_id>#p<k>``), ``sentences.jsonl`` (Sentence, id
``<passage_id>#s<k>``), ``removed.jsonl`` (Removed: every dropped span with its rule) and
``stats.jsonl`` (one line per report: characters in/removed, passages kept/removed, per rule),
from which the summary counts are computed so that they are right after a resume too.
"""
from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

from fincprg import layout as L
from fincprg.chunking.clean import Span, clean_and_cut
from fincprg.chunking.quality import QualityScorer, make_scorer
from fincprg.chunking.split import cut
from fincprg.config import ChunkConfig
from fincprg.contract import StageContext
from fincprg.io import count_lines
from fincprg.records import Passage, Removed, Report, Sentence

log = logging.getLogger(__name__)
OUTPUTS = (L.PASSAGES, L.SENTENCES, L.REMOVED, L.CHUNK_STATS)
OVER_HALF = 0.5  # a report losing more than this share of its characters is counted, named and warned about


def _nonspace(s: str) -> int:
    return sum(1 for c in s if not c.isspace())


def chunk_batch(reports: list[Report], cfg: ChunkConfig, scorer: QualityScorer | None) -> dict[str, list[Any]]:
    """Pure batch function: reports -> passages, sentences, removed spans and per-report stats."""
    rules = frozenset(cfg.rules)
    cut_reports = [clean_and_cut(r.text, passage_chars=cfg.passage_chars,
                                 min_passage_chars=cfg.min_passage_chars, rules=rules) for r in reports]
    flat = [c.text for cands, _ in cut_reports for c in cands]
    scores = scorer.score(flat) if scorer is not None and flat else [0.0] * len(flat)
    it = iter(scores)
    out: dict[str, list[Any]] = {o: [] for o in OUTPUTS}
    sent_target = cfg.sentence_chars
    for report, (cands, removed) in zip(reports, cut_reports):
        spans: list[Span] = list(removed)
        kept = []
        for c in cands:
            s = next(it)
            if scorer is not None and s > cfg.quality.threshold:
                spans.append(Span(c.pos, "quality", c.text, passage=True))
            else:
                kept.append(c)
        spans.sort(key=lambda sp: sp.pos)
        for k, c in enumerate(kept):
            pid = f"{report.id}#p{k}"
            out[L.PASSAGES].append(Passage(id=pid, report_id=report.id, order=k, text=c.text))
            for j, st in enumerate(cut(c.text, sent_target, min_chars=max(1, sent_target // 5))):
                out[L.SENTENCES].append(Sentence(id=f"{pid}#s{j}", passage_id=pid, order=j, text=st))
        for k, sp in enumerate(spans):
            out[L.REMOVED].append(Removed(report_id=report.id, order=k, rule=sp.rule, text=sp.text))
        rules_count = Counter(sp.rule for sp in spans)
        out[L.CHUNK_STATS].append({
            "report_id": report.id,
            "chars": _nonspace(report.text),
            "removed_chars": sum(_nonspace(sp.text) for sp in spans),
            "passages": len(kept),
            "passages_removed": sum(1 for sp in spans if sp.passage),
            "rules": dict(sorted(rules_count.items())),
        })
    return out


def over_half(st: dict[str, Any]) -> bool:
    """A report that lost more than half its characters in cleaning: a rule took body text, or the
    report is mostly boilerplate; either way a user should look (issue 48: one rule once took 99%)."""
    return st["removed_chars"] > OVER_HALF * st["chars"]


def _summarise(ctx: StageContext, n_reports: int, lines: dict[str, int]) -> dict[str, Any]:
    chars = removed = p_kept = p_removed = 0
    # every enabled rule is listed, with 0 when it removed nothing ("short" only when it fired)
    per_rule: Counter[str] = Counter({r: 0 for r in ctx.config.chunk.rules})
    heavy: list[str] = []
    with open(ctx.output(L.CHUNK_STATS), encoding="utf-8") as f:
        for line in f:
            st = json.loads(line)
            chars += st["chars"]
            removed += st["removed_chars"]
            p_kept += st["passages"]
            p_removed += st["passages_removed"]
            per_rule.update(st["rules"])
            if over_half(st):
                heavy.append(st["report_id"])
    return {
        "reports": n_reports,
        "passages": lines[L.PASSAGES],
        "sentences": lines[L.SENTENCES],
        "removed_spans": lines[L.REMOVED],
        "removed_share": round(removed / chars, 4) if chars else 0.0,
        "passages_removed_share": round(p_removed / (p_kept + p_removed), 4) if p_kept + p_removed else 0.0,
        "removed_by_rule": dict(sorted(per_rule.items())),
        "reports_over_half_removed": len(heavy),
        "reports_over_half_removed_ids": heavy,  # all of them, in input order (the summary names a few)
    }


def run(ctx: StageContext) -> dict[str, Any]:
    """Clean and chunk every report (resumable); counts: passages, sentences, removed share, per rule."""
    cfg = ctx.config.chunk
    scorer = make_scorer(cfg.quality) if "quality" in cfg.rules else None
    src = ctx.input_path(L.INGEST, L.REPORTS)
    n_reports = count_lines(src)
    fn: Callable[[list[Report]], dict[str, list[Any]]] = lambda batch: chunk_batch(batch, cfg, scorer)  # noqa: E731
    lines = ctx.map_batches(ctx.read(L.INGEST, L.REPORTS), fn, outputs=OUTPUTS,
                            batch_size=cfg.batch_size, total=n_reports, desc="chunk",
                            source=(L.INGEST, L.REPORTS))
    counts = _summarise(ctx, n_reports, lines)
    log.info("chunk: %d reports -> %d passages, %d sentences; removed %.1f%% of characters %s",
             n_reports, counts["passages"], counts["sentences"], 100 * counts["removed_share"],
             counts["removed_by_rule"])
    if counts["reports_over_half_removed"]:
        ids = counts["reports_over_half_removed_ids"]
        log.warning("chunk: %d reports lost more than half their characters in cleaning: %s%s",
                    len(ids), ", ".join(ids[:5]), " ..." if len(ids) > 5 else "")
    return counts
