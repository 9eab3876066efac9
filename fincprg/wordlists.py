"""Word lists kept as data, not as regex source: a JSONL file in a package's ``data/`` folder holds one entry per
line (spaCy's pattern files do the same), and :func:`alternation` compiles entries into one regex alternation.

An entry has its ``word`` and, where a longer text holds the word without meaning it, the context it must not
stand in: ``not_before`` (a negative lookbehind: 进 before 出口 makes 进出口, no export) and ``not_after`` (a negative
lookahead: 定增 before 长, 速, 幅 or 量 is 稳定增长, no private placement). Words are matched longest first, so
定向增发 is taken whole rather than as 增发. A data file counts in the code hash of every stage whose modules sit
in its package (:mod:`fincprg.codehash`), so editing a list re-runs the stages that read it. This module sits
at the package root, in no package with a ``data/`` folder, so chunking and ingest read their own lists with it
without their code hash following finance's.

A fact several readers share is written once: a direction word's ``direction`` or a part-of-the-year word's
``part`` is one line, and its ``readers`` name the code that looks for it (their lists differ on purpose);
:func:`read_for` gives one reader its entries.

A package's named vocabularies (the words a question asks a change with, the marks of a segment, the words that open
a disclaimer) sit in its ``data/words.jsonl``: one line per word, whose ``lists`` name the vocabularies it belongs to,
so a word several vocabularies share is written once. :class:`WordLists` reads a vocabulary by its name.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any


def read_entries(package: str, name: str) -> list[dict[str, Any]]:
    """The entries of ``<package>/data/<name>``, in file order (read once per process)."""
    return list(_entries(package, name))


@functools.lru_cache(maxsize=None)
def _entries(package: str, name: str) -> tuple[dict[str, Any], ...]:
    text = resources.files(package).joinpath("data", name).read_text(encoding="utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


def read_for(package: str, name: str, reader: str, **where: str) -> list[dict[str, Any]]:
    """The entries of ``<package>/data/<name>`` whose ``readers`` list ``reader`` and whose fields equal ``where``
    (``direction="up"``), in file order."""
    return [e for e in _entries(package, name)
            if reader in e["readers"] and all(e.get(k) == v for k, v in where.items())]


def word_pattern(entry: dict[str, Any]) -> str:
    """One entry's word, escaped, with its ``not_before`` lookbehind and ``not_after`` lookahead."""
    before, after = entry.get("not_before"), entry.get("not_after")
    return (f"(?<!{before})" if before else "") + re.escape(entry["word"]) + (f"(?!{after})" if after else "")


def alternation(entries: Iterable[dict[str, Any] | str]) -> str:
    """The entries' word patterns (a bare string is a word without exceptions) joined longest word first, ties in
    file order."""
    full = [e if isinstance(e, dict) else {"word": e} for e in entries]
    return "|".join(word_pattern(e) for e in sorted(full, key=lambda e: len(e["word"]), reverse=True))


@dataclass(frozen=True)
class WordLists:
    """The named vocabularies of ``<package>/data/<name>``: each entry's ``lists`` name the vocabularies its word is
    in (issue 51: patterns as data).

    Example:
        >>> W = WordLists("fincprg.verify")
        >>> bool(W.compile("change_or_cause_ask").search("毛利率为何下降"))
        True
    """

    package: str
    name: str = "words.jsonl"

    def entries(self, vocabulary: str) -> list[dict[str, Any]]:
        """The entries of ``vocabulary``, in file order; a KeyError names the file when it has none."""
        found = [e for e in _entries(self.package, self.name) if vocabulary in e["lists"]]
        if not found:
            raise KeyError(f"{self.package.replace('.', '/')}/data/{self.name} has no word in list {vocabulary!r}")
        return found

    def words(self, vocabulary: str) -> tuple[str, ...]:
        """The words of ``vocabulary``, in file order."""
        return tuple(e["word"] for e in self.entries(vocabulary))

    def pattern(self, vocabulary: str) -> str:
        """``vocabulary`` as a non-capturing group of its :func:`alternation`, to be written into a larger pattern."""
        return f"(?:{alternation(self.entries(vocabulary))})"

    def compile(self, vocabulary: str, flags: int = 0) -> re.Pattern[str]:
        """``vocabulary``'s :func:`alternation`, compiled."""
        return re.compile(alternation(self.entries(vocabulary)), flags)
