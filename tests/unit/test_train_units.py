"""fincprg.train building blocks: precision choice, CJK vocabulary extension, training rows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fincprg.models.device import train_precision


@pytest.mark.parametrize(("device", "asked", "bf16", "want"), [
    ("cpu", "auto", True, "fp32"),
    ("cpu", "fp16", True, "fp32"),      # never half precision off CUDA
    ("cpu", "bf16", True, "fp32"),
    ("mps", "fp16", True, "fp32"),
    ("cuda", "auto", True, "bf16"),
    ("cuda", "auto", False, "fp16"),
    ("cuda:1", "fp16", True, "fp16"),
    ("cuda", "bf16", False, "fp16"),    # an old GPU without bf16 falls back to fp16
    ("cuda", "fp32", True, "fp32"),
])
def test_half_precision_only_on_cuda(device, asked, bf16, want):
    assert train_precision(device, asked, bf16_supported=bf16) == want


def test_unknown_precision_is_an_error():
    with pytest.raises(ValueError, match="fp8"):
        train_precision("cuda", "fp8", bf16_supported=True)


def _tokenizer(folder: Path, chars: str):
    from transformers import BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return BertTokenizer.from_pretrained(str(folder))


def test_unknown_cjk_chars_in_frequency_order(tmp_path):
    from fincprg.train.vocab import cjk_counts, is_cjk, unk_share, unknown_chars

    tok = _tokenizer(tmp_path / "tok", "州年")
    counts = cjk_counts(["贵州茅台2023年", "茅台 revenue", "茅"])
    assert not is_cjk("a") and not is_cjk("，") and is_cjk("茅")
    assert unknown_chars(tok, counts) == ["茅", "台", "贵"]  # 茅 x3, 台 x2, 贵 x1; 州 and 年 are known
    assert unk_share(tok, counts) == pytest.approx(6 / 8)


def test_extend_with_cjk_adds_tokens_and_rows(tmp_path):
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel

    from fincprg.train.vocab import extend_with_cjk

    folder = tmp_path / "m"
    tok = _tokenizer(folder, "州")
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32)).save_pretrained(str(folder))
    st = SentenceTransformer(str(folder), device="cpu")
    assert st.tokenizer.tokenize("贵州")[0] == "[UNK]"
    info = extend_with_cjk(st, ["贵州茅台", "茅台"])
    assert info["added"] == 3 and info["unk_share_before"] == pytest.approx(5 / 6, abs=1e-4) and info["unk_share_after"] == 0
    assert "[UNK]" not in st.tokenizer.tokenize("贵州茅台")
    assert st[0].auto_model.get_input_embeddings().weight.shape[0] == len(st.tokenizer)
    st.save(str(tmp_path / "saved"))
    again = SentenceTransformer(str(tmp_path / "saved"), device="cpu")
    assert again.tokenizer.convert_tokens_to_ids("茅") == st.tokenizer.convert_tokens_to_ids("茅") != \
        again.tokenizer.unk_token_id


def _beir(folder: Path) -> Path:
    corpus = [{"_id": f"r{r}#p{i}", "title": f"报告{r}", "text": f"第{r}份报告的第{i}段正文。", "report_id": f"r{r}"}
              for r in range(3) for i in range(4)]
    queries = [{"_id": f"q{r}{i}", "text": f"问题{r}{i}"} for r in range(3) for i in range(4)]
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in corpus), "utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries), "utf-8")
    train = [(f"q{r}{i}", f"r{r}#p{i}") for r in range(2) for i in range(4)] + [("q00", "r0#p1")]
    (folder / "qrels" / "all-train.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in train), "utf-8")
    (folder / "qrels" / "all-test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q2{i}\tr2#p{i}\t1\n" for i in range(4)), "utf-8")
    (folder / "train").mkdir()
    (folder / "train" / "flagembedding.jsonl").write_text(
        json.dumps({"query": "问题00", "pos": [], "neg": ["第1份报告的第3段正文。"]}, ensure_ascii=False) + "\n", "utf-8")
    return folder


def test_pairs_and_rows_never_use_a_positive_or_a_test_report(tmp_path):
    from fincprg.train.data import cosent_rows, load_pairs, mnrl_rows, read_hard_negatives

    ds = _beir(tmp_path / "ds")
    pairs = load_pairs(ds, ["all"], seed=1)
    assert len(pairs) == 9 and pairs.known["问题00"] == {"r0#p0", "r0#p1"}
    assert not any(pid.startswith("r2") for pid in pairs.pool)  # test-report passages are never negatives
    rows = cosent_rows(pairs, negatives_per_pair=2, seed=1)
    assert rows["score"].count(1.0) == 9 and rows["score"].count(0.0) == 18
    for q, p, s in zip(rows["sentence1"], rows["sentence2"], rows["score"]):
        positives = {f"报告{pid[1]}\n" + f"第{pid[1]}份报告的第{pid[4]}段正文。" for pid in pairs.known[q]}
        assert (p in positives) == (s == 1.0)
    cols, src = mnrl_rows(pairs, read_hard_negatives(ds), negatives_per_pair=1, seed=1)
    assert len(cols["anchor"]) == 9 and set(cols) == {"anchor", "positive", "negative_1"}
    hard = [n for a, n in zip(cols["anchor"], cols["negative_1"]) if a == "问题00"]
    # the export holds bare passage texts; they are embedded with their title, like the positives
    assert hard == ["报告1\n第1份报告的第3段正文。"] * 2 and src == {"hard": 2, "random": 7}
    assert load_pairs(ds, ["all"], max_pairs=4, seed=1).queries == pairs.queries[:4]


def test_no_pairs_is_a_clear_error(tmp_path):
    from fincprg.errors import InputError
    from fincprg.train.data import load_pairs

    ds = _beir(tmp_path / "ds")
    (ds / "qrels" / "all-train.tsv").write_text("query-id\tcorpus-id\tscore\n", "utf-8")
    with pytest.raises(InputError, match="no labelled train pairs"):
        load_pairs(ds, ["all"])


def test_cli_bad_options_fail_with_a_fix(tmp_path):
    from typer.testing import CliRunner

    from fincprg.cli import app

    ds = _beir(tmp_path / "ds")
    res = CliRunner().invoke(app, ["train", str(ds), "-m", "none", "-o", str(tmp_path / "o"), "--loss", "triplet"])
    assert res.exit_code == 2 and "cosent, mnrl" in res.output
    res = CliRunner().invoke(app, ["train", str(ds), "-m", "none", "-o", str(tmp_path / "o"), "-s", "topic"])
    assert res.exit_code == 2 and "available: all" in res.output  # the dataset has no topic labels
    res = CliRunner().invoke(app, ["train", str(ds), "-m", str(tmp_path / "missing"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--model" in res.output


def test_out_that_cannot_be_a_folder_is_refused_before_loading(tmp_path, monkeypatch):
    """-o pointing at a file used to fail only after the data and the model were loaded."""
    from typer.testing import CliRunner

    import fincprg.train.data as data
    from fincprg.cli import app

    def never(*a, **k):
        raise AssertionError("the data was loaded before -o was checked")

    monkeypatch.setattr(data, "load_pairs", never)
    ds = _beir(tmp_path / "ds")
    (tmp_path / "afile").write_text("x")
    for out, says in ((tmp_path / "afile", "is a file; the fine-tuned model is a folder"),
                      (tmp_path / "afile" / "model", "is a file, so no folder can be made under it")):
        res = CliRunner().invoke(app, ["train", str(ds), "-m", "none", "-o", str(out), "--loss", "cosent"])
        assert res.exit_code == 2 and "Traceback" not in res.output and says in res.output, res.output


def test_no_test_queries_is_said_not_nan(tmp_path):
    """`--subset topic` on a dataset without topic test labels printed `Δ +nan`; nothing is run for it."""
    from fincprg.train.compare import Bench, before_after, format_table

    ds = _beir(tmp_path / "ds")
    (ds / "qrels" / "sentence-test.tsv").write_text("query-id\tcorpus-id\tscore\n", "utf-8")  # header only
    rows = before_after("no-such-model", "no-such-model-either", [Bench(ds, ["topic", "sentence"], label="ds")])
    assert [(r.subset, r.n) for r in rows] == [("topic", 0), ("sentence", 0)]
    table = format_table(rows, "base", "tuned")
    assert "nan" not in table and table.count("| no test queries |") == 2


def _tiny_bert(folder: Path, chars: str, positions: int):
    from transformers import BertConfig, BertModel

    tok = _tokenizer(folder, chars)
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=positions)).save_pretrained(str(folder))
    return folder


def test_model_max_positions(tmp_path):
    from sentence_transformers import SentenceTransformer
    from transformers import RobertaConfig

    from fincprg.train.trainer import model_max_positions

    st = SentenceTransformer(str(_tiny_bert(tmp_path / "m", "报告", 48)), device="cpu")
    assert model_max_positions(st) == 48
    st[0].auto_model.config = RobertaConfig(max_position_embeddings=514, pad_token_id=1)  # positions after pad
    assert model_max_positions(st) == 512


def test_train_clamps_max_seq_length_to_the_model(tmp_path):
    """A model with fewer positions than the default --max-seq-length (256) crashed with a tensor-size
    traceback on the first long batch; it trains with the model's length and says so."""
    from typer.testing import CliRunner

    from fincprg.cli import app

    ds = _beir(tmp_path / "ds")
    long = "正文" * 60  # every passage is longer than the model's 32 positions
    corpus = [json.loads(x) for x in (ds / "corpus.jsonl").read_text("utf-8").splitlines()]
    (ds / "corpus.jsonl").write_text("".join(json.dumps({**c, "text": c["text"] + long}, ensure_ascii=False) + "\n"
                                             for c in corpus), "utf-8")
    chars = "".join(sorted({ch for c in corpus for ch in c["text"] + c["title"]} | set("问题0123456789")))
    model = _tiny_bert(tmp_path / "m", chars, 32)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["train", str(ds), "-m", str(model), "-o", str(out), "--loss", "cosent",
                                   "--batch-size", "4", "--max-pairs", "4", "--eval", "no", "--no-compare", "-q"])
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    assert "trained with 32 tokens per text" in res.stdout and "(--max-seq-length 256 asked)" in res.stdout
    assert "longer than" in res.stderr and "{'train_runtime'" not in res.stdout  # trainer logs are not stdout
    summary = json.loads((out / "fincprg_train.json").read_text("utf-8"))
    assert summary["max_seq_length_clamped"] == {"asked": 256, "used": 32} and summary["max_seq_length"] == 32
