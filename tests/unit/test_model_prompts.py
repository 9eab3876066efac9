"""Query/passage prompts read from a model's own sentence-transformers config (e5-style), honoured by
every bi-encoder user (eval's dense retriever, dense negatives, topic titles, training), and no change
for a model without prompts. Tiny random models saved with and without prompts."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pytest

from tests.tiny_bert import tiny_bert
from tests.unit import _eval_fixture as fx

PROMPTS = {"query": "query: ", "passage": "passage: "}


def _tiny(folder: Path, prompts: dict[str, str] | None) -> str:
    """A 1-layer BERT over the characters of the eval fixture, mean pooling, saved as sentence-transformers."""
    from sentence_transformers import SentenceTransformer

    chars = sorted({c for doc in fx.corpus().values() for c in doc["title"] + doc["text"]}
                   | {c for q in fx.queries().values() for c in q} | set("querypassage:问题报告份第段正文"))
    hf = tiny_bert(folder.parent / f"{folder.name}-hf", chars, positions=128)
    st = SentenceTransformer(hf, device="cpu", prompts=prompts)
    st.save(str(folder))
    return str(folder)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("prompt_models")
    return {"with": _tiny(root / "with", PROMPTS), "without": _tiny(root / "without", None)}


def _st(path: str):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device="cpu")


def _plain(path: str, texts: list[str]) -> np.ndarray:
    """Embeddings of exactly these strings (no prompt), unit-norm."""
    return _st(path).encode(texts, prompt="", normalize_embeddings=True, convert_to_numpy=True)


def test_prompts_are_read_from_the_model(models):
    from fincprg.models import TextEncoder, prompt_name, prompt_text

    st = _st(models["with"])
    assert prompt_name(st, "query") == "query" and prompt_name(st, "passage") == "passage"
    assert prompt_text(st, "passage") == "passage: "
    bare = _st(models["without"])
    assert prompt_name(bare, "query") is None and prompt_text(bare, "passage") == ""
    texts = ["招商银行的零售AUM是多少", "贵州茅台的毛利率"]
    enc = TextEncoder(models["with"], where="t")
    assert np.allclose(enc.encode(texts, role="query"), _plain(models["with"], ["query: " + t for t in texts]),
                       atol=1e-5)
    assert np.allclose(enc.encode(texts, role="passage"), _plain(models["with"], ["passage: " + t for t in texts]),
                       atol=1e-5)
    assert not np.allclose(enc.encode(texts, role="query"), enc.encode(texts), atol=1e-3)  # the prompt matters here
    plain = TextEncoder(models["without"], where="t")
    assert np.allclose(plain.encode(texts, role="query"), _plain(models["without"], texts), atol=1e-6)


def test_a_document_prompt_counts_as_the_passage_prompt(tmp_path):
    from fincprg.models import prompt_name

    class M:
        prompts = {"query": "", "document": "doc: ", "passage": ""}

    assert prompt_name(M(), "passage") == "document" and prompt_name(M(), "query") is None
    with pytest.raises(ValueError, match="role"):
        prompt_name(M(), "title")


@pytest.mark.parametrize("kind", ["with", "without"])
def test_dense_retriever_uses_query_and_passage_prompts(models, kind):
    from fincprg.evaluate.retrievers.base import doc_text
    from fincprg.evaluate.retrievers.dense import Dense

    corpus, queries = fx.corpus(), fx.queries()
    r = Dense(models[kind], show_progress=False)
    r.fit(corpus)
    run = r.search(queries, 3)
    qp, pp = (PROMPTS["query"], PROMPTS["passage"]) if kind == "with" else ("", "")
    ids = list(corpus)
    d = _plain(models[kind], [pp + doc_text(corpus[i]) for i in ids])
    for qid, text in queries.items():
        sims = d @ _plain(models[kind], [qp + text])[0]
        want = [ids[j] for j in np.argsort(-sims)[:3]]
        assert list(run[qid]) == want
        assert run[qid][want[0]] == pytest.approx(float(sims.max()), abs=1e-4)


def test_dense_negatives_and_topic_titles_use_the_roles(models, monkeypatch):
    from fincprg.export.negatives import dense_negatives
    from fincprg.models import encoders
    from fincprg.models.embedders import SentenceTransformerEmbedder

    seen: list[tuple[str, str | None]] = []
    real = encoders.TextEncoder.encode

    def spy(self, texts, show_progress=False, role=None):
        seen.extend((t, role) for t in texts)
        return real(self, texts, show_progress=show_progress, role=role)

    monkeypatch.setattr(encoders.TextEncoder, "encode", spy)
    texts = [doc["text"] for doc in fx.corpus().values()]
    queries = list(fx.queries().values())[:3]
    out = dense_negatives(queries, [{0}, {1}, {2}], texts, 2, model=models["with"])
    assert len(out) == 3 and all(len(x) == 2 for x in out)
    assert {r for t, r in seen if t in queries} == {"query"} and {r for t, r in seen if t in texts} == {"passage"}
    seen.clear()
    titles = ["招商银行2023年报点评", "贵州茅台深度报告"]
    v = SentenceTransformerEmbedder(models["with"]).embed(titles)
    assert {r for _, r in seen} == {"query"}  # titles against titles: e5's symmetric-task prompt
    assert np.allclose(v, _plain(models["with"], ["query: " + t for t in titles]), atol=1e-5)


def test_flag_backend_reads_the_folders_prompts_and_pooling(models):
    """FlagModel knows only a query instruction and CLS pooling: through fincprg it must embed like the
    sentence-transformers backend (the folder's prompts for both roles, its mean pooling)."""
    pytest.importorskip("FlagEmbedding")
    from fincprg.models import TextEncoder
    from fincprg.models.load import folder_pooling

    assert folder_pooling(models["with"]) == "mean" and folder_pooling("BAAI/bge-base-zh-v1.5") == "cls"
    texts = ["招商银行的零售AUM是多少", "贵州茅台的毛利率"]
    st = TextEncoder(models["with"], where="t", device="cpu")
    flag = TextEncoder(models["with"], where="t", backend="flag", device="cpu", fp16=False)
    for role in ("query", "passage"):
        assert np.allclose(flag.encode(texts, role=role), st.encode(texts, role=role), atol=1e-4), role
    assert not np.allclose(flag.encode(texts, role="query"), flag.encode(texts), atol=1e-3)  # the prompt is used


def test_encodings_are_memoised_per_model_role_and_texts(models, monkeypatch):
    from fincprg.models import encoders
    from fincprg.models.load import clear_cache

    calls: list[tuple[int, str | None]] = []
    real = encoders.TextEncoder._encode

    def spy(self, texts, show_progress, role):
        calls.append((len(texts), role))
        return real(self, texts, show_progress, role)

    monkeypatch.setattr(encoders.TextEncoder, "_encode", spy)
    clear_cache()
    enc = encoders.TextEncoder(models["with"], where="t")
    texts = ["招商银行的零售AUM是多少", "贵州茅台的毛利率"]
    a = enc.encode(texts, role="passage")
    a[:] = 0  # a caller writing into its rows must not change what the next caller gets
    b = encoders.TextEncoder(models["with"], where="other").encode(texts, role="passage")
    assert calls == [(2, "passage")] and np.abs(b).sum() > 0
    enc.encode(texts, role="query")
    assert calls == [(2, "passage"), (2, "query")]
    # per text: a list that repeats memoised texts encodes only the new one, once, rows in the caller's order
    c = enc.encode(["新文本", texts[1], "新文本"], role="passage")
    assert calls == [(2, "passage"), (2, "query"), (1, "passage")]
    assert np.array_equal(c[1], b[1]) and np.array_equal(c[0], c[2]) and not np.array_equal(c[0], b[0])
    clear_cache()
    enc.encode(texts, role="passage")
    assert len(calls) == 4


def test_the_encoding_memo_persists_to_disk_and_drops_the_oldest(models, monkeypatch, tmp_path):
    from fincprg.models import encoders
    from fincprg.models.load import clear_cache

    calls: list[int] = []
    real = encoders.TextEncoder._encode
    monkeypatch.setattr(encoders.TextEncoder, "_encode",
                        lambda self, texts, sp, role: calls.append(len(texts)) or real(self, texts, sp, role))
    clear_cache()
    path = tmp_path / "memo.npz"
    encoders.MEMO.persist(path)
    enc = encoders.TextEncoder(models["with"], where="t")
    texts = ["招商银行的零售AUM是多少", "贵州茅台的毛利率"]
    a = enc.encode(texts, role="passage")
    encoders.MEMO.save()
    clear_cache()  # a later process: nothing in memory, the file read back
    assert encoders.MEMO.path is None
    encoders.MEMO.persist(path)
    assert np.array_equal(enc.encode(texts, role="passage"), a) and calls == [2]
    assert (encoders.MEMO.hits, encoders.MEMO.misses) == (2, 0)
    monkeypatch.setattr(encoders.MEMO, "max_rows", 2)
    enc.encode(["第三段"], role="passage")  # the oldest row goes
    enc.encode(texts, role="passage")
    assert calls == [2, 1, 1]


def test_prefilter_embeds_both_sides_as_queries(models):
    from fincprg.config import EmbedderConfig
    from fincprg.mine.prefilter import TextEmbedder

    texts = ["招商银行的零售AUM是多少", "贵州茅台的毛利率"]
    emb = TextEmbedder(EmbedderConfig(backend="sentence-transformers", model=models["with"]), seed=0,
                       device="cpu")
    emb.prepare(texts)
    assert np.allclose(emb.embed(texts), _plain(models["with"], ["query: " + t for t in texts]), atol=1e-5)


def test_column_prompts_for_training():
    from fincprg.train.st_trainer import column_prompts

    assert column_prompts(["anchor", "positive", "negative_1"], PROMPTS) == {
        "anchor": "query: ", "positive": "passage: ", "negative_1": "passage: "}
    assert column_prompts(["sentence1", "sentence2", "score"], PROMPTS) == {
        "sentence1": "query: ", "sentence2": "passage: "}
    assert column_prompts(["anchor", "positive"], {"query": "", "passage": ""}) is None


def test_length_batches_group_lengths_and_never_repeat_a_text():
    from fincprg.train.sampler import length_batches

    rng = np.random.default_rng(0)
    lengths = [int(x) for x in rng.integers(5, 500, size=1000)]
    keys = [frozenset({f"q{i % 300}", f"p{i}"}) for i in range(1000)]  # queries repeat across rows
    batches = length_batches(lengths, 16, seed=3, keys=keys, pool=10)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(1000))  # every row once
    for b in batches:
        texts = [t for i in b for t in keys[i]]
        assert len(texts) == len(set(texts))  # no duplicate text inside a batch
    spread = np.mean([max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches if len(b) == 16])
    shuffled = np.mean([np.ptp([lengths[i] for i in range(s, s + 16)]) for s in range(0, 992, 16)])
    assert spread < shuffled / 4  # similar lengths per batch (random batches span most of the range)
    assert batches != length_batches(lengths, 16, seed=4, keys=keys, pool=10)  # each epoch its own order
    assert batches == length_batches(lengths, 16, seed=3, keys=keys, pool=10)
    dropped = length_batches(lengths, 16, seed=3, drop_last=True)
    assert all(len(b) == 16 for b in dropped) and len(dropped) == 1000 // 16


