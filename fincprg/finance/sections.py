"""Where an industry report heads a company's section, read alike by generate and verify.

An industry, strategy or weekly report speaks of many companies. It names each once atop its section and then
writes 公司 of it: with its code (「龙净环保（600388）：…」), or as the subject that opens a paragraph
(「大唐发电主要经营火电、水电…」, 「1）长青股份：…」), or as the one announcing in a sentence's opening
(「事件：志邦家居发布2019年度业绩快报」). A name elsewhere in a paragraph is a customer, peer or
example of the section's company (「获得宁德时代定点采购订单」) and heads nothing.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any

from fincprg.finance.ordinary import ordinary_name
from fincprg.finance.reportkind import same_broker

# how far back a passage's section is read: the end of the report's text before it (an industry report's section
# runs a few passages at most)
SECTION_CHARS = 2000
CODE_AFTER = re.compile(r"^[（(]\s*(?:(?:SH|SZ|BJ)\.?)?\d{6}(?:\.(?:SH|SZ|BJ))?\s*[)）]", re.I)
# a paragraph's opening, with a list marker at most (「1）」, 「（二）」, 「●」, 「【」)
_OPENS = re.compile(r"\n[ \t　]*(?:[（(]?(?:\d{1,2}|[一二三四五六七八九十]{1,3})[)）.、．]|[●■◆•·▪►【])?[ \t　]*$")
# a name that goes on into a list or a pair opens no section of its own (「宁德时代、比亚迪等」, 「与…」)
_LIST_AFTER = re.compile(r"^(?:[、/和与及跟同]|等)")
# ... and a sentence that opens on a company announcing heads that company's section, as a news item does
# (「事件：志邦家居发布2019年度业绩快报：…」), however the text runs on
_SENTENCE_OPENS = re.compile(r"(?:[。！？!?\n]|事件[:：]|^)[ \t　]*$")
_ANNOUNCES = re.compile(r"^(?:发布|公告|公布|披露)")


def heads(text: str, table: Any, broker: str | None = None) -> list[Any]:
    """The stock table's occurrences (:meth:`~fincprg.finance.stocks.StockTable.occurrences`, offsets in the
    NFKC-normalised ``text``) where ``text`` heads a company's section, in text order. The broker and a short name
    that is an ordinary word written without its code (机器人) head none."""
    if table is None or not text:
        return []
    t = unicodedata.normalize("NFKC", text)
    out = []
    for o in table.occurrences(t):
        if o.by_code or same_broker(o.key, broker):
            continue
        before, after = t[max(0, o.start - 8):o.start], t[o.end:o.end + 16].lstrip(" 　")
        coded = bool(CODE_AFTER.match(after))
        opening = bool(_OPENS.search(before)) and not _LIST_AFTER.match(after)
        announcing = bool(_ANNOUNCES.match(after) and _SENTENCE_OPENS.search(before))
        if (coded or opening or announcing) and not ordinary_name(o.key, t, table.code_of.get(o.key)):
            out.append(o)
    return out


def section_of(text: str, table: Any, broker: str | None = None) -> str | None:
    """The company whose section ``text`` (a report's text up to some point) ends in: the last one it heads."""
    found = heads(text, table, broker)
    return found[-1].key if found else None
