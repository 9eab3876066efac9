"""Rule checks a finance reader's first look makes at a generated query, and the benchmark's lexical bias.

The rules (used by ``eval/bench_quality.py``; each is a plain function of the query and its source):

- ``no_phrase_list``: the query holds no 、 (key phrases glued together with 、 are not a question);
- ``no_cut_token``: every stretch of at least two CJK characters the query copies from its source
  starts and ends on a token boundary of the source as fincprg's jieba tokenizer cuts it (「率较科信」
  from 「毛利率较科信」 cuts 毛利率); a copied stretch may carry one function character of the
  question frame (的, 在 ...) at either end; the question's own vocabulary (periods, metric names,
  directions, frame words such as 原因/多少) and the names given as subjects are not copies;
- ``content_words``: the copied content is made of words of the tokenizer's dictionary (no word jieba had
  to guess, such as 「以收」 or 「比仅」) and its last word is a noun (jieba's dictionary tags; fincprg's
  finance terms count as nouns), so 「高于的毛利」 or 「借助产能」 fail;
- ``period_in_source``: each period the query names is named by its source (same year, same part of
  the year; a forecast is asked as a forecast only where the source forecasts that year, and an
  actual only where the source gives that year as more than a forecast). For topic-level queries a
  year inside the span of the source years also counts (a topic covers a range of dates);
- ``period_placed``: the first period stands where Chinese puts it: at the start, right after the
  company or subject the query names, or after 预计/在/截至;
- ``subject_named``: the query names a company (the report's, or one the extractor finds), a stock
  code, or an industry term of fincprg's CITIC lexicon.

``lexical_bias`` measures how much of the benchmark's lexical signal depends on the tokenizer the
generator shares with the BM25 baseline: BM25 nDCG@10 over the direct qrels with fincprg's jieba
tokens against the same BM25 over character bigrams, and the share of the queries' content tokens
found verbatim in their own passage.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from fincprg.finance.words import aligned

RULES = ("no_phrase_list", "no_cut_token", "content_words", "period_in_source", "period_placed", "subject_named")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_FRAME_EDGE = set("的在和与及了是为对将有于把被")
_LEAD = re.compile(r"^(?:预计|市场预计|在|截至|截止)")


def _boundaries(source: str) -> frozenset[int]:
    from fincprg.finance.words import boundaries

    return boundaries(source)


# The question's own words: not copies of the source, whatever the source writes around them.
_FRAME = tuple("""
同比 环比 原因 是什么 是多少 多少 如何 情况 变化 风险 面临 哪些 预计 目标价 评级 投资评级 前景 表现 主要 影响 趋势 幅度
为什么 达到 分别 进展 有什么 怎么样 怎样 能否 是否 哪些方面 预测 盈利预测 展望 驱动 因素 相比 较上年 上年 同期 增速 水平
规模 占比 行业 公司 最新 研究观点 了解 关注 需要 投资 投资价值 机构 给予 授予 对象 价格 方案 内容 计划 项目 资产 客户 市场
拓展 渠道 建设 门店 扩张 新品 推出 研发 投入 需求 下游 政策 受到 竞争 格局 海外 出口 业务 收购 并购 回购 分红 定增 募集
资金 用于 投产 扩产 中标 提价 涨价 降价 成本 原材料 压力 盈利 经营 疫情 估值 合理 当前 何时 新项目 股份 股权激励 发展 布局
有何 对业绩 业绩 表现 导致 什么 哪家 扣非 税后 预期 市场预期
符合预期 不及预期 不达预期 低于预期 超预期 超出预期 好于预期 高于预期 略低于预期
""".split())
# 符合预期/不及预期 ... are verdicts against expectations, the finance vocabulary of direction like 增长/下降:
# 「业绩是否符合预期」 or 「需求不及预期的风险」 copy no content with them (jieba tags 符合/不及 as verbs).


@lru_cache(maxsize=1)
def _vocabulary() -> re.Pattern[str]:
    from fincprg.finance.extract import _DOWN, _UP, METRIC_SYNONYMS

    words = {w for syns in METRIC_SYNONYMS.values() for w in syns} | set(_DOWN) | set(_UP) | set(_FRAME)
    return re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))


def _blocked(query: str, names: Iterable[str]) -> str:
    """``query`` with its own vocabulary (periods, metrics, directions, question frame) and the names it
    was given blanked out, so that only copied content is left."""
    from fincprg.finance.extract import _PERIOD_RE

    out = query
    for n in sorted({n for n in names if n}, key=lambda n: (-len(n), n)):
        out = out.replace(n, "\x00" * len(n))
    for rx in (_PERIOD_RE, _vocabulary()):
        out = rx.sub(lambda m: "\x00" * len(m.group(0)), out)
    return out


def _copies(query: str, source: str, min_cjk: int = 2, names: Iterable[str] = ()) -> list[tuple[int, int]]:
    q = _blocked(query, names)
    out, i = [], 0
    while i < len(q):
        j = i
        while j < len(q) and q[j] != "\x00" and q[i:j + 1] in source:
            j += 1
        if j > i and len(_CJK.findall(q[i:j])) >= min_cjk:
            out.append((i, j))
        i = max(j, i + 1)
    return out


def copied_spans(query: str, source: str, min_cjk: int = 2, names: Iterable[str] = ()) -> list[str]:
    """Stretches of ``query`` copied from ``source``: read left to right, each the longest substring
    found in the source (vocabulary and ``names`` excluded), kept when it has ``min_cjk`` CJK characters."""
    return [query[i:j] for i, j in _copies(query, source, min_cjk, names)]


def cut_spans(query: str, source: str, names: Iterable[str] = ()) -> list[str]:
    """Copied stretches of ``query`` that cut a jieba token of ``source`` (see ``no_cut_token``).

    A stretch next to a vocabulary word the source also writes there (利息 + 收入 from 「利息收入」) is
    checked together with that word."""
    cuts = _boundaries(source)
    q = _blocked(query, names)
    bad = []
    for i, j in _copies(query, source, names=names):
        lo, hi = i, j
        while lo > 0 and q[lo - 1] == "\x00":
            lo -= 1
        while hi < len(q) and q[hi] == "\x00":
            hi += 1
        options = [query[a:b] for a in (i, lo) for b in (j, hi)]
        span = query[i:j]
        if span[0] in _FRAME_EDGE:
            options.append(span[1:])
        if span[-1] in _FRAME_EDGE:
            options += [o[:-1] for o in list(options)]
        if not any(len(_CJK.findall(o)) < 2 or (o in source and aligned(o, source, cuts)) for o in options):
            bad.append(span)
    return bad


_LATIN_NUM = re.compile(r"^[A-Za-z0-9.%+\\-]+$")


def odd_words(spans: Sequence[str], names: Iterable[str] = ()) -> list[str]:
    """Words of the copied ``spans`` that break ``content_words``: guessed words, and a last word that is
    not a noun."""
    from fincprg.finance.lexicon import _tokenizer
    from fincprg.finance.words import is_noun

    tok = _tokenizer()
    names = {n for n in names if n}
    bad, last = [], None
    for span in spans:
        # one function character of the question frame at either end (「特斯拉的」, 「总额为」) is no content,
        # as in no_cut_token
        if len(span) > 2 and span[-1] in _FRAME_EDGE:
            span = span[:-1]
        if len(span) > 2 and span[0] in _FRAME_EDGE:
            span = span[1:]
        for w in tok.cut(span):
            if not w.strip() or _LATIN_NUM.match(w) or w in names:
                last = None if w.strip() else last
                continue
            if not tok.FREQ.get(w) and not any(w in n for n in names):
                bad.append(w)
            last = w
    if last is not None and last not in bad and not is_noun(last):
        bad.append(last)
    return bad


def _period_ok(q, src: frozenset, forecast_years: set[int], span: tuple[int, int] | None) -> bool:
    years = {p.year for p in src if p.year}
    if q.year is None:
        return any(p.part == q.part for p in src)
    if q.year not in years:
        return bool(span and span[0] <= q.year <= span[1])
    same = [p for p in src if p.year == q.year]
    actual = [p.year for p in src if p.year and not p.forecast]
    # a part the source names without a year (「公布2020年三季度报告，前三季度实现营收…」) is read, as a
    # reader reads it, in the latest actual year the source names
    bare = any(p.part == q.part and p.year is None for p in src) and actual and q.year == max(actual)
    if q.part and not bare and not any(p.part == q.part for p in same):
        return False
    if q.forecast:
        return q.year in forecast_years
    return any(not p.forecast for p in same)


def check_query(query: str, source: str, *, subjects: Iterable[str] = (), year_span: tuple[int, int] | None = None,
                date_years: Sequence[int] = ()) -> dict[str, bool]:
    """One bool per rule of :data:`RULES` for ``query`` against its ``source`` text.

    Args:
        subjects: names that count as the query's subject (the report's company ...).
        year_span: topic-level queries: the span of years the topic's reports cover.
        date_years: years the source names through its dates (topic-level), as actual periods.
    """
    from fincprg.finance import Period, extract
    from fincprg.finance.industries import lexicon
    from fincprg.finance.reporting_period import without_reference_years

    from fincprg.finance.compare import periods

    qf = extract(without_reference_years(query))
    sf = extract(without_reference_years(source))
    qperiods = periods(qf, query)  # 「预计…2024年」 asks for a forecast
    if re.search(r"预测|预计", query):  # 「2021-2023年的盈利预测是多少？」: a one-clause question asks a forecast
        qperiods = frozenset(Period(p.year, p.part, True) if p.year else p for p in qperiods)
    src = sf.periods | {Period(y, None, False) for y in date_years}
    forecast_years = {p.year for p in src if p.forecast and p.year}
    if re.search(r"预计|预测|预期|展望|[EF](?![A-Za-z])", source):  # 预计2022-2024年…: every named year may be forecast
        forecast_years |= {p.year for p in src if p.year}
    names = [s for s in subjects if s] + sorted(qf.companies) + sorted(qf.codes)
    first = _first_period_at(query)
    placed = True
    if first is not None:
        head = _LEAD.sub("", query[:first])
        placed = head == "" or any(head.endswith(n) for n in names) or head.endswith("行业")
    return {
        "no_phrase_list": "、" not in query,
        "no_cut_token": not cut_spans(query, source, names),
        "content_words": not odd_words(copied_spans(query, source, names=names), names),
        "period_in_source": all(_period_ok(p, src, forecast_years, year_span) for p in qperiods),
        "period_placed": placed,
        "subject_named": bool(qf.companies or qf.codes or any(n in query for n in names)
                              or any(w in query for w in _industry_terms(lexicon))),
    }


@lru_cache(maxsize=1)
def _industry_terms(lexicon) -> tuple[str, ...]:  # noqa: ANN001 - the lexicon function itself
    return tuple(sorted({w for ws in lexicon().values() for w in ws if len(w) >= 2}, key=len, reverse=True))


def _first_period_at(query: str) -> int | None:
    from fincprg.finance.extract import _PERIOD_RE

    for m in _PERIOD_RE.finditer(query):
        g = m.groupdict()
        if g["y"] and not (g["e1"] or g["nian"] or g["ypart"] or g["e2"]):
            continue  # an amount, not a year (extract() skips it too)
        return m.start()
    return None


def lexical_bias(queries: Mapping[str, str], corpus: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]],
                 *, k: int = 10) -> dict[str, float]:
    """BM25 nDCG@``k`` with fincprg's jieba tokens vs character bigrams, and query-token overlap.

    Returns ``{"bm25_jieba", "bm25_bigram", "gap", "token_overlap", "bigram_overlap", "n"}``: a gap near 0
    means the lexical signal does not depend on sharing the generator's tokenizer; ``token_overlap`` is the
    mean share of a query's content tokens (jieba) found among its relevant passage's tokens, and
    ``bigram_overlap`` the same over CJK character bigrams.
    """
    import bm25s
    import numpy as np

    from fincprg.evaluate.metrics import evaluate
    from fincprg.finance import tokenize

    def bigrams(text: str) -> list[str]:
        chars = [c for c in text.lower() if c.isalnum()]
        return [a + b for a, b in zip(chars, chars[1:])]

    ids = list(corpus)
    out: dict[str, float] = {"n": float(len(queries))}
    for name, tok in (("jieba", tokenize), ("bigram", bigrams)):
        model = bm25s.BM25()
        model.index([tok(corpus[d]) or [""] for d in ids], show_progress=False)
        run: dict[str, dict[str, float]] = {}
        for qid, text in queries.items():
            tids = model.get_tokens_ids(tok(text))
            if not tids:
                run[qid] = {}
                continue
            s = np.asarray(model.get_scores_from_ids(tids))
            top = np.argsort(-s)[:k]
            run[qid] = {ids[i]: float(s[i]) for i in top if s[i] > 0}
        out[f"bm25_{name}"] = round(evaluate({q: dict(qrels[q]) for q in queries if q in qrels}, run)["nDCG@10"], 4)
        shares = []
        for qid, text in queries.items():
            rel = [d for d, r in qrels.get(qid, {}).items() if r > 0 and d in corpus]
            qt = set(tok(text))
            if rel and qt:
                dt = set(tok(corpus[rel[0]]))
                shares.append(len(qt & dt) / len(qt))
        out["token_overlap" if name == "jieba" else "bigram_overlap"] = \
            round(sum(shares) / len(shares), 4) if shares else 0.0
    out["gap"] = round(out["bm25_jieba"] - out["bm25_bigram"], 4)
    return out
