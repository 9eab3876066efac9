"""Is a phrase fit to stand in a question? Whole dictionary words, ending in a noun, not cut from its source.

The offline templates bound their phrases by the sentence's own marks (:mod:`fincprg.generate.phrases`), so
the wording does not follow the jieba dictionary the BM25 baseline shares. A phrase found that way may still
be a fragment (「G智能手机」 from 「5G智能手机」), end in a verb (「国产替代推进」) or hold a word the
dictionary lacks (「医美」, which the tokenizer would cut into characters). Such a phrase is checked here
*after* it was chosen and dropped when it fails: the tokenizer filters, it does not pick the words. The same
checks are the ``no_cut_token`` and ``content_words`` rules of :mod:`fincprg.generate.quality`. The module sits
on the finance floor because the issuer reading (:mod:`fincprg.finance.stocks`) and the topics' intent templates
read it too.
"""
from __future__ import annotations

import re
from functools import lru_cache

_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN_NUM = re.compile(r"^[A-Za-z0-9.%+\\-]+$")
NOUN_TAGS = ("n", "vn", "an", "j", "eng", "s")  # jieba part-of-speech tags read as nouns (s: 海外, 国内)


def boundaries(text: str) -> frozenset[int]:
    """Offsets in ``text`` where fincprg's tokenizer starts or ends a token."""
    return _boundaries(text)


@lru_cache(maxsize=4096)
def _boundaries(text: str) -> frozenset[int]:
    from fincprg.finance.lexicon import _tokenizer

    cuts, pos = {0}, 0
    for tok in _tokenizer().cut(text):
        pos += len(tok)
        cuts.add(pos)
    return frozenset(cuts)


@lru_cache(maxsize=1)
def pos_tags() -> dict[str, str]:
    """jieba's dictionary part-of-speech tags (reading them takes about a second)."""
    import jieba.posseg

    return jieba.posseg.dt.word_tag_tab


def words(phrase: str) -> list[str]:
    from fincprg.finance.lexicon import _tokenizer

    return [w for w in _tokenizer().cut(phrase) if w.strip()]


def known(word: str) -> bool:
    """A word of the tokenizer's dictionary (a word it had to guess has no frequency)."""
    from fincprg.finance.lexicon import _tokenizer

    return bool(_LATIN_NUM.match(word)) or bool(_tokenizer().FREQ.get(word))


def is_noun(word: str) -> bool:
    """jieba tags it as a noun, or it is one of fincprg's finance terms (added without a tag)."""
    if _LATIN_NUM.match(word):
        return True
    tag = pos_tags().get(word)
    return tag is None or tag.startswith(NOUN_TAGS)


def aligned(phrase: str, source: str, cuts: frozenset[int] | None = None) -> bool:
    """``phrase`` occurs in ``source`` starting and ending on the source's token boundaries (``cuts``:
    ``boundaries(source)``, when the caller already has them)."""
    cuts = boundaries(source) if cuts is None else cuts
    i = source.find(phrase)
    while i >= 0:
        if i in cuts and i + len(phrase) in cuts:
            return True
        i = source.find(phrase, i + 1)
    return False


def sound(phrase: str, source: str | None = None) -> bool:
    """Whole dictionary words ending in a noun, and (given ``source``) not cut out of a source token."""
    if not phrase or not _CJK.search(phrase):
        return bool(phrase)
    ws = words(phrase)
    if not ws or not all(known(w) for w in ws) or not is_noun(ws[-1]):
        return False
    return source is None or aligned(phrase, source)
