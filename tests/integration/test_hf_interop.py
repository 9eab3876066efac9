"""Issue 21 (interoperability): every subset/split the sample's dataset card lists loads in BEIR's
``GenericDataLoader`` and HuggingFace ``datasets``, and the card's own MTEB 2.x snippet, run as a user
would (parsed from ``hf/README.md``, only the dataset folder and the encoder swapped), evaluates every
subset with a test split on that split's labels.

Before the fix MTEB crashed with ``Found None in batch for key 'parent_id'``, and the topic subset
(train labels only on the sample) was listed with a test split that BEIR (IndexError), ``datasets``
(ValueError) and MTEB (which silently read the train labels) could not honour.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from fincprg.export.beir import SUBSETS
from fincprg.export.card import CARD_DATASET, CARD_MODEL
from tests.tiny_bert import tiny_bert

pytestmark = pytest.mark.slow  # builds the sample corpus once per session (~20 s)
SPLITS = ("train", "test")


def _card(dataset: Path) -> str:
    card = (dataset / "hf" / "README.md").read_text("utf-8")
    assert card.split("---", 2)[2].lstrip() == (dataset / "README.md").read_text("utf-8")  # one card, two copies
    return card


def listed_splits(card: str) -> dict[str, list[str]]:
    """The card's "Labelled splits in this build: `sentence` (train, test), ..." line."""
    line = next(ln for ln in card.splitlines() if ln.startswith("Labelled splits in this build:"))
    return {s: splits.split(", ") for s, splits in re.findall(r"`([\w-]+)` \(([^)]*)\)", line)}


def beir_pairs(dataset: Path, subset: str, split: str) -> set[tuple[str, str]]:
    rows = (dataset / "qrels" / f"{subset}-{split}.tsv").read_text("utf-8").splitlines()[1:]
    return {tuple(r.split("\t")[:2]) for r in rows}


def _tiny_encoder(folder: Path, dataset: Path) -> str:
    """A random BERT knowing every character of the dataset (distinct embeddings, fast on CPU)."""
    return tiny_bert(folder, sorted({c for name in ("corpus.jsonl", "queries.jsonl")
                                     for line in (dataset / name).read_text("utf-8").splitlines()
                                     for c in json.loads(line)["text"]}))


def test_card_lists_exactly_the_labelled_splits(sample_dataset):
    listed = listed_splits(_card(sample_dataset))
    labelled = {s: [sp for sp in SPLITS if beir_pairs(sample_dataset, s, sp)] for s in SUBSETS}
    assert listed == {s: sps for s, sps in labelled.items() if sps}
    rows = [tuple(c.strip() for c in ln.split("|")[1:3]) for ln in _card(sample_dataset).splitlines()
            if ln.startswith("| ")]
    table = {r for r in rows if r[0] in SUBSETS and r[1] in SPLITS}
    assert table == {(s, sp) for s, sps in listed.items() for sp in sps}  # Table 1 lists no empty split


def test_every_listed_split_loads_in_beir_and_datasets(sample_dataset):
    import datasets
    from beir.datasets.data_loader import GenericDataLoader

    hf = str(sample_dataset / "hf")
    listed = listed_splits(_card(sample_dataset))
    assert "test" in listed["all"]
    for subset, splits in listed.items():
        for split in splits:
            want = beir_pairs(sample_dataset, subset, split)
            corpus, queries, qrels = GenericDataLoader(str(sample_dataset)).load(split=f"{subset}-{split}")
            assert {(q, d) for q, ds in qrels.items() for d in ds} == want and set(queries) == set(qrels)
            assert {d for _, d in want} <= set(corpus)
            rows = datasets.load_dataset(hf, subset, split=split)
            assert {(r["query-id"], r["corpus-id"]) for r in rows} == want, f"{subset}/{split}"
        for split in set(SPLITS) - set(splits):  # unlisted: nothing to load, and hf/ says so
            assert not beir_pairs(sample_dataset, subset, split)
            with pytest.raises(ValueError, match="Unknown split"):
                datasets.load_dataset(hf, subset, split=split)
    queries = datasets.load_dataset(hf, "queries", split="queries")
    assert None not in queries["parent_id"] and "" in queries["parent_id"]  # passage queries have no parent


def test_card_mteb_snippet_evaluates_every_subset_with_both_splits(sample_dataset, tmp_path, monkeypatch):
    pytest.importorskip("mteb")
    monkeypatch.setenv("MTEB_CACHE", str(tmp_path / "mteb-cache"))
    card = _card(sample_dataset)
    snippet = next(b for b in re.findall(r"```python\n(.*?)```", card, re.S) if "mteb.evaluate" in b)
    assert CARD_DATASET in snippet and f'"{CARD_MODEL}"' in snippet
    code = snippet.replace(CARD_DATASET, str(sample_dataset)).replace(
        f'"{CARD_MODEL}"', repr(_tiny_encoder(tmp_path / "tiny", sample_dataset)))
    ns: dict = {"__name__": "card_snippet"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "card-mteb-snippet", "exec"), ns)
    printed = dict(ln.split() for ln in out.getvalue().splitlines() if ln and not ln[0].isspace())
    tested = [s for s, sps in listed_splits(card).items() if set(sps) == set(SPLITS)]
    assert list(printed) == tested and all(0.0 <= float(v) <= 1.0 for v in printed.values())
    # MTEB read each subset's test labels, not a lone train split in their place
    task = ns["FinCPRG"]()
    task.load_data()
    for subset in tested:
        docs = task.dataset[subset]["test"]["relevant_docs"]
        assert {(q, d) for q, ds in docs.items() for d in ds} == beir_pairs(sample_dataset, subset, "test")


def test_mteb_refuses_a_subset_without_test_labels(sample_dataset):
    loaders = pytest.importorskip("mteb.abstasks.retrieval_dataset_loaders")
    missing = [s for s, sps in listed_splits(_card(sample_dataset)).items() if set(sps) != set(SPLITS)]
    if not missing:
        pytest.skip("every subset of the sample has labels in both splits in this build")
    for subset in missing:  # before: `topic-qrels` had one split, and MTEB scored its train labels as "test"
        with pytest.raises(ValueError, match=f"{subset}-qrels"):
            loaders.RetrievalDatasetLoader(str(sample_dataset / "hf"), revision=None, split="test",
                                           config=subset).load()
