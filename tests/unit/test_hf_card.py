"""The hf/ layout and the card's Loading section list only splits that have labels (issue 21, fast half;
the sample-build half with BEIR, ``datasets`` and MTEB is tests/integration/test_hf_interop.py)."""
from __future__ import annotations

import re

import pytest

from fincprg.export.card import CARD_DATASET, _table, labelled_splits, loading_lines
from fincprg.export.hf import write_hf


def _stats(**queries: dict[str, int]) -> dict:
    return {s: {sp: {"queries": n, "avg_query_chars": 1.0, "avg_passage_chars": 1.0, "rel_per_query": 1.0,
                     "pairs": n} for sp, n in by.items()} for s, by in queries.items()}


STATS = _stats(sentence={"train": 3, "test": 2}, topic={"train": 1, "test": 0}, all={"train": 4, "test": 2})


def test_loading_section_lists_only_labelled_splits():
    assert labelled_splits(STATS) == {"sentence": ["train", "test"], "topic": ["train"], "all": ["train", "test"]}
    text = "\n".join(loading_lines(labelled_splits(STATS), "sig123"))
    assert "Labelled splits in this build: `sentence` (train, test), `topic` (train), `all` (train, test)." in text
    langs = re.search(r"eval_langs=\{(.*)\}", text).group(1)
    assert re.findall(r'"([\w-]+)": \["cmn-Hans"\]', langs) == ["sentence", "all"]  # topic: no test split
    assert '"revision": "sig123"' in text and f'"{CARD_DATASET}/hf"' in text
    # the examples name a split that exists (sentence-mined and passage-mined have none here)
    assert 'load(split="sentence-test")' in text and '"sentence", split="test")' in text
    assert [r for r in _table(STATS) if r.startswith("| topic")] == ["| topic | train | 1 | 1.0 | 1.0 | 1.0 | 1 |"]


def test_mteb_is_offered_only_subsets_labelled_in_both_splits():
    text = "\n".join(loading_lines(labelled_splits(_stats(all={"train": 4, "test": 0})), None))
    assert "mteb.evaluate" not in text and "nothing to evaluate" in text
    assert 'load(split="all-train")' in text
    # a test-only subset: BEIR/datasets read it, MTEB is not offered a one-split config it would misread
    text = "\n".join(loading_lines(labelled_splits(_stats(topic={"train": 0, "test": 2},
                                                           all={"train": 4, "test": 2})), None))
    assert re.findall(r'"([\w-]+)": \["cmn-Hans"\]', text) == ["all"]


def test_hf_parquet_has_no_nulls_and_mteb_configs_need_both_splits(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    corpus = [{"_id": "p1", "title": "", "text": "t", "report_id": "r1", "date": None, "industry": None}]
    queries = [{"_id": "q1", "text": "q", "level": "passage", "parent_id": None, "report_id": None,
                "provenance": {"generator": "templates"}}]
    qrels = {"all": {"train": {"q1": {"p1": 1}}, "test": {"q1": {"p1": 1}}},
             "topic": {"train": {"q1": {"p1": 1}}, "test": {}}}
    write_hf(tmp_path, corpus, queries, qrels, "card\n")
    q = pq.read_table(tmp_path / "queries.parquet").to_pylist()[0]
    c = pq.read_table(tmp_path / "corpus.parquet").to_pylist()[0]
    assert (q["parent_id"], q["report_id"], c["date"], c["industry"]) == ("", "", "", "")
    assert q["provenance"] == '{"generator": "templates"}'
    names = re.findall(r"config_name: (\S+)", (tmp_path / "README.md").read_text("utf-8"))
    assert "topic" in names and "topic-qrels" not in names and {"default", "all-qrels"} <= set(names)
    assert not (tmp_path / "qrels" / "topic" / "test.parquet").exists()
