"""Offline query-tree generator: finance question templates, no LLM.

Each sentence is read into a fact frame (entity, period, aspect, metric, direction, number, cues; see
:mod:`fincprg.generate.phrases`) and asked about in one of several question forms per intent (how
much, change, why, forecast, risk, event), chosen deterministically from the sentence id.
A passage is asked about its main fact: the metric it discusses most, with the aspect, direction and
period written next to it, or its forecast, risk or event. A target price or rating is not asked: it is
the report's own, of its date, and undated it matches every report on the company. No word segmenter
picks the wording: phrases are bounded by the sentence's own marks, so the queries do not reward the jieba dictionary
that the BM25 baseline shares (``eval/bench_quality.py`` measures that bias). The tokenizer only
filters afterwards (:mod:`fincprg.finance.words`): a phrase that is no whole noun phrase is dropped,
and a metric whose written segment cannot be said is not asked at all.

Only what the source states is asked: a why only where a reason is written for that metric, a direction
(增长/下降) only where it is written with its figure (else the neutral 「…是多少」 where the figure is
given, else nothing: 「营收持续提升」 answers no 「变化趋势如何」); the source's
period, part of year kept (a passage of 2021H1 figures is asked as 2021年上半年, a first-quarter review's
unlabelled figures as that quarter's) and forecasts kept forecasts; a segment's,
subsidiary's or customer's figure never as the company's. The subject is the report's company (metadata,
title, or for an untitled report the listed company its body names, see :mod:`fincprg.generate.subject`)
or the industry its title names, never a fragment of the text; a passage without one gets a
``no_subject`` Failure. A sentence with no askable fact gets "". Outputs are labelled
``generator="templates"`` so nobody mistakes them for LLM queries.
"""
from __future__ import annotations

import datetime as dt
import logging
import re
from typing import Any

from fincprg.config import GenerateConfig
from fincprg.finance import METRIC_SYNONYMS, Period, extract, parse_title_company
from fincprg.finance import events as ev
from fincprg.finance.reporting_period import dominant_period
from fincprg.finance.surface import canonical
from fincprg.generate import industry as ind
from fincprg.generate import phrases as ph
from fincprg.generate import questions as qs
from fincprg.generate.complete import has_vague_subject
from fincprg.generate.base import PassageInput, QueryTree
from fincprg.records import Failure, Report
from fincprg.wordlists import WordLists

log = logging.getLogger(__name__)

TEMPLATE_ID = "finance-templates"
TEMPLATE_VERSION = "3"

MIN_SENTENCE_CHARS = 12
_W = WordLists("fincprg.generate")  # generate/data/words.jsonl
# measures of the share price, not of the business: not a passage's second metric nor a forecast's subject
_VALUATION = frozenset({"目标价", "PE", "PB", "PS", "市值"})
NO_SUBJECT = "no_subject"  # Failure kind: the passage's report has no subject to ask about
_BOILERPLATE = re.compile(_W.pattern("boilerplate") + r"|不构成.{0,6}建议")
# AlphaFin's header: 「研报题目是:<title>；目标价格是23.4，评分是7.0；研报摘要:」 (the title is no content)
_HEADER = re.compile(r"研报题目是[:：].*?[；;]|评分是[\d.]+[；;，,]?|研报摘要[:：]|目标价格是目标价格未公布[，,；;]?")
_RISK = re.compile(r"风险提示|风险因素")
_H_SHARE = re.compile(r"H股|港股|\d{4,5}\.HK", re.IGNORECASE)
_TRADING = re.compile(r"成交|股价|市值|收盘|换手|涨幅|跌幅")
_TIMELESS = re.compile(r"长期以来|多年来|常年|历年来|历史上|一直以来")

_RATING = re.compile(rf"({_W.pattern('sentence_rating')})评级|评级.{{0,4}}({_W.pattern('sentence_rating_short')})")



def report_company(report: Report) -> str | None:
    """The report's company: metadata first, then the title (「贵州茅台（600519）：…」)."""
    if report.company:
        return report.company
    name, _ = parse_title_company(report.title)
    return name


