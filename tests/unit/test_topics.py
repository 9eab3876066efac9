"""Topics stage: titles, Time2Vec, dominance and subtrees, classifiers, clustering, intents, stage run."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from fincprg.config import ClusterConfig, IntentConfig, LLMConfig, PipelineConfig
from fincprg.finance.industries import CITIC_INDUSTRIES, SW2021_TO_CITIC, to_citic
from fincprg.records import Report
from fincprg.topics.classify import IndustryClassifier, LexiconClassifier, TransformersClassifier
from fincprg.topics.cluster import TopicTree
from fincprg.models.embedders import ClassifierEmbedder, LSAEmbedder
from fincprg.topics.intents import TopicInput, llm_intents, template_intents, to_queries, validate
from fincprg.topics.subtrees import build_nodes, dominant, subtree_for
from fincprg.topics.time2vec import DIM, PERIODS_DAYS, time2vec
from fincprg.topics.titles import select_titles


def _r(i: int, title: str, **kw) -> Report:
    return Report(id=f"r{i}", title=title, text="正文。", **kw)


def test_taxonomy_tables():
    assert len(CITIC_INDUSTRIES) == 30 and len(set(CITIC_INDUSTRIES)) == 30
    assert len(SW2021_TO_CITIC) == 31 and set(SW2021_TO_CITIC.values()) <= set(CITIC_INDUSTRIES)
    assert to_citic("医药生物") == "医药" and to_citic("半导体") == "电子" and to_citic("火星") is None


def test_title_filter_and_dedup():
    reports = [_r(0, "早报"), _r(1, "晨会纪要"), _r(2, "光伏行业周报：组件价格企稳"),
               _r(3, "光伏行业周报: 组件价格企稳 "), _r(4, "  "), _r(5, "AI PC 2024 Q1"),
               _r(6, "白酒行业点评：春节动销平稳")]
    kept, dropped = select_titles(reports, min_chars=5)
    assert [t.report_id for t in kept] == ["r2", "r6"]
    reasons = {t.report_id: (t.reason, t.duplicate_of) for t in dropped}
    assert reasons == {"r0": ("too_short", None), "r1": ("too_short", None), "r3": ("duplicate", "r2"),
                       "r4": ("empty", None), "r5": ("too_short", None)}


def test_time2vec_shapes_and_periodicity():
    ref = dt.date(2024, 1, 1)
    dates = [ref + dt.timedelta(days=d) for d in (0, 7, 14, 365, 730)] + [None]
    v = time2vec(dates, reference=ref, weight=1.0)
    assert v.shape == (6, DIM) == (6, 6) and v.dtype == np.float32
    assert np.all(v[-1] == 0)  # missing date -> zeros
    scale = 1 / np.sqrt(DIM)
    assert v[4, 0] == pytest.approx(scale)  # linear term: t / span, largest |t| -> 1
    # the weekly term repeats every 7 days, and differs within the week
    assert v[1, 1] == pytest.approx(v[0, 1], abs=1e-5) == pytest.approx(v[2, 1], abs=1e-5)
    mid = time2vec([ref, ref + dt.timedelta(days=2)], reference=ref)
    assert abs(mid[1, 1] - mid[0, 1]) > 0.05
    t = 100.0
    expected = [np.sin(2 * np.pi * t / p) * 0.5 * scale for p in PERIODS_DAYS]
    w = time2vec([ref, ref + dt.timedelta(days=100), ref + dt.timedelta(days=200)], reference=ref, weight=0.5)
    np.testing.assert_allclose(w[1, 1:], expected, atol=1e-6)
    assert np.linalg.norm(w, axis=1).max() <= 0.5 + 1e-6


def test_dominance_rule_exact_two_thirds():
    assert dominant(["银行", "银行", "电子"]) is None  # exactly 2/3 is not more than 2/3
    assert dominant(["银行", "银行", "银行", "电子"]) == "银行"
    assert dominant([None, None, None, "电子"]) is None
    assert dominant(["银行"] * 67 + ["电子"] * 33) == "银行"
    assert dominant(["银行", "电子"], dominance=0.5) is None


def _hand_tree() -> tuple[TopicTree, list[str], list[str | None]]:
    # root h5 = {h4, t2}; h4 = {t0, t1}; t-1 outliers under the root
    topics = [0, 0, 0, 1, 1, 1, 2, 2, 2, -1]
    inds = ["银行", "银行", "银行", "银行", "银行", "电子", "电子", "电子", "银行", "电子"]
    tree = TopicTree(topics, {"t0": ["a"], "t1": ["b"], "t2": ["c"], "h4": ["a", "b"], "h5": ["x"], "t-1": []},
                     {"t0": "h4", "t1": "h4", "h4": "h5", "t2": "h5", "h5": None, "t-1": "h5"},
                     {"h4": ["t0", "t1"], "h5": ["h4", "t2", "t-1"]}, "h5")
    return tree, [f"r{i}" for i in range(10)], inds


def test_subtree_selection_on_hand_built_tree():
    tree, ids, inds = _hand_tree()
    nodes = build_nodes(tree, ids, inds)
    assert nodes["t0"].industry == "银行" and nodes["t1"].industry is None  # 2/3 only
    assert nodes["h4"].industry == "银行"  # 5/6
    assert nodes["t2"].industry is None and nodes["t-1"].industry is None
    assert nodes["h5"].industry is None  # 6/10
    assert nodes["h5"].size == 10 and set(nodes["h4"].title_ids) == {f"r{i}" for i in range(6)}
    assert subtree_for("t0", "银行", nodes) == "h4"
    assert subtree_for("t1", "银行", nodes) == "h4"  # leaf not dominant, parent is
    assert subtree_for("t1", "电子", nodes) == "t1"  # fallback: the leaf
    assert subtree_for("t2", "电子", nodes) == "t2"
    assert subtree_for("t-1", "银行", nodes) == "t-1"


def test_lexicon_classifier_and_company_hint():
    clf = LexiconClassifier(companies={"星河科技": "计算机"})
    assert isinstance(clf, IndustryClassifier)
    got = clf.classify(["电力设备行业周报：光伏组件排产回升", "银行业点评：净息差企稳", "星河科技：订单增长",
                        "今日天气晴朗"])
    assert got == ["电力设备及新能源", "银行", "计算机", None]


def _tiny_classifier(tmp_path: Path) -> Path:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    chars = sorted(set("光伏组件价格银行净息差白酒动销游戏版号行业周报点评") | set("0123456789"))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *[f"##{d}" for d in range(10)]]
    d = tmp_path / "clf"
    d.mkdir()
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    labels = ["电力设备及新能源", "银行", "非银金融"]  # Shenwan name must map to CITIC
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=64, num_labels=3,
                     id2label=dict(enumerate(labels)), label2id={v: i for i, v in enumerate(labels)},
                     initializer_range=1.0)
    BertForSequenceClassification(cfg).save_pretrained(d)
    BertTokenizer.from_pretrained(str(d)).save_pretrained(d)
    return d


def test_transformers_classifier_from_local_folder(tmp_path):
    clf = TransformersClassifier(str(_tiny_classifier(tmp_path)), batch_size=2)
    assert isinstance(clf, IndustryClassifier)
    assert clf.labels == ("电力设备及新能源", "银行", "非银行金融")
    titles = ["光伏组件价格", "银行净息差", "白酒动销", "光伏组件价格"]
    labels = clf.classify(titles)
    assert len(labels) == 4 and set(labels) <= set(clf.labels) and labels[0] == labels[3]
    emb = clf.embed(titles)
    assert emb.shape == (4, 16) and np.allclose(emb[0], emb[3])
    assert not np.allclose(emb[0], emb[1])  # initializer_range=1.0: distinguishable states
    # topics.stage.embed_titles relies on every embedder returning unit rows (no second normalisation)
    unit = ClassifierEmbedder(clf).embed(titles)
    assert unit.dtype == np.float32 and np.allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-5)


def test_lsa_embedder_returns_unit_float32_rows():
    titles = ["光伏组件价格下跌", "银行净息差收窄", "白酒动销改善", "光伏装机超预期", "券商经纪业务"]
    emb = LSAEmbedder(dim=3, seed=0).embed(titles)
    assert emb.dtype == np.float32 and emb.shape[0] == 5
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)


@pytest.mark.slow
def test_clustering_is_deterministic_with_injected_kmeans_and_hdbscan():
    from sklearn.cluster import KMeans
    from sklearn.datasets import make_blobs

    from fincprg.topics.cluster import cluster_titles

    X, y = make_blobs(n_samples=90, centers=3, n_features=6, random_state=1, cluster_std=0.5)
    words = ["光伏组件价格", "白酒批价动销", "银行净息差"]
    docs = [f"{words[c]}第{i}期" for i, c in enumerate(y)]
    a = cluster_titles(docs, X, ClusterConfig(min_cluster_size=5))
    b = cluster_titles(docs, X, ClusterConfig(min_cluster_size=5))
    assert a.topics == b.topics and a.children == b.children and a.keywords == b.keywords
    assert a.n_topics == 3 and a.root.startswith("h")
    leaves = {n for n in a.parent if n.startswith("t")}
    assert leaves == {"t0", "t1", "t2"} and a.parent[a.root] is None
    k = cluster_titles(docs, X, ClusterConfig(min_cluster_size=5),
                       clusterer=KMeans(n_clusters=3, random_state=0, n_init=3))
    assert k.n_topics == 3 and k.outlier_share == 0.0
    assert {frozenset(np.flatnonzero(np.array(k.topics) == t)) for t in range(3)} == \
        {frozenset(np.flatnonzero(y == c)) for c in range(3)}
    tiny = cluster_titles(docs[:3], X[:3], ClusterConfig(min_cluster_size=5))
    assert tiny.topics == [0, 0, 0] and tiny.root == "t0"


def test_template_intents_and_validation():
    t = TopicInput("t3", ("组件", "价格", "排产"), ("光伏组件价格企稳",), "电力设备及新能源",
                   (dt.date(2024, 7, 2), dt.date(2024, 8, 30)))
    out = template_intents(t, max_subqueries=2)
    assert all(w in out[0]["intent"] for w in ("2024年第三季度", "电力设备及新能源行业", "组件")), out
    # 价格 and 排产 name no industry term, metric or event: no question is built on them
    [sq] = out[0]["subqueries"]
    assert sq.startswith("2024年第三季度电力设备及新能源行业组件") and sq.endswith("？"), sq
    assert all("、" not in q for q in [out[0]["intent"], *out[0]["subqueries"]])
    titles = ("景津装备（603279）：2021年营业收入高增，配件业务放量", "华鲁恒升（600426）：业绩符合预期")
    # a filter-press maker and a chemical maker: neither is the topic's subject, and their titles share no theme;
    # neither has more than half the reports, so no topic query names one (issue 50)
    assert template_intents(TopicInput("t4", ("配件",), titles, "机械"), max_subqueries=3) == []
    queries = to_queries("t4", [{"intent": "", "subqueries": ["配件业务进展如何？"]}], {})
    assert [q.level for q in queries] == ["topic"] and queries[0].parent_id is None
    [own] = template_intents(TopicInput("t4", ("配件",), (titles[0], titles[0].replace("2021", "2022"), titles[1]),
                                        "机械"), max_subqueries=3)
    assert own["subqueries"][0].startswith("景津装备2021年营业收入"), own
    assert "景津装备" in own["intent"] and "华鲁恒升" not in own["intent"], own
    assert validate({"intents": [{"intent": "x", "subqueries": ["a", "a", " "]}]}) == \
        [{"intent": "x", "subqueries": ["a"]}]
    with pytest.raises(ValueError):
        validate([{"intent": "", "subqueries": ["a"]}])


def _write_reports(out: Path, reports: list[Report]) -> None:
    (out / "ingest").mkdir(parents=True)
    (out / "ingest" / "reports.jsonl").write_text("".join(r.to_json() + "\n" for r in reports), encoding="utf-8")


def _corpus() -> list[Report]:
    base = dt.date(2024, 3, 1)
    themes = [("光伏组件价格企稳排产回升", "电力设备"), ("银行净息差收窄信贷投放", "银行Ⅱ"),
              ("白酒春节动销批价稳定", None), ("游戏版号发放新品上线", "游戏")]
    reps = [_r(1000, "早报"), _r(1001, "晨会纪要")]
    for k, (theme, ind) in enumerate(themes):
        for j in range(12):
            reps.append(_r(k * 100 + j, f"{theme}专题第{j}篇：{theme[:4]}观察{'甲乙丙丁戊己庚辛壬癸子丑'[j]}",
                           date=base + dt.timedelta(days=3 * j + k), industry=ind))
    return reps


@pytest.mark.slow
def test_offline_stage_produces_topic_queries(tmp_path):
    from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext
    from fincprg.topics.stage import run

    _write_reports(tmp_path, _corpus())
    cfg = PipelineConfig.model_validate({"topics": {"cluster": {"min_cluster_size": 5}, "viz": "simple"}})
    ctx = StageContext(STAGE_BY_NAME["topics"], tmp_path, cfg, "sig", show_progress=False)
    ctx.dir.mkdir(parents=True)
    counts = run(ctx)
    d = ctx.dir
    assert counts["titles_kept"] == 48 and counts["titles_dropped"] == {"too_short": 2}
    assert counts["topics"] >= 2 and counts["subqueries"] > 0
    queries = [json.loads(line) for line in (d / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    intents = {q["id"]: q for q in queries if q["level"] == "intent"}
    subs = [q for q in queries if q["level"] == "topic"]
    assert subs and all(q["parent_id"] in intents and q["id"].startswith("qt:") for q in subs)
    assert all(q["provenance"]["generator"] == "templates" for q in queries)
    tree = json.loads((d / "tree.json").read_text(encoding="utf-8"))
    ids = {n["id"] for n in tree["nodes"]}
    assert tree["root"] in ids
    rows = [json.loads(line) for line in (d / "assignments.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 48 and all(r["leaf_topic"] in ids and r["subtree_topic"] in ids for r in rows)
    bank = [r for r in rows if r["title"].startswith("银行")]
    assert all(r["industry"] == "银行" for r in bank)  # East Money 银行Ⅱ mapped via metadata
    assert {r["industry"] for r in rows if r["title"].startswith("白酒")} == {"食品饮料"}  # lexicon
    assert (d / "topics.html").stat().st_size > 100 and (d / "hierarchy.html").exists()
    titles = [json.loads(line) for line in (d / "titles.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(titles) == 50 and sum(not t["kept"] for t in titles) == 2


def test_llm_intents_against_local_server(llm_server, tmp_path):
    calls = []

    def responder(req):
        calls.append(req)
        user = req["messages"][-1]["content"]
        if "光伏组件价格企稳" in user and len(req["messages"]) == 2:
            return "好的：```json\n[{\"intent\": \"了解光伏组件价格走势\", \"subqueries\": [\"组件价格为何企稳？\", \"排产如何？\"]}]\n```"
        if "光伏组件价格企稳" in user:
            return "[]"
        return "not json at all"

    llm_server.set_responder(responder)
    cfg = LLMConfig(base_url=llm_server.base_url, model="test-model", max_retries=0, cache=False)
    topics = [TopicInput("t0", ("组件", "价格"), ("光伏组件价格企稳",), "电力设备及新能源"),
              TopicInput("t1", ("息差",), ("银行净息差收窄",), "银行")]
    done, failures, stats = llm_intents(topics, IntentConfig(backend="llm"), cfg, tmp_path / "cache")
    assert done == {"t0": [{"intent": "了解光伏组件价格走势", "subqueries": ["组件价格为何企稳？", "排产如何？"]}]}
    assert [f.item_id for f in failures] == ["t1"] and failures[0].raw == "not json at all"
    # requests run concurrently, so find t0's by content rather than by arrival order
    first = next(c["messages"] for c in calls if "光伏组件价格企稳" in c["messages"][1]["content"])
    assert first[0]["role"] == "system" and "组件" in first[1]["content"] and "光伏组件价格企稳" in first[1]["content"]
    assert len(calls) == 3  # two asks + one re-ask for the invalid answer
    assert stats["template"] == "topic_intent.zh"


def test_industry_block_separates_industries_and_marks_unknown():
    from fincprg.finance.industries import CITIC_INDUSTRIES
    from fincprg.topics.stage import industry_block

    block = industry_block(["电子", "电子", "银行", None], 0.5)
    assert block.shape == (4, len(CITIC_INDUSTRIES) + 1)
    assert (block[0] == block[1]).all() and not (block[0] == block[2]).all()
    assert block[3, -1] == 0.5 and block.sum() == 2.0


def test_a_term_is_asked_as_its_own_sector():
    """Issue 38's 「X行业Y」 joins, as a class: a term the titles write as a 行业 is asked as that 行业, a term of
    another industry without the topic's industry, one of the topic's industry within it; a price has a 走势."""
    from fincprg.topics.intent_templates import term_scope

    fluoro = ("氟化工行业周报：制冷剂价格平稳", "氟化工行业周报：萤石行情复苏", "基础化工周报：氟化工景气")
    assert term_scope("氟化工", "2025年基础化工行业", "基础化工", fluoro) == ("2025年", "氟化工行业")
    reits = ("REITs周报：指数上涨", "REITs周报：消费REITs领涨")
    assert term_scope("REITs", "2026年综合金融行业", "综合金融", reits) == ("2026年", "REITs")
    drugs = ("医药行业创新药周报：3月第二周", "医药行业创新药周报：4月第一周")
    assert term_scope("创新药", "2025年医药行业", "医药", drugs) == ("2025年医药行业", "创新药")
    assert term_scope("疫情", "2022年医药行业", "医药", drugs) == ("2022年医药行业", "疫情")  # an event keeps it
    hogs = TopicInput("t9", ("猪价", "生猪"), ("农林牧渔周报：猪价上涨", "农林牧渔周报：猪价继续新高"), "农林牧渔",
                      (dt.date(2024, 7, 1), dt.date(2024, 8, 1)))
    [it] = template_intents(hogs)
    assert it["intent"].endswith("猪价的走势") or it["intent"].endswith("猪价的变化")
    assert all("前景" not in q and "发展趋势" not in q for q in it["subqueries"] if "猪价" in q), it


def test_a_theme_half_the_titles_write_is_no_intent():
    """The theme is what the titles agree on: more than half of them write it (存款 in two of four bank titles about
    社融, LPR and the central bank's balance sheet is no intent)."""
    from fincprg.topics.intent_templates import shared_keyword

    titles = ("银行6月社融符合预期", "8月LPR维持不变", "信贷收支表解读：非银转向一般性存款", "非银存款高增背后：存款搬家")
    assert shared_keyword(("存款", "社融"), titles, "银行") is None
    assert shared_keyword(("存款", "社融"), (titles[0], *titles[2:], "存款利率下调"), "银行") == "存款"


def test_generic_words_make_no_theme_and_a_term_is_asked_as_the_titles_write_it():
    """Readings 20 and 21's vague themes, as a class: a head noun or a bare measure (设备, 销量 over excavator and
    forklift sales) is no theme; a theme term every title writes after the same noun is asked with it, never with
    a verb of the titles' advice (reading 22's 「关注家居」) nor with words after it (信息技术产业)."""
    from fincprg.topics.topic_input import common_run

    sales = TopicInput("t1", ("销量", "设备"), ("工程机械点评：挖机销量好于预期，设备更新", "工程机械点评：叉车销量增长，设备出口",
                                               "工程机械点评：装载机销量回升，设备需求"), "机械")
    assert template_intents(sales) == []
    assert common_run("航天", ["商业航天周报：组网加速", "商业航天周报：发射高峰"]) == "商业航天"
    assert common_run("家居", ["轻工行业周报：持续关注家居板块", "轻工周报：持续关注家居"]) == "家居"
    assert common_run("信息技术", ["信息技术产业行业研究：大会", "信息技术产业行业周报：AI"]) == "信息技术"  # no word after
    assert common_run("销量", ["挖机销量好于预期", "叉车销量增长"]) == "销量"


def test_a_theme_keeps_the_industry_its_titles_name_and_the_years_they_write():
    """Reading 22: AI in medical weeklies is 医药行业AI, not AI; titles published in January 2026 about 2025 ask 2025."""
    from fincprg.topics.intent_templates import term_scope

    med = ("医药行业周报：AI医疗加速落地", "医药行业周报：AI制药进展", "医药周报：AI辅助诊断获批")
    assert term_scope("AI", "2025年医药行业", "医药", med) == ("2025年医药行业", "AI")
    snacks = TopicInput("t", ("零食",), ("2025零食电商趋势报告", "2025年零食电商洞察"), "食品饮料",
                        title_dates=(dt.date(2026, 1, 5), dt.date(2026, 1, 20)))
    assert snacks.period_of("零食") == "2025年"


def test_the_industrys_own_name_never_grows_into_a_theme_and_no_intent_presumes_cycle_data():
    """Reading 22: 电力行业 (the industry) grew into 「电力设备及新能源行业新能源电力行业」; 「FDA的景气变化」 and an education
    topic's 「景气变化」 presumed cycle data the reports do not give."""
    from fincprg.topics.intent_templates import term_scope

    assert term_scope("新能源电力行业", "2024年电力设备及新能源行业", "电力设备及新能源", ()) == ("2024年", "新能源电力行业")
    power = TopicInput("t1", ("电力行业", "风电"), ("新能源电力行业周报：风电价格维稳", "新能源电力行业周报：风电招标增长",
                                                 "新能源电力行业周报：风电中标价格稳定"), "电力设备及新能源")
    intents = template_intents(power)
    assert intents and all("新能源电力行业" not in it["intent"] for it in intents), intents
    fda = TopicInput("t2", ("FDA",), ("医药行业周报：FDA批准新药", "医药行业周报：FDA加速审批", "医药周报：FDA新规"), "医药",
                     (dt.date(2025, 3, 1), dt.date(2025, 9, 1)))
    assert all("景气" not in it["intent"] for it in template_intents(fda))


def test_a_keyword_two_of_many_titles_write_is_no_question_of_the_topic():
    """Reading 22: IDC, a side business two of seven environmental weeklies mention, asked as the topic's."""
    from fincprg.topics.intent_templates import _keyword_question

    titles = ("环保周报：固废龙头布局IDC", "环保周报：垃圾焚烧企业跨界IDC", "环保周报：水务提价", "环保周报：固废招标回暖",
              "环保周报：再生资源政策", "环保周报：环卫装备电动化", "环保周报：碳市场扩容")
    assert _keyword_question("t", "IDC", "2025年环保行业", "环保", titles) == ""
    assert _keyword_question("t", "IDC", "2025年环保行业", "环保", titles[:4]) != ""
