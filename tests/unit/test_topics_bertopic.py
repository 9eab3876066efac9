"""The default ``bertopic`` topics engine: a real BERTopic on fincprg's clusters, saved for ``BERTopic.load``."""
from __future__ import annotations

import json

import numpy as np
import pytest

from fincprg.config import ClusterConfig, PipelineConfig
from fincprg.topics.cluster import topic_tokens


def test_bertopic_is_the_default_engine():
    assert ClusterConfig().engine == "bertopic" and PipelineConfig().topics.cluster.engine == "bertopic"


def test_joined_titles_tokenise_as_their_titles():
    from fincprg.topics.bertopic_engine import JoinedTokens

    # BERTopic counts a topic as its titles joined with spaces; a title may hold spaces itself
    titles = ["光伏组件价格企稳，排产回升", "白酒 春节动销 批价稳定", "银行净息差收窄：1,234亿元信贷投放"]
    tok = JoinedTokens()
    assert tok(" ".join(titles)) == [t for title in titles for t in topic_tokens(title)]
    assert tok("\u3000".join(titles)) == tok(" ".join(titles))  # any whitespace separates, as in jieba


def _run_stage(tmp_path, engine: str, **cluster):
    from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext
    from fincprg.topics.stage import run
    from tests.unit.test_topics import _corpus, _write_reports

    if not (tmp_path / "ingest").exists():
        _write_reports(tmp_path, _corpus())
    cfg = PipelineConfig.model_validate({"topics": {"cluster": {"min_cluster_size": 5, "engine": engine, **cluster},
                                                    "viz": "bertopic"}})
    # a signature per engine: the second run re-clusters instead of resuming after the first one's clustering
    ctx = StageContext(STAGE_BY_NAME["topics"], tmp_path, cfg, f"sig-{engine}", show_progress=False)
    ctx.dir.mkdir(parents=True, exist_ok=True)
    return ctx, run(ctx)


@pytest.mark.slow
def test_stage_saves_a_model_that_bertopic_load_opens(tmp_path):
    from bertopic import BERTopic

    ctx, counts = _run_stage(tmp_path, "bertopic", outlier_threshold=-1)
    folder = ctx.dir / "bertopic"
    assert (folder / "topic_embeddings.safetensors").exists() and (folder / "ctfidf.safetensors").exists()
    model = BERTopic.load(str(folder))
    tree = json.loads((ctx.dir / "tree.json").read_text("utf-8"))
    rows = [json.loads(x) for x in (ctx.dir / "assignments.jsonl").read_text("utf-8").splitlines()]
    # the saved model holds the stage's topics: one per kept title, the same ids and the same keywords
    assert model.topics_ == [int(r["leaf_topic"][1:]) for r in rows]
    leaves = {n["id"]: n["keywords"] for n in tree["nodes"] if n["is_leaf"] and n["id"] != "t-1"}
    assert len(leaves) == counts["topics"] >= 2
    assert {f"t{k}": [w for w, _ in model.get_topic(k) if w] for k in range(counts["topics"])} == leaves
    assert model.c_tf_idf_.shape[0] == counts["topics"] + (-1 in model.topics_)
    for fig in (model.visualize_barchart(), model.visualize_hierarchy()):
        assert fig.data  # BERTopic's plotly figures draw from the loaded model
    meta = json.loads((folder / "fincprg.json").read_text("utf-8"))
    assert meta["outliers_reassigned"] == counts["outliers_reassigned"] > 0
    assert "reassign_outliers" in meta["outlier_reduction"] and "IndustryHDBSCAN" in meta["hdbscan_model"]
    # the topics.html and hierarchy.html pages are BERTopic's figures
    assert counts["viz"] == "bertopic" and "plotly" in (ctx.dir / "topics.html").read_text("utf-8")[:20000]
    # a re-run with the native engine leaves no stale model behind
    ctx, _ = _run_stage(tmp_path, "native")
    assert not (ctx.dir / "bertopic").exists()


class _Fixed:
    """A clusterer with given labels (BERTopic's ``hdbscan_model`` needs only ``fit`` and ``labels_``)."""

    def __init__(self, labels):
        self.labels_ = np.asarray(labels)

    def fit(self, X, y=None):
        return self


