"""Reranker backends: FlagReranker and CrossEncoder on a tiny random model, and the lexical scorer."""
from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from fincprg.config import RerankerConfig
from fincprg.errors import ConfigError
from fincprg.mine.facts import FactsCache
from fincprg.mine.lexical import LexicalReranker
from fincprg.mine.rerankers import BlockScorer, Reranker, make_reranker, threshold_for
from tests.unit._mine_fixture import stub_extract

PAIRS = [
    ("贵州茅台2023年营业收入是多少", "贵州茅台2023年营收是多少"),
    ("宁德时代毛利率为何下降", "五粮液净利润增长原因"),
    ("公司2022年净利润", "公司2022年净利润"),
]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-ce")
    chars = sorted({c for a, b in PAIRS for c in a + b})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *[str(i) for i in range(10)],
             *[f"##{i}" for i in range(10)]]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizer.from_pretrained(str(folder)).save_pretrained(str(folder))
    import torch

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=64, num_labels=1, initializer_range=1.0)
    BertForSequenceClassification(cfg).eval().save_pretrained(str(folder))
    return folder


def _raw_logits(folder, pairs):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    with torch.no_grad():
        enc = tok([a for a, _ in pairs], [b for _, b in pairs], padding=True, truncation=True, return_tensors="pt")
        return model(**enc).logits.view(-1).tolist()


@pytest.mark.slow  # first transformers import takes tens of seconds
@pytest.mark.parametrize("backend", ["flag", "cross-encoder"])
def test_model_backends_load_and_score(tiny_cross_encoder, backend):
    cfg = RerankerConfig(backend=backend, model=str(tiny_cross_encoder), batch_size=2, device="cpu")
    rr = make_reranker(cfg)
    assert isinstance(rr, Reranker) and not isinstance(rr, BlockScorer)
    assert threshold_for(cfg, rr) == 0.99
    scores = rr.score(PAIRS)
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    assert rr.score(PAIRS) == pytest.approx(scores, abs=1e-6)  # deterministic
    assert len(set(np.round(scores, 4))) > 1  # initializer_range=1.0: outputs can be told apart
    # normalize semantics: the score is the sigmoid of the raw logit, like FlagReranker(normalize=True)
    want = [1 / (1 + math.exp(-x)) for x in _raw_logits(tiny_cross_encoder, PAIRS)]
    assert scores == pytest.approx(want, abs=1e-4)
    assert rr.score(PAIRS[:1]) == pytest.approx(scores[:1], abs=1e-5)  # a single pair still gives a list
    # what a Ray actor receives: the scorer without its weights, which it loads again on its own device
    blob = pickle.dumps(rr)
    assert len(blob) < 10_000
    clone = pickle.loads(blob)
    assert clone._model is None and clone.score(PAIRS) == pytest.approx(scores, abs=1e-6)


def test_model_backend_needs_a_model():
    with pytest.raises(ConfigError, match="mine.reranker.model"):
        make_reranker(RerankerConfig(backend="flag"))


def test_lexical_scores_range_identity_and_block_agreement():
    rr = LexicalReranker(facts=FactsCache(stub_extract))
    assert isinstance(rr, Reranker) and isinstance(rr, BlockScorer)
    texts = [t for p in PAIRS for t in p] + ["贵州茅台2023年净利润是多少", "贵州茅台2022年营业收入是多少"]
    rr.prepare(texts)
    s = rr.score(PAIRS)
    assert s == pytest.approx([0.8145, 0.0156, 1.0], abs=1e-3)
    assert s[2] == pytest.approx(1.0, abs=1e-5)  # identical texts
    assert s[0] > 0.7 > s[1]  # rewording of the same question vs unrelated
    block = rr.score_block(texts, texts)
    assert block.shape == (len(texts), len(texts))
    i0, j0 = texts.index(PAIRS[0][0]), texts.index(PAIRS[0][1])
    assert block[i0, j0] == pytest.approx(s[0], abs=1e-5)
    assert np.allclose(block, block.T, atol=1e-6)  # symmetric: direction=one loses nothing
    same_q = rr.score([("贵州茅台2023年营业收入是多少", "贵州茅台2023年营业收入是多少？")])[0]
    other_metric = rr.score([("贵州茅台2023年营业收入是多少", "贵州茅台2023年净利润是多少")])[0]
    assert same_q >= rr.default_threshold > other_metric  # finance-field agreement separates them
    # texts never seen by prepare() are encoded on the fly with the fitted IDF
    unseen = rr.score([("贵州茅台营业收入多少", "贵州茅台营收多少"), ("贵州茅台营业收入多少", "五粮液净利润增长")])
    assert unseen[0] == pytest.approx(0.7119, abs=1e-3) and unseen[1] == pytest.approx(0.0, abs=1e-6)
    # the fillers of a question frame do not part one question (they had held such pairs at 0.85-0.89);
    # the asking word does: an amount is not a cause
    framed, cause = rr.score([("贵州茅台2023年的营业收入为多少？", "贵州茅台2023年营业收入达到了多少"),
                              ("贵州茅台2023年营业收入增长的原因是什么", "贵州茅台2023年营业收入增长了多少")])
    assert framed == pytest.approx(1.0, abs=1e-5) and cause < rr.default_threshold
    # n-grams outside the fitted vocabulary carry no weight
    assert rr.score([("全新文本甲", "全新文本乙")])[0] == pytest.approx(0.0, abs=1e-6)


def test_coverage_scores_a_broad_subquery_covered_by_a_specific_passage_query():
    from fincprg.mine.coverage import CoverageScorer, content_words

    broad = "2023年至2024年医药行业创新药的最新情况和影响是什么？"
    assert content_words(broad) == ("创新药",)  # frame words, years and the industry scope drop out
    s = CoverageScorer()
    covered, other = s.score([
        (broad, "华济医药2023年集采、创新药相关的归母净利润变化情况如何？"),
        (broad, "江城银行2023年零售贷款的不良率是多少？"),
    ])
    assert covered == 1.0 and other == 0.0
    # symmetric, so both direction policies give the same decision
    assert s.score([("华济医药2023年集采、创新药相关的归母净利润变化情况如何？", broad)]) == [1.0]
