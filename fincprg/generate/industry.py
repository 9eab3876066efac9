"""Whom a sentence of an industry, strategy, macro or bond report is about: a listed company it names as the
subject of its own fact, else the industry, market or product it names, never the broker that wrote the report.

An industry report speaks of many companies and of its industry. A sentence that names one listed company (the
stock table's :meth:`~fincprg.finance.stocks.StockTable.mentions`) is asked about that company (「龙净环保前三季度
营收…」); one that names its industry or market (the title's subject, 电子行业, or an industry word of the lexicon
followed by 行业/市场/板块/产业: 白酒行业) and no company is asked about that industry with the period and metric it
states. A sentence that writes 公司 without a name is asked about the one company its passage names before it, if
it names exactly one; one that names several companies (unless one opens it), or neither a company nor an industry,
is not asked: whose figure it is depends on what came before. The broker (report metadata, its masthead or
legal text: :func:`fincprg.finance.reportkind.report_broker`) is never a subject, nor any company a sentence names
as a broker's research institute (「国信证券研究所」).
"""
from __future__ import annotations

import functools
import re
from typing import Any

from fincprg.finance.ordinary import ordinary_name
from fincprg.finance.reportkind import broker_acting, broker_of, same_broker
from fincprg.finance.segments import sector_move
from fincprg.wordlists import WordLists

_W = WordLists("fincprg.generate")  # generate/data/words.jsonl

WIDE_TYPES = frozenset({"industry", "strategy", "macro", "bond"})
# 公司 as a company speaking of itself (not 上市公司, 龙头公司, 各公司: aggregates)
# (not 公司股东: 「归属于上市公司股东的净利润」 cut at 上市 by a sentence or line break)
_SELF = re.compile(r"(?<!上市)(?<!龙头)(?<!各)(?<!相关)(?<!多家)(?<!子)(?<!母)(?<!证券)(?<!有限)(?<!股份)(?<!集团)公司(?!债|股东)|本公司|我司|该公司")
_SCOPE = "行业|市场|板块|产业"
_RISK = re.compile(r"风险提示|风险因素")
_NEW_ITEM = re.compile(r"公司(?:发布|公布|披露)[^。；]{0,12}(?:年报|季报|中报|半年报|年度报告|季度报告|业绩|快报|预告)")
_LEAD = 12  # characters: where a sentence names the company it is about


def writes_self(text: str) -> bool:
    """Whether ``text`` writes 公司 of a company speaking of itself (not 上市公司, 子公司, 各公司 …)."""
    return bool(_SELF.search(text))


def is_wide(report: Any, company: str | None, title_subject: str | None) -> bool:
    """Whether a report speaks for an industry or the market: its type says so, or untyped, it names no company
    and its title names an industry or market."""
    if report.report_type:
        return report.report_type in WIDE_TYPES
    return not company and bool(title_subject)


@functools.lru_cache(maxsize=1)
def _terms() -> re.Pattern[str]:
    """An industry word of the lexicon or a CITIC name (two characters or more) with its 行业/市场/板块/产业."""
    from fincprg.finance.industries import CITIC_INDUSTRIES, lexicon

    words = {w for ws in lexicon().values() for w in ws if len(w) >= 2 and re.fullmatch(r"[\u4e00-\u9fff]+", w)}
    words |= set(CITIC_INDUSTRIES)
    alt = "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
    return re.compile(f"(?:{alt})(?:{_SCOPE})")


def industry_term(text: str, subject: str | None) -> str | None:
    """The industry or market a sentence names: the report's ``subject`` where it writes it, else the first
    lexicon industry written with 行业/市场/板块/产业 (「白酒行业」) that starts a word of the sentence, or the
    whole compound where a dictionary noun runs into it (「燃料电池行业」, never its 电池行业); none where another
    word does (「集中石化行业」 names 石化行业, not 中石化行业)."""
    from fincprg.finance.words import boundaries, is_noun, known

    if subject and subject in text:
        return subject
    if not _terms().search(text):
        return None
    cuts = sorted(boundaries(text))
    for i, end in zip(cuts, cuts[1:]):
        for j in range(i, end):
            m = _terms().match(text, j)
            if m is None:
                continue
            word = text[i:end]
            if j == i or not known(word):  # (a word jieba only guessed, 「新两融」, tells nothing)
                return m.group(0)
            if is_noun(word):
                return text[i:m.end()]
            break
    return None


