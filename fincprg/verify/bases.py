"""What a figure is measured against, and of whom: readings the part-as-whole and change rules do not make.

* ``check_base``: a year-on-year change (「资产负债率同比下降了多少」) asked where the source compares the metric only
  with another base (「从上市前的49%降至29.9%」, 「较年初」, 「环比」): a strict reader fails it as not answered, the
  figure being a different comparison;
* ``check_valuation_parts``: the company's market value (「市值的预测值」) asked where the source values only its
  parts, one by one (「快运业务…价值541亿市值，其他新业务…价值525亿市值」);
* ``check_valued_part``: the company's valuation (「估值是否合理」) asked where the source values only a part
  (「重组后拟置入资产估值较可比公司低估」).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from fincprg.finance.crosscheck import CLAUSE_SPLIT, METRICS, blank_names, metrics, norm, read_ask
from fincprg.verify.reading import Reading
from fincprg.verify.registry import QS, QSN, SP, rule
from fincprg.verify.verdict import Reason, Verdict
from fincprg.wordlists import WordLists, alternation

_W = WordLists("fincprg.verify")  # verify/data/words.jsonl
_COMPARED = _W.pattern("compare_with")  # 较, 比, 相比, 与: what a base follows
_YOY_ASK = re.compile(rf"同比|{_COMPARED}{_W.pattern('year_before')}(?:同期)?")
# a base other than a year earlier, named in the clause of the metric
_OTHER_BASE = re.compile(rf"{_W.pattern('listing_base')}|{_COMPARED}(?:{_W.pattern('earlier_base')}|[一二三]季度末|Q[1-3]末)")
# a year-earlier base; 「较上年末」 is the year-end balance, another base
_YOY_SAID = re.compile(rf"同比|yoy|{_COMPARED}(?:{_W.pattern('year_before')}|\d{{2,4}}年)(?![末底])|上年同期|去年同期", re.I)
# what ends the words before a change asked: 「2019年上半年资产负债率同比」 asks 资产负债率
_WORD_END = re.compile(r"年|季度|月|的|H[12]|Q[1-4]|\d|\s")


def _clauses_with(source: str, surfaces: Iterable[str]) -> list[str]:
    """Each clause naming one of ``surfaces``, with the clause after it where that names no metric
    (「营收2.2亿元，同比增长55.6%」: a change in a clause of its own belongs to the metric before it)."""
    pat = re.compile(alternation(surfaces))
    clauses = CLAUSE_SPLIT.split(source)
    out = []
    for i, c in enumerate(clauses):
        if pat.search(c):
            nxt = clauses[i + 1] if i + 1 < len(clauses) else ""
            out.append(c if metrics(nxt) else f"{c}，{nxt}")
    return out


def check_base(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``not_answered``: a year-on-year change of a metric whose every clause in the source compares it with
    another base (the pre-listing level, the start of the year, the previous quarter) and none with a year
    earlier. ``names``: the company's, read off the word the change is asked of (「凯莱英资产负债率」)."""
    q = blank_names(norm(query), names)
    m = _YOY_ASK.search(q)
    if not m:
        return None
    s = norm(source)
    # a known metric family by any of its surfaces, else the word the change is asked of (资产负债率)
    asked = {fam: METRICS[fam] for fam in read_ask(q).metrics}
    word = re.sub(r"^(?:公司)+", "", _WORD_END.split(q[:m.start()])[-1])
    if not asked and len(word) >= 2:
        asked = {word: (word,)}
    for what, surfaces in asked.items():
        clauses = _clauses_with(s, surfaces)
        if not clauses or any(_YOY_SAID.search(c) for c in clauses):
            continue
        others = [b.group() for c in clauses for b in _OTHER_BASE.finditer(c)]
        if others and all(_OTHER_BASE.search(c) for c in clauses):
            return Verdict(Reason.NOT_ANSWERED, f"asks a year-on-year change of {what}; the source compares it only "
                           f"with another base (「{others[0]}」)")
    return None


@rule("base", SP, (Reason.NOT_ANSWERED,), QSN,
      "a change asked against a base the source does not use")
def _base(r: Reading) -> Verdict | None:
    return check_base(r.query, r.source, r.names)


_MARKET_VALUE_ASK = re.compile(r"市值")
# 「价值541亿市值」, 「市值541亿」: a figure right before or after the word
_VALUE_FIGURE = re.compile(r"(\d[\d\s.]*\s?[亿万]?)(?:元)?\s?(?:的)?(?:总)?市值|市值[为达约至是]?\s?(\d[\d\s.]*\s?[亿万]?)")
# a whole named before the value in its clause: the company, 综合/合计/整体/总
_WHOLE = _W.compile("value_whole")
_PART_ASKED = _W.compile("part_asked")


def check_valuation_parts(query: str, source: str, names: Iterable[str] = ()) -> Verdict | None:
    """``vague``: the company's 市值 asked (no business named) where the source states several values, each of
    a part, and none of the whole."""
    q = norm(query)
    if not _MARKET_VALUE_ASK.search(q) or _PART_ASKED.search(q):
        return None
    s = norm(source)
    named = [n for n in names if len(n) >= 2]
    figures, whole = set(), False
    for c in CLAUSE_SPLIT.split(s):
        for m in _VALUE_FIGURE.finditer(c):
            figures.add(re.sub(r"\s", "", m.group(1) or m.group(2)))
            head = c[:m.end()]
            whole = whole or bool(_WHOLE.search(head)) or any(n in head for n in named)
    if len(figures) >= 2 and not whole:
        return Verdict(Reason.VAGUE, "asks the company's market value; the source values several parts one by one "
                       f"({', '.join(sorted(figures)[:3])}) and not the whole")
    return None


@rule("valuation_parts", SP, (Reason.VAGUE,), QSN,
      "a valuation of parts asked as the whole's")
def _valuation_parts(r: Reading) -> Verdict | None:
    return check_valuation_parts(r.query, r.source, r.names)


_VALUATION_ASK = re.compile("估值" + _W.pattern("valuation_aspect"))
_VALUED_PART = _W.compile("valued_part")
# a valuation level: 「估值较可比公司低估」, 「PE为8.3x」
_LEVEL = re.compile(rf"估值(?:水平)?\s?{_W.pattern('valuation_level')}|{_W.pattern('multiple')}[^，,。；;]{{0,12}}\d", re.I)
# 「拟置入资产估值」, 「标的估值」: the level of a part
_PART_LEVEL = re.compile(rf"(?:{_W.pattern('valued_part')}|置入|注入)的?{_W.pattern('part_valuation')}", re.I)


def check_valued_part(query: str, source: str) -> Verdict | None:
    """``not_answered``: the company's valuation asked (「估值是否合理」) where every valuation level the source states
    is of a part (assets to be injected, a target, a business)."""
    q = norm(query)
    if not _VALUATION_ASK.search(q) or _VALUED_PART.search(q):
        return None
    s = norm(source)
    levels = list(_LEVEL.finditer(s))
    parts = [m for m in levels if _PART_LEVEL.search(s[max(0, m.start() - 8):m.end()])]
    if parts and len(parts) == len(levels):
        return Verdict(Reason.NOT_ANSWERED, "asks the company's valuation; the source states only a part's "
                       f"(「{s[max(0, parts[0].start() - 6):parts[0].end()]}」)")
    return None


@rule("valued_part", SP, (Reason.NOT_ANSWERED,), QS,
      "a value of a part asked as the whole's")
def _valued_part(r: Reading) -> Verdict | None:
    return check_valued_part(r.query, r.source)
