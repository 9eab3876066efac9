"""The exported training files load as-is in the tools people use (issue 10).

- ``train/flagembedding.jsonl``: no row with an empty ``neg`` list (FlagEmbedding 1.4.2's
  ``AbsEmbedderTrainDataset`` divides by ``len(neg)``), and the card says how many per row.
- ``hf/``: the configs MTEB 2.x's ``RetrievalDatasetLoader`` reads (``default`` or ``qrels``,
  ``corpus``, ``queries``; ``X-qrels``/``X-corpus``/``X-queries`` for subset ``X``; see
  mteb/abstasks/retrieval_dataset_loaders.py ``_load_qrels``/``_load_corpus``/``_load_queries``).
- ``fincprg eval --slice`` scores each subset per query level and report year.
"""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.export.hf import front_matter

pytestmark = pytest.mark.slow  # builds the sample corpus once per session (~20 s)


def test_flagembedding_rows_all_have_negatives(sample_dataset):
    rows = [json.loads(x) for x in (sample_dataset / "train" / "flagembedding.jsonl").read_text("utf-8").splitlines()]
    n = 7  # export.negatives.n in pipelines/offline.yaml
    assert rows and all(len(r["neg"]) == n for r in rows)  # BM25 found fewer for some; random fill tops up
    assert all(not set(r["neg"]) & set(r["pos"]) for r in rows)
    card = (sample_dataset / "README.md").read_text("utf-8")
    assert f"Negatives per row: {n}" in card and "FlagEmbedding" in card


def test_flagembedding_dataset_reads_every_row(sample_dataset, tmp_path):
    # the exact call that divided by zero: FlagEmbedding's own dataset over the exported file
    from FlagEmbedding.abc.finetune.embedder.AbsArguments import AbsEmbedderDataArguments
    from transformers import BertTokenizer

    from FlagEmbedding.abc.finetune.embedder.AbsDataset import AbsEmbedderTrainDataset

    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]) + "\n")
    tok = BertTokenizer.from_pretrained(str(tmp_path))
    args = AbsEmbedderDataArguments(train_data=[str(sample_dataset / "train" / "flagembedding.jsonl")],
                                    train_group_size=8, cache_path=str(tmp_path / "cache"))
    ds = AbsEmbedderTrainDataset(args, tok)
    for i in range(len(ds)):
        _, passages, *_ = ds[i]
        assert len(passages) == 8


def test_hf_front_matter_has_mteb_configs():
    fm = front_matter({"all": ["train", "test"], "topic": ["train"]})
    names = [ln.split(": ", 1)[1] for ln in fm.splitlines() if ln.startswith("- config_name: ")]
    # no topic-qrels: MTEB reads a one-split config whatever split it was asked for (train scored as test)
    assert names == ["corpus", "queries", "default", "all", "topic", "all-qrels", "all-corpus", "all-queries"]


def test_hf_loads_with_datasets_and_mteb(sample_dataset):
    import datasets

    hf = str(sample_dataset / "hf")
    beir_test = {tuple(ln.split("\t")[:2]) for ln in (sample_dataset / "qrels" / "all-test.tsv")
                 .read_text("utf-8").splitlines()[1:]}
    default = datasets.load_dataset(hf, split="test")  # no config name: the `default` (all) qrels
    assert {(r["query-id"], r["corpus-id"]) for r in default} == beir_test
    mteb = pytest.importorskip("mteb.abstasks.retrieval_dataset_loaders")
    data = mteb.RetrievalDatasetLoader(hf, revision=None, split="test").load()
    assert {(q, d) for q, docs in data["relevant_docs"].items() for d in docs} == beir_test
    assert len(data["corpus"]) == sum(1 for _ in (sample_dataset / "corpus.jsonl").open())
    assert set(data["queries"]["id"]) == {q for q, _ in beir_test}
    sub = mteb.RetrievalDatasetLoader(hf, revision=None, split="train", config="passage-mined").load()
    rows = (sample_dataset / "qrels" / "passage-mined-train.tsv").read_text("utf-8").splitlines()[1:]
    assert {(q, d) for q, docs in sub["relevant_docs"].items() for d in docs} == {
        tuple(r.split("\t")[:2]) for r in rows}


def test_eval_slices_by_level_and_year(sample_dataset, tmp_path):
    res = CliRunner().invoke(app, ["eval", str(sample_dataset), "-r", "bm25", "-s", "all", "--slice", "level",
                                   "--slice", "year", "-o", str(tmp_path), "-q"])
    assert res.exit_code == 0, res.output
    assert "### nDCG@10 by level, all" in res.output and "### nDCG@10 by year, all" in res.output
    rows = [ln.split(",") for ln in (tmp_path / "slices.csv").read_text("utf-8").splitlines()[1:]]
    levels = {r[3]: int(r[4]) for r in rows if r[2] == "level"}
    years = {r[3]: int(r[4]) for r in rows if r[2] == "year"}
    total = int((tmp_path / "results.csv").read_text("utf-8").splitlines()[1].split(",")[2])
    assert set(levels) <= {"sentence", "passage", "report", "topic"} and sum(levels.values()) == total
    assert sum(years.values()) == total and any(y.isdigit() for y in years)
    bad = CliRunner().invoke(app, ["eval", str(sample_dataset), "-r", "bm25", "--slice", "industry", "-q"])
    assert bad.exit_code == 2 and "level, year" in bad.output
