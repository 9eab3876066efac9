"""The generator's speed-ups must not change what it computes."""
from __future__ import annotations

import pytest

from fincprg.finance import tokenize
from fincprg.generate import templates as T

TEXTS = [
    "星河科技2024Q1营业收入同比增长12.5%，达到1,234.5亿元；毛利率为43.6%，同比下降1.2个百分点。",
    "公司AI芯片DDR4产品放量，7nm工艺良率提升 , 海外订单 1,000,000 台。",
    "风险提示：下游需求不及预期；原材料价格波动。\n\n㐀䶵 鿖鿿 C++ & R&D #1 a.b-c_d",
    "",
    "   ",
]


@pytest.mark.parametrize("text", TEXTS)
def test_blockwise_tokens_equal_tokenize(text):
    assert T._tokens(text) == tokenize(text)


def test_blockwise_tokens_on_the_sample(sample_corpus):
    import json

    rows = [json.loads(x) for x in (sample_corpus / "reports.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    texts = [r.get("text") or r.get("content") or "" for r in rows]
    assert any(texts)
    for t in texts:
        assert T._tokens(t) == tokenize(t)


def _slow_candidate(tok: str, blocked: set[str]) -> bool:  # the formula before memoisation
    return (len(tok) >= 2 and tok not in T._GENERIC and tok not in blocked and not T._NUMBER_TOKEN.fullmatch(tok)
            and not T._DIRECTION_WORD.search(tok)
            and not any(tok in m or m in tok for m in T._ALL_METRIC_WORDS if len(m) >= 2)
            and not any(tok in b or b in tok for b in blocked if len(b) >= 2))


def test_memoised_candidate_filter_is_unchanged():
    blocked = {"星河科技", "毛利率", "2024年一季度", "x"}
    toks = set(tokenize(" ".join(TEXTS))) | {"营收增长", "收入", "星河", "ai芯片", "12.5%", "渠道", "x"}
    for t in sorted(toks):
        assert T._candidate(t, blocked) == _slow_candidate(t, blocked), t


def test_idf_table_fast_path_matches_line_parsing():
    from importlib import resources

    text = resources.files("jieba").joinpath("analyse", "idf.txt").read_text(encoding="utf-8")
    slow = dict(line.split(" ", 1) for line in text.splitlines() if " " in line)
    assert T._idf_table() == slow
