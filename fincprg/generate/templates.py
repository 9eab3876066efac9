"""Offline query-tree generator: finance-aware templates, no LLM.

Each sentence is reduced to (entity, period, aspect, metric, direction, number) with
:func:`fincprg.finance.extract` and turned into a Chinese question; the passage query is
built from TF-IDF key phrases (jieba + fincprg's finance dictionary, IDF from jieba's
bundled ``idf.txt`` so that a passage's query never depends on which batch it is in).

Outputs are labelled ``generator="templates"`` so nobody mistakes them for LLM queries.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from collections import Counter
from functools import lru_cache
from importlib import resources

from fincprg.config import GenerateConfig
from fincprg.generate.complete import recent_year, without_reference_years
from fincprg.finance import METRIC_SYNONYMS, Period, extract, parse_title_company, tokenize
from fincprg.generate.base import PassageInput, QueryTree
from fincprg.records import Failure, Report

log = logging.getLogger(__name__)

TEMPLATE_ID = "finance-templates"
TEMPLATE_VERSION = "1"

MIN_SENTENCE_CHARS = 12
_BOILERPLATE = re.compile(
    r"免责|声明|分析师|执业证书|证书编号|请务必阅读|仅供参考|不构成.{0,6}建议|评级说明|评级标准|联系人|电话|邮箱|"
    r"E-?mail|www\.|http|本报告|研究所|版权|信息披露|特别提示|证券研究报告"
)
_CLAUSE_SPLIT = re.compile(r"[，。；！？,;!?\n]")
_NUMERIC = re.compile(r"[\d.%％]")
_NUMBER_TOKEN = re.compile(r"[\d.,%％]+[a-z]{0,3}")  # 46.51, 30%, 8gb; DDR4 and 7nm芯片 stay
_RISK = re.compile(r"风险提示|风险因素")
_RATING = re.compile(r"(买入|增持|推荐|中性|减持|强烈推荐|审慎推荐)评级|评级.{0,4}(买入|增持|推荐|中性|减持)")
# Words that say nothing about the passage's subject: never used as key phrases.
_GENERIC = frozenset("""
公司 同比 环比 实现 亿元 万元 元 分别 报告期 报告 其中 全年 单季度 单季 比重 占比 受益 我们 认为 有望 继续 保持 方面
期间 增长 下降 提升 下滑 上升 增加 减少 降低 业绩 年度 发布 事件 点评 投资要点 要点 核心 观点 同时 目前 未来 以上
主要 影响 带动 推动 得益于 由于 随着 预期 符合预期 超预期 逐步 显著 明显 快速 稳健 大幅 小幅 较 较快 水平 整体 基本
同比增长 同比下降 个百分点 百分点 pct 亿 万 年 月 日 季度 上半年 下半年 一季度 二季度 三季度 四季度 前三季度 全年度
营收 收入 营业收入 净利润 归母净利润 毛利率 净利率 情况 变化 达到 达 为 约 至 由 所 此 其 之 分析 数据 口径 本期 上期
对应 不及预期 低于预期 风险提示 下调 上调 给予 维持 升至 降至 盈利预测 投资建议 核心观点 本周 上周 本月 行情 回顾 单一
首个 年化 日起 多地 中位数 五大 首次 覆盖 评级 买入 增持 推荐 中性 买入评级 增持评级 建议 关注 看好 测算 统计 截至 末
上旬 中旬 下旬 月末 月底 年末 年初 年底 季末 期末 以来 今年 去年 明年 当前 已经 已于 完成 开始 预计 此外 另外 一方面 另一方面 包括 其他 相对 较为 进一步 持续 加速 逐步
""".split())


@lru_cache(maxsize=1)
def _idf_table() -> dict[str, str]:
    """jieba's bundled IDF table: a fixed source, so scores do not depend on the batch.

    Read as a file (importing jieba.analyse would load jieba.posseg, ~10 s); values stay
    strings until looked up, which keeps the load under a second.
    """
    text = resources.files("jieba").joinpath("analyse", "idf.txt").read_text(encoding="utf-8")
    parts = text.split()
    if len(parts) == 2 * text.count(" "):  # every line is "word value": pair up (twice as fast)
        it = iter(parts)
        return dict(zip(it, it))
    return dict(line.split(" ", 1) for line in text.splitlines() if " " in line)


_MEDIAN_IDF = 11.9547675029  # jieba.analyse.default_tfidf.median_idf for jieba 0.42.1


@lru_cache(maxsize=65_536)
def _idf(tok: str) -> float:
    v = _idf_table().get(tok)
    return float(v) if v is not None else _MEDIAN_IDF


def _stable_pick(key: str, n: int) -> int:
    """Deterministic choice (Python's hash() is salted per process)."""
    return int(hashlib.md5(key.encode("utf-8")).hexdigest()[:8], 16) % n


_DIRECTION_WORD = re.compile(r"增长|下降|提升|下滑|上升|增加|减少|降低|上涨|下跌|回升|回落|收窄|扩大|改善|预期")
_ALL_METRIC_WORDS = frozenset(s.lower() for syns in METRIC_SYNONYMS.values() for s in syns)
_LONG_METRIC_WORDS = tuple(sorted(m for m in _ALL_METRIC_WORDS if len(m) >= 2))


@lru_cache(maxsize=131_072)
def _plain_candidate(tok: str) -> bool:
    """The part of :func:`_candidate` that does not depend on the blocked words (memoised: the
    metric-word scan was the generator's hottest loop)."""
    return (len(tok) >= 2 and tok not in _GENERIC and not _NUMBER_TOKEN.fullmatch(tok)
            and not _DIRECTION_WORD.search(tok)
            and not any(tok in m or m in tok for m in _LONG_METRIC_WORDS))


def _candidate(tok: str, blocked: set[str]) -> bool:
    return (_plain_candidate(tok) and tok not in blocked
            and not any(tok in b or b in tok for b in blocked if len(b) >= 2))


@lru_cache(maxsize=1)
def _jieba_block() -> re.Pattern[str]:
    import jieba  # already loaded by fincprg.finance.tokenize; imported lazily all the same

    return jieba.re_han_default


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # the same rule as fincprg.finance.lexicon


def _tokens(text: str) -> list[str]:
    """``tokenize(text)``, computed block by block.

    jieba cuts each run of CJK/alphanumeric characters on its own, so the tokens of a text are
    the tokens of its blocks in order. Asking for blocks lets tokenize's memo serve the clauses
    and passages that share them (a sentence's clause is also part of its passage), which saves
    ~40% of jieba's work. tests/unit/test_templates_speed.py checks the equality.
    """
    text = _THOUSANDS.sub("", text)  # before splitting: 1,234 is one block once the comma goes
    out: list[str] = []
    for blk in _jieba_block().split(text):
        if blk.strip():
            out.extend(tokenize(blk))
    return out


# Period tokens as jieba writes them (lower-cased): 2023q2, 24h1, 2025e, 2023a, fy24, 1q24, 2023年报.
_PERIOD_TOKEN = re.compile(
    r"(?:fy)?(?:19|20)?\d{2}(?:年|年度)?(?:q[1-4]|h[12]|e|a|f|年报|中报|[一二三四]季度|上半年|下半年|前三季度|全年)"
    r"|[1-4]q\d{2}(?:\d{2})?|[12]h\d{2}(?:\d{2})?|(?:19|20)\d{2}年?"
)


def key_phrases(text: str, k: int, blocked: set[str], *, drop_periods: bool = False) -> list[str]:
    """Top-``k`` TF-IDF phrases of ``text``, returned in order of first appearance.

    ``drop_periods`` leaves out period tokens (2023Q2, 2025E …) for a question that already writes
    its period label (no 「2023年二季度2023Q2营业收入」).
    """
    blocked = {b for b in blocked if b}
    for b in sorted(blocked, key=len, reverse=True):  # names never become key phrases
        text = text.replace(b, " ")
    toks = _tokens(text)
    # judge each distinct token once (same counts as filtering every occurrence)
    tf = Counter(toks)
    for t in [t for t in tf if not _candidate(t, blocked) or (drop_periods and _PERIOD_TOKEN.fullmatch(t))]:
        del tf[t]
    if not tf:
        return []
    first: dict[str, int] = {}
    for i, t in enumerate(toks):
        first.setdefault(t, i)
    scored = sorted(tf, key=lambda t: (-tf[t] * _idf(t), first[t]))
    low = text.lower()
    # tokenize() lower-cases Latin letters; give the phrase back as written (AI芯片, not ai芯片)
    return [text[low.find(t):low.find(t) + len(t)] if t in low else t
            for t in sorted(scored[:k], key=lambda t: first[t])]


def report_company(report: Report) -> str | None:
    """The report's company: metadata first, then the title (「贵州茅台（600519）：…」)."""
    if report.company:
        return report.company
    name, _ = parse_title_company(report.title)
    return name


def _surface(canonical: str, text: str) -> str:
    """The synonym of ``canonical`` actually written in ``text`` (BM25 matches surface words)."""
    hits = [s for s in METRIC_SYNONYMS[canonical] if s.lower() in text.lower()]
    return max(hits, key=len) if hits else canonical


def _first_metric(clause: str) -> str | None:
    low = clause.lower()
    if not any(w in low for w in _ALL_METRIC_WORDS):
        return None  # no synonym written: extract() would find no metric either (saves a call)
    facts = extract(clause)
    if not facts.metrics:
        return None
    # the metric written first in the clause is its subject
    pos = {m: min((clause.lower().find(s.lower()) for s in METRIC_SYNONYMS[m] if s.lower() in clause.lower()),
                  default=10**6) for m in facts.metrics}
    return min(sorted(facts.metrics), key=lambda m: pos[m])


def period_label(periods: frozenset[Period]) -> tuple[str, bool]:
    """A short Chinese label for the periods of a text and whether it is a forecast."""
    dated = sorted(p for p in periods if p.year)
    if not dated:
        bare = sorted(p for p in periods if p.part)
        return (bare[0].label(), False) if bare else ("", False)
    years = sorted({p.year for p in dated if p.year})
    if len(years) >= 3:
        return f"{years[0]}-{years[-1]}年", any(p.forecast for p in dated)
    latest = [p for p in dated if p.year == years[-1]]
    best = max(latest, key=lambda p: (p.part not in (None, "FY"), p.part or ""))
    return best.label(), best.forecast


class TemplateGenerator:
    """Deterministic finance templates implementing :class:`~fincprg.generate.base.TreeGenerator`."""

    name = "templates"

    def __init__(self, cfg: GenerateConfig | None = None) -> None:
        self.cfg = cfg or GenerateConfig()

    @property
    def provenance(self) -> dict[str, str]:
        return {"generator": "templates", "template": TEMPLATE_ID, "version": TEMPLATE_VERSION}

    def generate(self, items: list[PassageInput]) -> list[QueryTree | Failure]:
        return [self._one(it) for it in items]

    def _one(self, item: PassageInput) -> QueryTree | Failure:
        company = report_company(item.report)
        date = item.report.date
        sq = tuple(self.sentence_query(s.text, company, key=s.id, date=date) for s in item.sentences)
        pq = self.passage_query(item.passage.text, company, key=item.passage.id, date=date)
        if not pq:
            return Failure(stage="generate", item_id=item.passage.id, kind="nothing_askable",
                           message="the template generator found no key phrase in this passage",
                           raw=item.passage.text[:200])
        return QueryTree(item.passage.id, pq, sq, dict(self.provenance))

    # ------------------------------------------------------------ sentences

    def sentence_query(self, text: str, company: str | None, *, key: str, date: dt.date | None = None) -> str:
        """One question for one sentence, or "" when it carries nothing askable.

        ``date`` (the report's) keeps years long before it (创2002年以来新低) out of the period.
        """
        text = text.strip()
        if len(text) < MIN_SENTENCE_CHARS or _BOILERPLATE.search(text):
            return ""
        facts = extract(text, company=company)
        names = set(facts.companies)
        others = sorted(n for n in facts.companies if n != company and n in text)
        entity = company if (company and (company in text or not others)) else (others[0] if others else "")
        periods = _periods(facts.periods, text, date)
        period, forecast = period_label(periods)
        clauses = [c for c in _CLAUSE_SPLIT.split(text) if c.strip()]
        metric, clause = None, text
        for c in clauses:  # prefer a clause with a metric and a number
            m = _first_metric(c)
            if m and (metric is None or (_NUMERIC.search(c) and not _NUMERIC.search(clause))):
                metric, clause = m, c
                if _NUMERIC.search(c):
                    break
        # periods and directions do not depend on the company: the whole sentence's facts serve
        cfacts = facts if clause == text else extract(clause)
        cperiod, cforecast = period_label(_periods(cfacts.periods, clause, date))
        if cperiod:
            period, forecast = cperiod, cforecast
        elif len({p.year for p in periods if p.year}) > 1:
            period, forecast = "", False  # the clause's own period is unclear
        blocked = names | set(METRIC_SYNONYMS.get(metric or "", ())) | {period}
        aspect_src = clause if metric else text
        aspect = "".join(key_phrases(aspect_src, 1 if metric else 2, blocked, drop_periods=bool(period)))
        if metric and not cfacts.directions:
            # 「毛利率为43.6%，同比下降1.2个百分点」: the direction sits in the next clause
            nxt = clauses[clauses.index(clause) + 1] if clause in clauses[:-1] else ""
            if nxt and not extract(nxt).metrics:
                cfacts = extract(clause + "，" + nxt)
                clause = clause + "，" + nxt
        direction = next(iter(sorted(cfacts.directions)), None) if len(cfacts.directions) == 1 else None
        dir_word = {"up": "增长" if metric in ("营业收入", "归母净利润", "扣非净利润") else "提升",
                    "down": "下降"}.get(direction or "", "")
        pick = _stable_pick(key, 3)

        risk = _RISK.search(text)
        if risk:
            # the first risk listed after 风险提示 names what the question is about
            first_risk = re.split(r"[；;。]", text[risk.end():].lstrip("：: "))[0]
            # "风险" itself is no topic: it would give "面临哪些风险方面的风险？"
            topic = "".join(key_phrases(first_risk, 1, names)).replace("风险", "")
            if not (entity or topic):
                return ""
            return f"{entity}面临哪些{topic}方面的风险？" if topic else f"{entity}面临哪些主要风险？"
        if metric == "目标价" or (_RATING.search(text) and not metric):
            if not entity:
                return ""
            return f"{entity}的目标价是多少？" if metric == "目标价" else f"{entity}的投资评级是什么？"
        if metric:
            surf = _surface(metric, clause)
            if not (entity or aspect):
                return ""  # "毛利率是多少？" without a subject is not a usable query
            subj = f"{entity}{period}{aspect}"
            has_num = bool(_NUMERIC.search(clause))
            if forecast:
                return [f"预计{subj}{surf}是多少？", f"{subj}{surf}的预测值是多少？",
                        f"市场预计{subj}{surf}能达到多少？"][pick]
            if direction and has_num and ("同比" in clause or "%" in clause or "百分点" in clause):
                return [f"{subj}{surf}同比{dir_word}了多少？", f"{subj}{surf}的同比变化幅度是多少？",
                        f"{subj}{surf}{dir_word}的原因是什么？"][pick]
            if direction:
                return [f"{subj}{surf}{dir_word}的原因是什么？", f"{subj}{surf}为什么{dir_word}？",
                        f"{subj}{surf}的变化趋势如何？"][pick]
            if has_num:
                return [f"{subj}{surf}是多少？", f"{subj}{surf}达到了多少？", f"{subj}的{surf}为多少？"][pick]
            return [f"{subj}{surf}情况如何？", f"{subj}{surf}表现怎么样？", f"{subj}的{surf}有什么特点？"][pick]
        # no metric: ask about the sentence's subject when it carries finance content
        if not aspect or not (entity or len(aspect) >= 4):
            return ""
        if not (facts.numbers or facts.directions or facts.periods or facts.companies - {company}
                or any(t in text for t in ("业务", "产品", "市场", "需求", "订单", "产能", "政策", "价格"))):
            return ""
        if direction:
            return [f"{entity}{period}{aspect}{dir_word or '变化'}的原因是什么？",
                    f"{entity}{aspect}的变化趋势如何？", f"{entity}{period}{aspect}有哪些变化？"][pick]
        return [f"{entity}{period}{aspect}方面有什么进展？", f"{entity}{aspect}的发展情况如何？",
                f"{entity}在{aspect}方面有哪些布局？"][pick]

    # ------------------------------------------------------------ passages

    def passage_query(self, text: str, company: str | None, *, key: str, date: dt.date | None = None) -> str:
        """A passage-level question from its key phrases and main metrics."""
        # boilerplate sentences (disclaimers...) must not supply key phrases
        text = "。".join(s for s in re.split(r"[。\n]", text) if s.strip() and not _BOILERPLATE.search(s))
        facts = extract(text, company=company)
        entity = company or next(iter(sorted(n for n in facts.companies if n in text)), "")
        metrics = [m for m in _metric_order(text, facts.metrics)][:2]
        blocked = set(facts.companies) | {s for m in metrics for s in METRIC_SYNONYMS[m]}
        period = _dominant_period(text, facts.periods, date)
        phrases = key_phrases(text, 3 if metrics else 4, blocked, drop_periods=bool(period))
        if not phrases:
            return ""
        topic = "、".join(phrases)
        pick = _stable_pick(key, 3)
        if metrics:
            what = "和".join(_surface(m, text) for m in metrics)
            return [f"{entity}{period}{topic}相关的{what}变化情况如何？",
                    f"{entity}{period}在{topic}方面的{what}表现如何？",
                    f"{entity}{period}{topic}的{what}有哪些变化？"][pick]
        return [f"{entity}{period}在{topic}方面的情况如何？", f"{entity}{period}{topic}有哪些进展和变化？",
                f"{entity}{period}关于{topic}有哪些看点？"][pick]


def _metric_order(text: str, metrics: frozenset[str]) -> list[str]:
    counts = {m: sum(text.lower().count(s.lower()) for s in METRIC_SYNONYMS[m]) for m in metrics}
    return sorted(metrics, key=lambda m: (-counts[m], m))


def _periods(periods: frozenset[Period], text: str, date: dt.date | None) -> frozenset[Period]:
    """``periods`` (extract()'s of ``text``) without reference years (2002年以来) and years long
    before the report ``date``."""
    clean = without_reference_years(text)
    if clean is not text:
        periods = extract(clean).periods
    return frozenset(p for p in periods if recent_year(p.year, date))


def _dominant_period(text: str, periods: frozenset[Period], date: dt.date | None = None) -> str:
    """The passage's period when one year clearly dominates it, else ""."""
    periods = _periods(periods, text, date)
    text = without_reference_years(text)
    years = Counter(y for y in map(int, re.findall(r"(?<!\d)(20[0-4]\d)(?=年|Q|E|H)", text))
                    if recent_year(y, date))
    if not years:
        return ""
    (top, n), *rest = years.most_common()
    if rest and rest[0][1] * 2 > n:
        return ""
    label, _ = period_label(frozenset(p for p in periods if p.year == top))
    return label or f"{top}年"
