"""Word lists kept as data, not as regex source: a JSONL file in a package's ``data/`` folder holds one entry per
line (spaCy's pattern files do the same), and :func:`alternation` compiles entries into one regex alternation.

An entry has its ``word`` and, where a longer text holds the word without meaning it, the context it must not
stand in: ``not_before`` (a negative lookbehind: 进 before 出口 makes 进出口, no export) and ``not_after`` (a negative
lookahead: 定增 before 长, 速, 幅 or 量 is 稳定增长, no private placement). Words are matched longest first, so
定向增发 is taken whole rather than as 增发. A data file counts in the code hash of every stage whose modules sit
in its package (:mod:`fincprg.codehash`), so editing a list re-runs the stages that read it.

A fact several readers share is written once: a direction word's ``direction`` or a part-of-the-year word's
``part`` is one line, and its ``readers`` name the code that looks for it (their lists differ on purpose);
:func:`read_for` gives one reader its entries.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
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