def companies_named(text: str, table: Any | None, broker: str | None) -> list[str]:
    """The listed companies a text names, the broker, a name before 研究所, a securities firm rating another
    company (「兴业证券将东方盛虹评级调整为…」) and a short name that is an ordinary word written without its code
    (机器人, 太阳能) left out."""
    if table is None:
        return []
    return [m.name for m in table.mentions(text)
            if not same_broker(m.name, broker) and not text.startswith("研究所", text.find(m.name) + len(m.name))
            and not ordinary_name(m.name, text, m.code) and not _in_title(text, m.name)
            and not broker_acting(text, m.name)]


def _in_title(text: str, name: str) -> bool:
    """A name only inside 《》 (a drama 《新世界》, a book) names no company."""
    return all(re.search(r"《[^》]{0,10}$", text[:m.start()]) for m in re.finditer(re.escape(name), text))


def issuers_named(text: str, table: Any | None, broker: str | None) -> set[str]:
    """The listed companies a text names the way a report names the company it speaks of, not as a partner,
    customer, investor or list item (:func:`fincprg.generate.subject.role`: 「与蓝思科技合资成立宁夏公司」 names no
    issuer), the broker and ordinary words left out."""
    import unicodedata

    from fincprg.generate.subject import role

    if table is None:
        return set()
    t = unicodedata.normalize("NFKC", text)
    named = {o.key for o in table.occurrences(t) if not same_broker(o.key, broker)
             and not ordinary_name(o.key, t, table.code_of.get(o.key)) and not _in_title(t, o.key)}
    if any(role(t, o) == "other" for o in table.occurrences(t) if o.key in named):
        return set()  # a partner or customer named: whose 公司 the next sentence means is unclear
    return named


def as_issuers(text: str, named: list[str], table: Any | None) -> list[str]:
    """The names of ``named`` that ``text`` writes the way a report names the company it speaks of at least once
    (:func:`fincprg.generate.subject.role`): not only as a customer (「战略客户万华化学」), partner or investee."""
    import unicodedata

    from fincprg.generate.subject import role

    if not named or table is None:
        return named
    t = unicodedata.normalize("NFKC", text)
    issuers = {o.key for o in table.occurrences(t) if role(t, o) == "issuer"}
    return [n for n in named if n in issuers]


def section_heads(text: str, table: Any | None, broker: str | None) -> list[tuple[int, str]]:
    """``(offset in the NFKC-normalised text, company)`` where ``text`` heads a company's section
    (:func:`fincprg.finance.sections.heads`), the company named there as an issuer (:func:`~fincprg.generate.subject.
    role`), not as a customer or peer, and not an ordinary word, a 《title》 or a broker acting."""
    import unicodedata

    from fincprg.finance.sections import heads
    from fincprg.generate.subject import role

    if not text or table is None:
        return []
    t = unicodedata.normalize("NFKC", text)
    named = set(companies_named(t, table, broker))
    return [(o.start, o.key) for o in heads(t, table, broker) if o.key in named and role(t, o) == "issuer"]


def about_companies(text: str, table: Any | None, broker: str | None) -> bool:
    """Whether a text speaks of a company: it names a listed one, or writes 公司 of one."""
    return bool(_SELF.search(text)) or bool(companies_named(text, table, broker))