def test_length_grouped_sampler_over_a_dataset():
    import datasets

    from fincprg.train.st_sampler import LengthGroupedBatchSampler, LengthGroupedNoDuplicatesBatchSampler

    anchors = [f"问题{i % 5}" for i in range(40)]  # each query on 8 rows
    positives = ["段" * (1 + (i * 37) % 90) + str(i) for i in range(40)]
    ds = datasets.Dataset.from_dict({"anchor": anchors, "positive": positives, "label": [1.0] * 40})
    s = LengthGroupedNoDuplicatesBatchSampler(ds, batch_size=4, drop_last=False, valid_label_columns=["label"],
                                              seed=1)
    assert s.lengths == [len(a) + len(p) for a, p in zip(anchors, positives)]  # the label column is no text
    first = list(s)
    assert sorted(i for b in first for i in b) == list(range(40)) and len(s) == len(first)
    assert all(len({anchors[i] for i in b}) == len(b) for b in first)  # no query twice in a batch
    s.set_epoch(1)
    assert list(s) != first  # a new order each epoch
    plain = LengthGroupedBatchSampler(ds, batch_size=4, drop_last=False, seed=1)
    assert any(len({anchors[i] for i in b}) < len(b) for b in plain)  # only the mnrl one checks duplicates


def _beir(folder: Path) -> Path:
    corpus = [{"_id": f"r{r}#p{i}", "title": f"报告{r}", "text": f"第{r}份报告的第{i}段正文。" * (1 + i),
               "report_id": f"r{r}"} for r in range(3) for i in range(4)]
    queries = [{"_id": f"q{r}{i}", "text": f"问题{r}{i}"} for r in range(3) for i in range(4)]
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in corpus), "utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries), "utf-8")
    (folder / "qrels" / "all-train.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"q{r}{i}\tr{r}#p{i}\t1\n" for r in range(2) for i in range(4)), "utf-8")
    (folder / "qrels" / "all-test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q2{i}\tr2#p{i}\t1\n" for i in range(4)), "utf-8")
    (folder / "train").mkdir()
    (folder / "train" / "flagembedding.jsonl").write_text(json.dumps(
        {"query": "问题00", "pos": [], "neg": ["第1份报告的第3段正文。"]}, ensure_ascii=False) + "\n", "utf-8")
    return folder


