"""Listed short names that are also ordinary words, places or phrases: 机器人 and 太阳能 (words), 太平洋 and 连云港
(places), 新产业 and 线上线下 (phrases: 'new industries', 'online and offline').

Such a name names the listed company only where the text writes its stock code (「连云港（601008）」) or its full
name (「太平洋证券」, 「…股份有限公司」); the report's own title company is its subject whatever (the callers add it).
Two sources say which names are ordinary: jieba's dictionary, for words it tags as common words or places and uses
often (:data:`COMMON_TAGS`, :data:`COMMON_FREQ`), and, for what jieba lacks or tags as a person's name (连云港: nr),
the word list ``fincprg/finance/data/ordinary_names.jsonl`` (one name a line, with its reason and any full names).
Generation (whom a sentence or body is about) and verify (which companies a source names) read the same test.
"""
from __future__ import annotations

import functools
import re

from fincprg.wordlists import read_entries

# jieba tags of ordinary words (n, v, …) and places (ns); a short name the dictionary knows as one of these is
# ambiguous, when jieba counts it often enough to be an everyday word (a rare entry is mostly the company itself)
COMMON_TAGS = ("n", "v", "vn", "a", "an", "ad", "d", "l", "i", "ns")
COMMON_FREQ = 50
# a listed company's own full name: 「…股份有限公司」 (a subsidiary is a 有限公司: 「太平洋制罐有限公司」)
_FULL_SUFFIX = r"[\u4e00-\u9fff]{0,4}股份(?:有限)?公司"


@functools.lru_cache(maxsize=1)
def _listed() -> dict[str, tuple[str, ...]]:
    """The word list's names -> their full names."""
    return {e["word"]: tuple(e.get("full", ())) for e in read_entries("fincprg.finance", "ordinary_names.jsonl")}


def ordinary_word(name: str) -> bool:
    """Whether a listed short name is also an ordinary word, place or phrase (the word list, or jieba's dictionary)."""
    from fincprg.finance.lexicon import plain_tokenizer
    from fincprg.finance.words import pos_tags

    if name in _listed():
        return True
    return pos_tags().get(name) in COMMON_TAGS and (plain_tokenizer().FREQ.get(name) or 0) >= COMMON_FREQ


def full_named(name: str, text: str) -> bool:
    """Whether ``text`` writes the company's full name: one the word list gives, or the name with 股份有限公司."""
    return any(f in text for f in _listed().get(name, ())) or bool(re.search(re.escape(name) + _FULL_SUFFIX, text))


def ordinary_name(name: str, text: str, code: str | None) -> bool:
    """A listed short name that is an ordinary word, written in ``text`` without its ``code`` or full name, so it
    names no company there.

    Example:
        >>> ordinary_name("线上线下", "12月线上线下销售额分别+9.4%/+17.3%", "300959")
        True
        >>> ordinary_name("线上线下", "线上线下（300959）营收增长", "300959")
        False
    """
    if code and code in text:
        return False
    return (ordinary_word(name) and not full_named(name, text)) or runs_into_word(name, text)


def runs_into_word(name: str, text: str) -> bool:
    """Whether every mention of ``name`` in ``text`` runs into a longer word: its last character starts a common
    word of three or more (「数字人民币」: 人民币, not the company 数字人), or a 「中国X」 name is 中国 before a longer
    word (「中国动力电池装机量」: China's 动力电池, not 中国动力; 「中国银行卡」)."""
    from fincprg.finance.lexicon import plain_tokenizer

    freq = plain_tokenizer().FREQ
    ends = [m.end() for m in re.finditer(re.escape(name), text)]

    def runs_on(end: int) -> bool:
        if any((freq.get(name[-1] + text[end:end + j]) or 0) >= COMMON_FREQ for j in (2, 3)):
            return True
        return name.startswith("中国") and len(name) >= 4 and any(freq.get(name[2:] + text[end:end + j])
                                                                   for j in (1, 2))
    return bool(ends) and all(runs_on(e) for e in ends)


def ordinary_lead(phrase: str) -> str | None:
    """The ordinary word or place a query's leading phrase is (「太平洋」) or starts with, of the word list
    (「连云港港口」), or None."""
    if len(phrase) >= 3 and ordinary_word(phrase):
        return phrase
    return next((w for w in _listed() if phrase.startswith(w)), None)
