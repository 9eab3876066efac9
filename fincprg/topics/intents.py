"""Reading intents and subqueries per topic (paper §3.2.2).

Two backends:

* ``templates`` (offline default, provenance ``generator="templates"``): intents and their
  subqueries are written from the topic's titles (the companies they name, each title's metric, event
  or expectation) and from those c-TF-IDF keywords that name an industry term, a metric or an event,
  in the topic's industry and period (in a topic of company reports, only keywords two titles write,
  and no company measure: :func:`_keyword_question`). Companies share an intent only where their titles share an
  industry theme; otherwise each gets its own. Several forms, chosen deterministically; honest about
  being templates.
* ``llm``: the ``topic_intent`` prompt (``prompts/topic_intent.<lang>.j2``) gets the keywords, the
  most representative titles and the industry; the answer must be
  ``[{"intent": str, "subqueries": [str, ...]}]``. It goes through ``fincprg.llm.LLMClient``
  (cache, retries, bounded concurrency); an invalid answer is re-asked once with the error, and a
  topic that still fails becomes a ``Failure`` record with the raw answer (never silently lost).
  Only valid answers are cached, so the next run of the stage (``fincprg build --retry-failed``)
  asks exactly the failed topics again.
  JSON mode is off for this prompt: OpenAI's json_object mode forbids a top-level array.

Query ids: intent ``qi:<topic_id>:<k>`` (level "intent"), subquery ``qt:<topic_id>:<k>:<j>``
(level "topic", parent = the intent), both with ``source_ids=(topic_id,)``.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from fincprg.records import Failure, Query

log = logging.getLogger(__name__)
TEMPLATE_ID, TEMPLATE_VERSION = "topic_intent.templates", 1


@dataclass(frozen=True)
class TopicInput:
    """What intent generation sees of one topic."""

    topic_id: str
    keywords: tuple[str, ...]
    titles: tuple[str, ...]  # most representative first
    industry: str | None
    dates: tuple[dt.date, ...] = ()


def period_label(dates: Sequence[dt.date]) -> str:
    """Human period for a topic: 2024年第三季度, 2024年, or 2024年至2025年 ("" when unknown)."""
    if not dates:
        return ""
    lo, hi = min(dates), max(dates)
    if lo.year == hi.year:
        q_lo, q_hi = (lo.month - 1) // 3 + 1, (hi.month - 1) // 3 + 1
        if q_lo == q_hi:
            return f"{lo.year}年第{'一二三四'[q_lo - 1]}季度"
        return f"{lo.year}年"
    return f"{lo.year}年至{hi.year}年"


def surface_form(keyword: str, titles: Sequence[str]) -> str:
    """``keyword`` as the titles write it: c-TF-IDF keywords come lower-cased from the tokenizer
    (ai, a股), titles keep AI / A股. The first title (most representative) that contains it wins;
    a keyword no title contains is returned unchanged."""
    if not keyword or keyword.lower() == keyword.upper():  # no letters: nothing to restore
        return keyword
    low = keyword.lower()
    for title in titles:
        folded = title.lower()
        i = folded.find(low)
        if i >= 0 and len(folded) == len(title):  # same length: indices map back to the title
            return title[i:i + len(keyword)]
    return keyword


_EXPECTATION = re.compile(r"符合预期|超预期|低于预期|不及预期|略低于预期|好于预期")
_GROWTH = re.compile(r"增长|高增|大增|提升|上升|回升|增加|翻倍|放量|向好|改善")
# the 股息率 family (分红率, 派息率, 股息率) follows the board's payout and the price, not demand as sales do
_NOT_DRIVEN = frozenset({"产能", "股息率"})
# measures that do not 「表现」: capacity is built, a multiple or a price is a level
_NOT_PERFORMING = {
    "产能": ("{c}{y}产能建设进展如何？", "{c}{y}产能扩张情况如何？"),
    "PE": ("{c}{y}估值水平如何？",), "PB": ("{c}{y}估值水平如何？",), "PS": ("{c}{y}估值水平如何？",),
    "市值": ("{c}{y}估值水平如何？",),
}


def _asked_period(title: str) -> str:
    """The period a title reviews as a question names it (2022年上半年, 2020年二季度, 2021年), or ""."""
    from fincprg.generate.complete import asked_period, dominant_period

    p = dominant_period(title)
    return asked_period(p) if p is not None and p.year else ""


def _pick(key: str, forms: list[str]) -> str:
    return forms[int(hashlib.md5(key.encode("utf-8")).hexdigest()[:8], 16) % len(forms)]


@lru_cache(maxsize=1)
def _subject_terms() -> frozenset[str]:
    """Keywords that can carry a question: industry lexicon terms, metric words and event words."""
    from fincprg.finance import METRIC_SYNONYMS
    from fincprg.finance.industries import lexicon
    from fincprg.generate.phrases import EVENTS

    words = {w for ws in lexicon().values() for w in ws} | {w for ws in METRIC_SYNONYMS.values() for w in ws}
    return frozenset(w.lower() for w in words | set(EVENTS) if len(w) >= 2)


def _title_question(key: str, company: str, title: str) -> str:
    """A question about one company's report title: its metric, its event, or whether results met
    expectations. The period is the title's own (a report dated 2022 may be about 2021), with its part of the
    year: a half-year review is asked as 2022年上半年, never as the whole of 2022."""
    from fincprg.finance import METRIC_SYNONYMS, extract
    from fincprg.generate.phrases import EVENTS, event_of
    from fincprg.generate.templates import _surface

    f = extract(title)
    y = _asked_period(title)
    metrics = sorted(f.metrics, key=lambda m: min((title.find(s) for s in METRIC_SYNONYMS[m] if s in title),
                                                  default=len(title)))
    if metrics and metrics[0] != "目标价":
        m = _surface(metrics[0], title)
        forms = ([q.format(c=company, y=y, m=m) for q in _NOT_PERFORMING[metrics[0]]]
                 if metrics[0] in _NOT_PERFORMING else [f"{company}{y}{m}表现如何？", f"{company}{y}{m}的变化情况如何？"])
        # asking what drove growth presumes the title says it grew; capacity is built and a payout decided
        if _GROWTH.search(title) and metrics[0] not in _NOT_DRIVEN:
            forms.append(f"{company}{y}{m}增长的驱动因素是什么？")
        return _pick(key, forms)
    event = event_of(title)
    if event:
        return _pick(key, [s.replace("{E}", company).replace("{P}", y) for s in EVENTS[event]])
    if _EXPECTATION.search(title):
        return _pick(key, [f"{company}{y}业绩是否符合预期？", f"{company}{y}业绩与市场预期相比如何？"])
    return ""  # a bare 「X的业绩表现如何？」 asks nothing a passage could answer specifically


# Events an industry question can be about, and how to ask it (「…行业疫情的前景如何？」 asks nothing).
_INDUSTRY_EVENTS = {"疫情": "{S}受疫情的影响如何？", "政策": "{S}受到哪些政策影响？", "竞争": "{S}的竞争格局如何？",
                    "需求": "{S}的需求情况如何？", "估值": "{S}的估值水平如何？", "出口": "{S}出口表现如何？",
                    "海外": "{S}海外市场表现如何？", "原材料": "{S}原材料价格变化有何影响？",
                    "涨价": "{S}产品涨价有何影响？", "提价": "{S}产品提价有何影响？", "降价": "{S}产品降价有何影响？"}


# A company's own statement and valuation measures: summed over an industry they are no question that the
# topic's company reports answer (「食品饮料行业净利润的变化情况」); sector measures (净息差, 保费) are.
_COMPANY_MEASURES = frozenset("扣非净利润 归母净利润 营业收入 利润总额 营业利润 毛利率 净利率 毛利 费用率 研发费用 ROE "
                              "ROA EPS PE PB PS 目标价 现金流 资本开支 市占率 存货周转 资产负债率 股息率 EBITDA 市值".split())


def _keyword_question(key: str, k: str, scope: str, industry: str | None, titles: Sequence[str] = (), *,
                      companies: bool = False) -> str:
    """A question about keyword ``k`` (an event, a metric or an industry term) in ``scope`` (period +
    industry); "" for a term of another industry that only one title writes (a clustered topic may hold a
    stray title: 房地产行业 … 生猪), while a theme several titles share stays (电子行业 … AI) unless it names
    that other industry (电子行业 … 汽车 reads as 「电子行业汽车」).

    In a topic of company reports (``companies``) a keyword speaks for the industry only where two titles
    write it (one bank's 净息差 title is no view of the banks' 净息差), and a company measure is never
    asked of the industry. A period that spans years is a past range, so it gets no 「前景」."""
    from fincprg.finance.industries import lexicon
    from fincprg.generate.phrases import EVENTS, canonical

    written = sum(k.lower() in t.lower() for t in titles)
    if (companies and written < 2) or (industry and k.lower() in industry.lower()):  # 「汽车行业汽车」 says it twice
        return ""
    if k in EVENTS:  # company events (回购, 股权激励) are no industry question
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
    forms = [f"{scope}{k}的发展趋势如何？", f"{scope}{k}有哪些新变化？"]
    return _pick(key, forms if "至" in scope else [*forms, f"{scope}{k}的前景如何？"])


@lru_cache(maxsize=1)
def _theme_terms() -> frozenset[str]:
    """Industry lexicon terms (白酒, 光伏, 血制品): what two companies' reports can share as a theme. Metric
    and event words (净利率, 疫情) are written in reports of any industry and make no shared theme."""
    from fincprg.finance import METRIC_SYNONYMS
    from fincprg.finance.industries import lexicon
    from fincprg.generate.phrases import EVENTS

    generic = {w.lower() for ws in METRIC_SYNONYMS.values() for w in ws} | set(EVENTS)
    return frozenset(w for ws in lexicon().values() for w in ws if len(w) >= 2 and w.lower() not in generic)


def shared_theme(a: str, b: str) -> str | None:
    """The longest industry term both titles write (「白酒」 in two liquor makers' titles), or None: two
    companies whose titles share none are no pair for one intent (涪陵榨菜 and 五粮液 are both 食品饮料, but
    one report is about 榨菜 and the other about 白酒)."""
    shared = [t for t in _theme_terms() if t.lower() in a.lower() and t.lower() in b.lower()]
    return max(shared, key=lambda t: (len(t), t)) if shared else None


def company_groups(companies: dict[str, str]) -> list[tuple[list[str], str | None]]:
    """Companies (name -> title) grouped by a theme their titles share, in title order: ``[(names, theme)]``.
    A company joins the first group whose first company's title shares a theme with its own."""
    groups: list[tuple[list[str], str | None]] = []
    for name, title in companies.items():
        for i, (names, theme) in enumerate(groups):
            common = shared_theme(companies[names[0]], title)
            if common and theme in (None, common):  # a group of one has no theme yet
                groups[i] = ([*names, name], common)
                break
        else:
            groups.append(([name], None))
    return groups


def template_intents(topic: TopicInput, *, max_subqueries: int = 5, max_intents: int = 3) -> list[dict[str, Any]]:
    """Up to ``max_intents`` intents, each with up to ``max_subqueries`` subqueries, written from the topic's titles.

    Companies named by the titles (「景津装备（603279）：…」) each get a question about their own title
    (its metric, event or expectation). Companies are paired in one intent only where their titles share an
    industry theme (:func:`company_groups`): a clustered topic may hold unrelated companies, and
    「比较涪陵榨菜和五粮液…」 is no research intent; each other company gets an intent of its own. Keywords that
    name an industry term, a metric or an event get questions in the topic's industry and period, under the
    intent whose titles write them (or, in a topic naming no company, an industry intent of their own).
    Forms vary by topic id and are deterministic.
    """
    from fincprg.finance import parse_title_company
    from fincprg.generate.words import sound

    period = period_label(topic.dates)
    scope = f"{topic.industry}行业" if topic.industry else ""
    companies: dict[str, str] = {}
    for t in topic.titles:
        name, _ = parse_title_company(t)
        if name and name not in companies:
            companies[name] = t
    terms = _subject_terms()
    kws = [surface_form(k, topic.titles) for k in topic.keywords if k]
    kws = [k for k in dict.fromkeys(kws) if k.lower() in terms and k not in companies and not k.isdigit()]
    # a keyword the tokenizer cannot read as one dictionary noun (个护, 资管) makes no clear question
    kws = [k for k in kws if sound(k)]
    key = topic.topic_id

    def keyword_questions(words: list[str], room: int) -> list[str]:
        out: list[str] = []
        for k in words if scope else ():  # without an industry a keyword question has no subject
            if len(out) >= room:
                break
            q = _keyword_question(f"{key}|{k}", k, f"{period}{scope}", topic.industry, topic.titles,
                                  companies=bool(companies))
            if q:
                out.append(q)
        return out

    if not companies:
        subs = list(dict.fromkeys(keyword_questions(kws, max_subqueries)))[:max_subqueries]
        if not subs:
            return []
        pair = "和".join(kws[:2])
        intent = _pick(key, [f"{period}{scope}{pair}的研究观点", f"{scope}{period}{pair}的发展趋势"])
        return [{"intent": intent, "subqueries": subs}]

    out: list[dict[str, Any]] = []
    for g, (names, theme) in enumerate(company_groups(companies)):
        if len(out) >= max_intents:
            break
        gkey = f"{key}|g{g}" if g else key
        subs = [q for q in (_title_question(f"{key}|{c}", c, companies[c]) for c in names) if q][:max_subqueries]
        own = [k for k in kws if any(k in companies[n] for n in names)]
        subs = list(dict.fromkeys(subs + keyword_questions(own, max_subqueries - len(subs))))[:max_subqueries]
        if not subs:
            continue
        # the period the group's own titles review, with its part of the year (a topic's date range spans
        # other companies' reports); titles of different periods get none
        whens = {_asked_period(companies[n]) for n in names}
        when = whens.pop() if len(whens) == 1 else ""
        if len(names) >= 2:
            a, b = names[0], names[1]
            if theme in a or theme in b:  # 「南方航空航空业务」, 「银行等公司关于银行」: the name already says it
                intent = _pick(gkey, [f"了解{a}和{b}{when}的业绩表现与前景", f"比较{a}和{b}{when}的经营表现"])
            else:
                # 「X关于Y的研究观点」 reads as the company holding the view, 「在特斯拉领域」 a customer as a field
                intent = _pick(gkey, [f"了解{a}和{b}{when}{theme}相关业务的表现与前景",
                                      f"比较{a}和{b}{when}{theme}业务的经营表现"])
        else:
            # a metric (营业收入) is no topic of a research view; an industry term or an event is
            themes = [k for k in own if k in _theme_terms() or k in _INDUSTRY_EVENTS]
            forms = [f"了解{names[0]}{when}的业绩表现与前景"]
            if themes and themes[0] in _INDUSTRY_EVENTS:  # what the market does to the company
                forms.append(f"了解{themes[0]}对{names[0]}{when}经营的影响")
            elif themes:
                forms.append(f"了解{names[0]}{when}{themes[0]}相关业务的进展与前景")
            intent = _pick(gkey, forms)
        out.append({"intent": intent, "subqueries": subs})
    return out


def to_queries(topic_id: str, intents: list[dict[str, Any]], provenance: dict[str, Any]) -> list[Query]:
    """Intent and subquery Query records for one topic."""
    out: list[Query] = []
    for k, it in enumerate(intents):
        qid = f"qi:{topic_id}:{k}"
        out.append(Query(id=qid, level="intent", text=it["intent"], source_ids=(topic_id,),
                         provenance=dict(provenance)))
        for j, sq in enumerate(it["subqueries"]):
            out.append(Query(id=f"qt:{topic_id}:{k}:{j}", level="topic", text=sq, source_ids=(topic_id,),
                             parent_id=qid, provenance=dict(provenance)))
    return out


def validate(answer: Any, *, max_intents: int = 3, max_subqueries: int = 5) -> list[dict[str, Any]]:
    """Check an LLM answer against ``[{"intent": str, "subqueries": [str, ...]}]``.

    A single object, or an object wrapping the list (``{"intents": [...]}``), is accepted too.

    Raises:
        ValueError: with a message fit to send back to the model.
    """
    if isinstance(answer, dict):
        lists = [v for v in answer.values() if isinstance(v, list)]
        answer = [answer] if "intent" in answer else (lists[0] if len(lists) == 1 else None)
    if not isinstance(answer, list) or not answer:
        raise ValueError('the answer must be a non-empty JSON array [{"intent": ..., "subqueries": [...]}]')
    out = []
    for i, item in enumerate(answer[:max_intents]):
        if not isinstance(item, dict):
            raise ValueError(f"item {i} is not an object")
        intent = item.get("intent")
        subs = item.get("subqueries")
        if not isinstance(intent, str) or not intent.strip():
            raise ValueError(f'item {i} has no non-empty string "intent"')
        if not isinstance(subs, list) or not all(isinstance(s, str) for s in subs):
            raise ValueError(f'item {i}: "subqueries" must be a list of strings')
        subs = list(dict.fromkeys(s.strip() for s in subs if s.strip()))[:max_subqueries]
        if not subs:
            raise ValueError(f'item {i} has no non-empty subquery')
        out.append({"intent": intent.strip(), "subqueries": subs})
    return out


def llm_intents(topics: Sequence[TopicInput], cfg: Any, llm_cfg: Any, cache_dir: Path
                ) -> tuple[dict[str, list[dict[str, Any]]], list[Failure], dict[str, Any]]:
    """Ask the LLM for each topic's intents; returns (topic -> intents, failures, client stats)."""
    from fincprg.llm import LLMClient, load_prompt, parse_json_detailed

    prompt = load_prompt(cfg.prompt, cfg.language)
    client = LLMClient(llm_cfg, cache_dir)
    limits = {"max_intents": cfg.max_intents, "max_subqueries": cfg.max_subqueries}
    msgs = [prompt.render(keywords=[surface_form(k, t.titles) for k in t.keywords[:cfg.max_keywords]], titles=list(t.titles[:cfg.max_titles]),
                          industry=t.industry or "", **limits) for t in topics]
    done: dict[str, list[dict[str, Any]]] = {}
    errors: dict[int, tuple[str, str | None]] = {}

    def parse(text: str | None) -> list[dict[str, Any]] | str:
        """The validated intents, or the error message."""
        try:
            parsed = parse_json_detailed(text)
            if parsed.truncated:
                return "invalid answer: it was cut off before its JSON closed; answer again, shorter"
            return validate(parsed.value, **limits)
        except Exception as e:  # noqa: BLE001 - JSONParseError or ValueError: recorded, re-asked
            return f"invalid answer: {e}"

    def check(i: int, text: str | None, err: str | None) -> None:
        if err is not None or text is None:
            errors[i] = (f"llm error: {err}", text)
            return
        got = parse(text)
        if isinstance(got, str):
            errors[i] = (got, text)
        else:
            done[topics[i].topic_id] = got
            errors.pop(i, None)

    def valid(_: int, res: Any) -> bool:  # only valid answers are cached
        return not isinstance(parse(res.text), str)

    results = client.chat_many(msgs, json_mode=False, desc="topic intents", accept=valid)
    for i, r in enumerate(results):
        check(i, r.text, r.error)
    retry = [i for i, (msg, raw) in errors.items() if raw is not None and prompt.has("reask")]
    if retry:
        convs = [msgs[i] + [{"role": "assistant", "content": errors[i][1] or ""},
                            {"role": "user", "content": prompt.render_block("reask", error=errors[i][0])}]
                 for i in retry]
        for i, r in zip(retry, client.chat_many(convs, json_mode=False, desc="topic intents (re-ask)",
                                                accept=valid), strict=True):
            check(i, r.text, r.error)
            if i not in errors:  # a valid re-ask: served from the cache under the first question next time
                client.remember(msgs[i], r, json_mode=False)
    failures = [Failure(stage="topics", item_id=topics[i].topic_id, kind="intent", message=msg, raw=raw)
                for i, (msg, raw) in sorted(errors.items())]
    client.check_answered()  # every request failed (an HTML page, 500s): stop, as the early stop would have
    provenance_note = {"template": prompt.id, "version": prompt.version}
    return done, failures, {**client.stats, **provenance_note}
