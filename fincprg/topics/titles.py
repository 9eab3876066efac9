"""Report titles for clustering: filtering of non-topical titles and deduplication.

Titles such as 早报 or 晨会纪要 carry no topic; they are dropped when they have fewer than
``min_chars`` Chinese characters. Duplicate titles (after normalisation: NFKC, whitespace and
punctuation removed, lower-cased) keep their first occurrence. Every drop is recorded with a reason.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from fincprg.records import Report, Title  # noqa: F401 - Title re-exported (it lived here)

_CJK = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
_NOISE = re.compile(r"[\s\W_]+", re.UNICODE)


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
