"""Whether a source text STATES the fact a question asks (used by :func:`fincprg.finance.compare.source_conflict`).

Identical questions generated from two passages of one report are the same question only when both
passages state the asked fact and the facts agree; a passage that merely mentions the asked word has
nothing to agree on. A source states:

- a metric question's fact when a clause about the metric gives a figure of the asked kind
  (:func:`asked_kinds`: an amount, a growth rate, a share; 「表现如何」 takes any), outside commitment,
  conditional and prescriptive sentences (:data:`NOT_STATING`), and, when the question names no business
  segment, in a clause that is not about one (「线上渠道营业收入3亿元」 does not give the total);
- an event question's fact (分红, 回购, 增持, 中标 …, :data:`ASKED_AND_STATED`) when a sentence names the event
  outside its asides and quoted titles, with specifics (an amount, a count, a date; an amount or count
  when the question asks 多少), is no commitment, condition, policy, risk note or
  shareholder table, and names the asked year when it names years (a 2017 dividend plan does not
  answer a 2019 question).

An open question that asks neither (「主要客户有哪些」) is stated by a sentence naming its subject that is
none of those (:func:`states_subject`; the mining veto finds the subject words).
"""
from __future__ import annotations

import re
from functools import lru_cache

from fincprg.finance.clauses import SENTENCE, metric_clauses
from fincprg.wordlists import WordLists, alternation, read_entries

_W = WordLists("fincprg.finance")  # finance/data/words.jsonl
# Sentences that promise, condition, prescribe or warn instead of reporting what happened (若干 is 'several', 若若 no
# condition twice, 无须 'need not').
NOT_STATING = re.compile(_W.pattern("not_stating") + r"|(?<!若)若(?!干)|(?<!无)须")
# An event is not stated by a risk note, a policy or rule, or a shareholder table either.
NOT_STATING_EVENT = _W.compile("not_stating_event")
# Event questions (fincprg/finance/data/stated_events.jsonl): per event, the words a question asks it by and the
# words a stating sentence must name, in file order (the first event a question asks is the one read)
ASKED_AND_STATED: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(alternation(e["asked"])), re.compile(alternation(e["stated"])))
    for e in read_entries("fincprg.finance", "stated_events.jsonl"))
# Specifics of an event: an amount or count with its unit, or a date.
_AMOUNT = re.compile(r"\d+(?:\.\d+)?\s*[万亿]?[元股家个项笔份人名吨%]")
_SPECIFIC = re.compile(_AMOUNT.pattern + r"|\d{1,2}月\d{1,2}日")
_ASIDE = re.compile(r"（[^（）]*）|\([^()]*\)|《[^《》]*》")
_YEAR = re.compile(r"(?<!\d)(19[89]\d|20[0-4]\d)(?!\d)")

# the words that make a figure asked or stated a change (growth), a share, or anything (「表现如何」)
_GROWTH_KIND = _W.compile("growth_kind")
_SHARE_KIND = re.compile(_W.pattern("share_kind") + r"|占.{0,8}比")
_ANY_KIND = _W.compile("any_kind")
# A clause about a business segment rather than the whole company.
SEGMENT = _W.compile("segment_word")


def asked_kinds(question: str) -> frozenset[str]:
    """What figure a metric question asks: ``growth``, ``share``, ``value`` (an amount or the ratio
    itself), or ``any`` (「…表现如何」)."""
    out = set()
    if _GROWTH_KIND.search(question):
        out.add("growth")
    if _SHARE_KIND.search(question):
        out.add("share")
    if not out:
        out.add("any" if _ANY_KIND.search(question) and "多少" not in question else "value")
    return frozenset(out)


def _is_ratio(metric: str) -> bool:
    return metric.endswith("率") or metric.upper() in {"ROE", "ROA", "ROIC", "PE", "PB", "PS", "EPS"} \
        or metric.endswith("比")


def _kind(number: object, clause: str, metric: str) -> str:
    unit = (getattr(number, "unit", None) or "").strip()
    if unit in ("pct", "个百分点"):
        return "growth"
    if unit != "%":
        return "value"
    if _GROWTH_KIND.search(clause):
        return "growth"
    if _SHARE_KIND.search(clause):
        return "share"
    return "value" if _is_ratio(metric) else "growth"


@lru_cache(maxsize=65_536)
def stated_kinds(text: str, metric: str, segment_ok: bool = False) -> frozenset[str]:
    """Kinds of figure (:func:`asked_kinds`) ``text`` gives for ``metric`` in stating sentences: the
    clauses naming the metric and those following it until a clause names another metric (as
    :func:`fincprg.finance.compare.metric_numbers`). ``segment_ok``: the question names a segment, so
    segment clauses count."""
    out: set[str] = set()
    for sentence in SENTENCE.split(text or ""):
        if NOT_STATING.search(sentence):
            continue
        for clause, f in metric_clauses(sentence, metric, None if segment_ok else _total):
            out.update(_kind(n, clause, metric) for n in f.numbers if n.unit)
    return frozenset(out)


def _total(clause: str, synonym: str) -> bool:
    """A qualifier before the metric word in its clause names a segment: not the total."""
    return not SEGMENT.search(clause[:clause.index(synonym)])


def states_metric(text: str, metric: str, question: str) -> bool:
    """Whether ``text`` gives the figure ``question`` asks for ``metric``."""
    have = stated_kinds(text, metric, bool(SEGMENT.search(question)))
    want = asked_kinds(question)
    return bool(have) if "any" in want else want <= have


def event_of(question: str) -> re.Pattern[str] | None:
    """What a stating sentence must name when ``question`` asks about an event (None: not an event question)."""
    return next((s for q, s in ASKED_AND_STATED if q.search(question)), None)


@lru_cache(maxsize=65_536)
def _states_event(text: str, pattern: str, years: frozenset[int], count: bool = False) -> bool:
    event = re.compile(pattern)
    for sentence in SENTENCE.split(text or ""):
        # an aside or a document title (「（不扣除已回购的股份…）」, 「《回购股份报告书》」) does not report the event
        main = _ASIDE.sub("", sentence)
        if not event.search(main) or NOT_STATING.search(sentence) or NOT_STATING_EVENT.search(sentence):
            continue
        if not (_AMOUNT.search(main) if count else _SPECIFIC.search(main)):
            continue
        named = {int(y) for y in _YEAR.findall(sentence)}
        if years and named and not named & years:  # another year's event
            continue
        return True
    return False


def states_event(text: str, question: str, years: frozenset[int] = frozenset()) -> bool:
    """Whether ``text`` states the event ``question`` asks about (True when it asks no event)."""
    event = event_of(question)
    # 「回购了多少股份」 asks an amount or a count: a date alone does not answer it
    return event is None or _states_event(text, event.pattern, frozenset(years), bool(re.search(r"多少|几", question)))


@lru_cache(maxsize=65_536)
def states_subject(text: str, words: tuple[str, ...]) -> bool:
    """Whether some sentence of ``text`` names every subject word of an open question (「主要客户有哪些」:
    客户) and is no commitment, condition, risk note, policy or shareholder table (a marker that is itself
    a subject word, 「政策」 for a question about policies, does not count)."""
    for sentence in SENTENCE.split(text or ""):
        if not all(w in sentence for w in words) or NOT_STATING.search(sentence):
            continue
        if any(m.group() not in words for m in NOT_STATING_EVENT.finditer(sentence)):
            continue
        return True
    return False
