"""jieba tokenisation with fincprg's own finance user dictionary and stopword list.

One private ``jieba.Tokenizer`` is built lazily on first use (its dictionary load takes
about a second), so importing :mod:`fincprg.finance` stays cheap and other code that uses
the global ``jieba`` instance is not affected by our dictionary.
"""
from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import Any

from fincprg.wordlists import WordLists

log = logging.getLogger(__name__)

_LOCK = threading.Lock()
_TOKENIZER: Any = None
_ADDED: set[str] = set()
# A token is kept only if it holds at least one CJK character, letter or digit.
_CONTENT = re.compile(r"[\u4e00-\u9fff0-9A-Za-z]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# The words that frame a question rather than say what it asks, and punctuation (the rules rewrite drops them).
QUESTION = re.compile(WordLists("fincprg.finance").pattern("question_frame") + r"|[？?！!。，,；;：:]")  # data/words.jsonl
# Fillers around what a question asks: 「营收是多少？」, 「的营收为多少」 and 「营收能达到了多少」 all ask 「营收多少」,
# while the asking word itself (多少, 原因, 如何) stays, since it tells an amount from a cause.
_FILLER = re.compile(r"(?:是|为|有|能?达到了?|了)(?=多少)|的|[？?！!。，,；;：:\s]")


def _read_data(name: str) -> list[str]:
    text = resources.files("fincprg.finance").joinpath("data", name).read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


@lru_cache(maxsize=1)
def user_words() -> tuple[str, ...]:
    """The finance terms of ``fincprg/finance/data/userdict.txt`` (first column)."""
    return tuple(ln.split()[0] for ln in _read_data("userdict.txt"))


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """fincprg's small stopword list (function words and question words)."""
    return frozenset(_read_data("stopwords.txt"))


@lru_cache(maxsize=1)
def _default_dictionary() -> tuple[dict[str, int], int]:
    """jieba's own dictionary (word -> frequency, and their total), read once per process (about a second):
    every tokenizer below starts from it instead of reading it again."""
    import jieba

    jieba.setLogLevel(logging.WARNING)  # jieba logs "Building prefix dict..." at INFO
    tok = jieba.Tokenizer()
    tok.initialize()
    return tok.FREQ, tok.total


def _from_default(freq: dict[str, int]) -> Any:
    import jieba

    tok = jieba.Tokenizer()
    tok.FREQ, tok.total = freq, _default_dictionary()[1]
    tok.initialized = True  # what initialize() would have read, without reading it
    return tok


@lru_cache(maxsize=1)
def plain_tokenizer() -> Any:
    """A tokenizer with jieba's own dictionary and none of fincprg's words, whatever a build registered (jieba's
    global one, without its second read of the dictionary). It shares that dictionary with every tokenizer made
    here, so it refuses words (``add_word``, which ``del_word`` and ``suggest_freq`` call too)."""
    tok = _from_default(_default_dictionary()[0])
    tok.add_word = _shared_dictionary  # on the instance: jieba's methods look it up there
    return tok


def _shared_dictionary(*_: Any, **__: Any) -> None:
    raise TypeError("plain_tokenizer() shares jieba's dictionary with every fincprg tokenizer: adding a word would "
                    "change them all; make a tokenizer of your own (jieba.Tokenizer()) instead")


def _tokenizer() -> Any:
    global _TOKENIZER
    if _TOKENIZER is None:
        with _LOCK:
            if _TOKENIZER is None:
                # a copy: its words are added to it (rebuilt whenever use_words changes them, a copy takes 30 ms)
                tok = _from_default(dict(_default_dictionary()[0]))
                for w in user_words():
                    tok.add_word(w)
                for w in sorted(_ADDED):
                    tok.add_word(w)
                _TOKENIZER = tok
    return _TOKENIZER


def use_words(words: Iterable[str]) -> bool:
    """Make exactly ``words`` (e.g. a build's company names) the tokenizer's extra words.

    jieba otherwise splits 中国平安 into 中国/平安. jieba's ``add_word`` also shifts the totals that
    later frequency guesses use, so adding words one call at a time makes tokens depend on
    history. Instead the tokenizer is rebuilt (lazily, about a second) whenever the set changes,
    so tokens are a function of the word set alone: a build gives the same tokens whatever ran
    before it in the process.

    Returns:
        Whether the set changed.
    """
    new = {w.strip() for w in words if w and w.strip()}
    global _TOKENIZER
    with _LOCK:
        if new == _ADDED:
            return False
        _ADDED.clear()
        _ADDED.update(new)
        _TOKENIZER = None
    _cut.cache_clear()
    return True


def extra_words() -> frozenset[str]:
    """The current extra-word set (what :func:`use_words` last made it), e.g. to hand to another process."""
    with _LOCK:
        return frozenset(_ADDED)


def add_words(words: Iterable[str]) -> int:
    """Add words to the current extra-word set (see :func:`use_words`); returns how many were new."""
    before = len(_ADDED)
    use_words(_ADDED | {w.strip() for w in words if w and w.strip()})
    return len(_ADDED) - before


@lru_cache(maxsize=200_000)
def _cut(text: str) -> tuple[str, ...]:
    text = _THOUSANDS.sub("", text)  # 1,234 -> 1234, one token
    return tuple(t.lower() for t in _tokenizer().cut(text) if _CONTENT.search(t))


def tokenize(text: str, *, stopwords: bool = True, cache: bool = True) -> list[str]:
    """Split Chinese finance text into tokens.

    Uses jieba with fincprg's finance user dictionary; drops punctuation and whitespace,
    lower-cases Latin letters (ROE == roe) and, unless ``stopwords=False``, drops stopwords.

    Args:
        text: any text.
        stopwords: drop fincprg's stopwords.
        cache: keep the tokens in the shared memo (200k texts). ``False`` for texts cut once, such as
            every passage of a corpus: memoised, their tokens alone took hundreds of MB at 20k passages.

    Returns:
        The tokens, in order.
    """
    if not text:
        return []
    toks = _cut(text) if cache else _cut.__wrapped__(text)
    if not stopwords:
        return list(toks)
    sw = _stopwords()
    return [t for t in toks if t not in sw]


def _stopwords() -> frozenset[str]:
    return stopwords()


def question_core(text: str) -> str:
    """``text`` less the fillers of its question frame and its punctuation (:data:`_FILLER`); ``text`` itself
    when nothing is left."""
    return _FILLER.sub("", text) or text


# Words of the question frame, not of its subject.
FRAME = frozenset(
    "最新 情况 影响 变化 趋势 如何 哪些 什么 是否 原因 多少 怎样 进展 表现 方面 相关 研究 观点 了解 "
    "关于 有哪些 是什么 怎么 为何 主要 问题 分析 看法 前景 展望 走势 态势".split()
)
_NUMERIC = re.compile(r"^[\d.,%]+[a-z]?$|^\d{2,4}年?$")


def content_words(text: str) -> tuple[str, ...]:
    """A question's subject words: its tokens less the question frame (最新, 情况, 如何…), years, numbers and
    industry scopes (…行业)."""
    return tuple(dict.fromkeys(
        t for t in tokenize(text)
        if t not in FRAME and not _NUMERIC.match(t) and not t.endswith("行业") and t != "年" and len(t) > 1
    ))