def title_subject(title: str | None) -> str | None:
    """What an industry or market report's title is about: 「半导体行业周报：…」 -> 半导体行业,
    「利率债周报：…」 -> 利率债 (None for other titles)."""
    m = re.match(r"\s*(?:[【\[][^】\]]{1,20}[】\]])?\s*([\u4e00-\u9fff]{2,8}?行业)", title or "")
    if m:
        return m.group(1)
    head = re.sub(r"^\s*(?:20\d{2}年度?)?(?:[一二三四]季度|中期|上半年|下半年)?", "", title or "")
    m = _STRATEGY_TITLE.match(head)
    name = re.sub(r"(?:投资)?策略$", "", m.group(1)) if m else ""  # 「A股策略深度报告：」 is about A股
    return name if len(name) >= 2 and name not in _GENERIC_SUBJECT else None


# 「A股策略：」, 「利率债周报：」: a market or strategy report's subject before its kind
_STRATEGY_TITLE = re.compile(rf"([\u4e00-\u9fffA-Za-z]{{2,8}}?){_W.pattern('strategy_title')}[:：]")
_GENERIC_SUBJECT = frozenset("策略 宏观 市场 晨会 早报 晚报 行业 公司 个股 投资 研究 固收 债市".split())


def period_label(periods: frozenset[Period]) -> tuple[str, bool]:
    """A short Chinese label for the periods of a text and whether it is a forecast."""
    return ph.label(periods)


