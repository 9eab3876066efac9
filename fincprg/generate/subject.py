"""The company an untitled report is about, read from its body with the stock table (``finance.stock_table``).

A report without a title and without company metadata (a folder of report texts) still has a subject:
the listed company its body names. Queries need one (「公司2020年营收是多少？」 asks about nobody), and the
alternative the templates used to fall back on, a name-like fragment cut from the text (「钢基材料」,
「代理保险」, a broker such as 「华英证券」), is worse than no query. So the subject comes only from
:meth:`fincprg.finance.stocks.StockTable.mentions` (``finance.stock_table``), and only when the body
names it the way a report names its issuer:

* in its opening (the first :data:`OPENING` characters: 「九阳股份公布2023年一季报」); of several
  there, the first, unless another is named three times as often in the whole body; else
* at least :data:`MIN_DOMINANT` times and at least twice as often as any other listed company.

A customer, peer or subsidiary named once in the middle (「…为台积电、中芯国际批量供货」) is no subject.
Short names that are ordinary words (机器人, 太阳能, 农产品 — listed companies too) count only when
a stock code stands beside them, or (in the opening, where no other company is named) when they are named
at least :data:`MIN_DOMINANT` times.
"""
from __future__ import annotations

from typing import Any

OPENING = 200  # characters: where a report names the company it is about
MIN_DOMINANT = 3
# jieba tags of ordinary words; a short name the dictionary knows as one of these is ambiguous
_COMMON_TAGS = ("n", "v", "vn", "a", "an", "ad", "d", "l", "i")
_COMMON_FREQ = 50


def _ambiguous(name: str, text: str, code: str | None) -> bool:
    """An ordinary word the table also lists as a short name, written without its code."""
    from fincprg.finance.lexicon import _tokenizer
    from fincprg.generate.words import pos_tags

    if code and code in text:
        return False
    tag = pos_tags().get(name)
    return bool(tag) and tag in _COMMON_TAGS and (_tokenizer().FREQ.get(name) or 0) >= _COMMON_FREQ


def body_subject(text: str, table: Any) -> tuple[str, str | None] | None:
    """``(short name, code)`` of the listed company ``text`` is about, or None when it names none clearly.

    ``table``: a :class:`~fincprg.finance.stocks.StockTable`.
    """
    if not text:
        return None
    ms = table.mentions(text)
    plain = [m for m in ms if not _ambiguous(m.name, text, m.code)]
    opening = [m for m in plain if m.first < OPENING] or [m for m in ms if m.first < OPENING and m.count >= MIN_DOMINANT]
    if opening:
        first = min(opening, key=lambda m: m.first)
        # the issuer leads the text, unless the lead names a peer (「…推动上海银行…」) the body hardly repeats
        m = opening[0] if opening[0].count >= 3 * first.count else first  # mentions(): most mentioned first
        return m.name, m.code
    if plain:
        top = plain[0]
        second = max((m.count for m in ms if m is not top), default=0)
        if top.count >= MIN_DOMINANT and top.count >= 2 * second:
            return top.name, top.code
    return None
