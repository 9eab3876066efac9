"""Ingest stage: read the corpus into Report records.

Input: the corpus path (a .jsonl/.csv/.json file, or a directory of them or of .txt/.md/.pdf files).
Output records: ``OUT/ingest/reports.jsonl`` (Report), ``OUT/ingest/extra_titles.jsonl`` (titles without
bodies for the topics, ``ingest.extra_titles``: :mod:`fincprg.ingest.extra`; empty when unset), ``OUT/ingest/rejected.jsonl``
(Rejection: source "file:line", reason code, a detail message that says how to fix it) and
``OUT/ingest/layout_removed.jsonl`` (Removed: each running header, sidebar, table, caption, contents and disclaimer
segment that PDF layout cleaning took out, with its rule; empty without PDFs). The counts' ``pdf`` entry says
what share of the PDFs' characters that was, per rule; each PDF report's ``meta._layout`` says it for that report.
With ``run.sample_reports`` (``--limit N``) only a stratified sample of the valid reports is written
(see :mod:`fincprg.ingest.sample`; the summary counts what was left out, by stratum).
Both files are written atomically (temp file + rename): ingest is a global stage because
duplicate ids can only be judged over the whole corpus.

One bad record never stops the corpus: whatever goes wrong while reading, mapping or serialising a
record (an unreadable file or folder, JSON nested thousands deep, an object where text belongs, a lone
surrogate) becomes a Rejection with its reason, and the other records go on. Titles and dates are
optional; the summary counts the reports without them. A date that is present but not a date (Infinity,
NaN, 1e308, "2024-13-45", an object) is one rule, ``ingest.on_bad_date``: kept without a date and counted
as ``dates_unparsed`` (default), or rejected as ``bad_date``.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.config import PDF_RULES
from fincprg.contract import StageContext
from fincprg.errors import InputError
from fincprg.ingest.extra import read_extra_titles
from fincprg.ingest.mapping import FieldMapper, to_report
from fincprg.ingest.readers import Raw, ReadStats, iter_corpus
from fincprg.ingest.sample import sample_reports
from fincprg.io import atomic_write_text, atomic_writer
from fincprg.records import Rejection, Removed, Report

log = logging.getLogger(__name__)
_ALL = ".all_reports.jsonl"


def _safe(text: str | None) -> str | None:
    """``text`` with lone surrogates escaped, so a rejection can always be written as UTF-8."""
    return None if text is None else text.encode("utf-8", "backslashreplace").decode("utf-8")


def _rejection_line(rec: Rejection) -> str:
    return rec.model_copy(update={"source": _safe(rec.source), "report_id": _safe(rec.report_id),
                                  "detail": _safe(rec.detail)}).to_json()


def _as_record(item: Raw | Rejection, cfg: Any, mapper: FieldMapper) -> tuple[Report | Rejection, str | None]:
    """The record for one input item and, for a Report, its JSON line (serialised here, so a record
    that cannot be written is rejected instead of failing the whole file at write time)."""
    if isinstance(item, Rejection):
        return item, None
    try:
        rec = to_report(item, cfg, mapper)
        # pydantic refuses to serialise a lone surrogate (a "\\ud800" escape in the input): a rejection
        return rec, rec.to_json() if isinstance(rec, Report) else None
    except InputError:
        raise  # a deliberate stop (ingest.skip_empty: false)
    except Exception as e:  # noqa: BLE001 - one record must not sink the corpus
        log.debug("record %s failed", item.source, exc_info=True)
        msg = str(e).splitlines()[0][:300] if str(e) else ""
        return Rejection(source=item.source, reason="bad_record",
                         detail=f"{item.source}: this record could not be read ({type(e).__name__}: {msg}); "
                                "fix or remove it"), None


@dataclass
class _PdfTally:
    """What layout cleaning took from the PDF reports (their ``meta._layout``), and which reports to warn about."""

    sums: Counter[str] = field(default_factory=Counter)  # reports, pages, chars, removed chars, "rule:<rule>"
    unread: list[str] = field(default_factory=list)  # reports with image-only or broken pages: "id (k of n)"
    over_half: list[str] = field(default_factory=list)  # reports that lost more than half their characters

    def keep(self, rid: str, layout: dict[str, Any]) -> None:
        self.sums.update(reports=1, **{k: layout[k] for k in _PDF_SUMS})
        self.sums.update({f"rule:{k}": v for k, v in layout["removed_by_rule"].items()})
        unread = layout["pages_without_text"] + layout["pages_unreadable"]
        if unread:
            self.unread.append(f"{rid} ({unread} of {layout['pages']})")
        if layout["removed_chars"] > 0.5 * layout["chars"]:
            self.over_half.append(f"{rid} ({layout['removed_chars'] / layout['chars']:.0%})")

    def counts(self) -> dict[str, Any] | None:
        """Pages, characters, the share removed and the characters per rule; the reports over half removed."""
        if not self.sums:
            return None
        p = self.sums
        return {"reports": p["reports"], **{k: p[k] for k in _PDF_SUMS},
                "removed_share": round(p["removed_chars"] / p["chars"], 4) if p["chars"] else 0.0,
                "removed_by_rule": {k[5:]: v for k, v in sorted(p.items()) if k.startswith("rule:")},
                "over_half_removed": len(self.over_half), "over_half_removed_ids": self.over_half[:20]}

    def log(self, counts: dict[str, Any], removed_file: Path) -> None:
        log.info("ingest: %d PDF reports, %d pages; layout cleaning removed %.1f%% of their characters %s (see %s)",
                 counts["reports"], counts["pages"], 100 * counts["removed_share"], counts["removed_by_rule"],
                 removed_file)
        if self.unread:
            log.warning("ingest: %d PDF reports have pages that were not read, images with no text layer (OCR them "
                        "to read them) or pages the parser failed on (pdf.pages_without_text, pdf.pages_unreadable): "
                        "%s", len(self.unread), ", ".join(self.unread[:10]))
        if self.over_half:
            log.warning("ingest: layout cleaning removed more than half the characters of %d PDF reports: %s; see "
                        "what went, by rule, in %s", len(self.over_half), ", ".join(self.over_half[:10]), removed_file)


_PDF_SUMS = ("pages", "pages_without_text", "pages_unreadable", "chars", "removed_chars")


@dataclass
class _Tally:
    """What reading the corpus kept and rejected; ``metas`` are text-less copies of the kept reports, for
    run.sample_reports' strata (the text goes to disk at once)."""

    kept: int = 0
    untitled: int = 0
    undated: int = 0
    bad_dates: int = 0  # kept without a date (ingest.on_bad_date: null)
    bad_date_example: str = ""
    controls: int = 0  # reports whose fields had control characters taken out
    pdf: _PdfTally = field(default_factory=lambda: _PdfTally())
    metas: list[Report] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)

    def keep(self, rec: Report) -> None:
        self.metas.append(rec.model_copy(update={"text": ""}))
        self.kept += 1
        self.untitled += not rec.title
        self.undated += rec.date is None
        if "_bad_date" in rec.meta:
            self.bad_dates += 1
            self.bad_date_example = self.bad_date_example or f"{rec.source}: {rec.meta['_bad_date']!r}"
        self.controls += "_control_chars_removed" in rec.meta
        layout = rec.meta.get("_layout")
        if isinstance(layout, dict):
            self.pdf.keep(rec.id, layout)