class TemplateGenerator:
    """Deterministic finance templates implementing :class:`~fincprg.generate.base.TreeGenerator`."""

    name = "templates"

    def __init__(self, cfg: GenerateConfig | None = None, table: Any | None = None) -> None:
        self.cfg = cfg or GenerateConfig()
        self.table = table  # finance.stock_table: the companies an industry report's sentences name

    @property
    def provenance(self) -> dict[str, str]:
        return {"generator": "templates", "template": TEMPLATE_ID, "version": TEMPLATE_VERSION}

    def generate(self, items: list[PassageInput]) -> list[QueryTree | Failure]:
        return [self._one(it) for it in items]

    def _one(self, item: PassageInput) -> QueryTree | Failure:
        # a company report asks about its company (metadata, title, or for an untitled report the listed
        # company its body names: generate.stage.load_reports); an industry report about its industry
        company = report_company(item.report)
        subject = title_subject(item.report.title)
        if ind.is_wide(item.report, company, subject):
            return self._wide(item, subject)
        company = company or subject
        if not company:
            return Failure(stage="generate", item_id=item.passage.id, kind=NO_SUBJECT,
                           message="the report names no company (metadata, title, or with finance.stock_table a "
                                   "listed company its body names) and no industry: a query would have no "
                                   "subject", raw=item.passage.text[:200])
        date = item.report.date
        text = _clean(item.passage.text)
        period = default_period(text, item.report.title, date)
        sq = tuple(self.sentence_query(s.text, company, key=s.id, date=date, passage_year=period,
                                       passage_text=text) for s in item.sentences)
        pq = self.passage_query(item.passage.text, company, key=item.passage.id, date=date, period=period)
        if not pq:
            # no main metric, forecast, risk or event: the passage's first askable sentence fact stands for it
            pq = next((q for q in sq if q), "")
        if not pq:
            return Failure(stage="generate", item_id=item.passage.id, kind="nothing_askable",
                           message="the template generator found no metric, forecast, risk or event "
                                   "to ask about in this passage", raw=item.passage.text[:200])
        return QueryTree(item.passage.id, self._finish(pq), tuple(map(self._finish, sq)), dict(self.provenance))

    def _wide(self, item: PassageInput, subject: str | None) -> QueryTree | Failure:
        """An industry, strategy, macro or bond report's passage: each sentence asked about the company or industry
        it names (:mod:`fincprg.generate.industry`), the passage by its first askable sentence's question."""
        date = item.report.date
        text = _clean(item.passage.text)
        period = default_period(text, item.report.title, date)
        broker = ind.report_broker(item.report)
        sq, named = [], False
        industry_passage = not ind.about_companies(text, self.table, broker)
        for s, previous in zip(item.sentences, _section_context(item, self.table, broker)):
            who = ind.sentence_subject(_HEADER.sub("", s.text), subject, table=self.table, broker=broker,
                                       previous=previous, industry_passage=industry_passage)
            named = named or who is not None
            # an industry or market is read in its sentence as the company is in a company report's: its figures
            # its own (the frames read 「行业」 before a metric as someone else's)
            body = s.text.replace(who, "公司") if who and ind.is_term(who, s.text, self.table) else s.text
            # an industry's risk list (「电子行业面临哪些主要风险？」) is every report's on that industry: vague
            sq.append(self.sentence_query(body, who, key=s.id, date=date, passage_year=period, passage_text=text,
                                          wide=True) if who and not (_RISK.search(s.text) and not ind.is_listed(
                                              who, self.table)) else "")
        # a passage on the industry alone is asked its main fact, as a company report's passage is; one that speaks
        # of companies by its first askable sentence's question (whose figure its main metric is, is unclear)
        pq = self.passage_query(item.passage.text, subject, key=item.passage.id, date=date, period=period) \
            if subject and industry_passage and not _RISK.search(text) and ind.speaks_of(subject, text) \
            else ""
        pq = pq or next((q for q in sq if q), "")
        if not pq:
            return Failure(stage="generate", item_id=item.passage.id, kind=NO_SUBJECT if not named else
                           "nothing_askable",
                           message="no sentence of this industry report's passage names a company or industry "
                                   "with a fact to ask about", raw=item.passage.text[:200])
        return QueryTree(item.passage.id, self._finish(pq), tuple(map(self._finish, sq)), dict(self.provenance))

    def _finish(self, query: str) -> str:
        """The query tidied (:func:`~fincprg.generate.phrases.tidy`), or "" where it names two listed companies
        (「一汽解放2019年华菱星马归属于上市公司股东的净利润」: a frame took the other one into its aspect)."""
        if self.table is not None and len({m.name for m in self.table.mentions(query)}) > 1:
            return ""
        return ph.tidy(query)

    # ------------------------------------------------------------ sentences

    def sentence_query(self, text: str, company: str | None, *, key: str, date: dt.date | None = None,
                       passage_year: int | Period | None = None, passage_text: str = "", wide: bool = False) -> str:
        """One question for one sentence, or "" when it carries nothing askable.

        ``passage_year`` (the passage's one reporting year, or its period: 2021年上半年) dates a sentence
        that names no year; ``passage_text`` dates a bare quarter (一季度 where the passage writes 22Q1).
        """
        text = _HEADER.sub("", text).strip()
        if len(text) < MIN_SENTENCE_CHARS or _BOILERPLATE.search(text):
            return ""
        year = date.year if date else None
        facts = extract(text, company=company)
        names = frozenset(n for n in facts.companies if n)
        # another company counts only where the sentence names it with its code: 「比亚迪（002594）」
        others = sorted(n for n in facts.companies if n != company and re.search(re.escape(n) + r"\s*[（(]\s*\d{6}", text))
        # a sentence writing 公司 speaks of the report's company, whoever else it names with a code (「主要由于三人行
        # （605168）股价下跌，公司一季度归母净利润下降」)
        e = company if (company and (company in text or not others or has_vague_subject(text))) \
            else (others[0] if others else "")
        if not wide and company and company not in text and not has_vague_subject(text):
            e = self._fact_owner(text, company, e)
        if wide and e != company:
            return ""  # an industry report's sentence is asked about whom it names (industry.sentence_subject)
        if not e:
            return ""  # a question without a subject is not a usable query
        if _RISK.search(text):
            # a risk list names risks, never their impact (no 「…的风险对X有何影响」); naming one risk in the
            # question (「面临电网投资不及预期等哪些风险」) writes part of the answer into it, which readers failed
            # about half the time, and a yes/no form (「需要关注X的风险吗」) is a list's line nobody asks
            return qs.pick(key, [f"{e}面临哪些主要风险？", f"投资{e}需要关注哪些风险？"])
        if _RATING.search(text) and not facts.metrics:
            return ""  # a rating is the report's of its date: undated, the question matches every report
        names = names | {e}  # (the subject's own name is no aspect of its metric: 「泸州老窖2021年泸州老窖营业总收入」)
        best: ph.Frame | None = None
        for f in ph.sentence_frames(text, names=names, others=names - {e}, passage_year=passage_year, year=year,
                                    passage_text=passage_text, date=date):
            # a target price is the report's of its date: undated, the question would match every report
            if f.metric and f.metric != "目标价" and not f.vague and (best is None or (f.number and not best.number)):
                best = f
                if f.number:
                    break
        if best is not None and _TIMELESS.search(text) and not extract(text).periods:
            return ""  # 「长期以来毛利率40%左右」 is no figure of the passage's period
        if best is not None:
            q = qs.metric_question(key, e, best)
            # a trading figure of the H share (「H股成交额14.9亿港元」) asked of the company reads as its A share's
            return "" if _H_SHARE.search(text) and _TRADING.search(q) else q
        event = ev.event_of(text)
        # a topical word (政策, 出口, 竞争) is about the company only in a clause naming it: 「2022年上半年家电
        # 行业出口规模…」 says nothing of the company's exports
        if event and event not in ev.CORPORATE_EVENTS and not any(
                event in c and (e in c or "公司" in c) for c in ph.clauses(text)):
            event = None
        return qs.event_question(key, e, event, text, passage_text, year, date) if event else ""

    def _fact_owner(self, text: str, company: str, fallback: str) -> str:
        """Whom a company report's sentence that neither names its company nor writes 公司 states its fact of:
        the company, unless it names other listed companies (news of a peer, 「报告期内锦浪科技来自境外的营收…」
        in a 金盘科技 report, is 锦浪科技's); then the one of them it names as an issuer, or nobody. Without a
        stock table, ``fallback`` (whom the sentence's coded names give)."""
        if self.table is None:
            return fallback
        listed = [n for n in ind.companies_named(text, self.table, None) if n != company]
        if not listed:
            return company
        issuers = set(ind.as_issuers(text, listed, self.table))
        if len(issuers) != 1:
            return ""
        other = issuers.pop()
        # a chunk joining two sentences: one that names nobody and writes 公司 or lists risks is the report's company's,
        # so which of them a question reads is unclear (「风险提示：…。12月2日电，有投资者问，翰宇药业…」)
        if any(other not in part and (_RISK.search(part) or ind.writes_self(part))
               for part in re.split(r"(?<=[。！？!?\n])", text) if part.strip()):
            return ""
        return other

    # ------------------------------------------------------------ passages

    def passage_query(self, text: str, company: str | None, *, key: str, date: dt.date | None = None,
                      period: Period | None | str = "dominant") -> str:
        """A passage-level question about its main fact (main metric, forecast, risk or event); ``period``: the
        passage's default period (:func:`default_period`; None: none), by default its dominant one."""
        text = _clean(text)
        if not text:
            return ""
        year = date.year if date else None
        facts = extract(text, company=company)
        e = company  # never a name-like fragment of the text (「钢基材料」, a broker): no subject, no query
        if not e:
            return ""
        period = dominant_period(text, date) if isinstance(period, str) else period
        names = frozenset(facts.companies)
        if re.search(r"盈利预测|预计.{0,12}(?:20\d{2}|\d{2})\s*[-~至 ]\s*(?:20\d{2}|\d{2})\s*(?:年|E)", text) \
                and facts.metrics:
            clause = _forecast_clause(text)
            fperiod, _ = ph.period_of(clause, text, None, year, date=date)
            # the metric the forecast is written for (「预计2022-2024年归母净利润分别为…」), not the passage's
            # most written one (新签订单, 市场份额)
            fm = ph.CLAUSE_METRIC.search(clause)
            if not fperiod or re.search(r"季|半年|Q|H", fperiod):
                pass  # no forecast years (a forecast is of years, 「三季度的盈利预测」 is none): asked below
            elif fm is None or canonical(fm.group(0)) in _VALUATION:
                return qs.pick(key, [f"{e}{fperiod}的盈利预测是多少？", f"{e}{fperiod}的业绩预测如何？"])
            else:
                m = fm.group(0)
                each = "分别" if "-" in fperiod else ""
                return qs.pick(key, [f"预计{e}{fperiod}{m}{each}是多少？", f"{e}{fperiod}的盈利预测是多少？",
                                   f"{e}{fperiod}{m}的预测如何？"])
        if _RISK.search(text) and not facts.metrics:
            return qs.pick(key, [f"{e}面临哪些主要风险？", f"投资{e}需要关注哪些风险？"])
        # a target price is the report's of its date: undated, the question would match every report
        order = [m for m in _metric_order(text, facts.metrics) if m != "目标价"] if facts.metrics else []
        if order:
            main = order[0]
            all_frames = [f for sent in re.split(r"[。！？!?]", text) if sent.strip()
                          for f in ph.sentence_frames(sent, names=names, others=names - {e}, passage_year=period,
                                                      year=year, passage_text=text, date=date)
                          if f.metric and not f.vague]
            frames = [f for f in all_frames if f.metric == main]
            if frames:
                # the company's own figure where the passage gives one; else the first segment's, as that
                # segment's (a segment falling while the company rose must not become 「公司…下降」)
                f = next((x for x in frames if not x.aspect), frames[0])
                seconds = [x for x in all_frames if x.metric in order[1:2] and not x.aspect and x.number
                           and x.period == f.period and x.metric not in _VALUATION]
                if seconds and not f.aspect and not f.forecast and f.number and main not in _VALUATION:
                    second = seconds[0].surface
                    period = f.period
                    return qs.pick(key, [f"{e}{period}{f.surface}和{second}表现如何？",
                                       f"{e}{period}{f.surface}和{second}的变化情况如何？",
                                       f"{e}{period}的{f.surface}和{second}分别是多少？"])
                return qs.metric_question(key, e, f)
        event = ev.event_of(text)
        # a topical word written once (研发, 政策, 渠道) is no passage's main fact; a corporate event is
        if event and (event in ev.CORPORATE_EVENTS or text.count(event) >= 2):
            sent = next(x for x in re.split(r"[。！？!?]", text) if event in x)
            return qs.event_question(key, e, event, sent, text, year, date)
        return ""


