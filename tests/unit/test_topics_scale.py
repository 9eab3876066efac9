"""Topics at scale: per-industry HDBSCAN, outlier reduction (marked), the native c-TF-IDF/Ward engine."""
from __future__ import annotations

import json

import numpy as np
import pytest

from fincprg.config import ClusterConfig, PipelineConfig
from fincprg.errors import ConfigError
from fincprg.topics.cluster import cluster_titles
from fincprg.topics.ctfidf import ClassTfidf, class_counts, topic_keywords, ward_hierarchy
from fincprg.topics.partition import IndustryHDBSCAN, by_size, reassign_outliers


def _blobs(centers: int, per: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_blobs

    return make_blobs(n_samples=centers * per, centers=centers, n_features=6, random_state=seed, cluster_std=0.4)


def test_reassign_outliers_stays_in_industry_and_respects_threshold():
    emb = np.array([[1, 0], [1, 0.1], [0, 1], [0.1, 1], [0.9, 0.2], [0.2, 0.9], [-1, -0.2]], dtype=np.float32)
    labels = [0, 0, 1, 1, -1, -1, -1]
    inds = ["A", "A", "B", "B", "B", "C", "A"]
    # row 4 is nearest topic 0 (industry A) but is industry B: it joins B's topic 1; row 5 (industry C)
    # has no topic of its industry and stays out; row 6 points away from every centroid (cosine < 0)
    new, moved = reassign_outliers(labels, emb, inds, scope="industry", threshold=0.0)
    assert new == [0, 0, 1, 1, 1, -1, -1] and moved == [False] * 4 + [True, False, False]
    new, moved = reassign_outliers(labels, emb, inds, scope="all", threshold=0.0)
    assert new[4:] == [0, 1, -1] and moved[4:] == [True, True, False]
    new, moved = reassign_outliers(labels, emb, inds, scope="industry", threshold=0.99)
    assert new == labels and not any(moved)  # row 4's cosine to topic 1 is ~0.4


def test_by_size_numbers_largest_first_and_keeps_outliers():
    assert by_size([5, 5, -1, 2, 2, 2, 9]) == [1, 1, -1, 0, 0, 0, 2]
    assert by_size([3, 7]) == [0, 1]  # a tie: first seen first


def test_industry_hdbscan_never_mixes_industries_and_pools_small_ones():
    X, y = _blobs(3, 40)
    # industry A holds blobs 0 and 1, industry B blob 2; the two C titles and one D title are pooled
    inds = ["A" if c in (0, 1) else "B" for c in y]
    inds[:2], inds[2] = ["C", "C"], "D"
    cfg = ClusterConfig(min_cluster_size=5, min_samples=3, pca_components=3)
    model = IndustryHDBSCAN(inds, cfg)
    big, pooled = model.groups()
    assert [len(g) for g in big] == [inds.count("A"), inds.count("B")] and pooled.tolist() == [0, 1, 2]
    labels = model.fit(X).labels_
    for k in set(labels) - {-1}:
        assert len({inds[i] for i in np.flatnonzero(labels == k)}) == 1
    found = {k for k in set(labels) - {-1}}
    # industry B is one blob: HDBSCAN finds no split there, and the retry keeps it as one topic
    assert {labels[i] for i in range(len(y)) if inds[i] == "B"} - {-1} and len(found) == 3


def test_ctfidf_is_bertopics_formula():
    tokens = [["光伏", "组件"], ["光伏", "排产"], ["白酒", "动销"], ["白酒", "光伏"]]
    counts, words, classes = class_counts(tokens, [0, 0, 1, -1])
    assert classes == [-1, 0, 1] and words == sorted({t for ts in tokens for t in ts})
    assert counts.toarray()[1].tolist() == [2, 0, 1, 0, 1]  # 光伏 动销 排产 白酒 组件 (code point order)
    model = ClassTfidf(counts, words)
    df = np.array([3, 1, 1, 2, 1])
    np.testing.assert_allclose(model.idf, np.log(int(8 / 3) / df + 1))  # avg tokens per class: int(8/3)
    _, kw, _ = topic_keywords(tokens, [0, 0, 1, -1], top_n=3)
    assert kw[0] == ["排产", "组件", "光伏"] and kw[1] == ["动销", "白酒"]


@pytest.mark.slow
def test_native_engine_matches_bertopic_engine():
    X, y = _blobs(4, 30)
    words = ["光伏组件价格", "白酒批价动销", "银行净息差", "游戏版号"]
    docs = [f"{words[c]}第{i}期{'甲乙丙丁'[i % 4]}" for i, c in enumerate(y)]
    inds = ["电力设备及新能源", "食品饮料", "银行", "传媒"]
    industries = [inds[c] for c in y]
    trees = {e: cluster_titles(docs, X, ClusterConfig(min_cluster_size=5, engine=e), industries=industries)
             for e in ("native", "bertopic")}
    a, b = trees["native"], trees["bertopic"]
    assert a.n_topics == b.n_topics == 4 and a.model is None and b.model is not None

    def parts(t):
        return {frozenset(np.flatnonzero(np.array(t.topics) == k)): set(t.keywords[f"t{k}"]) for k in range(4)}

    assert parts(a) == parts(b)  # the same titles in each topic, with the same c-TF-IDF keywords
    assert sorted(len(t.children) for t in (a, b)) == [3, 3] and a.linkage is not None
    # and the same tree to the byte: ids, keyword order and merge names (ties broken alike)
    assert (a.topics, a.keywords, a.parent, a.children) == (b.topics, b.keywords, b.parent, b.children)


def test_nr_topics_needs_the_bertopic_engine():
    X, _ = _blobs(2, 10)
    with pytest.raises(ConfigError, match="engine=bertopic"):
        cluster_titles(["x"] * len(X), X, ClusterConfig(nr_topics=3, engine="native"))


@pytest.mark.slow
def test_stage_marks_reassigned_outliers(tmp_path):
    from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext
    from fincprg.topics.stage import run
    from tests.unit.test_topics import _corpus, _write_reports

    reports = _corpus()
    _write_reports(tmp_path, reports)
    rows = {}
    for reduce in (False, True):
        cfg = PipelineConfig.model_validate({"topics": {"cluster": {"min_cluster_size": 5, "reduce_outliers": reduce,
                                                                    "outlier_threshold": -1}, "viz": "bertopic"}})
        ctx = StageContext(STAGE_BY_NAME["topics"], tmp_path / str(reduce), cfg, "sig", show_progress=False)
        (tmp_path / str(reduce)).mkdir()
        (tmp_path / str(reduce) / "ingest").symlink_to(tmp_path / "ingest")
        ctx.dir.mkdir(parents=True)
        counts = run(ctx)
        rows[reduce] = [json.loads(line) for line in (ctx.dir / "assignments.jsonl").read_text("utf-8").splitlines()]
        assert counts["outliers_reassigned"] == sum(r["reassigned"] for r in rows[reduce])
    before = {r["report_id"]: r for r in rows[False]}
    moved = [r for r in rows[True] if r["reassigned"]]
    assert moved and not any(r["reassigned"] for r in rows[False])
    # only titles HDBSCAN left out moved, into a topic of their own industry; the others kept their topic
    assert all(before[r["report_id"]]["leaf_topic"] == "t-1" and r["leaf_topic"] != "t-1" for r in moved)
    topic_inds = {}
    for r in rows[True]:
        if not r["reassigned"]:
            topic_inds.setdefault(r["leaf_topic"], set()).add(r["industry"])
    assert all(r["industry"] in topic_inds[r["leaf_topic"]] for r in moved)
    assert all(r["leaf_topic"] == before[r["report_id"]]["leaf_topic"] for r in rows[True] if not r["reassigned"])


def test_titles_with_no_tokens_give_no_keywords_and_still_a_hierarchy():
    # titles of stopwords and figures only: sklearn's CountVectorizer would raise 「empty vocabulary」
    model, kw, rows = topic_keywords([[], [], []], [0, 1, 2], top_n=3)
    assert kw == {0: [], 1: [], 2: []}
    merges, Z = ward_hierarchy(model, [rows[0], rows[1], rows[2]], [0, 1, 2])
    assert len(merges) == 2 and merges[-1].Topics == (0, 1, 2) and merges[-1].Parent_Name == ""