@pytest.mark.slow
def test_ties_in_sizes_and_scores_follow_the_clusterer_and_the_vocabulary():
    from fincprg.topics.cluster import cluster_titles

    # three topics of 12 titles each, first seen in the order 2, 0, 1, and words that tie in c-TF-IDF score:
    # BERTopic's own sorts (numpy's SIMD sorts, not stable) may order such ties differently on another CPU
    labels = [(2, 0, 1)[i % 3] for i in range(36)]
    words = ["光伏组件 排产 硅料", "白酒 批价 动销", "银行 息差 信贷"]
    docs = [f"{words[k]} 第{i}期" for i, k in enumerate(labels)]
    X = np.random.default_rng(0).normal(size=(36, 4)).astype(np.float32)
    tree = cluster_titles(docs, X, ClusterConfig(min_cluster_size=5), clusterer=_Fixed(labels))
    assert tree.topics == [(0, 1, 2)[i % 3] for i in range(36)]  # equal sizes: numbered by first title
    vocab = list(tree.model.vectorizer_model.get_feature_names_out())
    for k in range(3):
        kw = tree.keywords[f"t{k}"]
        row = tree.model.c_tf_idf_[k].toarray().ravel()
        scores = [row[vocab.index(w)] for w in kw]
        assert scores == sorted(scores, reverse=True) and len(set(scores)) < len(scores)  # some ties
        assert all(vocab.index(a) < vocab.index(b) for a, b, sa, sb in zip(kw, kw[1:], scores, scores[1:])
                   if sa == sb)  # ties by vocabulary position


def test_cluster_then_reduce_marks_the_titles_it_moved():
    from fincprg.topics.bertopic_engine import ClusterThenReduce

    emb = np.array([[1, 0], [1, 0.1], [0.9, 0.2], [0, 1], [0.1, 1], [0.2, 0.9], [-1, -0.1]], dtype=np.float32)
    cfg = ClusterConfig(outlier_scope="all", outlier_threshold=0.0)
    model = ClusterThenReduce(_Fixed([5, 5, -1, 2, 2, 2, -1]), emb, None, cfg).fit(emb)
    # numbered by size (2 -> 0, 5 -> 1), then row 2 joins its nearest topic; row 6 points away from both
    assert model.labels_.tolist() == [1, 1, 1, 0, 0, 0, -1] and model.moved == [False, False, True] + [False] * 4
    off = ClusterThenReduce(_Fixed([5, 5, -1, 2, 2, 2, -1]), emb, None, ClusterConfig(reduce_outliers=False)).fit(emb)
    assert off.labels_.tolist() == [1, 1, -1, 0, 0, 0, -1] and not any(off.moved)


def test_hierarchy_distances_never_go_negative():
    """Two topics with the same c-TF-IDF row are -2e-16 apart in float rounding; BERTopic refused such a
    hierarchy, and the 49k-title build fell back to a single topic (issue 38's mixed build)."""
    import numpy as np
    from bertopic._utils import validate_distance_matrix
    from sklearn.metrics.pairwise import cosine_similarity

    from fincprg.topics.bertopic_engine import topic_distances

    rng = np.random.default_rng(0)
    for _ in range(50):  # a row whose cosine with itself rounds above 1
        v = rng.random((1, 7))
        x = np.vstack([v, v, rng.random((1, 7))])
        if (1 - cosine_similarity(x))[0, 1] < 0:
            break
    with pytest.raises(ValueError, match="negative"):
        validate_distance_matrix(1 - cosine_similarity(x), 3)
    d = topic_distances(x)
    validate_distance_matrix(d, 3)
    assert d[0, 1] == 0 and d[0, 2] == (1 - cosine_similarity(x))[0, 2]


def test_a_failed_fit_says_so_aloud(caplog):
    """Titles with no word to count (an empty vocabulary) cannot fit; the single-topic fallback is logged as a
    warning, not only noted in the manifest."""
    import logging

    import numpy as np

    from fincprg.config import ClusterConfig
    from fincprg.topics.cluster import cluster_titles

    X = np.random.default_rng(0).random((20, 4)).astype(np.float32)
    with caplog.at_level(logging.WARNING, logger="fincprg.topics.cluster"):
        tree = cluster_titles(["的"] * 20, X, ClusterConfig(min_cluster_size=3, engine="bertopic"))
    assert tree.n_topics == 1 and any("single topic" in n for n in tree.notes)
    assert any("BERTopic failed on 20 titles" in r.getMessage() for r in caplog.records)