def default_period(text: str, title: str | None, date: dt.date | None) -> Period | None:
    """The period of a passage's sentences that name none: its dominant one, or the one its title reviews
    (「2020一季报点评」: 2020 Q1) where the passage names none, or only the report's own year as a full year
    (no full-year actual of that year exists yet; 「截止2020年月」 misread as one)."""
    period = dominant_period(text, date) if text else None
    review = dominant_period(title, date) if title else None
    if review is not None and review.part in (None, "FY"):
        review = None
    if period is None:
        return review
    if period.part == "FY" and date and period.year == date.year:
        return review if review is not None and review.year == period.year else None
    return period


def _section_context(item: PassageInput, table: Any, broker: str | None) -> list[str]:
    """For each sentence of a wide report's passage, what it continues (:func:`fincprg.generate.industry.
    sentence_subject`'s ``previous``): the company whose section it is in, then the passage's text before it from
    that section's head on. A section headed inside the passage (「…。\n长青股份发布2019年年报…」) ends the one
    before it, whose company the sentences after that head no longer speak of."""
    import unicodedata

    before, text = unicodedata.normalize("NFKC", item.before), unicodedata.normalize("NFKC", item.passage.text)
    whole = f"{before}\n{text}" if before else text
    start = len(whole) - len(text)
    heads = ind.section_heads(whole, table, broker)
    out, cursor = [], start
    for s in item.sentences:
        at = whole.find(unicodedata.normalize("NFKC", s.text)[:20], cursor)
        at = cursor if at < 0 else at
        cursor = at
        head = [(i, name) for i, name in heads if i < at]
        if head:
            i, name = head[-1]
            out.append(f"{name}。{whole[max(start, i):at]}")
        else:
            out.append(whole[start:at])
    return out


def _clean(text: str) -> str:
    """The passage without boilerplate sentences (disclaimers, the AlphaFin header)."""
    text = _HEADER.sub("", text)
    return "。".join(s for s in re.split(r"[。\n]", text) if s.strip() and not _BOILERPLATE.search(s))


def _forecast_clause(text: str) -> str:
    """The clause a passage's forecast is written in: from 预计/预测 to its years and metric."""
    m = (re.search(r"(?:预计|预测)[^。；]{0,12}?(?:20\d{2}|\d{2})\s*[-~至 ]\s*(?:20\d{2}|\d{2})\s*(?:年|E)[^。；]{0,40}", text)
         or re.search(r"(?:盈利预测|预计)[^。；]{0,60}", text))
    return m.group(0) if m else text


def _metric_order(text: str, metrics: frozenset[str]) -> list[str]:
    counts = {m: sum(text.lower().count(s.lower()) for s in METRIC_SYNONYMS[m]) for m in metrics}
    return sorted(metrics, key=lambda m: (-counts[m], m))
