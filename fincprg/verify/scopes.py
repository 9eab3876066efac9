"""Part as whole: a query that asks the company's metric (营收, 归母净利润, ROE, 发电量 …) where the source states it
only for a part (a segment, also under a numbered heading, a channel, product, region, plant, subsidiary, assets
to be injected, a customer, peer, the industry or the nation), an adjusted total (「剔除防疫类产品收入」),
several parts at once (「收入增速分别为」) or as the base of a share (「占收入总额的7%」) is ``not_answered``; a
market's volume asked under the company's name (「国内重卡销量」) is ``wrong_subject``. Verify's own reading
(:mod:`fincprg.finance.crosscheck`), not the generator's.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from fincprg.finance.crosscheck import (
    LOOSE,
    METRICS,
    SENT_SPLIT,
    blank_names,
    blank_periods,
    longest_first,
    norm,
    periods,
    read_ask,
)
from fincprg.verify.reading import Reading
from fincprg.verify.registry import QSN, SP, rule
from fincprg.verify.verdict import Reason, Verdict
from fincprg.wordlists import WordLists, alternation

_W = WordLists("fincprg.verify")  # verify/data/words.jsonl

_WHOLE_METRICS = ("营业收入", "净利润", "扣非净利润", "ROE", "毛利率", "净利率", "EPS", "新业务价值", "保费", "发电量")
# an adjusted total (「剔除防疫类用品公司总收入」) is no more the company's figure than a segment's
_ADJUSTED = _W.compile("adjusted")
# assets to be bought or injected: their figures (「拟注入资产20年整体净利率16%」) are not yet the company's
_TARGET = _W.compile("target_asset")
_PART_MARK = _W.compile("part_mark")  # (the target's words among them)
# 集团 alone or after the company (本集团, 公司集团); 「联发集团」 is another group, often a subsidiary
_WHOLE_MARK = re.compile(r"(?<!子)(?<!分)公司|本公司|(?:(?<=公司)|(?<=本)|(?<![\u4e00-\u9fffA-Za-z]))集团(?!旗下)|合并|整体|"
                         r"综合|上市公司")
# 主营业务收入 is the company's, 移动主营业务收入 a segment's: the prefix is read off before the marks
_MAIN_PREFIX = re.compile(r"(?:主营业务|主营)$")
# 收入占比 / 收入结构 / 营收贡献率 is a share, not the amount
_SHARE_AFTER = re.compile("的?" + _W.pattern("share_after"))
_FIGURE = re.compile(r"\d")
# 「合同额…为同期收入3 2x」: a multiple of the metric, not its figure
_TIMES_AFTER = re.compile(r"\s?的?[\d\s.]+\s?[xX倍]")
# 「占收入总额的7%」, 「占公司毛利润比例」: the metric is the base of another thing's share; what a part 「贡献公司
# 2020H1归母净利润」 is that part's own figure
_SHARE_BASE = re.compile(rf"(?:占|贡献){_W.pattern('of_whole')}?的?$")
# 「收入增速分别为16%、31%」 in one period: the figures of several parts named before
_SEVERAL = re.compile(r"^[^，,。；;]{0,6}分别")
# a subsidiary named by the company's short name (人保寿险, 平安银行 of 中国平安)
_SUB_SUFFIX = _W.pattern("subsidiary_suffix")
_CLAUSE = re.compile(r"[。！？!?；;\n，,：:（(]")


@functools.lru_cache(maxsize=1)
def _metric_surfaces() -> tuple[str, ...]:
    return tuple(w for ws in METRICS.values() for w in ws if len(w) >= 2)


@functools.lru_cache(maxsize=1)
def _metric_words() -> re.Pattern[str]:
    return re.compile(alternation(set(_metric_surfaces())))


# a clause earlier in the sentence that sets what the following clauses speak of: 「LED业务方面，全年营收…」,
# 「其中联营企业海得威…，2022年营业收入…」, 「除平膜业务…，营业收入下滑」
# a named plant (「杨房沟电站…投产，…拉动发电量增长」) is one of the company's or an associate's, not all of them
# (「控股电站」, 「所属电厂」, 「火电机组」 are all of a kind)
_PLANT = rf"(?!{_W.pattern('plant_of_kind')})[\u4e00-\u9fff]{{2}}{_W.pattern('plant')}"
_TOPIC_CLAUSE = re.compile(rf"{_W.pattern('topic_part')}{_W.pattern('topic_end')}[，,：:]|{_W.pattern('affiliate')}|"
                           rf"除[^，,。]{{1,12}}{_W.pattern('business_kind')}|{_PLANT}|{_W.pattern('target_asset')}")
# a sentence that opens on its figure (「上半年实现净利润…」) speaks of the previous sentence's subject; a named
# one (「顶立科技是国内…龙头」) other than the company is a subsidiary or a peer
_SUBJECT_HEAD = re.compile(rf"\s*(?:\d\s*)?([\u4e00-\u9fffA-Za-z]{{2,8}}?){_W.pattern('subject_verb')}")
_NOT_SUBJECT = _W.compile("not_subject")
_OPENS_ON_FIGURE = re.compile(rf"\s*(?:[\d\s]+年|{_W.pattern('opening_period')}|[一二三四]季度|Q[1-4]|H[12])*\s*"
                              rf"{_W.pattern('achieve_verb')}?\s*{_W.pattern('figure_head')}")
# 「代销金融资产方面，公司实现收入11亿元」: a lead-in names the part the sentence's later clauses speak of, even where
# they write 公司; an aspect of the company itself (盈利能力, 费用, a metric) or its name is no part
# a numbered heading (「3 房地产业务 公司积极推动…，22H1收入2 7亿元」) does the same
_LEAD_IN = re.compile(r"([\u4e00-\u9fffA-Za-z]{2,12})方面[，,：:]"
                      rf"|(?:^|\s)[1-9]\s?[、.)）]?\s?([\u4e00-\u9fff]{{2,10}}{_W.pattern('segment_kind')})(?:\s|[：:])")
_ASPECT_LEAD = re.compile(rf"{_W.pattern('aspect_lead')}|端$")
# an explicit whole in the clause itself overrides a lead-in
_EXPLICIT_WHOLE = _W.compile("explicit_whole")
# words before a metric that take in all of a kind, not a part of it, or that report it (「公司发布年报，2022年
# 实现收入」)
_ALL_OF_KIND = _W.compile("all_of_kind")
# tense and adjustment words before a metric qualify nothing (「未扣非预测净利润」 is still the net profit)
_TENSE_WORDS = _W.compile("tense_word")


def _prev_sentence(t: str, sent_start: int) -> int:
    """Where the sentence before the one starting at ``sent_start`` starts."""
    return max((m.end() for m in SENT_SPLIT.finditer(t, 0, max(sent_start - 1, 0))), default=0)


def _named_subject(t: str, sent_start: int, names: list[str]) -> bool:
    """Whether the sentence before ``sent_start`` opens on a recurring name other than the company's."""
    head = _SUBJECT_HEAD.match(t, _prev_sentence(t, sent_start), sent_start)
    if not head:
        return False
    who = head.group(1)
    return not _NOT_SUBJECT.search(who) and not any(n in who or who in n for n in names) and t.count(who) >= 2