def run(ctx: StageContext) -> dict[str, Any]:
    """Read, map, validate and write the corpus; raise InputError when no report survives."""
    cfg = ctx.config.ingest
    if ctx.corpus is None:
        raise InputError("the ingest stage needs a corpus path: fincprg build CORPUS -o OUT")
    stats = ReadStats()
    every = ctx.output(_ALL)  # scratch: every valid report, streamed; reports.jsonl is it or a sample of it
    tally = _read_corpus(ctx, cfg, stats, every)
    rejected = tally.rejected
    reasons = Counter(r.reason for r in rejected)
    if not tally.kept:
        examples = "\n  ".join(_safe(r.detail) or "" for r in rejected[:5]) or "(the input holds no records)"
        raise InputError(
            f"no report survived ingest of {ctx.corpus} ({len(rejected)} rejected: "
            f"{dict(reasons) or 'none'}). First problems:\n  {examples}"
        )
    n_kept, sampled = _write_reports(ctx, every, tally.metas)
    extra: list[Report] = []
    if cfg.extra_titles:
        extra, extra_rejected = read_extra_titles(cfg.extra_titles, cfg)
        rejected.extend(extra_rejected)
        reasons.update(r.reason for r in extra_rejected)
        log.info("ingest: %d extra titles for the topics (ingest.extra_titles)", len(extra))
    atomic_write_text(ctx.output(L.EXTRA_TITLES), "".join(r.to_json() + "\n" for r in extra))
    atomic_write_text(ctx.output(L.REJECTED), "".join(_rejection_line(r) + "\n" for r in rejected))
    _log_problems(ctx, tally, reasons, n_kept)
    counts: dict[str, Any] = {
        "reports": n_kept,
        "rejected": len(rejected),
        "rejected_by_reason": dict(sorted(reasons.items())),
        "untitled": tally.untitled,
        "undated": tally.undated,
        "dates_unparsed": tally.bad_dates,
        "control_chars_removed": tally.controls,
        "files": stats.files,
        "encodings": dict(sorted(stats.encodings.items())),
    }
    if cfg.extra_titles:
        counts["extra_titles"] = len(extra)
    if sampled is not None:
        counts["sample"] = sampled
    pdf = tally.pdf.counts()
    if pdf is not None:
        counts["pdf"] = pdf
        tally.pdf.log(pdf, ctx.output(L.LAYOUT_REMOVED))
    return counts


