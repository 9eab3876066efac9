"""Subject: the company or industry a query names must be a real subject of its source.

Valid subjects of a source (:class:`~fincprg.verify.reading.Subjects`): the report's company (metadata, title,
or for an untitled report the listed company its body names most), the listed companies the source text itself
names (the stock table's ``mentions``), and for industry/strategy reports and topic-level queries the industry
terms (CITIC names and lexicon) the source is about. A query that names none of them is dropped:

* ``wrong_subject``: it leads with another listed company, a broker (「国信传媒」), or an industry term or
  segment standing in for the report's company (「汽车电子」 in a company report);
* ``fragment_subject``: it leads with a phrase cut from the text (「代理保险」, 「受下游光通信」, 「钢基材料」);
* ``no_subject``: it names nothing (「公司2021年营收…」), or the source has no subject to name.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache

from fincprg.finance.crosscheck import PART_WORDS, SURFACES, longest_first, norm
from fincprg.finance.ordinary import ordinary_lead
from fincprg.finance.segments import COMPANY_LEVEL, SEGMENT, WHOLE_BEFORE, sector_move
from fincprg.verify._rule_examples import Example
from fincprg.verify.reading import Reading, Subjects, TextReading, variants
from fincprg.verify.registry import ALL, SP, example_reading, rule
from fincprg.verify.verdict import Reason, Verdict
from fincprg.wordlists import WordLists, alternation, read_entries

_W = WordLists("fincprg.verify")  # verify/data/words.jsonl

# research houses whose name (「国信传媒」: 国信证券's media team) is not a report subject
# (verify's own list, fincprg/verify/data/brokers.jsonl), longest first: a phrase takes the longest broker it starts
# with (中信建投, not 中信), whatever the file's order
BROKERS = tuple(longest_first(e["word"] for e in read_entries("fincprg.verify", "brokers.jsonl")))
_BROKER_TAIL = _W.compile("broker_tail")
GENERIC = ("公司", "该公司", "本公司", "我们", "行业", "市场", "国内", "全球", "海外", "企业", "上市公司", "集团",
           "板块", "标的", "个股", "龙头", "同行", "其", "该")
_PREFIX = re.compile("^" + _W.pattern("query_prefix"))
# (the part-of-the-year words in the cross-check's order, after the list's words and a year)
_LEAD_TIME = re.compile(rf"^(?:{_W.pattern('lead_time')}|\d{{2,4}}\s?(?:[-~至到]\s?\d{{2,4}})?(?:年(?:度)?|E|A)?|"
                        + "|".join(re.escape(w) for ws in PART_WORDS.values() for w in ws) + r")[，,]?")
# where a query's lead phrase ends (only where: the words' order does not matter)
_STOP = re.compile(rf"[\d\s、，,？?：:。]|{_W.pattern('lead_stop')}|{alternation(SURFACES)}")


# what strategy, macro and bond reports are about besides industries: markets, indices, asset classes, the economy
MARKET_TERMS = ("A股", "港股", "美股", "沪深300", "上证指数", "上证综指", "深证成指", "创业板", "科创板", "北交所",
                "中证500", "中证1000", "万得全A", "信用债", "利率债", "城投债", "国债", "地方债", "可转债", "转债",
                "地产债", "产业债", "债市", "债券市场", "股市", "权益市场", "大宗商品", "GDP", "CPI", "PPI", "PMI",
                "社融", "M2", "人民币", "汇率", "美元", "美联储", "央行", "货币政策", "财政政策", "宏观经济",
                "中国经济", "美国经济", "进出口", "房地产投资", "基建投资", "制造业投资", "北向资金", "公募基金")


_RAW_END = re.compile(rf"[\d\s？?，,。]|{_W.pattern('raw_end')}")
_METRIC_WORDS = frozenset(SURFACES)


@lru_cache(maxsize=1)
def industry_terms() -> tuple[str, ...]:
    """CITIC industry names, the classifier lexicon's terms of two or more characters and the market terms,
    longest first."""
    from fincprg.finance.industries import CITIC_INDUSTRIES, lexicon

    terms = {t for ws in lexicon().values() for t in ws} | set(CITIC_INDUSTRIES) | set(MARKET_TERMS)
    return tuple(longest_first(t for t in terms if len(t) >= 2))


def industry_terms_in(text: str) -> set[str]:
    """The industry terms a text names (an industry report's valid subjects)."""
    t = norm(text)
    return {w for w in industry_terms() if w in t}


def _broker_forms(broker: str) -> set[str]:
    """How a query may write the broker: 西南证券, 中国银河证券 / 中国银河 / 银河证券."""
    b = norm(broker)
    stem = b.removesuffix("证券")
    out = {b, stem + "证券"} | ({stem, stem[2:] + "证券"} if stem.startswith("中国") and len(stem) >= 4 else set())
    return {v for v in out if len(v) >= 4}


def lead(query: str) -> str:
    """The phrase a query leads with, once question prefixes (请问, 预计, 受 …) and times are stripped:
    where a subject stands in 「X2021年营收…」."""
    q = _strip(query)
    m = _STOP.search(q)
    phrase = q[:m.start()] if m else q
    return phrase.strip("「」“”\"' ")


def _strip(query: str) -> str:
    q = norm(query).strip()
    for _ in range(4):
        before = q
        q = _PREFIX.sub("", q).strip()
        q = _LEAD_TIME.sub("", q).strip()
        if q == before:
            break
    return q


def check_subject(query: str, subjects: Subjects, *, listed: Callable[[str], Iterable[str]] | None = None
                  ) -> Verdict | None:
    """None when the query names one of ``subjects``; else the reason. ``listed(text)`` gives the listed
    companies a text names (the stock table), so another listed company is told from a fragment."""
    q = norm(query)
    if subjects.empty:
        return Verdict(Reason.NO_SUBJECT, "the source has no company or industry a query could name")
    if subjects.broker and not subjects.names & variants(subjects.broker) and any(
            v in q for v in _broker_forms(subjects.broker)):
        return Verdict(Reason.WRONG_SUBJECT, f"names {subjects.broker}, the broker that wrote the report")
    if any(n in q for n in subjects.names):
        return None
    if subjects.kind != "company" and any(t in q for t in subjects.industries):
        return None
    rest = _strip(q)
    others = [n for n in (listed(rest[:12]) if listed else ()) if rest.startswith(n)]
    if others:
        return Verdict(Reason.WRONG_SUBJECT,
                       f"names {others[0]}, a listed company the source does not make its subject")
    phrase = lead(q)
    if not phrase:  # it leads with a metric word: 「归母净利润的预测…」 names nothing, 「利润均以食品…」 is a fragment
        m = _RAW_END.search(rest)
        raw = rest[:m.start()] if m else rest
        if len(raw) >= 2 and raw not in _METRIC_WORDS and not raw.startswith(GENERIC):
            return Verdict(Reason.FRAGMENT_SUBJECT, f"「{raw}」 is a fragment of the text, not a company or industry")
    if not phrase or phrase in GENERIC or len(phrase) < 2:
        return Verdict(Reason.NO_SUBJECT, "the query names no company or industry")
    broker = next((b for b in BROKERS if phrase.startswith(b)), None)
    if broker and (len(phrase) == len(broker) or _BROKER_TAIL.match(phrase, len(broker))
                   or any(phrase[len(broker):].startswith(t) for t in industry_terms())):
        return Verdict(Reason.WRONG_SUBJECT, f"「{phrase}」 names a broker, not the source's subject")
    term = next((t for t in industry_terms() if phrase.startswith(t)), None)
    if term is not None:
        what = "a segment or industry term standing in for the report's company" if subjects.kind == "company" \
            else "an industry term the source is not about"
        return Verdict(Reason.WRONG_SUBJECT, f"「{phrase}」 is {what}")
    if phrase.startswith(GENERIC):
        return Verdict(Reason.NO_SUBJECT, f"「{phrase}」 names no company or industry")
    if word := ordinary_lead(phrase):  # 「线上线下2021年市占率」 from 「海尔…12月线上线下销售额」
        return Verdict(Reason.WRONG_SUBJECT, f"「{word}」 is a place or an ordinary word; the source names no "
                       "company by it (no stock code or full name beside it)")
    return Verdict(Reason.FRAGMENT_SUBJECT, f"「{phrase}」 is a fragment of the text, not a company or industry")


def _subject_example(ex: Example) -> Reading:  # the example's names: the source's companies
    return TextReading(ex.query, ex.source, subjects=Subjects(frozenset(ex.names)))


@rule("subject", ALL, (Reason.NO_SUBJECT, Reason.WRONG_SUBJECT, Reason.FRAGMENT_SUBJECT),
      "query, the source's subjects", "names a company or industry the source is about", switch="subject",
      kind="stage", example=_subject_example)
def _subject(r: Reading) -> Verdict | None:
    return check_subject(r.query, r.subjects, listed=r.listed)


# 公司 as the company speaking of itself (not 上市公司, 龙头公司, 各公司, 子公司: aggregates or parts)
_FULL_STOP = re.compile(r"[。！？!?]")
# (not 公司股东: 「归属于上市公司股东的净利润」 cut by a line break at 上市)
_SELF = re.compile(r"(?<!上市)(?<!龙头)(?<!各)(?<!相关)(?<!多家)(?<!子)(?<!母)(?<!证券)(?<!有限)(?<!股份)(?<!集团)公司(?!债|股东)|本公司|我司")


def check_fact_owner(query: str, sentence: str | None, subjects: Subjects,
                     listed: Callable[[str], Iterable[str]], passage: str | None = None) -> Verdict | None:
    """A query's subject must be whom its source states the fact of: ``wrong_subject`` when the query asks company
    A and its sentence names other listed companies but neither A nor 公司 (「京东方A2023年初期规划产能」 from a
    sentence on 力积电's fab), or when it asks an industry and the sentence is a listed company's without naming
    that industry (「电子行业营收」 from 「京东方营收增长…」). A passage query (``passage``, no ``sentence``) is read
    in the first of the passage's sentences that writes the metric it asks, or where none does, in the whole
    passage.
    ``listed(text)``: the listed companies a text names (the stock table)."""
    if not sentence:
        if not passage:
            return None
        metrics = [w for w in SURFACES if len(w) >= 2 and w in query]
        # whole sentences: a wrapped line or a clause after ；often leaves out whom it speaks of
        said = [x for x in _FULL_STOP.split(passage.replace("\n", "")) if any(w in x for w in metrics)]
        if not said:  # an event or outlook: read against the whole passage (「疫情对成都银行经营有何影响？」 on 平安银行)
            return _sentence_owner(query, passage.replace("\n", ""), subjects, listed)
        # the first sentence that writes the metric is where a passage states it (the generator asks that one)
        return _sentence_owner(query, said[0], subjects, listed)
    return _sentence_owner(query, sentence, subjects, listed)


def _sentence_owner(query: str, sentence: str, subjects: Subjects,
                    listed: Callable[[str], Iterable[str]]) -> Verdict | None:
    q, s = norm(query), norm(sentence)
    # the company the query asks about is the one it names first (「中信证券2018年东方财富证券营收」 asks 中信证券)
    at = {c: min((q.find(v) for v in variants(c) if v in q), default=-1) for c in subjects.companies}
    first = min((i for i in at.values() if i >= 0), default=-1)
    asked = {c for c, i in at.items() if i == first >= 0}
    others = [n for n in listed(s) if n not in asked and not _in_title(s, n)]
    if asked:
        names = [v for c in asked for v in variants(c)]
        if any(v in s for v in names) or not others:
            return None
        # 公司 speaks of the asked company, unless another company announces in the sentence or stands as its
        # subject (「艾德生物发布2021年一季报，公司一季度实现营收…」, 「深信服作为…企业，…公司云计算业务」)
        if _SELF.search(s) and not any(re.search(re.escape(o) + _ANNOUNCES, s) for o in others):
            return None
        return Verdict(Reason.WRONG_SUBJECT, f"asks {sorted(asked)[0]} a fact its sentence states of {others[0]}")
    terms = [t for t in subjects.industries if t in q]
    if terms and _MARKET_SHARE.search(q) and not asked:
        return Verdict(Reason.WRONG_SUBJECT, f"asks {terms[0]} a market share: a share is a company's or a product's "
                       "of its market, not the industry's")
    if terms and not any(t in s for t in terms):
        # (the report's industry 医药 asked as 医药行业 is an industry still)
        industry = any(_INDUSTRY_TERM.search(t) or re.search(re.escape(t) + _INDUSTRY_WORD, q) for t in terms)
        if not industry and not _MARKET_FIGURE.search(s):
            # a market or theme a strategy title names (A股, 利率债) stands for no figure its sentence does not write
            # it for, unless a market's own (an index, a yield): 「A股2020年上半年营收」 from 茅台's results
            return Verdict(Reason.WRONG_SUBJECT, f"asks {terms[0]}, a market its sentence does not write, a fact "
                           "the sentence states of something else")
        if others:
            return Verdict(Reason.WRONG_SUBJECT, f"asks {terms[0]} a fact its sentence states of {others[0]}")
        if owner := _unlisted_owner(s):
            return Verdict(Reason.WRONG_SUBJECT, f"asks {terms[0]} a fact its sentence states of {owner}, which opens "
                           "the clause of its figure")
    return None


_INDUSTRY_WORD = r"(?:行业|产业|板块)"
_INDUSTRY_TERM = re.compile(_INDUSTRY_WORD + "$")
_MARKET_SHARE = _W.compile("market_share")
_MARKET_FIGURE = _W.compile("market_figure")  # a market's own figure (an index's PE, a yield)
# a clause that opens on a name and then its figure (「台积电二季度实现营业收入181.6亿美元」, 「（2）智能硬件营收同比
# 增长41.63%」): a firm the stock table does not list, or a product line, owns the figure (a Latin name is more
# often a product, PC or DRAM, than a firm, and is left alone)
_OWNER_AHEAD = re.compile(
    r"(?:^|[，,。；;：:\s）)]|[（(]?\d[)）.、])(?P<who>[\u4e00-\u9fff]{2,5}?)"
    r"(?:(?:20)?\d{2}年)?(?:[一二三四]季度|Q[1-4]|[上下]半年|前三季度|全年|[一二三四]季报|半年报|年报)?"
    r"(?:实现|的?(?:营业收入|营收|收入|净利润|归母净利润|净销售额|毛利率|销量|出货量)(?:为|达|同比|约|\d))")
# ... not a word that only dates or sums the figure, or the industry, market or nation itself
_NOT_OWNER = _W.compile("not_owner")


def _unlisted_owner(sentence: str) -> str | None:
    """The name a clause of ``sentence`` opens on before its figure (:data:`_OWNER_AHEAD`), where it is no word of
    a period, a total or the industry (:data:`_NOT_OWNER`) and holds no industry or product word of the lexicon
    (「汽车销量」, 「白酒收入」 are an industry's own figures)."""
    for m in _OWNER_AHEAD.finditer(sentence):
        who = m.group("who")
        if not _NOT_OWNER.search(who) and not _industry_words().search(who):
            return who
    return None


@lru_cache(maxsize=1)
def _industry_words() -> re.Pattern[str]:
    from fincprg.finance.industries import CITIC_INDUSTRIES, lexicon

    words = {w for ws in lexicon().values() for w in ws if len(w) >= 2} | set(CITIC_INDUSTRIES)
    return re.compile("|".join(map(re.escape, sorted(words, key=len, reverse=True))))


_ANNOUNCES = r"(?:[^，,。；;]{0,4}(?:发布|公告|公布|披露)|作为)"  # ... or stands as the sentence's subject
# an example's listed companies: those it writes with a stock code
_CODED = re.compile(r"([\u4e00-\u9fffA-Z]{2,6})[（(]\d{6}[）)]")


def _coded(text: str) -> list[str]:
    return _CODED.findall(text)


def _fact_owner_example(ex: Example) -> Reading:
    r = example_reading(ex)
    return replace(r, subjects=Subjects(frozenset(ex.names) | frozenset(_coded(r.passage))), listed=_coded)


@rule("fact_owner", SP, (Reason.WRONG_SUBJECT,), "query, sentence (a passage: those writing its metric), the listed "
      "companies they name", "a company or industry is asked a fact its source states of it, not of another listed "
      "company", switch="subject", kind="stage", example=_fact_owner_example)
def _fact_owner(r: Reading) -> Verdict | None:
    return check_fact_owner(r.query, r.sentence, r.subjects, r.listed,
                            passage=r.passage if r.level == "passage" else None)


def check_segment(query: str, passage: str, subjects: Subjects, listed: Callable[[str], Iterable[str]]
                  ) -> Verdict | None:
    """``wrong_subject`` when a query leads with a bare segment (「焦炭板块2021Q1焦炭销量…」, no company named) that
    its passage writes as a company's (the passage writes 公司 or names a listed company, and does not speak of the
    stock market's sector: 「白酒板块上涨3%」), or asks a segment a figure only the whole company has (「华能国际火电
    板块归母净利润」). ``listed(text)``: the listed companies a text names (the stock table)."""
    q, p = norm(query), norm(passage)
    for m in SEGMENT.finditer(q):
        # a company's segment: a company named before it (「食品饮料板块PE」 is the market sector's valuation)
        owned = any(n in q[:m.start()] for n in subjects.names) or any(listed(q[:m.start()]))
        if owned and not WHOLE_BEFORE.search(m.group(1)) and (level := COMPANY_LEVEL.search(q, m.end())):
            return Verdict(Reason.WRONG_SUBJECT, f"asks 「{m.group()}」, a segment, {level.group()}: a figure only the "
                           "whole company has")
    seg = SEGMENT.match(_strip(q))
    if seg is None or seg.group() not in p or WHOLE_BEFORE.search(seg.group(1)) or any(n in q for n in subjects.names) \
            or any(listed(q)):
        return None
    if (_SELF.search(p) or any(listed(p))) and not sector_move(p):
        return Verdict(Reason.WRONG_SUBJECT, f"「{seg.group()}」 is a company's segment in its source (which writes 公司 "
                       "or names a company), not an industry")
    return None


def _in_title(text: str, name: str) -> bool:
    """A name only inside 《》 (a drama 《新世界》, a book) names no company."""
    return all(re.search(r"《[^》]{0,10}$", text[:m.start()]) for m in re.finditer(re.escape(name), text))


def _segment_example(ex: Example) -> Reading:
    return replace(example_reading(ex), subjects=Subjects(frozenset(ex.names)), listed=_coded)


@rule("segment", SP, (Reason.WRONG_SUBJECT,), "query, passage, the listed companies they name", "a company's segment "
      "(X板块, X业务) is not asked as an industry, nor asked a figure only the whole company has", switch="subject",
      kind="stage", example=_segment_example)
def _segment(r: Reading) -> Verdict | None:
    return check_segment(r.query, r.passage, r.subjects, r.listed)