def _of_part(t: str, sent_start: int, names: list[str]) -> bool:
    """Whether the sentence before ``sent_start`` speaks of a part and never of the company (「公司供应链业务收入逆势
    增长，收入1415亿元。毛利率1 7%」: the second sentence's margin is the segment's; 「其中单四季度」 is a quarter)."""
    prev = t[_prev_sentence(t, sent_start):sent_start]
    if not prev.strip() or True in metric_scopes(prev, _metric_surfaces(), names):
        return False  # (a metric with no mark, 「2022年营收100亿元，…其中海外收入30亿元」, is the company's)
    parts = False
    for clause in _CLAUSE.split(_as_company(prev, names, None)):
        marks = [m.end() for m in _PART_MARK.finditer(clause) if m.group() != "其中" or not periods(clause[m.end():])]
        part, whole = max(marks, default=-1), max(_whole_ends(clause), default=-1)
        parts = parts or (part > whole and _metric_words().search(clause, part) is not None)
    return parts


def _subsidiaries(names: list[str]) -> re.Pattern[str] | None:
    """Names of the company's subsidiaries formed on its short name: 人保寿险 for 中国人保 (人保)."""
    shorts = {n[2:] if n.startswith("中国") and len(n) >= 4 else n for n in names if not n.isascii()}
    shorts = {s for s in shorts if len(s) >= 2}
    if not shorts:
        return None
    return re.compile(f"(?:{alternation(longest_first(shorts))}){_SUB_SUFFIX}")


