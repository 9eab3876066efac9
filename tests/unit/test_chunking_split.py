"""Property tests for the chunker: bounded, lossless, never inside a number."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fincprg.chunking.split import cut, cut_spans, hard_max

NUMBER = re.compile(r"\d+(?:[.,]\d+)*%?")
ALPHABET = "营收同比增长公司亿元利润率万股" + "0123456789" + ".,%" + "。，；！？\n " + "abcXY"
numbers = st.builds(lambda a, b, pct: f"{a}.{b}{'%' if pct else ''}", st.integers(0, 99999),
                    st.integers(0, 99), st.booleans())
pieces = st.lists(st.one_of(st.text(ALPHABET, min_size=1, max_size=30), numbers,
                            st.builds(lambda a, b: f"{a:,}.{b}", st.integers(1000, 10**7), st.integers(0, 9))),
                  max_size=60)
targets = st.integers(8, 120)


def _nows(s: str) -> str:
    return re.sub(r"\s+", "", s)


@settings(max_examples=120, deadline=None)
@given(pieces, targets)
def test_spans_tile_text_and_respect_bound(parts, target):
    text = "".join(parts)
    spans = cut_spans(text, target)
    assert "".join(text[a:b] for a, b in spans) == text
    assert all(b - a <= hard_max(target) for a, b in spans)
    assert all(b > a for a, b in spans)


@settings(max_examples=120, deadline=None)
@given(pieces, targets)
def test_chunks_keep_all_nonspace_text_and_are_bounded(parts, target):
    text = "".join(parts)
    chunks = cut(text, target)
    assert _nows("".join(chunks)) == _nows(text)
    assert all(0 < len(c) <= hard_max(target) for c in chunks)


@settings(max_examples=120, deadline=None)
@given(pieces, targets)
def test_numbers_are_never_split(parts, target):
    text = "".join(parts)
    cuts = {a for a, _ in cut_spans(text, target)[1:]}
    for m in NUMBER.finditer(text):
        if m.end() - m.start() < hard_max(target) // 2:  # a token longer than the bound may be cut
            assert not any(m.start() < c < m.end() for c in cuts), (m.group(), text)


@settings(max_examples=100, deadline=None)
@given(st.text("营收同比增长公司亿元利润率", min_size=1, max_size=1500), targets)
def test_unpunctuated_text_is_still_bounded(text, target):
    chunks = cut(text, target)
    assert "".join(chunks) == text
    assert all(len(c) <= hard_max(target) for c in chunks)
    assert len(chunks) >= -(-len(text) // hard_max(target))


def test_cuts_prefer_sentence_ends():
    text = "第一句话说明营收增长。" * 30
    chunks = cut(text, 50)
    assert all(c.endswith("。") for c in chunks)
    assert all(len(c) <= 50 for c in chunks)


def test_number_at_the_limit_moves_whole():
    text = "营" * 98 + "46.51亿元，同比增长12.3%。"
    chunks = cut(text, 100)
    assert any("46.51亿元" in c for c in chunks) and any("12.3%" in c for c in chunks)


def test_passage_targets_about_500():
    sent = "公司2023年实现营业收入46.51亿元，同比增长39.7%，主要系新兴市场拓展。"
    chunks = cut(sent * 60, 500)
    assert all(300 <= len(c) <= 500 for c in chunks[:-1])
