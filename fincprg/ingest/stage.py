"""Ingest stage: read the corpus into Report records.

Input: the corpus path (a .jsonl/.csv/.json file, or a directory of them or of .txt/.md files).
Output records: ``OUT/ingest/reports.jsonl`` (Report) and ``OUT/ingest/rejected.jsonl``
(Rejection: source "file:line", reason code, a detail message that says how to fix it).
With ``run.sample_reports`` (``--limit N``) only a stratified sample of the valid reports is written
(see :mod:`fincprg.ingest.sample`; the summary counts what was left out, by stratum).
Both files are written atomically (temp file + rename): ingest is a global stage because
duplicate ids can only be judged over the whole corpus.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from fincprg import layout as L
from fincprg.errors import InputError
from fincprg.ingest.mapping import FieldMapper, to_report
from fincprg.ingest.readers import ReadStats, iter_corpus
from fincprg.ingest.sample import sample_reports
from fincprg.pipeline.io import atomic_write_jsonl
from fincprg.pipeline.runner import StageContext
from fincprg.records import Rejection, Report

log = logging.getLogger(__name__)


def run(ctx: StageContext) -> dict[str, Any]:
    """Read, map, validate and write the corpus; raise InputError when no report survives."""
    cfg = ctx.config.ingest
    if ctx.corpus is None:
        raise InputError("the ingest stage needs a corpus path: fincprg build CORPUS -o OUT")
    stats = ReadStats()
    mapper = FieldMapper(cfg.fields)
    reports: list[Report] = []
    rejected: list[Rejection] = []
    seen: dict[str, str] = {}  # id -> source of its first occurrence
    for item in ctx.progress(iter_corpus(ctx.corpus, cfg.format, cfg.encoding, stats), desc="ingest"):
        rec = item if isinstance(item, Rejection) else to_report(item, cfg, mapper)
        if isinstance(rec, Report) and rec.id in seen:
            detail = (f"{rec.source}: id {rec.id!r} was already used at {seen[rec.id]}; give every report a "
                      "unique id (reports without an id get one from their title and text, so this can "
                      "also be an exact duplicate)")
            if cfg.on_duplicate_id == "error":
                raise InputError(detail + " (or set ingest.on_duplicate_id: reject to skip it and go on)")
            rec = Rejection(source=rec.source or "", report_id=rec.id, reason="duplicate_id", detail=detail)
        if isinstance(rec, Rejection):
            rejected.append(rec)
            log.debug("rejected %s", rec.detail)
            continue
        seen[rec.id] = rec.source or ""
        reports.append(rec)

    reasons = Counter(r.reason for r in rejected)
    if not reports:
        examples = "\n  ".join(r.detail for r in rejected[:5]) or "(the input holds no records)"
        raise InputError(
            f"no report survived ingest of {ctx.corpus} ({len(rejected)} rejected: "
            f"{dict(reasons) or 'none'}). First problems:\n  {examples}"
        )
    sampled = None
    if ctx.config.run.sample_reports is not None:
        reports, sampled = sample_reports(reports, ctx.config.run.sample_reports, ctx.config.run.seed)
        log.info("ingest: sampled %d of %d reports over %d industry/year strata (run.sample_reports)",
                 sampled["kept"], sampled["from"], sampled["strata"])
    atomic_write_jsonl(ctx.output(L.REPORTS), reports)
    atomic_write_jsonl(ctx.output(L.REJECTED), rejected)
    if rejected:
        log.warning("ingest: %d input records rejected (%s); see %s", len(rejected), dict(reasons),
                    ctx.output(L.REJECTED))
    bad_dates = sum(1 for r in reports if "_bad_date" in r.meta)
    counts: dict[str, Any] = {
        "reports": len(reports),
        "rejected": len(rejected),
        "rejected_by_reason": dict(sorted(reasons.items())),
        "dates_unparsed": bad_dates,
        "files": stats.files,
        "encodings": dict(sorted(stats.encodings.items())),
    }
    if sampled is not None:
        counts["sample"] = sampled
    return counts