def _part_lead_in(earlier: str) -> bool:
    """Whether the last 「X方面，」 of ``earlier`` (the sentence before a mention's clause) names a part."""
    leads = [m.group(1) or m.group(2) for m in _LEAD_IN.finditer(earlier)]
    return bool(leads) and not (_ASPECT_LEAD.search(leads[-1]) or _metric_words().search(leads[-1]))


def _whole_ends(text: str) -> list[int]:
    """Where each mark of the whole ends in ``text``; 整体 after a target (「拟注入资产整体净利率」) is the target's."""
    return [w.end() for w in _WHOLE_MARK.finditer(text) if w.group() != "整体" or not _TARGET.search(text, 0, w.start())]


def _several_periods(clause: str) -> bool:
    """「2021-2023年收入分别为」 gives one company's years, 「2022年收入增速分别为」 several parts' figures."""
    ps = periods(clause)
    return len({(p.years, p.part) for p in ps}) >= 2 or any(len(p.years) > 1 for p in ps)


def _as_company(text: str, names: list[str], subs: re.Pattern[str] | None) -> str:
    """``text`` with a subsidiary's name read as 子公司 and the company's names as 公司."""
    if subs is not None:  # 平安银行 is a subsidiary of 中国平安 (平安), not of 平安银行 (平安) itself
        text = subs.sub(lambda m: m.group() if any(m.group() in n for n in names) else "子公司", text)
    return blank_names(text, names)


def _of_subsidiary(t: str, sent_start: int, subs: re.Pattern[str], names: list[str]) -> bool:
    """Whether the sentence before ``sent_start`` speaks of a subsidiary (「2020年人保寿险保费收入962亿元…。新业务
    价值54亿元」: the second sentence's figure is the subsidiary's)."""
    prev = t[_prev_sentence(t, sent_start):sent_start]
    return "公司" not in prev and any(not any(m.group() in n for n in names) for m in subs.finditer(prev))


def metric_scopes(text: str, surfaces: Iterable[str], names: Iterable[str], *, figures: bool = False,
                  since: int = 0) -> list[bool | None]:
    """For each mention of a metric (``surfaces``) in ``text``: True when its clause states it for the company
    (the company's name, 公司, nothing), False when for a part (a segment, subsidiary, peer, the industry).
    With ``figures``, a company mention is None unless its clause gives a figure for it (「营收实现正增长」,
    「收入占比21%」 state no amount or rate of the company's revenue). Mentions before ``since`` are read (they
    may set a subject) but not returned."""
    t = norm(text)
    pat = re.compile(alternation(surfaces))
    kept = [n for n in longest_first(names) if len(n) >= 2]  # 中国平安 before 平安
    text_of = _Text(t, kept, _subsidiaries(kept), figures)
    out: list[bool | None] = []
    sent_of: list[int] = []  # the sentence start of each mention
    loose: list[bool] = []  # whether each mention is a loose word (收入, 业绩) that marks no part
    starts: list[int] = []
    for m in pat.finditer(t):
        starts.append(m.start())
        sent_start = max((c.end() for c in SENT_SPLIT.finditer(t, 0, m.start())), default=0)
        # a loose word's scope (「调整业绩预期」) sets no subject for the clauses after it, unless its clause marks
        # a part and the mention after it is as loose (「物流业务收入逆势增长，收入120亿元」; 「海外业务收入快速增长，
        # 营业收入120亿元」 returns to the company)
        prev = (sent_of[-1], out[-1], starts[-2]) \
            if out and (not loose[-1] or (out[-1] is False and m.group() in LOOSE)) else None
        sent_of.append(sent_start)
        loose.append(m.group() in LOOSE)
        out.append(_mention_scope(text_of, m, sent_start, prev))
    return [sc for sc, at in zip(out, starts) if at >= since]