def sentence_subject(text: str, subject: str | None, *, table: Any | None, broker: str | None,
                     previous: str = "", industry_passage: bool = False) -> str | None:
    """Whom a sentence of a wide report asks about (see the module docstring), or None. ``previous``: its passage's
    text before it; where that names exactly one company and this sentence writes 公司 and names none
    (「龙净环保发布三季报。…公司前三季度营收…」), 公司 is that company. ``industry_passage``: its passage names no
    company and writes no 公司 (:func:`about_companies`), so a sentence that names no industry speaks of the
    report's ``subject`` (「板块估值（PE-TTM）为48.6倍」 in a 计算机行业周报), as does a risk list (风险提示) that
    names no company."""
    named = companies_named(text, table, broker)
    # a customer, partner, investee, branch or example (「如金禾乳业」) named is not whom the sentence is about: it
    # reads as one that names no company
    named = as_issuers(text, named, table)
    risk = _RISK.search(text)
    if risk and named and min(text.find(n) for n in named) > risk.start():
        return None  # 「风险提示：公司长协谈判…吉祥航空2021年亏损」: the risks are of a 公司 named before, not of it
    if not named and previous and _SELF.search(text):
        before = issuers_named(previous, table, broker)
        if len(before) == 1 and not industry_term(text, None):
            name = before.pop()
            # a new item that announces its company's report without naming it (「公司发布2022年一季报」) is not
            # the one named before
            if not _NEW_ITEM.search(previous[previous.rfind(name) + len(name):] + text):
                return name
    if named:
        if len(named) == 1:
            return named[0]
        if len({_part_of(text, n) for n in named}) > 1:
            return None  # a chunk joining one company's last sentence to the next one's heading: whose figures?
        lead = min(named, key=lambda n: text.find(n))
        return lead if text.find(lead) < _LEAD else None
    if _SELF.search(text):
        return None  # 「公司营收…」 in an industry report: which company is the sentence before's
    # (no guess from the sentence before: in a passage that speaks of companies, 「毛利率同比下降6pct」 after a
    # sentence that names none is still a company's figure far more often than the industry's)
    if subject and (industry_passage or _RISK.search(text)):
        if speaks_of(subject, text):
            return subject
        if _MACRO.search(text) and not _SELF.search(text):
            return "中国"  # a strategy report's view of the economy (「我们预计2023年全年GDP增速为5.3%」)
    term = industry_term(text, subject)
    if term and term != subject and not industry_passage and is_segment(term, text):
        return None  # 「焦炭板块2021Q1实现焦炭销量…」 in a passage on a 公司's businesses: its segment, no industry
    return term


# what a market's own figures are written with (an index's PE, a bond's yield, a market's financing): a sentence
# with none of them and no name of the market speaks of something in it (「上半年实现营收439.5亿元」 is 茅台's)
_MARKET_WORD = _W.compile("market_word")
_MACRO = _W.compile("macro")  # the economy's figures (GDP, PMI, 社融)


def speaks_of(subject: str, text: str) -> bool:
    """Whether a sentence that names no company may be asked of a wide report's subject: an industry (「电子行业」)
    always; a market or theme a strategy title names (「A股」, 「利率债」) where the sentence writes it or one of a
    market's own figures (「沪深300指数PE-TTM为11.2倍」), not a company's or the economy's (「GDP增速」)."""
    return subject.endswith(("行业", "产业", "板块")) or subject in text or bool(_MARKET_WORD.search(text))


def _part_of(text: str, name: str) -> int:
    """Which sentence of ``text`` (split at 。！？ and line ends) first names ``name``."""
    return len(re.findall(r"[。！？!?\n]", text[:text.find(name)]))


def is_segment(term: str, text: str) -> bool:
    """Whether a 板块 term is a company's segment (its passage writes 公司 or names a company: the caller's
    reading), not the stock market's sector: a sector moves as a whole (「白酒板块上涨3%」, 「板块估值」)."""
    return term.endswith("板块") and not sector_move(text)


def is_term(who: str, text: str, table: Any | None) -> bool:
    """Whether the subject :func:`sentence_subject` found is an industry or market written in ``text``, not a listed
    company."""
    return who in text and not is_listed(who, table)


def is_listed(who: str, table: Any | None) -> bool:
    return table is not None and any(m.name == who for m in table.mentions(who))


def report_broker(report: Any) -> str | None:
    """The broker that wrote ``report`` (its metadata; ingest reads it from the text where no field gives it)."""
    return broker_of(report.meta)
