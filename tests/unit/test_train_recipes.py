"""Issue 37's training options: the dev split by report, dense negatives, merging with the base, option checks."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fincprg.errors import ConfigError, InputError
from fincprg.train.data import Pairs


def _pairs(reports: int = 6, per: int = 3, titled: bool = True) -> Pairs:
    p = Pairs()
    for r in range(reports):
        if titled:
            p.titles[f"r{r}"] = f"公司{r}（60000{r}）：业绩稳健"
        for i in range(per):
            pid = f"r{r}#p{i}"
            p.bare[pid] = f"报告{r}段{i}"
            p.pool[pid] = (f"公司{r}（60000{r}）：业绩稳健\n" if titled else "") + p.bare[pid]
            p.report_of[pid] = f"r{r}"
            q = f"问题{r}-{i}"
            p.queries.append(q)
            p.positives.append(p.pool[pid])
            p.pos_ids.append(pid)
            p.known.setdefault(q, set()).add(pid)
    return p


def test_dev_split_holds_out_whole_reports_and_keeps_them_out_of_training():
    from fincprg.train.dev import split_dev

    pairs = _pairs()
    # a mined label joins a query of r0 to a passage of r1: if r1 is dev, that query must leave training too
    pairs.known["问题0-0"].add("r1#p0")
    train, dev = split_dev(pairs, 0.4)
    held = set(dev.reports)
    assert held and len(held) < 6
    assert not {pairs.report_of[p] for p in train.pos_ids} & held
    assert not {pairs.report_of[p] for p in train.pool} & held  # never a negative either
    assert set(dev.corpus) == {p for p in pairs.pool if pairs.report_of[p] in held}
    # human-written proxies: each held report's title -> all its passages, shown without the title
    assert dev.proxy == "titles" and sorted(dev.queries.values()) == sorted(pairs.titles[r] for r in held)
    for qid, rel in dev.relevant.items():
        report = next(r for r in held if pairs.titles[r] == dev.queries[qid])
        assert rel == {p for p in pairs.pool if pairs.report_of[p] == report}
        assert all(dev.corpus[p] == pairs.bare[p] for p in rel)
    assert not set(dev.queries.values()) & set(train.queries)  # generated queries never choose
    if "r1" in held:
        assert "问题0-0" not in train.queries
    assert len(train) + sum(1 for q in set(pairs.queries) if q not in train.queries) == len(pairs)


def test_dev_split_needs_two_reports_and_always_leaves_one_for_training():
    from fincprg.train.dev import split_dev

    with pytest.raises(InputError, match="at least 2"):
        split_dev(_pairs(reports=1), 0.5)
    train, dev = split_dev(_pairs(reports=2), 0.99)
    assert len(dev.reports) == 1 and len(train) == 3
    assert split_dev(_pairs(), 0.0)[1].relevant == {}


def test_an_untitled_corpus_holds_nothing_out_and_says_why():
    """No titles, no human-written proxy: nothing is held out and no generated query chooses anything."""
    from fincprg.train.dev import NO_PROXY, split_dev

    pairs = _pairs(titled=False)
    train, dev = split_dev(pairs, 0.4)
    assert not dev and dev.proxy == NO_PROXY and train is pairs
    # partly titled: only titled reports are held out, the untitled ones all stay for training
    pairs = _pairs()
    for r in ("r0", "r1", "r2", "r3"):
        del pairs.titles[r]
    train, dev = split_dev(pairs, 0.9)
    assert set(dev.reports) <= {"r4", "r5"} and dev.reports and {f"r{i}" for i in range(4)} <= \
        {pairs.report_of[p] for p in train.pool}


class _Vectors:
    """An encoder with fixed vectors: the miner's window, margin and guards are what is tested here."""

    def __init__(self, table: dict[str, list[float]]):
        self.table = table

    def encode(self, texts, **_):
        rows = np.array([self.table[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_dense_negatives_respect_the_window_the_margin_and_the_positives_report():
    from fincprg.train.negatives import Window, dense_negatives

    p = Pairs(queries=["q"], positives=["pos"], pos_ids=["a#0"], known={"q": {"a#0"}})
    # candidates by falling similarity to the query: b#0 (almost the positive's score: inside a 1% margin),
    # a#1 (the positive's report, outside the margin), c#0, d#0, e#0
    angles = {"a#0": 0.10, "b#0": 0.11, "a#1": 0.30, "c#0": 0.50, "d#0": 0.60, "e#0": 0.70}
    for pid, ang in angles.items():
        p.pool[pid] = pid
        p.report_of[pid] = pid.split("#")[0]
    table = {pid: [np.cos(a), np.sin(a)] for pid, a in angles.items()}
    table["q"] = [1.0, 0.0]
    enc = _Vectors(table)
    got = dense_negatives(p, enc, 2, Window(0, 10, margin=0.01), prompts={})
    assert got == {"q": ["c#0", "d#0"]}  # not the positive, not its report, not b#0 (within 1% of the positive)
    assert dense_negatives(p, enc, 2, Window(0, 10, margin=0.0), prompts={}) == {"q": ["b#0", "c#0"]}
    assert dense_negatives(p, enc, 2, Window(0, 10, margin=0.0, same_report=True), prompts={}) == {"q": ["b#0", "a#1"]}
    # ranks count from the nearest passage (the positive is rank 0): 4:10 starts at d#0
    assert dense_negatives(p, enc, 5, Window(4, 10, margin=0.0), prompts={}) == {"q": ["d#0", "e#0"]}


def test_neg_range_and_merge_weight_parse_with_a_fix():
    from fincprg.train.merge import parse_alpha
    from fincprg.train.negatives import Window

    assert Window.parse("2:200") == (2, 200)
    for bad in ("200:2", "x", "5"):
        with pytest.raises(ConfigError, match="--neg-range"):
            Window.parse(bad)
    assert parse_alpha(None) is None and parse_alpha("auto") == "auto" and parse_alpha("0.7") == 0.7
    for bad in ("1.5", "half"):
        with pytest.raises(ConfigError, match="--merge-base"):
            parse_alpha(bad)


def test_interpolation_is_linear_and_keeps_rows_the_base_lacks():
    import torch

    from fincprg.train.merge import interpolate

    base = {"w": torch.zeros(2, 2), "emb": torch.zeros(3, 2), "n": torch.tensor([1])}
    tuned = {"w": torch.ones(2, 2), "emb": torch.ones(4, 2), "n": torch.tensor([5])}
    assert torch.equal(interpolate(base, tuned, 0.0)["w"], base["w"])
    assert torch.equal(interpolate(base, tuned, 1.0)["w"], tuned["w"])
    half = interpolate(base, tuned, 0.25)
    assert torch.allclose(half["w"], torch.full((2, 2), 0.25))
    assert torch.equal(half["emb"], tuned["emb"]) and torch.equal(half["n"], tuned["n"])


@pytest.mark.parametrize("kw, match", [
    ({"merge_base": "auto"}, "--dev-fraction"),
    ({"guide": "m"}, "--guide"),
    ({"loss": "cosent", "negatives_from": "dense"}, "in-batch losses"),
    ({"negatives_from": "bm25"}, "export, dense"),
    ({"negatives_from": "dense", "neg_range": "9:3"}, "--neg-range"),
    ({"dev_fraction": 1.0}, "--dev-fraction"),
    ({"loss": "triplet"}, "cmnrl, gist, cgist"),
])
def test_settings_refuse_options_that_cannot_work(kw, match):
    from fincprg.train.trainer import TrainSettings

    with pytest.raises(ConfigError, match=match):
        TrainSettings(**kw).check()


def test_two_positives_of_one_query_never_share_a_batch():
    """In-batch losses read every other row's positive as a negative; the no-duplicates samplers keep a query's
    rows apart, so one positive of a query is never the other's negative."""
    import datasets
    from sentence_transformers.base.sampler import NoDuplicatesBatchSampler

    from fincprg.train.st_sampler import LengthGroupedNoDuplicatesBatchSampler

    anchors = [f"q{i // 3}" for i in range(60)]  # 20 queries, 3 positives each
    ds = datasets.Dataset.from_dict({"anchor": anchors, "positive": [f"p{i}" for i in range(60)]})
    for cls in (NoDuplicatesBatchSampler, LengthGroupedNoDuplicatesBatchSampler):
        batches = list(cls(ds, batch_size=8, drop_last=False, seed=3))
        assert sorted(i for b in batches for i in b) == list(range(60))
        for b in batches:
            assert len({anchors[i] for i in b}) == len(b)