def _read_corpus(ctx: StageContext, cfg: Any, stats: ReadStats, every: Path) -> _Tally:
    """Stream every valid report to ``every``; tally it, or its rejection (a repeated id included)."""
    mapper = FieldMapper(cfg.fields)
    tally = _Tally()
    seen: dict[str, str] = {}  # id -> source of its first occurrence
    with atomic_writer(every) as write, atomic_writer(ctx.output(L.LAYOUT_REMOVED)) as write_removed:
        rules = tuple(r for r in PDF_RULES if r not in cfg.pdf_disable)
        for item in ctx.progress(iter_corpus(ctx.corpus, cfg.format, cfg.encoding, stats, rules), desc="ingest"):
            item, spans = _layout_spans(item)
            rec, line = _as_record(item, cfg, mapper)
            if isinstance(rec, Report) and rec.id in seen:
                rec = _duplicate(rec, seen[rec.id], cfg.on_duplicate_id)
            if isinstance(rec, Rejection):
                tally.rejected.append(rec)
                log.debug("rejected %s", rec.detail)
                continue
            seen[rec.id] = rec.source or ""
            write((line if line is not None else rec.to_json()) + "\n")
            for k, sp in enumerate(spans):
                write_removed(Removed(report_id=rec.id, order=k, rule=sp["rule"], text=sp["text"]).to_json() + "\n")
            tally.keep(rec)
    return tally


def _layout_spans(item: Raw | Rejection) -> tuple[Raw | Rejection, list[dict[str, Any]]]:
    """A PDF's Raw without its removed segments (they go to layout_removed.jsonl, not into Report.meta)."""
    if isinstance(item, Raw) and "_layout_removed" in item.fields:
        fields = dict(item.fields)
        spans = fields.pop("_layout_removed")
        return Raw(item.source, fields), spans
    return item, []


def _duplicate(rec: Report, first: str, on_duplicate_id: str) -> Rejection:
    """The rejection of a report whose id was already used at ``first``; an InputError under
    ``ingest.on_duplicate_id: error``."""
    detail = (f"{rec.source}: id {rec.id!r} was already used at {first}; give every report a "
              "unique id (reports without an id get one from their title and text, so this can "
              "also be an exact duplicate)")
    if on_duplicate_id == "error":
        raise InputError(detail + " (or set ingest.on_duplicate_id: reject to skip it and go on)")
    return Rejection(source=rec.source or "", report_id=rec.id, reason="duplicate_id", detail=detail)


def _write_reports(ctx: StageContext, every: Path, metas: list[Report]) -> tuple[int, dict[str, Any] | None]:
    """reports.jsonl: every valid report, or run.sample_reports' sample of them; (reports written, the sample's
    summary or None)."""
    if ctx.config.run.sample_reports is None:
        every.replace(ctx.output(L.REPORTS))
        return len(metas), None
    chosen, sampled = sample_reports(metas, ctx.config.run.sample_reports, ctx.config.run.seed)
    ids = {r.id for r in chosen}
    with open(every, encoding="utf-8") as src, atomic_writer(ctx.output(L.REPORTS)) as write:
        for line, r in zip(src, metas, strict=True):
            if r.id in ids:
                write(line)
    log.info("ingest: sampled %d of %d reports over %d industry/year strata (run.sample_reports)",
             sampled["kept"], sampled["from"], sampled["strata"])
    return len(ids), sampled


def _log_problems(ctx: StageContext, tally: _Tally, reasons: Counter[str], n_kept: int) -> None:
    """One line each for the rejections, the unreadable dates, the control characters and the untitled reports."""
    if tally.rejected:
        log.warning("ingest: %d input records, files or folders rejected (%s); see %s", len(tally.rejected),
                    dict(reasons), ctx.output(L.REJECTED))
    if tally.bad_dates:
        log.warning("ingest: %d reports have a date fincprg cannot read (e.g. %s); they are kept without a "
                    "date, the raw value in Report.meta._bad_date (ingest.on_bad_date: reject rejects them "
                    "instead)", tally.bad_dates, tally.bad_date_example)
    if tally.controls:
        log.info("ingest: control characters (NUL, BEL, ESC...) were taken out of %d reports "
                 "(Report.meta._control_chars_removed)", tally.controls)
    if tally.untitled:
        log.warning("ingest: %d of %d reports have no title: their passages get bottom-up queries, but topics "
                    "(top-down queries) and company completion from the title skip them", tally.untitled, n_kept)
