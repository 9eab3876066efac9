"""Related companies: an intent that pairs companies must pair related ones.

「比较涪陵榨菜和五粮液的经营表现」 is no research intent: a pickle maker and a liquor maker share only the
CITIC level-1 sector. Two companies are related when the stock table files them under the same industry
(its own, finer scheme: Tushare's 白酒 vs 食品), or, without a table entry, when their reports carry the
same CITIC industry; companies whose industry is unknown are not judged.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from fincprg.finance.crosscheck import norm
from fincprg.verify._rule_examples import Example
from fincprg.verify.reading import Reading, Subjects, TextReading
from fincprg.verify.registry import rule
from fincprg.verify.verdict import Reason, Verdict


def named_companies(query: str, candidates: Sequence[str]) -> list[str]:
    """The candidate companies a query names, in the order it names them."""
    q = norm(query)
    hits = [(q.find(c), c) for c in dict.fromkeys(candidates) if c and c in q]
    return [c for _, c in sorted(hits)]


def check_related(query: str, candidates: Sequence[str], industry_of: Mapping[str, str | None]) -> Verdict | None:
    """``unrelated_companies`` when the query names two or more companies of known, different industries."""
    names = named_companies(query, candidates)
    known = {n: industry_of.get(n) for n in names if industry_of.get(n)}
    if len(set(known.values())) >= 2:
        pairs = ", ".join(f"{n} ({i})" for n, i in known.items())
        return Verdict(Reason.UNRELATED_COMPANIES, f"pairs companies of different industries: {pairs}")
    return None


def _related_example(ex: Example) -> Reading:  # the example's source: "company:industry" a line
    industry = dict(line.split(":", 1) for line in ex.source.splitlines() if ":" in line)
    return TextReading(ex.query, subjects=Subjects(frozenset(industry)), industry_of=industry)


@rule("related", ("intent",), (Reason.UNRELATED_COMPANIES,), "query, the companies' industries",
      "an intent pairs related companies only", switch="related", kind="stage", example=_related_example)
def _related(r: Reading) -> Verdict | None:
    return check_related(r.query, sorted(r.subjects.companies), r.industry_of)
