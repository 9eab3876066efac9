"""The offline intent generator (``topics.intents.backend: templates``, provenance ``generator="templates"``):
intents and their subqueries written by templates from what a topic's titles share. Honest about being templates.

A topic clustered from a large corpus mixes companies: the 49k East Money titles put one AlphaFin stock report
among six industry weeklies, or one company's report among six about another. An intent therefore names

* a company only where its reports are more than half the topic's titles, and two companies only where each has
  a third of them and their titles share an industry theme (:func:`topic_subjects`);
* otherwise the theme the titles agree on: the industry term, industry event or sector measure the most titles
  write, at least two (or the one title) and more than half of them (:func:`shared_keyword`), in the topic's
  industry and the period of the titles that write it;
* no intent where the titles share neither (a grab-bag topic has no research intent); its companies' titles
  still make subqueries, written without a parent intent.

A company intent's frame comes from what its titles say (:mod:`fincprg.topics.frames`: an expectation, a measure,
an event, a policy, a rating, a risk, a product, a market event, growth; a pair's is a comparison). Subqueries ask
the titles of a company with more than half the topic's reports (their measure, event, expectation, policy or
risk) and the keywords two titles write (:func:`_keyword_question`); a company with fewer of the reports is never
named in one (issue 50). Every query carries its frame; forms vary by topic id and are deterministic.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from functools import lru_cache
from typing import Any

from fincprg.topics.frames import asked_period, company_intent, pair_intent, pick, signals, title_question
from fincprg.topics.topic_input import TopicInput, common_run, surface_form

TEMPLATE_ID, TEMPLATE_VERSION = "topic_intent.templates", 3

def _asked_period(title: str) -> str:
    return asked_period(title)


def _pick(key: str, forms: list[str]) -> str:
    return pick(key, forms)


@lru_cache(maxsize=1)
def _subject_terms() -> frozenset[str]:
    """Keywords that can carry a question: industry lexicon terms, metric words and event words."""
    from fincprg.finance import METRIC_SYNONYMS
    from fincprg.finance.industries import lexicon
    from fincprg.finance.events import EVENT_QUESTIONS

    words = {w for ws in lexicon().values() for w in ws} | {w for ws in METRIC_SYNONYMS.values() for w in ws}
    return frozenset(w.lower() for w in words | set(EVENT_QUESTIONS) if len(w) >= 2)


def _title_question(key: str, company: str, title: str) -> str:
    """A question about one company's report title (:func:`fincprg.topics.frames.title_question`)."""
    return title_question(key, company, title)[1]


# Events an industry question can be about, and how to ask it (「…行业疫情的前景如何？」 asks nothing).
_INDUSTRY_EVENTS = {"疫情": "{S}受疫情的影响如何？", "政策": "{S}受到哪些政策影响？", "竞争": "{S}的竞争格局如何？",
                    "需求": "{S}的需求情况如何？", "估值": "{S}的估值水平如何？", "出口": "{S}出口表现如何？",
                    "海外": "{S}海外市场表现如何？", "原材料": "{S}原材料价格变化有何影响？",
                    "涨价": "{S}产品涨价有何影响？", "提价": "{S}产品提价有何影响？", "降价": "{S}产品降价有何影响？"}


# A company's own statement and valuation measures: summed over an industry they are no question that the
# topic's company reports answer (「食品饮料行业净利润的变化情况」); sector measures (净息差, 保费) are.
_COMPANY_MEASURES = frozenset("扣非净利润 归母净利润 营业收入 利润总额 营业利润 毛利率 净利率 毛利 费用率 研发费用 ROE "
                              "ROA EPS PE PB PS 目标价 现金流 资本开支 市占率 存货周转 资产负债率 股息率 EBITDA 市值".split())


def names_industry(k: str, industry: str | None) -> str:
    """How keyword ``k`` relates to the topic's CITIC ``industry``: "same" where it names the industry itself
    (钢铁行业 for 钢铁, East Money's 建筑材料 for 建材), "within" where it names a part of it by the industry's name
    (汽车零部件 in 汽车), else ""."""
    from fincprg.finance.industries import SW2014_TO_CITIC, SW2021_TO_CITIC

    if not industry:
        return ""
    low, ind = k.lower().removesuffix("行业"), industry.lower()
    # level-1 names of Shenwan's schemes only (电气设备, 医药生物): East Money's finer ones (汽车零部件) are parts of
    # it; a qualifier before the industry's name (生物医药) and a generic sector word (农业) still name the whole
    if (low in ind or low.endswith(ind) or low in _GENERIC_SECTORS or _abbreviates(low, ind)
            or (SW2021_TO_CITIC.get(low) or SW2014_TO_CITIC.get(low)) == industry):
        return "same"
    return "within" if ind in low else ""


