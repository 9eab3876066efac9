"""Hard negatives that are not hidden positives: rank window, margins to the positive's score, max score,
and a reranker that rescores candidates (FlagEmbedding#850, sentence-transformers' mine_hard_negatives)."""
from __future__ import annotations

import pytest

from fincprg.config import load_config
from fincprg.export.negatives import Guard, bm25_negatives, card_lines, make_guard, mine_negatives
from tests.unit.test_mine_rerankers import tiny_cross_encoder  # noqa: F401 - a fixture

POSITIVE = "贵州茅台2023年营业收入增长，主要原因是直销渠道放量。"
HIDDEN = "贵州茅台2023年营业收入增长的原因是直销渠道放量和提价。"  # answers the query, but is unlabelled
TEXTS = [POSITIVE, HIDDEN, "五粮液2023年营业收入增长，系列酒表现较好。", "宁德时代2023年毛利率下降，原材料价格波动。",
         "招商银行2023年净息差收窄，营业收入下降。", "比亚迪2023年新能源汽车销量增长。"]
QUERY = ["贵州茅台2023年营业收入增长的原因"]


def test_without_guards_the_hidden_positive_is_the_hardest_negative():
    assert bm25_negatives(QUERY, [{0}], TEXTS, 3) == [[1, 2, 5]]


@pytest.mark.parametrize("guard, reason", [
    (Guard(range_min=1), "range"),
    (Guard(margin=0.1), "margin"),  # BM25: positive 1.53, hidden 1.46, next 0.40
    (Guard(relative_margin=0.5), "relative_margin"),
    (Guard(max_score=0.5), "max_score"),
])
def test_each_guard_keeps_the_hidden_positive_out(guard, reason):
    assert bm25_negatives(QUERY, [{0}], TEXTS, 3, guard=guard) == [[2, 5, 4]]
    assert guard.dropped[reason] == 1


def test_a_margin_compares_with_a_positive_outside_the_pool():
    # the positive is a test-split passage: not a candidate, but its score still sets the margin
    guard = Guard(margin=0.1)
    got = bm25_negatives(QUERY, [set()], TEXTS[1:], 3, positive_texts=[{POSITIVE}], guard=guard)
    assert got == [[1, 4, 3]] and guard.dropped["margin"] == 1  # indices into TEXTS[1:]


class _Judge:
    """A stand-in reranker: it knows which passages answer the query."""

    def score(self, pairs):
        return [0.99 if "茅台" in b else 0.1 + 0.01 * len(b) / 10 for _, b in pairs]


def test_a_reranker_rescores_and_its_margin_drops_the_hidden_positive():
    guard = Guard(reranker=_Judge(), margin=0.2)
    got = bm25_negatives(QUERY, [{0}], TEXTS, 2, guard=guard)
    assert 1 not in got[0] and len(got[0]) == 2 and guard.dropped["margin"] == 1
    # candidates come out by the reranker's score, hardest first
    scores = _Judge().score([(QUERY[0], TEXTS[j]) for j in got[0]])
    assert scores == sorted(scores, reverse=True)


def test_config_builds_the_guard_and_the_card_says_so():
    cfg = load_config(None, ["export.negatives.range_min=2", "export.negatives.margin=0.1",
                             "export.negatives.max_score=0.9"]).export.negatives
    guard = make_guard(cfg)
    assert (guard.range_min, guard.margin, guard.max_score, guard.reranker) == (2, 0.1, 0.9, None)
    text = " ".join(card_lines(cfg))
    assert "ranked 3 to" in text and "minus 0.1" in text and "at most 0.9" in text
    assert card_lines(load_config(None, []).export.negatives) == []
    assert mine_negatives(QUERY, [{0}], TEXTS, method="bm25", n=3, cfg=cfg) == [[5, 4, 3]]  # ranks 3+ only


def test_a_reranker_needs_a_model():
    with pytest.raises(Exception, match="export.negatives.reranker.model"):
        load_config(None, ["export.negatives.reranker.backend=cross-encoder"])


@pytest.mark.slow  # loads a (tiny) transformers model
def test_cross_encoder_filter_runs_through_the_real_backend(tiny_cross_encoder):  # noqa: F811
    cfg = load_config(None, ["export.negatives.reranker.backend=cross-encoder",
                             f"export.negatives.reranker.model={tiny_cross_encoder}",
                             "export.negatives.reranker.device=cpu", "export.negatives.max_score=1.0"]
                      ).export.negatives
    got = mine_negatives(QUERY, [{0}], TEXTS, method="bm25", n=3, cfg=cfg)
    guard = make_guard(cfg)
    scores = guard.reranker.score([(QUERY[0], TEXTS[j]) for j in got[0]])
    assert len(got[0]) == 3 and 0 not in got[0] and scores == sorted(scores, reverse=True)
