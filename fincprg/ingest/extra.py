"""Titles without bodies (``ingest.extra_titles``): a broker's catalogue or a listing site's titles that join the
topic clustering beside the corpus' own titles.

A corpus of a few hundred reports makes a few small topics, each about one or two companies; the market those
reports sit in (tens of thousands of titles a year) mixes companies and themes in each topic, and intents must
say what such a topic shares. These records are read with the corpus' readers and field aliases, need no text,
and are written to ``ingest/extra_titles.jsonl`` as Reports with ``text=""`` and ids prefixed ``extra:`` (so
they never meet a corpus report's id). Only the topics stage reads them: they get no passages and no queries.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from fincprg.errors import InputError
from fincprg.ingest.mapping import FieldMapper, to_report
from fincprg.ingest.readers import ReadStats, iter_corpus
from fincprg.records import Rejection, Report

PREFIX = "extra:"


def read_extra_titles(path: str, cfg: Any) -> tuple[list[Report], list[Rejection]]:
    """The titled records of ``path`` (Reports without text) and the rejected ones, in file order.

    Raises:
        InputError: the file does not exist, or none of its records has a title.
    """
    src = Path(path)
    if not src.is_file():
        raise InputError(f"ingest.extra_titles: {path!r} is not a file (give a .jsonl, .csv or .json file of "
                         "titles: title, date, industry, company, stock_code)")
    mapper = FieldMapper(cfg.fields)
    kept: list[Report] = []
    rejected: list[Rejection] = []
    seen: set[str] = set()
    for item in iter_corpus(src, "auto", cfg.encoding, ReadStats()):
        rec = item if isinstance(item, Rejection) else to_report(item, cfg, mapper, need_text=False)
        if isinstance(rec, Report) and not rec.title:
            rec = Rejection(source=rec.source or "", report_id=rec.id, reason="missing_title",
                            detail=f"{rec.source}: an extra title without a title field; add title/标题 or map "
                                   "yours with ingest.fields")
        if isinstance(rec, Report) and PREFIX + rec.id in seen:
            rec = Rejection(source=rec.source or "", report_id=rec.id, reason="duplicate_id",
                            detail=f"{rec.source}: extra title id {rec.id!r} was already used in {path}")
        if isinstance(rec, Rejection):
            rejected.append(rec.model_copy(update={"reason": f"extra_titles:{rec.reason}"}))
            continue
        seen.add(PREFIX + rec.id)
        kept.append(rec.model_copy(update={"id": PREFIX + rec.id, "text": ""}))
    if not kept:
        raise InputError(f"ingest.extra_titles: no record of {path} has a title ({len(rejected)} rejected)")
    return kept, rejected
