"""Related companies: an intent that pairs companies must pair related ones.

「比较涪陵榨菜和五粮液的经营表现」 is no research intent: a pickle maker and a liquor maker share only the
CITIC level-1 sector. Two companies are related when the stock table files them under the same industry
(its own, finer scheme: Tushare's 白酒 vs 食品), or, without a table entry, when their reports carry the
same CITIC industry; companies whose industry is unknown are not judged.
"""
from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

# the columns StockTable reads; it keeps only the CITIC mapping, so the table's own industry is read here
from fincprg.finance.stocks import _INDUSTRY_COLS, _NAME_COLS, norm_name
from fincprg.verify.answer import Verdict
from fincprg.verify.readers import norm


@lru_cache(maxsize=4)
def fine_industries(path: str) -> Mapping[str, str]:
    """Short name -> the stock table's own industry name (finer than CITIC level 1)."""
    out: dict[str, str] = {}
    with open(Path(path), encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        cols = reader.fieldnames or []
        name = next((c for c in _NAME_COLS if c in cols), None)
        ind = next((c for c in _INDUSTRY_COLS if c in cols), None)
        if name is None or ind is None:
            return out
        for row in reader:
            n, i = norm_name(row.get(name) or ""), (row.get(ind) or "").strip()
            if n and i:
                out.setdefault(n, i)
    return out


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
        return Verdict("unrelated_companies", f"pairs companies of different industries: {pairs}")
    return None