@pytest.mark.slow
def test_train_with_prompts_frozen_embeddings_and_length_groups(models, tmp_path, monkeypatch):
    from safetensors.numpy import load_file
    from sentence_transformers import SentenceTransformer

    from fincprg.train.trainer import TrainSettings, train

    from sentence_transformers import SentenceTransformerTrainer

    fed: list[tuple[str, str | None]] = []
    # only what training and its evaluator encode: a checkpoint's model card encodes examples too
    training = []
    real, real_train = SentenceTransformer.preprocess, SentenceTransformerTrainer.train

    def spy(self, inputs, prompt=None, **kw):
        if training and not any("model_card" in f.filename for f in inspect.stack(0)):
            fed.extend((str(t), prompt) for t in inputs)
        return real(self, inputs, prompt=prompt, **kw)

    samplers: list = []

    def train_spy(self, *a, **kw):
        training.append(1)
        samplers.append(self.args.batch_sampler)
        try:
            return real_train(self, *a, **kw)
        finally:
            training.clear()

    monkeypatch.setattr(SentenceTransformer, "preprocess", spy)
    monkeypatch.setattr(SentenceTransformerTrainer, "train", train_spy)
    ds = _beir(tmp_path / "ds")
    out = tmp_path / "tuned"
    settings = TrainSettings(loss="mnrl", negatives=1, batch_size=4, epochs=1, learning_rate=1e-2,
                             max_seq_length=32, eval_strategy="epoch", show_progress=False,
                             freeze_embeddings=True, group_by_length=True)
    summary = train(ds, models["with"], out, settings)
    from fincprg.train.st_sampler import LengthGroupedNoDuplicatesBatchSampler

    assert samplers == [LengthGroupedNoDuplicatesBatchSampler]  # --group-by-length reached the trainer
    assert summary["steps"] >= 2 and summary["prompts"] == PROMPTS  # 8 rows of 4, more when texts repeat
    assert summary["frozen_parameters"] > 0 and "test_cosine_ndcg@10" in summary["test_eval"]
    queries = {f"问题{r}{i}" for r in range(3) for i in range(4)}
    assert fed and {p for t, p in fed if t in queries} == {"query: "}  # training batches and the evaluator
    assert {p for t, p in fed if t not in queries} == {"passage: "}
    assert SentenceTransformer(str(out), device="cpu").prompts["query"] == "query: "  # saved with the model
    key = "embeddings.word_embeddings.weight"
    before = load_file(str(Path(models["with"]) / "model.safetensors"))
    after = load_file(str(out / "model.safetensors"))
    assert np.array_equal(before[key], after[key])  # frozen
    moved = [k for k in before if k != key and not np.allclose(before[k], after[k])]
    assert moved  # the rest of the encoder was trained


def test_freeze_with_add_cjk_is_refused():
    from fincprg.errors import ConfigError
    from fincprg.train.trainer import TrainSettings

    with pytest.raises(ConfigError, match="--freeze-embeddings"):
        TrainSettings(freeze_embeddings=True, add_cjk=True).check()
