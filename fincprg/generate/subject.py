"""The company an untitled report is about, read from its body with the stock table (``finance.stock_table``).

A report without a title and without company metadata (a folder of report texts) still has a subject: its
issuer. Queries need one (「公司2020年营收是多少？」 asks about nobody), and the alternative the templates used to
fall back on, a name-like fragment cut from the text (「钢基材料」, 「代理保险」, a broker such as 「华英证券」), is
worse than no query. So the subject comes only from the listed companies the body names
(:meth:`fincprg.finance.stocks.StockTable.occurrences`), and only from the places where it names one the way a
report names its issuer. Each place is read in its clause first (:func:`role`): a company a body names as a
partner, customer, peer, investor or parent (「与德方纳米合资」, 「为长城汽车、上汽集团等客户供货」,
「比亚迪战略入股公司」, 「公司控股股东山东高速」) or a place written like a listed name (「鄂尔多斯项目二期」) is
not the issuer. Of the places left, the issuer is:

1. the company whose stock code the body writes (「亿纬锂能（300014）发布半年报」), unless another is named more
   often (a peer's code in a comparison); else
2. the one the opening names (the first :data:`OPENING` characters: 「九阳股份公布2023年一季报」); of several
   there, the first, unless another is named three times as often in the whole body; else
3. the one named at least :data:`MIN_DOMINANT` times and at least twice as often as any other, or at least
   twice where no other is named the way an issuer is; else
4. the only one named as the subject of a sentence about 公司 (「宁德时代作为龙头，公司市占率持续提升」).

Short names that are ordinary words or places (机器人, 太阳能, 太平洋, 连云港 — listed companies too:
:func:`fincprg.finance.ordinary.ordinary_name`) count only when a stock code or their full name stands beside
them, or (in the opening, where no other company is named) when they are named at least :data:`MIN_DOMINANT`
times.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Any

from fincprg.finance.ordinary import ordinary_name
from fincprg.finance.sections import CODE_AFTER
from fincprg.wordlists import WordLists

_W = WordLists("fincprg.generate")  # generate/data/words.jsonl

OPENING = 200  # characters: where a report names the company it is about
MIN_DOMINANT = 3
# who buys, holds or owns whom (收购, 子公司, 控股股东 …): read per place (NOT_ISSUER_BEFORE) and body-wide (OWNED_BEFORE)
# a company named right after these is someone the issuer deals with, buys, cites, owns or is owned by, or lists
# beside others (「我」: a name that starts inside 我国), or an investee the issuer trades (「上半年公司出售隆基绿能部分
# 股份」, 「投资隆基绿能的会计核算方法变更」)
_HOLDING = _W.pattern("holding")
NOT_ISSUER_BEFORE = re.compile(f"(?:{_W.pattern('not_issuer_before')}|{_HOLDING})$")
# the company after these is one the issuer holds, bought or is owned by: never the issuer, wherever else it is named
# (not 持有: 「控股股东将直接持有X」 is the parent holding the issuer), or one it is compared with as a peer
OWNED_BEFORE = re.compile(f"(?:{_HOLDING}|{_W.pattern('owned_before')})$")
# ... or right before these: a list goes on, it acts on 公司 as investor or parent, or it is a place or group, or a
# broker hosting the meeting a report sums up (「在国信证券举办的TMT策略会上，亿联网络领导…」)
NOT_ISSUER_AFTER = re.compile(
    rf"(?:{_W.pattern('not_issuer_after')}|[与和同向为对](?:本)?公司|(?:战略)?{_W.pattern('stake_verb')}(?:了)?(?:本)?公司"
    # a broker's branch in a block trade (「信达证券北京某路营业部」) is a desk, not a company spoken of
    r"|[\u4e00-\u9fff]{0,8}营业部)")
# ... or with 公司 as another party later in its sentence: an investor or partner (「TCL科技具有公司所在行业…资源，
# …与公司具有较高的协同效应」, 「…能够给公司带来…」)
COMPANY_AS_OTHER = re.compile(r"(?:与|给)(?:本)?公司|公司所在")
# 公司 opening a clause: the issuer as the subject (not 子公司, 母公司, 持有公司, 同行业公司 …)
_ISSUER_WORD = re.compile(r"(?:^|[，,；;：:\s])(?:本)?公司(?!股东)")


def role(text: str, o: Any) -> str:
    """``"issuer"`` when the occurrence ``o`` names a company the way a report names its own, else ``"other"``:
    a list item, a partner, customer or object after a preposition, an investor or parent, a place or group
    (the words are :data:`NOT_ISSUER_BEFORE` and :data:`NOT_ISSUER_AFTER`)."""
    if o.by_code:  # a code stands beside a name (「德方纳米（300769）」): read the name's place
        return "issuer"
    before = text[max(0, o.start - 8):o.start].rstrip(" 　")
    after = CODE_AFTER.sub("", text[o.end:o.end + 16].lstrip(" 　"))
    if NOT_ISSUER_BEFORE.search(before) or NOT_ISSUER_AFTER.match(after):
        return "other"
    stop = _SENTENCE_END.search(text, o.end)
    return "other" if COMPANY_AS_OTHER.search(text, o.end, stop.start() if stop else len(text)) else "issuer"


def body_subject(text: str, table: Any, broker: str | None = None) -> tuple[str, str | None] | None:
    """``(short name, code)`` of the listed company ``text`` is about, or None when it names none clearly.

    ``table``: a :class:`~fincprg.finance.stocks.StockTable`; ``broker``: the broker that wrote the report (its
    metadata), never its subject however often its header and legal text name it (「西南证券」).
    """
    if not text:
        return None
    t = unicodedata.normalize("NFKC", text)
    occ = [o for o in table.occurrences(t) if not _is_broker(table, o, broker)]
    shown = {m.key: m for m in table.mentions(t, occ)}
    named = [o for o in occ if not o.by_code]
    # a code right after a partner's name is the partner's (_code_of_other); a company the body says the issuer
    # buys, owns, is owned by or is compared with is nobody's issuer anywhere in it (「公司先后并购国星光电」, then
    # 「国星光电营收…」; 「对比民和股份」, then 「民和股份估值较高」)
    held = {o.key for o in named if OWNED_BEFORE.search(t[max(0, o.start - 8):o.start].rstrip(" 　"))
            and not t.startswith("集团", o.end)}  # 「母公司中国黄金集团」 is the group, not the listed 中国黄金
    own = [o for o in occ if role(t, o) == "issuer" and not _code_of_other(o, named, t) and o.key not in held]
    counts: Counter[str] = Counter(o.key for o in own)
    first: dict[str, int] = {}
    for o in own:
        first.setdefault(o.key, o.start)
    ranked = sorted(counts, key=lambda k: (-counts[k], first[k]))  # most named first, ties: first named

    def pick(key: str) -> tuple[str, str | None]:
        return shown[key].name, shown[key].code

    # a code marks the issuer unless another company is named more often (a peer's code beside a comparison)
    by_code = [k for k in ranked if any(o.key == k and o.by_code for o in own)]
    if by_code and counts[by_code[0]] == counts[ranked[0]]:
        return pick(by_code[0])
    # only now: ordinary_name reads jieba's part-of-speech table (about a second, before generate's first request)
    plain = [k for k in ranked if not ordinary_name(k, t, shown[k].code)]
    opening = [k for k in plain if first[k] < OPENING] or [
        k for k in ranked if first[k] < OPENING and counts[k] >= MIN_DOMINANT]
    if opening:
        lead = min(opening, key=lambda k: first[k])
        # the issuer leads the text, unless the lead names a peer (「…推动上海银行…」) the body hardly repeats
        return pick(opening[0] if counts[opening[0]] >= 3 * counts[lead] else lead)
    if plain:
        top = plain[0]
        second = max((counts[k] for k in ranked if k != top), default=0)
        # named often and far more than any other, or twice where no other is named as an issuer is
        if (counts[top] >= MIN_DOMINANT and counts[top] >= 2 * second) or (counts[top] >= 2 and second == 0):
            return pick(top)
    # (the weakest reading: not for a company the body also names as someone else's, 「供应包括三星SDI、LG、宁德时代…」)
    listed_other = {o.key for o in occ if not o.by_code and role(t, o) == "other"}
    about = {o.key for o in own if o.key in plain and o.key not in listed_other and _about_company(t, o)}
    return pick(next(iter(about))) if len(about) == 1 else None


def _is_broker(table: Any, o: Any, broker: str | None) -> bool:
    """An occurrence that names the report's broker."""
    from fincprg.finance.reportkind import same_broker

    return bool(broker) and same_broker(o.key, broker)


def _code_of_other(o: Any, named: list[Any], text: str) -> bool:
    """A code right after a name the clause reads as someone else's (「与德方纳米（300769）合资」)."""
    if not o.by_code:
        return False
    prev = next((n for n in reversed(named) if n.end <= o.start), None)
    return bool(prev and o.start - prev.end <= 3 and role(text, prev) == "other")


_SENTENCE_END = re.compile(r"[。！？；!?;\n]")  # the text is NFKC-normalised: ；becomes ;


def _about_company(text: str, o: Any) -> bool:
    """The name opens its clause and its sentence goes on about 公司 (「宁德时代作为龙头，公司市占率…」)."""
    before = text[max(0, o.start - 12):o.start]
    opens = not before or bool(re.search(r"(?:^|[。！？；!?;，,：:\n\s])(?:我们(?:预计|认为|判断))?\s*$", before))
    stop = _SENTENCE_END.search(text, o.end)
    rest = text[o.end:stop.start() if stop else len(text)]
    return opens and bool(_ISSUER_WORD.search(rest))
