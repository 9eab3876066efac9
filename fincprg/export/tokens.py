"""Finance tokens of export's passages, cut once and held as int32 ids.

Two parts of export read a passage's tokens (:func:`fincprg.finance.tokenize`): the overlap of a query
with its positives (:mod:`fincprg.export.quality`) and the BM25 index of the hard-negative pool
(:mod:`fincprg.export.negatives`). jieba is most of export's time, so each passage is cut once for both;
and the tokens are kept as 4-byte ids over one vocabulary rather than as strings (~80 bytes each, the
shared tokenizer memo held them for every passage: hundreds of MB at 20k passages).

BM25 scores do not depend on how tokens are numbered (bm25s numbers its own vocabulary in set order),
so an index built from these ids scores every passage exactly as one built from the token strings.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from fincprg.finance import tokenize


def _cut_once(text: str) -> list[str]:
    return tokenize(text, cache=False)


class TokenIds:
    """Each distinct text's tokens, as an int32 array of ids into :attr:`vocab` (memoised by text)."""

    def __init__(self, cut: Callable[[str], list[str]] | None = None):
        self.vocab: dict[str, int] = {}
        self._cut = cut or _cut_once
        self._memo: dict[str, np.ndarray] = {}

    def ids(self, text: str) -> np.ndarray:
        got = self._memo.get(text)
        if got is None:
            v = self.vocab
            got = np.fromiter((v.setdefault(t, len(v)) for t in self._cut(text)), dtype=np.int32)
            self._memo[text] = got
        return got

    def units(self, text: str) -> set[int]:
        """The distinct tokens of a text (as ids)."""
        return set(self.ids(text).tolist())

    def query_units(self, tokens: Sequence[str]) -> set[int | str]:
        """Query tokens comparable with :meth:`units`: ids where the vocabulary knows them, else the token
        itself (a string never equals an id, and no passage cut so far has it)."""
        return {self.vocab.get(t, t) for t in tokens}

    def corpus(self, texts: Sequence[str]) -> BM25Corpus:
        """``texts`` (all cut by now) in the form ``bm25s.BM25.index`` takes: ids per document, vocabulary."""
        return BM25Corpus([self.ids(t) for t in texts], dict(self.vocab))  # bm25s adds "" to its vocab


class BM25Corpus:
    """bm25s's "object" corpus: ``.ids`` (token ids per document) and ``.vocab`` (token -> id).

    Documents are handed over one list at a time as bm25s walks them, so the whole corpus never exists
    as Python lists of ints."""

    def __init__(self, docs: list[np.ndarray], vocab: dict[str, int]):
        self.ids = _Docs(docs)
        self.vocab = vocab


class _Docs:
    def __init__(self, docs: list[np.ndarray]):
        self.docs = docs

    def __len__(self) -> int:
        return len(self.docs)

    def __iter__(self) -> Iterator[list[int]]:
        return (d.tolist() for d in self.docs)
