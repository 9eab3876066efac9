"""Boilerplate detection: queries whose source text is repeated report furniture.

Risk warnings, rating definitions and disclaimers repeat across reports nearly verbatim; the
queries generated from them are equivalent to each other without saying anything about any
report, so mining would wire unrelated reports together. A sentence is boilerplate when its
normalised text (NFKC, no whitespace/punctuation; digits are kept, because "revenue X, up Y%"
phrasings repeat across companies with different numbers and are not furniture) occurs in at least
``mine.boilerplate.min_reports`` distinct reports, or when it contains one of ``KEYWORDS``
(rating-definition and disclaimer phrases). A passage is boilerplate when its own normalised
text repeats that often, or when at least half of its characters sit in boilerplate sentences.

A sentence query is boilerplate when its source sentence is (``provenance.sentence_id``;
queries without one fall back to their passage); a passage query when its passage is.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable

from fincprg.records import Passage, Query, Sentence

KEYWORDS: tuple[str, ...] = (
    "风险提示", "免责声明", "评级说明", "评级标准", "评级定义", "分析师声明", "分析师承诺", "重要声明",
    "本报告仅供", "不构成投资建议", "不构成对任何人的投资建议", "请务必阅读", "预期未来0个月内",
    "相对同期", "相对于同期", "相对沪深000", "相对于沪深000",
)
_DROP = re.compile(r"[\s\W_]+", re.UNICODE)
_DIGITS = re.compile(r"\d")
MIN_CHARS = 8  # shorter fragments ("公司点评") repeat everywhere without being furniture


def normalise(text: str) -> str:
    return _DROP.sub("", unicodedata.normalize("NFKC", text))


def _has_keyword(norm: str) -> bool:
    norm = _DIGITS.sub("0", norm)  # keywords are written with 0 for any digit ("未来0个月")
    return any(k in norm for k in KEYWORDS)


def _digest(norm: str) -> bytes:
    """A 16-byte stand-in for a normalised text: counting repeats must not hold the corpus text."""
    return hashlib.blake2b(norm.encode("utf-8"), digest_size=16).digest()


def boilerplate_sentences(sentences: Iterable[Sentence], report_of_passage: dict[str, str],
                          min_reports: int) -> set[str]:
    """Ids of boilerplate sentences (one pass; texts are reduced to digests as they stream by)."""
    reports_by_text: dict[bytes, set[str]] = defaultdict(set)
    seen: list[tuple[str, bytes | None, bool]] = []  # (id, digest of a long-enough text, has a keyword)
    for s in sentences:
        n = normalise(s.text)
        d = _digest(n) if len(n) >= MIN_CHARS else None
        if d is not None:
            reports_by_text[d].add(report_of_passage.get(s.passage_id, s.passage_id))
        seen.append((s.id, d, _has_keyword(n)))
    return {sid for sid, d, kw in seen if (d is not None and len(reports_by_text[d]) >= min_reports) or kw}


def boilerplate_passages(passages: Iterable[Passage], sentences: Iterable[Sentence], bp_sentences: set[str],
                         min_reports: int) -> set[str]:
    """Ids of boilerplate passages (repeated text, or >= half of the characters in boilerplate sentences)."""
    reports_by_text: dict[bytes, set[str]] = defaultdict(set)
    seen: list[tuple[str, bytes | None]] = []
    for p in passages:
        n = normalise(p.text)
        d = _digest(n)
        reports_by_text[d].add(p.report_id)
        seen.append((p.id, d if len(n) >= MIN_CHARS else None))
    chars = defaultdict(lambda: [0, 0])  # passage -> [boilerplate chars, all chars]
    for s in sentences:
        c = chars[s.passage_id]
        c[1] += len(s.text)
        if s.id in bp_sentences:
            c[0] += len(s.text)
    out = set()
    for pid, d in seen:
        bp, total = chars.get(pid, (0, 0))
        if (d is not None and len(reports_by_text[d]) >= min_reports) or (total and 2 * bp >= total):
            out.add(pid)
    return out


def boilerplate_queries(queries: Iterable[Query], bp_sentences: set[str], bp_passages: set[str]) -> set[str]:
    """Ids of sentence/passage queries whose source is boilerplate."""
    out = set()
    for q in queries:
        pid = q.source_ids[0] if q.source_ids else None
        if q.level == "sentence":
            sid = q.provenance.get("sentence_id")
            if (sid in bp_sentences) if sid else (pid in bp_passages):
                out.add(q.id)
        elif q.level == "passage" and pid in bp_passages:
            out.add(q.id)
    return out