@dataclass(frozen=True)
class _Text:
    """What every mention of one text is read with: the text (NFKC), the company's names (longest first), its
    subsidiaries' pattern and whether a company mention must give a figure."""

    t: str
    names: list[str]
    subs: re.Pattern[str] | None
    figures: bool


def _mention_scope(x: _Text, m: re.Match[str], sent_start: int,
                   prev: tuple[int, bool | None, int] | None) -> bool | None:
    """The scope of one mention (see :func:`metric_scopes`); ``prev``: the previous mention's sentence start,
    scope and offset, where it can lend its subject."""
    t = x.t
    start = max((c.end() for c in _CLAUSE.finditer(t, 0, m.start())), default=0)
    before = _MAIN_PREFIX.sub("", t[start:m.start()])
    base = _SHARE_BASE.search(blank_periods(before).rstrip())
    if base and base.group().startswith("贡献"):
        return False
    if x.figures and base:
        return None
    before = _as_company(before, x.names, x.subs)
    if _ADJUSTED.search(before):
        return False
    earlier = _as_company(t[sent_start:start], x.names, x.subs)  # the sentence before this clause
    if _part_lead_in(earlier) and not _EXPLICIT_WHOLE.search(before):
        return False
    last_part = max((p.end() for p in _PART_MARK.finditer(before)), default=-1)
    last_whole = max(_whole_ends(before), default=-1)
    if last_part > last_whole:
        return False
    # no subject in its own clause: the sentence's earlier clauses, or the one before
    if last_whole < 0 and _subject_before_is_part(x, earlier, sent_start, start, prev):
        return False
    whole = len(_qualifier(before[last_whole:] if last_whole >= 0 else before)) < 2
    if whole and x.figures:
        return _figure_given(t, m, start)
    return whole


def _subject_before_is_part(x: _Text, earlier: str, sent_start: int, start: int,
                            prev: tuple[int, bool | None, int] | None) -> bool:
    """Whether a mention whose clause names no subject is a part's: the sentence's earlier clauses name a topic
    after the whole, it continues a part's parallel clause, or its sentence opens on a figure of a named subject,
    of a part or of a subsidiary."""
    t = x.t
    whole_at = max(_whole_ends(earlier), default=-1)
    topic = max((c.end() for c in _TOPIC_CLAUSE.finditer(earlier)), default=-1)
    # 「西南设计…净利润为1.02亿元，扣非净利润为…」: a parallel clause keeps the earlier one's subject
    # (「公司供应链业务收入逆势增长，收入1415亿元」: the company named before the part is no subject)
    parallel = prev is not None and prev[0] == sent_start and prev[1] is False \
        and not _whole_ends(_as_company(t[prev[2]:start], x.names, x.subs))
    opens = not earlier.strip() and _OPENS_ON_FIGURE.match(t, sent_start)
    return bool(topic > whole_at or parallel
                or (opens and (_named_subject(t, sent_start, x.names) or _of_part(t, sent_start, x.names)))
                or (not earlier.strip() and x.subs is not None and _of_subsidiary(t, sent_start, x.subs, x.names)))


def _qualifier(tail: str) -> str:
    """The words right before a metric that qualify it (a segment's name), with periods, tense words, other
    metrics and the company's own verbs taken out: two characters or more mark a part."""
    spans = periods(tail)
    tail = "".join(ch for i, ch in enumerate(tail) if not any(p.start <= i < p.end for p in spans))
    tail = re.split(r"[\s\d.%]+", _TENSE_WORDS.sub("", tail))[-1]  # the words right before the metric
    tail = _metric_words().sub("", tail)  # 「归母净利润和营业收入」: another metric is no qualifier
    tail = _ALL_OF_KIND.sub("", tail)  # 「公司控股电站累计完成发电量」, 「公司发布年报 2022年实现收入」
    return re.sub(r"[年月日度期内报告全单季前后上下半累计合共分别实现完成取得录得营业总的归母扣非后了和及与同比]", "", tail)


