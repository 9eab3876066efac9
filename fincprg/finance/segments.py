"""A company's segment or the market's sector: 「火电板块」 in a passage on a 公司 is its segment, 「白酒板块上涨3%」
the stock market's sector.

Whoever reads a 板块, 业务 or 分部 (generation choosing a sentence's subject, verify reading a query's) asks the
same two questions: does the text speak of a company (it writes 公司 or names one: the caller knows), and does it
move the way a market sector does (:func:`sector_move`). A segment is never an industry subject, and has no
company-level figure of its own (:data:`COMPANY_LEVEL`: 归母净利润, EPS, ROE are the whole company's).
"""
from __future__ import annotations

import re

from fincprg.wordlists import WordLists

_W = WordLists("fincprg.finance")  # finance/data/words.jsonl
# the words that close a segment's name (「焦炭板块」, 「火电业务」, 「汽车分部」, 「消费者事业部」)
SEGMENT_SCOPE = _W.pattern("segment_scope")
# a segment's name leading a clause: up to eight characters before its scope word
SEGMENT = re.compile(rf"((?:(?![年的])[\u4e00-\u9fffA-Za-z]){{1,8}}?){SEGMENT_SCOPE}")
# words before 业务/板块 that take in the whole company (主营业务收入 is the company's)
WHOLE_BEFORE = re.compile(_W.pattern("whole_before") + "$")
# figures only the whole company has: what its shareholders earn, per share, on equity, in the market
COMPANY_LEVEL = re.compile(_W.pattern("company_level") + r"|(?<![A-Za-z])(?:EPS|ROE|PE|PB)(?![A-Za-z])")
# the stock market's sector: its move, valuation or flows (not a segment's 「焦炭均价同比上涨652元/吨」)
_SECTOR_MOVE = re.compile(rf"板块(?:整体|指数)?{_W.pattern('sector_verb')}|{_W.pattern('sector_word')}")


def sector_move(text: str) -> bool:
    """Whether ``text`` speaks of a 板块 as the stock market's sector (its move, valuation or flows)."""
    return bool(_SECTOR_MOVE.search(text))
