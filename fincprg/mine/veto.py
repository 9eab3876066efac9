"""Finance-constraint veto: reject an above-threshold pair whose queries cannot ask the same thing.

Goes beyond the paper (24% sentence-level false positives at 0.99). The comparison itself lives in
:mod:`fincprg.finance.compare`, which the audit's rules judge uses too, so the veto and the judge read
companies, periods (forecast years included) and numbers the same way. Each check is switchable
(``mine.veto.company/period/metric/numbers``) and fires only when BOTH queries carry the field, because
a query that names no period is compatible with any period (completion may have left it out). Reasons,
in the order they are checked: ``company``, ``stock_code``, ``period_year``, ``period_forecast``,
``period_part``, ``metric``, ``numbers`` (see :mod:`fincprg.finance.compare`), then, when the source
texts of the two queries are known, ``source_numbers``, ``source_period``, ``source_metrics`` and ``source_unstated``:
compatible (even identical) questions whose sentences or passages give different figures for the
metric asked about, speak of another period (year, part of year, actual vs forecast), or state only
part of the metrics asked, or do not state the asked fact at all (an open question's subject only in a
risk note, a condition or a table: 「主要客户有哪些」 of 「如果公司主要客户发生重大变化…」), are not the same question. The topic space adds its own rules
(:mod:`fincprg.mine.scope`: ``topic_company``, ``topic_industry``, ``topic_period``, ``topic_trend``).
"""
from __future__ import annotations

from typing import Any

from fincprg.finance.compare import fact_conflicts, numbers_conflict, source_conflict
from fincprg.finance.stated import states_subject

__all__ = ["numbers_conflict", "veto_reason"]


def veto_reason(fa: Any, fb: Any, *, company: bool = True, period: bool = True, numbers: bool = True,
                metric: bool = True, text_a: str | None = None, text_b: str | None = None,
                source_a: str | None = None, source_b: str | None = None) -> str | None:
    """The first finance conflict between two queries' facts (and their sources'), or None.

    Args:
        fa, fb: the queries' facts (:func:`fincprg.finance.extract`).
        text_a, text_b: the query texts (lets 「预计2024年…」 count as a forecast of 2024).
        source_a, source_b: the texts the queries were generated from (sentence or passage), if known.
    """
    found = fact_conflicts(fa, fb, text_a=text_a, text_b=text_b, company=company, period=period,
                           metric=metric, numbers=numbers)
    if found:
        return found[0]
    if numbers and source_a and source_b:
        found = source_conflict(fa, fb, source_a, source_b, text_a=text_a, text_b=text_b)
        if found:
            return found
        for f, text in ((fa, text_a), (fb, text_b)):
            words = _open_subject(text, f)
            if words and not (states_subject(source_a, words) and states_subject(source_b, words)):
                return "source_unstated"
    return None


def _open_subject(text: str | None, facts: Any) -> tuple[str, ...]:
    """The subject words of a question that asks no metric and no event (「主要客户有哪些」 -> 客户):
    its content words less company names and question frame words; () for other questions."""
    from fincprg.finance.stated import event_of
    from fincprg.finance.lexicon import content_words
    from fincprg.mine.scope import NOT_SUBJECT

    if not text or facts.metrics or event_of(text):
        return ()
    names = [*facts.companies, *facts.codes]
    return tuple(w for w in content_words(text) if w not in NOT_SUBJECT and not any(w in n for n in names))