def _abbreviates(word: str, name: str) -> bool:
    """``word`` is a short form of ``name`` made of its characters in order, from its first (交运 for 交通运输, 电新
    for 电力设备及新能源): the industry itself, however a title writes it."""
    if len(word) < 2 or len(word) >= len(name) or word[0] != name[0]:
        return False
    rest = iter(name)
    return all(ch in rest for ch in word)


def _keyword_question(key: str, k: str, scope: str, industry: str | None, titles: Sequence[str] = (), *,
                      companies: bool = False) -> str:
    """A question about keyword ``k`` (an event, a metric or an industry term) in ``scope`` (period +
    industry); "" for a term of another industry that only one title writes (a clustered topic may hold a
    stray title: 房地产行业 … 生猪), while a theme several titles share stays (电子行业 … AI) unless it names
    that other industry (电子行业 … 汽车 reads as 「电子行业汽车」).

    In a topic of company reports (``companies``), or of three titles or more, a keyword speaks for the topic only
    where two titles and a third of them write it (one bank's 净息差 title is no view of the banks' 净息差), and a
    company measure is never asked of the industry."""
    from fincprg.finance.industries import lexicon
    from fincprg.finance.events import EVENT_QUESTIONS
    from fincprg.finance.surface import canonical

    written = sum(k.lower() in t.lower() for t in titles)
    # one title of several is no view of the topic (检测 in one fund-holdings report of three), nor two of many (IDC
    # as a side business in two of seven environmental weeklies: reading 22)
    if ((companies or len(titles) >= 3) and written < max(2, -(-len(titles) // 3))) \
            or names_industry(k, industry) == "same" \
            or k.lower() in _GENERIC_THEMES:  # 「汽车行业汽车」 says it twice; 「机械行业设备」 says nothing
        return ""
    if names_industry(k, industry) == "within":  # 「汽车零部件」 already says 汽车行业
        scope = scope.replace(f"{industry}行业", "")
    if k in EVENT_QUESTIONS:  # company events (回购, 股权激励) are no industry question
        return _INDUSTRY_EVENTS.get(k, "").replace("{S}", scope)
    measure = canonical(k)
    if measure:  # a measure has no 前景
        if companies and measure in _COMPANY_MEASURES:
            return ""
        return _pick(key, [f"{scope}{k}的变化情况如何？", f"{scope}{k}表现如何？"])
    owners = {ind for ind, ws in lexicon().items() if k in ws}
    # another industry's own name (汽车 in an 电子 topic of 汽车电子 makers) reads as 「电子行业汽车」: never asked
    if owners and industry not in owners and (written < 2 or any(k.lower() in o.lower() for o in owners)):
        return ""
    scope, k = term_scope(k, scope, industry, titles)
    if k.endswith("价"):  # a price (猪价, 金价) moves; it has no 前景 or 发展
        return _pick(key, [f"{scope}{k}走势如何？", f"{scope}{k}的变化情况如何？"])
    forms = [f"{scope}{k}的发展趋势如何？", f"{scope}{k}有哪些新变化？"]
    return _pick(key, forms)  # no 「的前景如何」: a theme's 前景 over weekly digests asks nothing (reading 22)


def term_scope(k: str, scope: str, industry: str | None, titles: Sequence[str]) -> tuple[str, str]:
    """``(scope, subject)`` for an industry lexicon term ``k``. Where most titles that write it write 「k行业」
    (「氟化工行业周报」), it is asked as that 行业 and the CITIC industry is left out (「基础化工行业氟化工」 says two
    sectors); a term the lexicon gives to other industries only is asked without the topic's industry, which
    then joins two sectors (「综合金融行业REITs」, 「基础化工行业电商」 under a misread industry)."""
    from fincprg.finance.industries import lexicon

    if industry and k.endswith("行业"):  # a sector the titles name as such is asked alone
        return scope.replace(f"{industry}行业", ""), k
    if not industry or not (k in _theme_terms() or k.lower() in _theme_terms()):
        return scope, k  # an event or a measure is asked of the industry
    own = [t.lower() for t in titles if k.lower() in t.lower()]
    if own and 2 * sum(f"{k.lower()}行业" in t for t in own) > len(own):
        return scope.replace(f"{industry}行业", ""), f"{k}行业"
    # another industry's term keeps the topic's industry where the titles name it (「医药行业周报：AI…」 asks of AI in
    # medicine, not of AI)
    if industry in {ind for ind, ws in lexicon().items() if k in ws} or 2 * _naming(industry, own) > len(own):
        return scope, k
    return scope.replace(f"{industry}行业", ""), k


def _naming(industry: str, titles: Sequence[str]) -> int:
    """How many of ``titles`` name ``industry`` (its CITIC or Shenwan name)."""
    from fincprg.finance.industries import SW2014_TO_CITIC, SW2021_TO_CITIC

    names = {industry.lower()} | {n.lower() for m in (SW2014_TO_CITIC, SW2021_TO_CITIC) for n, c in m.items()
                                  if c == industry}
    return sum(any(n in t.lower() for n in names) for t in titles)


@lru_cache(maxsize=1)
def _theme_terms() -> frozenset[str]:
    """Industry lexicon terms (白酒, 光伏, 血制品): what two companies' reports can share as a theme. Metric
    and event words (净利率, 疫情) are written in reports of any industry and make no shared theme."""
    from fincprg.finance import METRIC_SYNONYMS
    from fincprg.finance.industries import lexicon
    from fincprg.finance.events import EVENT_QUESTIONS

    generic = {w.lower() for ws in METRIC_SYNONYMS.values() for w in ws} | set(EVENT_QUESTIONS)
    return frozenset(w for ws in lexicon().values() for w in ws if len(w) >= 2 and w.lower() not in generic)


def shared_theme(a: str, b: str) -> str | None:
    """The longest industry term both titles write (「白酒」 in two liquor makers' titles), or None: two
    companies whose titles share none are no pair for one intent (涪陵榨菜 and 五粮液 are both 食品饮料, but
    one report is about 榨菜 and the other about 白酒)."""
    shared = [t for t in _theme_terms() if t.lower() in a.lower() and t.lower() in b.lower()]
    return max(shared, key=lambda t: (len(t), t)) if shared else None


# words that name a whole economy's sector, never one theme of an industry's topic
_GENERIC_SECTORS = frozenset({"农业", "工业", "制造业", "服务业", "产业", "行业", "贸易"})
# head nouns and bare measures that say no one thing the titles share: 「机械行业设备」, 「机械行业销量」 over
# excavator and forklift sales, 「营销」 over e-commerce marketing monthlies (readings 20 and 21: vague)
_GENERIC_THEMES = frozenset("设备 材料 产品 服务 内容 业务 市场 消费 营销 销售 销量 均价 价格 产量 医疗 科技 技术 "
                            "信息技术 数据 平台 资产 项目".split())
# a company is a subject of its topic with this share of the titles; alone it needs more than half (issue 38)
_SUBJECT_SHARE = 1 / 3
# what a theme intent asks of an industry event the titles share
_EVENT_INTENTS = {"疫情": "了解疫情对{P}{S}的影响", "政策": "了解政策变化对{P}{S}的影响", "竞争": "了解{P}{S}的竞争格局",
                  "需求": "了解{P}{S}的需求变化", "估值": "了解{P}{S}的估值变化", "出口": "了解{P}{S}的出口表现",
                  "海外": "了解{P}{S}海外市场的表现", "原材料": "了解原材料价格对{P}{S}的影响",
                  "涨价": "了解{P}{S}产品涨价的影响", "提价": "了解{P}{S}产品提价的影响",
                  "降价": "了解{P}{S}产品降价的影响"}


@lru_cache(maxsize=4096)
def _longer_terms(k: str) -> tuple[str, ...]:
    return tuple(sorted(t for t in _subject_terms() if k.lower() in t and t != k.lower()))


def whole_term(k: str, titles: Sequence[str]) -> str:
    """``k`` as the titles write it whole: where every title that writes 航天 writes it inside 商业航天, the keyword is
    商业航天 (c-TF-IDF counts the tokenizer's pieces, and 「计算机行业航天」 is not what the titles say)."""
    longer = _longer_terms(k)
    own = [t.lower() for t in titles if k.lower() in t.lower()]
    if not own:
        return k
    whole = [t for t in longer if all(t in title for title in own)]
    if whole:
        return surface_form(max(whole, key=lambda t: (len(t), t)), titles)
    # no lexicon term holds it, but every title writes the same noun before it (topic_input.common_run)
    run = common_run(k.lower(), own) if len(own) >= 2 else k.lower()
    return surface_form(run, titles) if run != k.lower() else k


def topic_companies(titles: Sequence[str]) -> dict[str, list[str]]:
    """The companies the titles name (「景津装备（603279）：…」), each with its titles, in title order."""
    from fincprg.finance import parse_title_company

    out: dict[str, list[str]] = {}
    for t in titles:
        name, _ = parse_title_company(t)
        if name:
            out.setdefault(name, []).append(t)
    return out


def topic_subjects(companies: dict[str, list[str]], n_titles: int) -> list[str]:
    """The companies an intent may name: the two with a third of the ``n_titles`` each whose titles share an
    industry theme, else the one with more than half, else none."""
    ranked = sorted(companies, key=lambda c: -len(companies[c]))  # stable: title order among ties
    big = [c for c in ranked[:2] if len(companies[c]) >= _SUBJECT_SHARE * n_titles]
    if len(big) == 2 and shared_theme(companies[big[0]][0], companies[big[1]][0]):
        return big
    return ranked[:1] if ranked and 2 * len(companies[ranked[0]]) > n_titles else []


def shared_keyword(keywords: Sequence[str], titles: Sequence[str], industry: str | None,
                   listed: Collection[str] = (), grown: Collection[str] = ()) -> str | None:
    """The theme the titles agree on: of the keywords that name an industry term, an industry event or a sector
    measure (not a company, a company's own measure, nor the industry's own name), the one the most titles write
    (the first in c-TF-IDF order among ties), where at least two titles (one in a topic of one) and more than half
    of them write it; else None: a theme a third of a grab-bag topic writes (短剧 in three of nine media reports) is no
    intent of the topic. ``grown``: theme terms as the titles write them whole (:func:`whole_term`)."""
    best, best_n = None, 0
    for k in keywords:
        low = k.lower()
        if k in listed or names_industry(k, industry) == "same" or low in _GENERIC_THEMES:
            continue
        if not (k in _theme_terms() or low in _theme_terms() or k in grown or k in _EVENT_INTENTS
                or _sector_measure(k)):
            continue
        written = sum(low in t.lower() for t in titles)
        if written > best_n:
            best, best_n = k, written
    return best if best_n >= min(2, len(titles)) and 2 * best_n > len(titles) else None


def _sector_measure(k: str) -> bool:
    """A measure an industry's reports share (净息差, 保费, 发电量); a company's own statement measures are not."""
    from fincprg.finance.surface import canonical

    measure = canonical(k)
    return bool(measure) and measure not in _COMPANY_MEASURES


def _company_intent(key: str, names: list[str], companies: dict[str, list[str]], own: list[str],
                    used: Counter[str] | None = None) -> tuple[str, str]:
    """(frame, intent) about one subject company, from what its titles say (:mod:`fincprg.topics.frames`), or a
    comparison of two that share a theme."""
    # the period the companies' own titles review, with its part of the year; titles of different periods get none
    whens = {_asked_period(t) for n in names for t in companies[n]}
    when = whens.pop() if len(whens) == 1 else ""
    if len(names) == 2:
        a, b = names
        return pair_intent(key, a, b, when, shared_theme(companies[a][0], companies[b][0]) or "")
    # a metric (营业收入) is no topic of a research view; an industry term or an event is
    themes = [k for k in own if k in _theme_terms()]
    market = [k for k in own if k in _INDUSTRY_EVENTS]
    return company_intent(key, names[0], when, signals(companies[names[0]], themes, market), used)


def _theme_intent(key: str, theme: str, period: str, scope: str, titles: Sequence[str]) -> str:
    """The intent about a theme a topic's titles share, in its industry and period."""
    if theme in _EVENT_INTENTS:
        return _EVENT_INTENTS[theme].replace("{P}", period).replace("{S}", scope)
    if scope and names_industry(theme, scope.removesuffix("行业")) == "within":  # 「汽车行业汽车零部件」
        scope = ""
    scope, theme = term_scope(theme, scope, scope.removesuffix("行业") or None, titles)
    if _sector_measure(theme) or theme.endswith("价"):  # a measure or a price (猪价) moves; it has no 景气
        return _pick(key, [f"了解{period}{scope}{theme}的走势", f"跟踪{period}{scope}{theme}的变化"])
    # 「景气变化」 presumed cycle data that thematic pieces do not give (readings 21 and 22: not_answered)
    forms = [f"了解{period}{scope}{theme}的发展趋势", f"跟踪{period}{scope}{theme}的最新动态"]
    return _pick(key, forms)


def template_intents(topic: TopicInput, *, max_subqueries: int = 5, max_intents: int = 3,
                     listed: Collection[str] = (), used: dict[str, Counter[str]] | None = None) -> list[dict[str, Any]]:
    """At most one intent with up to ``max_subqueries`` subqueries, written from what the topic's titles share
    (the module docstring says how); intent "" (subqueries without a parent) when the titles share no subject,
    ``[]`` when nothing can be asked. ``listed``: listed companies' short
    names (a keyword that names one is a company, not a theme). ``max_intents`` is kept for the config: a topic
    has one subject. ``used``: level ("intent", "topic") -> the frames the topics before this one took, updated
    here (:func:`fincprg.topics.frames.choose` spreads a level over its frames)."""
    if max_intents < 1:
        return []
    used = used if used is not None else {"intent": Counter(), "topic": Counter()}
    scope = f"{topic.industry}行业" if topic.industry else ""
    companies = topic_companies(topic.titles)
    kws, grown = _topic_keywords(topic, companies, listed)
    key = topic.topic_id

    def keyword_questions(words: list[str], room: int) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for k in words if scope else ():  # without an industry a keyword question has no subject
            if len(out) >= room:
                break
            q = _keyword_question(f"{key}|{k}", k, f"{topic.period_of(k)}{scope}", topic.industry, topic.titles,
                                  companies=bool(companies))
            if q:
                out.append((_keyword_frame(k), q))
        return out

    def title_questions(names: Sequence[str]) -> list[tuple[str, str]]:
        return [fq for c in names for t in companies[c]
                if (fq := title_question(f"{key}|{c}|{t}", c, t, used["topic"]))[1]]

    names = topic_subjects(companies, len(topic.titles))
    # a subquery names a company only where its reports are more than half the topic's (issue 50: a topic mixing
    # companies was asked about one with few of its reports); a pair's comparison is the intent's alone
    major = [c for c in names if 2 * len(companies[c]) > len(topic.titles)]
    if names:
        own = [k for k in kws if any(k in t for n in names for t in companies[n])]
        subs = title_questions(major)[:max_subqueries]
        subs += keyword_questions(own, max_subqueries - len(dict.fromkeys(q for _, q in subs)))
        return _result(*_company_intent(key, names, companies, own, used["intent"]), subs, max_subqueries, used)
    theme = shared_keyword(kws, topic.titles, topic.industry, listed, grown)
    if theme is None or not scope:
        # no shared theme and no company with most of the reports: nothing the topic as a whole is asked
        return []
    subs = keyword_questions([theme, *(k for k in kws if k != theme)], max_subqueries)
    intent = _theme_intent(key, theme, topic.period_of(theme), scope, topic.titles)
    return _result("measure" if _sector_measure(theme) else "industry_event" if theme in _EVENT_INTENTS else "theme",
                   intent, subs, max_subqueries, used)


def _topic_keywords(topic: TopicInput, companies: Collection[str],
                    listed: Collection[str]) -> tuple[list[str], set[str]]:
    """The topic's keywords that can carry a question, as its titles write them whole (航天 -> 商业航天), and the
    theme terms among them that grew so."""
    from fincprg.finance.words import sound

    terms = _subject_terms()
    # (the industry's own name is dropped before it grows: 电力行业 must not become 新能源电力行业)
    whole = {k: whole_term(surface_form(k, topic.titles), topic.titles) for k in topic.keywords
             if k and k.lower() in terms and names_industry(k, topic.industry) != "same"}
    kws = [k for k in dict.fromkeys(whole.values()) if k not in companies and k not in listed and not k.isdigit()]
    # a theme term the titles write inside longer words is still a theme, as those words
    grown = {w for k, w in whole.items() if w != k and (k in _theme_terms() or k.lower() in _theme_terms())}
    # a keyword the tokenizer cannot read as one dictionary noun (个护, 资管) makes no clear question
    return [k for k in kws if sound(k)], grown


def _result(frame: str, intent: str, subs: list[tuple[str, str]], max_subqueries: int,
            used: dict[str, Counter[str]]) -> list[dict[str, Any]]:
    """The topic's one intent with its first ``max_subqueries`` distinct subqueries (none without a subquery);
    their frames are counted in ``used``."""
    subs = list({q: (f, q) for f, q in subs}.values())[:max_subqueries]  # first of each question
    if subs:
        used["intent"].update([frame] if intent else [])
        used["topic"].update(f for f, _ in subs)
    return [{"intent": intent, "subqueries": [q for _, q in subs],
             "frames": {"intent": frame, "subqueries": [f for f, _ in subs]}}] if subs else []


def _keyword_frame(k: str) -> str:
    """The frame of a keyword question (:func:`_keyword_question`): an industry event, a measure, a price or a
    theme term."""
    from fincprg.finance.events import EVENT_QUESTIONS
    from fincprg.finance.surface import canonical

    return "industry_event" if k in EVENT_QUESTIONS else "measure" if canonical(k) else "price" if k.endswith("价") else "theme"