def _figure_given(t: str, m: re.Match[str], start: int) -> bool | None:
    """A company mention with ``figures``: None where its clause gives no amount or rate for it (a share, a
    multiple, no figure), False where it gives several parts' figures at once (「收入增速分别为」), else True."""
    end = next((c.start() for c in _CLAUSE.finditer(t, m.end())), len(t))
    after = t[m.end():end]
    if _SHARE_AFTER.match(after.lstrip()) or _TIMES_AFTER.match(after) or not _FIGURE.search(after):
        return None
    if _SEVERAL.search(after) and not _several_periods(t[start:end]):
        return False
    return True


def check_part_whole(query: str, source: str, names: Iterable[str], start: int = 0) -> Verdict | None:
    """``not_answered`` when the query asks the company's metric and the source states it only for a part;
    ``start``: only mentions from there on count (a sentence in its passage: the text before it gives context)."""
    q = norm(query)
    names = list(names)
    asked = read_ask(q).metrics
    for fam in _WHOLE_METRICS:
        if fam not in asked:
            continue
        if not all(metric_scopes(q, METRICS[fam], names)):
            continue  # the query itself asks a part (电池业务收入)
        scopes = metric_scopes(source, METRICS[fam], names, figures=True, since=start)
        if False in scopes and True not in scopes:
            return Verdict(Reason.NOT_ANSWERED, f"asks the company's {fam}; the source gives figures for it only for a "
                           "segment, subsidiary, customer, peer or the industry")
    return None


@rule("part_whole", SP, (Reason.NOT_ANSWERED,), "query, passage up to its sentence, asked names",
      "the company's metric asked where the source states it only for a part")
def _part_whole(r: Reading) -> Verdict | None:
    """A sentence is read in its passage, since a sentence that opens on its figure speaks of the subject of the
    one before (「顶立科技是…龙头。上半年实现净利润7671万元」)."""
    if not r.sentence:
        return check_part_whole(r.query, f"{r.passage}\n{r.title}", r.names)
    p, s = norm(r.passage), norm(r.sentence)
    at = p.find(s)
    if at < 0:
        return check_part_whole(r.query, r.sentence, r.names)
    return check_part_whole(r.query, p[:at + len(s)], r.names, start=at)


# 「国内商用车销量」, 「全球锂电池出货量」: a market's volume, named by its scope and its product (「国内销量」 alone,
# 「国内市场收入」 and 「海外业务」 are the company's own)
_MARKET = re.compile(rf"{_W.pattern('market_scope')}([\u4e00-\u9fffA-Za-z]{{1,8}}?)({_W.pattern('market_volume')})")
_OWN_MARKET = _W.compile("own_market_mark")  # 「国内市场收入」, 「海外业务销量」: the company's own


def check_market_as_company(query: str, source: str, names: Iterable[str]) -> Verdict | None:
    """``wrong_subject``: the query asks a market's volume (「银轮股份…国内商用车销量」) under the company's name
    where the source states it with no company in its clause: the industry's figure, not the company's."""
    # an industry's query (「光伏行业…国内新增装机量」) asks its own market: only a company's name counts
    names = [n for n in longest_first(names) if len(n) >= 2 and not re.search(r"(?:行业|产业|板块)$", n)]
    subs = _subsidiaries(names)
    q, s = _as_company(norm(query), names, subs), _as_company(norm(source), names, subs)
    for m in _MARKET.finditer(q):
        if _OWN_MARKET.search(m.group(1)) or "公司" not in q[:m.start()]:
            continue
        stated = list(re.finditer(re.escape(m.group()), s))
        clauses = [s[max((c.end() for c in _CLAUSE.finditer(s, 0, x.start())), default=0):x.start()] for x in stated]
        if stated and not any(_WHOLE_MARK.search(c) for c in clauses):
            return Verdict(Reason.WRONG_SUBJECT, f"asks 「{m.group()}」 of the company; the source states it as the "
                           "market's, not the company's")
    return None


@rule("market_as_company", SP, (Reason.WRONG_SUBJECT,), QSN,
      "a market's volume or index asked as the company's")
def _market_as_company(r: Reading) -> Verdict | None:
    return check_market_as_company(r.query, r.source, r.names)
