"""Done-when check of issue 5: an offline build of the sample corpus ends with a loadable dataset.

Runs every stage (ingest -> export) with pipelines/offline.yaml on datasets/sample, then loads
OUT/dataset with a BEIR-style loader and with HuggingFace ``datasets``.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from fincprg.config import load_config
from fincprg.export.beir import SUBSETS

REPO = Path(__file__).resolve().parents[2]
SPLITS = ("train", "test")


def load_beir(folder: Path, qrels_name: str) -> tuple[dict, dict, dict]:
    """BEIR GenericDataLoader look-alike: corpus.jsonl, queries.jsonl, qrels/<name>.tsv."""
    corpus = {}
    for line in (folder / "corpus.jsonl").read_text("utf-8").splitlines():
        d = json.loads(line)
        corpus[d["_id"]] = {"title": d["title"], "text": d["text"], "report_id": d["report_id"]}
    queries = {}
    for line in (folder / "queries.jsonl").read_text("utf-8").splitlines():
        d = json.loads(line)
        queries[d["_id"]] = d["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / f"{qrels_name}.tsv", encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t")
        assert next(reader) == ["query-id", "corpus-id", "score"]
        for qid, pid, score in reader:
            qrels.setdefault(qid, {})[pid] = int(score)
    return corpus, queries, qrels


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory) -> Path:
    sample = REPO / "datasets" / "sample" / "reports.jsonl"
    # committed with the repo: its absence is a broken checkout, not a reason to skip
    assert sample.exists(), f"{sample} is missing; it is committed (git checkout -- datasets/sample)"
    from fincprg.pipeline.runner import run_pipeline

    out = tmp_path_factory.mktemp("sample_build")
    cfg = load_config(REPO / "pipelines" / "offline.yaml")
    run_pipeline(sample, out, cfg, show_progress=False)
    return out


def _labelled_topics(dataset: Path) -> int:
    """Topic nodes with at least one mined label (the offline miner accepts few topic pairs on the sample)."""
    queries = {json.loads(x)["_id"]: json.loads(x) for x in (dataset / "queries.jsonl").read_text("utf-8").splitlines()}
    nodes = set()
    for split in SPLITS:
        for line in (dataset / "qrels" / f"topic-{split}.tsv").read_text("utf-8").splitlines()[1:]:
            q = queries.get(line.split("\t")[0])
            if q is not None:
                nodes.add(q["parent_id"])
    return len(nodes)


@pytest.mark.slow
def test_sample_build_has_six_subsets_loadable_and_leak_free(sample_build):
    d = sample_build / "dataset"
    assert (d / "manifest.json").exists() and (d / "README.md").exists()
    report_split: dict[str, str] = {}
    for subset in SUBSETS:
        for split in SPLITS:
            assert (d / "qrels" / f"{subset}-{split}.tsv").exists(), f"{subset}-{split}"
            corpus, queries, qrels = load_beir(d, f"{subset}-{split}")
            if subset == "topic" and _labelled_topics(d) == 0:
                # since issue 50 the sample's topic queries name no company with half its topic's reports or less;
                # the three left ask a theme and none is mined a label (eval/README.md, report-level): the files
                # are header-only
                assert not qrels
            elif (subset, split) != ("topic", "test") or _labelled_topics(d) >= 2:
                # topic-test can only be filled when at least two topic nodes carry labels (one stays in train)
                assert qrels, f"qrels/{subset}-{split}.tsv has no labels"
            for qid, rels in qrels.items():
                assert qid in queries, f"dangling query id {qid} in {subset}-{split}"
                for pid in rels:
                    assert pid in corpus, f"dangling corpus id {pid} in {subset}-{split}"
                    rid = corpus[pid]["report_id"]
                    assert report_split.setdefault(rid, split) == split, f"report {rid} in both splits"
    assert set(report_split.values()) == {"train", "test"}
    lines = (d / "train" / "flagembedding.jsonl").read_text("utf-8").splitlines()
    assert lines and all({"query", "pos", "neg"} <= set(json.loads(x)) for x in lines)


@pytest.mark.slow
def test_sample_build_loads_with_datasets(sample_build, tmp_path):
    import datasets

    hf = str(sample_build / "dataset" / "hf")
    # datasets fixes its cache folder at import (HF_HOME isolation per test does not reach it), and
    # its cache key for a local folder collided with test_export's "hf" folder: a stale 30-row
    # split came back. A cache of its own per test loads what is on disk.
    cache = str(tmp_path / "datasets-cache")
    corpus = datasets.load_dataset(hf, "corpus", split="corpus", cache_dir=cache)
    queries = datasets.load_dataset(hf, "queries", split="queries", cache_dir=cache)
    ids, qids = set(corpus["_id"]), set(queries["_id"])
    manifest = json.loads((sample_build / "dataset" / "manifest.json").read_text("utf-8"))
    counts = manifest["counts"]["qrels"]
    loaded, empty = 0, 0
    for subset in SUBSETS:
        for split in SPLITS:
            if counts[subset][split]["pairs"] == 0:
                # topic-test needs two labelled topic nodes; since issue 50 the sample's topic queries have none
                assert subset == "topic" and (split == "test" or _labelled_topics(sample_build / "dataset") == 0)
                assert _labelled_topics(sample_build / "dataset") < 2
                empty += 1
                continue  # datasets cannot read a zero-row parquet file; the export leaves it out
            ds = datasets.load_dataset(hf, subset, split=split, cache_dir=cache)
            assert len(ds) == counts[subset][split]["pairs"]
            assert set(ds["corpus-id"]) <= ids and set(ds["query-id"]) <= qids
            loaded += 1
    assert loaded + empty == 2 * len(SUBSETS) and empty <= (1 if _labelled_topics(sample_build / "dataset") else 2)
