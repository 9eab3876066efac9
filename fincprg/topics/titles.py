"""Report titles for clustering: filtering of non-topical titles and deduplication.

Titles such as 早报 or 晨会纪要 carry no topic; they are dropped when they have fewer than
``min_chars`` Chinese characters. Duplicate titles (after normalisation: NFKC, whitespace and
punctuation removed, lower-cased) keep their first occurrence. Every drop is recorded with a reason.
"""
from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from fincprg.records import Report

_CJK = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
_NOISE = re.compile(r"[\s\W_]+", re.UNICODE)


class Title(BaseModel):
    """One title line of ``topics/titles.jsonl``: kept (reason None) or dropped (reason set)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    report_id: str
    title: str
    date: dt.date | None = None
    company: str | None = None
    stock_code: str | None = None
    source_industry: str | None = None  # Report.industry as given
    industry: str | None = None  # CITIC level 1 after classification (kept titles)
    industry_source: str | None = None  # "metadata" | "stock_table" | "company" | classifier name
    kept: bool = True
    reason: str | None = None  # "empty" | "too_short" | "duplicate"
    duplicate_of: str | None = None


def cjk_count(text: str) -> int:
    return len(_CJK.findall(text))


def normalise(title: str) -> str:
    """Key used for deduplication: NFKC, lower-case, no whitespace or punctuation."""
    return _NOISE.sub("", unicodedata.normalize("NFKC", title)).lower()


def select_titles(reports: Iterable[Report], min_chars: int = 5) -> tuple[list[Title], list[Title]]:
    """Split reports into kept titles and dropped titles (with reasons), in input order."""
    kept: list[Title] = []
    dropped: list[Title] = []
    seen: dict[str, str] = {}
    for r in reports:
        base = Title(report_id=r.id, title=r.title.strip(), date=r.date, company=r.company,
                     stock_code=r.stock_code, source_industry=r.industry)
        if not base.title:
            dropped.append(base.model_copy(update={"kept": False, "reason": "empty"}))
            continue
        if cjk_count(base.title) < min_chars:
            dropped.append(base.model_copy(update={"kept": False, "reason": "too_short"}))
            continue
        key = normalise(base.title)
        if key in seen:
            dropped.append(base.model_copy(update={"kept": False, "reason": "duplicate",
                                                   "duplicate_of": seen[key]}))
            continue
        seen[key] = r.id
        kept.append(base)
    return kept, dropped
