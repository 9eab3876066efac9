"""The FiQA study's rerankers (linear, rubric-point, rubric-list), the rewrite ablation and the LLM scorers of
cards/borda, each on a tiny BEIR folder built so that its ranking differs from plain BM25 in a known way.
The LLM runs go through the real client against the local OpenAI-compatible test server."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from fincprg.errors import ConfigError
from fincprg.evaluate.harness import run_eval
from fincprg.evaluate.retrievers import build_retriever
from fincprg.evaluate.retrievers.base import ranked

FILLER = "，公司经营稳健，管理层持续优化产品结构，渠道建设稳步推进，研发投入保持较高水平，现金流状况良好。"
COMPANIES = ["星河科技", "宏达电子", "远航物流", "金穗农业", "蓝海能源", "华辰医药", "天启软件", "恒通材料",
             "北辰汽车", "南山建材", "东方影视", "西岭矿业", "云帆航运", "青石环保", "紫光半导", "赤城食品",
             "白鹭家居", "黑岩装备", "锦程旅游", "鸿运化工"]


def write_beir(folder: Path, corpus: dict[str, str], queries: dict[str, str],
               qrels: dict[str, dict[str, list[str]]]) -> Path:
    """``qrels``: split -> query -> relevant doc ids; written as qrels/<split>.tsv."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}, ensure_ascii=False)
                                                 + "\n" for d, t in corpus.items()), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n"
                                                  for q, t in queries.items()), encoding="utf-8")
    for split, rel in qrels.items():
        rows = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t1" for q, ds in rel.items() for d in ds]
        (folder / "qrels" / f"{split}.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def length_case(folder: Path, *, with_train: bool) -> Path:
    """Every company has a bare one-line passage and the same line followed by filler; the long one is the
    relevant one. BM25's length normalisation prefers the short one, so only a learned model gets it right."""
    corpus, queries, rel = {}, {}, {}
    for i, c in enumerate(COMPANIES):
        corpus[f"s{i}"] = f"{c}营业收入"
        corpus[f"l{i}"] = f"{c}营业收入{FILLER}"
        queries[f"q{i}"] = f"{c}的营业收入是多少？"
        rel[f"q{i}"] = [f"l{i}"]
    if not with_train:
        return write_beir(folder, corpus, queries, {"test": rel})
    train = {q: d for q, d in rel.items() if int(q[1:]) < 12}
    test = {q: d for q, d in rel.items() if int(q[1:]) >= 12}
    return write_beir(folder, corpus, queries, {"test": test, "train": train})


def _top1(res, spec: str, subset: str = "all") -> float:
    return res.scores[spec][subset]["R@1"]


def test_linear_learns_what_bm25_gets_wrong_from_train_qrels(tmp_path):
    res = run_eval(length_case(tmp_path / "ds", with_train=True), ["bm25", "linear"], show_progress=False,
                   keep_runs=True)
    assert not res.failures
    assert _top1(res, "bm25") == 0.0  # the constructed case: BM25 puts the short passage first every time
    assert _top1(res, "linear") == 1.0
    ex = res.extras["linear"]
    assert ex["train_queries"] == 12 and ex["crossfit_folds"] == 0  # the 12 train queries, not the 8 test ones
    assert set(res.runs["linear"]) == {f"q{i}" for i in range(12, 20)}


def test_linear_cross_fits_when_the_folder_has_no_train_qrels(tmp_path):
    res = run_eval(length_case(tmp_path / "ds", with_train=False), ["linear"], show_progress=False)
    assert res.extras["linear"]["crossfit_folds"] == 5
    assert _top1(res, "linear") == 1.0  # each fold learns the pattern from the other four


def test_linear_without_any_labels_fails_with_a_fix(tmp_path):
    from fincprg.evaluate.retrievers.base import TrainingData

    r = build_retriever("linear", show_progress=False)
    r.fit({"a": {"title": "", "text": "星河科技营业收入"}, "b": {"title": "", "text": "宏达电子净利润"}})
    r.set_training(TrainingData(None, "test", {"x": "星河科技"}, {}))
    with pytest.raises(Exception, match="relevant document"):
        r.search({"x": "星河科技"}, 5)


def phrase_case(folder: Path) -> Path:
    """Two passages with the same words, one with the query's words adjacent (the phrase), one shuffled; the
    shuffled one comes first in the corpus and by id, so BM25 and LSA (equal scores) keep it on top."""
    corpus = {"a-shuffled": "毛利率方面，储能业务与星河科技海外订单",
              "b-phrase": "星河科技储能业务毛利率方面，海外订单",
              "c-other": "宏达电子消费电子业务收入下滑"}
    return write_beir(folder, corpus, {"q": "星河科技储能业务毛利率"}, {"test": {"q": ["b-phrase"]}})


@pytest.mark.parametrize("spec", ["rubric-point", "rubric-list"])
def test_rubrics_reward_the_exact_phrase_bm25_cannot_see(tmp_path, spec):
    res = run_eval(phrase_case(tmp_path / "ds"), ["bm25", spec], show_progress=False, keep_runs=True)
    bm = res.runs["bm25"]["q"]
    assert bm["b-phrase"] == pytest.approx(bm["a-shuffled"])  # same bag of words
    assert ranked(bm)[0] == "a-shuffled"
    assert ranked(res.runs[spec]["q"])[:2] == ["b-phrase", "a-shuffled"]
    assert res.extras[spec]["pool_recall@200:all"] == 1.0


def test_listwise_normalisation_changes_which_feature_decides():
    """Pointwise: candidate 0's small BM25 edge loses to candidate 1's phrase match. Listwise: each feature is
    stretched over the list, so the BM25 edge counts in full and candidate 0 wins."""
    from fincprg.evaluate.retrievers.features import FEATURES
    from fincprg.evaluate.retrievers.learned import RUBRIC, _listwise

    w = np.array([RUBRIC.get(f, 0.0) for f in FEATURES])
    x = np.full((3, len(FEATURES)), 0.5)
    x[:, FEATURES.index("bm25")] = [0.52, 0.50, 0.49]
    x[:, FEATURES.index("phrase")] = [0.0, 0.2, 0.0]
    assert np.argmax(x @ w) == 1
    assert np.argmax(_listwise(x) @ w) == 0
    assert (_listwise(x)[:, FEATURES.index("dense")] == 1.0).all()  # a constant feature separates nothing


def synonym_case(folder: Path) -> Path:
    """The query says 营收; the relevant passage says 营业收入; a distractor repeats the company name."""
    corpus = {"rel": "星河科技2023年实现营业收入120亿元", "dis": "星河科技召开股东大会，星河科技董事会完成换届",
              "other": "宏达电子营业收入下滑"}
    return write_beir(folder, corpus, {"q": "请问星河科技营收是多少？"}, {"test": {"q": ["rel"]}})


def test_rule_rewrite_adds_metric_synonyms_and_drops_question_words(tmp_path):
    from fincprg.evaluate.retrievers.rewrite import rule_rewrite

    new = rule_rewrite("请问星河科技营收是多少？")
    assert "营业收入" in new and "请问" not in new and "多少" not in new and "？" not in new
    res = run_eval(synonym_case(tmp_path / "ds"), ["bm25", "rewrite"], show_progress=False, keep_runs=True)
    assert ranked(res.runs["bm25"]["q"])[0] == "dis"
    assert ranked(res.runs["rewrite"]["q"])[0] == "rel"
    assert res.extras["rewrite"]["rewritten_fraction"] == 1.0


def _llm_config(tmp_path: Path, base_url: str) -> Path:
    p = tmp_path / "llm.yaml"
    p.write_text(f"llm:\n  base_url: {base_url}\n  model: test-model\n  max_retries: 0\n"
                 f"run:\n  cache_dir: {tmp_path / 'cache'}\n", encoding="utf-8")
    return p


def _user(req: dict) -> str:
    return req["messages"][-1]["content"]


def test_llm_rewrite_goes_through_the_client_and_falls_back_on_bad_answers(tmp_path, llm_server):
    llm_server.set_responder(lambda req: '{"query": "星河科技 营业收入"}' if "星河" in _user(req) else "no json")
    cfg = _llm_config(tmp_path, llm_server.base_url)
    folder = synonym_case(tmp_path / "ds")
    with open(folder / "queries.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"_id": "q2", "text": "宏达电子营业收入"}, ensure_ascii=False) + "\n")
    with open(folder / "qrels" / "test.tsv", "a", encoding="utf-8") as f:
        f.write("q2\tother\t1\n")
    spec = f"rewrite:llm:{cfg}"
    res = run_eval(folder, [spec], show_progress=False, keep_runs=True)
    assert not res.failures
    assert ranked(res.runs[spec]["q"])[0] == "rel"
    ex = res.extras[spec]
    assert ex["rewrite_failed"] == 1 and ex["llm_requests"] == 2 and ex["rewritten_fraction"] == 0.5
    assert ranked(res.runs[spec]["q2"])[0] == "other"  # the unparseable answer: the original query searched
    assert "星河科技营收" in _user(llm_server.requests[0]) or "星河科技营收" in _user(llm_server.requests[1])
    run_eval(folder, [spec], show_progress=False)  # again: the good answer is cached, the bad one asked again
    assert len(llm_server.requests) == 3


def _grader(gold: str, bad: str):
    """Grades each numbered passage of a passage_relevance prompt: 3 with ``gold``, 0 with ``bad``, else 1."""
    def respond(req: dict) -> str:
        passages = re.findall(r"^\[\d+\] (.*)$", _user(req), flags=re.M)
        return json.dumps({"scores": [3 if gold in p else 0 if bad in p else 1 for p in passages]})
    return respond


def llm_case(folder: Path) -> Path:
    """BM25 ranks the distractor first and the answer second; the grader knows which is which."""
    corpus = {"dis": "星河科技储能储能储能业务", "ans": "星河科技储能业务毛利率为22%，答案在此",
              **{f"x{i}": f"星河科技其他业务{i}" for i in range(6)}}
    return write_beir(folder, corpus, {"q": "星河科技储能业务"}, {"test": {"q": ["ans"]}})


@pytest.mark.parametrize("kind", ["cards", "borda"])
def test_cards_and_borda_take_an_llm_scorer(tmp_path, llm_server, kind, monkeypatch):
    from fincprg.llm import LLMClient

    closed: list[LLMClient] = []
    real_close = LLMClient.close
    monkeypatch.setattr(LLMClient, "close", lambda self: closed.append(self) or real_close(self))
    llm_server.set_responder(_grader("答案在此", "储能储能储能"))
    folder = llm_case(tmp_path / "ds")
    spec = f"{kind}:llm:{_llm_config(tmp_path, llm_server.base_url)}"
    res = run_eval(folder, ["bm25", spec], show_progress=False, keep_runs=True)
    assert not res.failures
    assert ranked(res.runs["bm25"]["q"])[:2] == ["dis", "ans"]
    order = ranked(res.runs[spec]["q"])
    assert order[0] == "ans" and order.index("dis") > 1  # the LLM's 0 sends BM25's top below the others
    ex = res.extras[spec]
    assert ex["llm_failed_groups"] == 0 and ex["llm_requests"] == len(llm_server.requests) > 0
    first = _user(llm_server.requests[0])
    assert "检索查询：星河科技储能业务" in first and "0–3" in first  # prompts/passage_relevance.zh.j2
    assert len(closed) == 1  # the search closes its client's sqlite cache


def test_an_unparseable_llm_grade_counts_as_failed_and_is_not_cached(tmp_path, llm_server):
    llm_server.set_responder(lambda req: '{"scores": [9]}')
    spec = f"cards:llm:{_llm_config(tmp_path, llm_server.base_url)}"
    folder = llm_case(tmp_path / "ds")
    res = run_eval(folder, [spec], show_progress=False, keep_runs=True)
    n = len(llm_server.requests)
    assert res.extras[spec]["llm_failed_groups"] == n == 2  # 8 pooled passages in groups of 5
    run_eval(folder, [spec], show_progress=False)
    assert len(llm_server.requests) == 2 * n


@pytest.mark.parametrize("bad", ["cards:zz", "cards:ce:", "borda:ce", "rewrite:rules", "rewrite:x:y",
                                 "hier:2,docs=lsa", "hier:2,foo=bar", "hier,docs", "linear:bm25"])
def test_bad_new_specs_say_how_to_fix(bad):
    with pytest.raises(ConfigError, match="spec"):
        build_retriever(bad)


def test_spec_help_lists_every_new_spec():
    from fincprg.evaluate.retriever_specs import SPEC_HELP, cli_help

    for name in ("linear[:SIDE]", "rubric-point", "rubric-list", "rewrite[:llm[:CONFIG]]", "docs-ce=MODEL",
                 "cards[:ce:MODEL|:llm[:CONFIG]]", "borda[:cards|first|ce:MODEL|llm[:CONFIG]]"):
        assert name in SPEC_HELP and name in cli_help()


def test_the_fiqa_findings_are_checked_not_assumed():
    from eval._baselines_report import FIQA_OFFLINE, fiqa_findings

    pair = ("rubric-list", "rubric-point")
    study = dict(zip(FIQA_OFFLINE, [0.9, 0.5, 0.6, 0.6, 0.7, 0.75, 0.8, 0.4]))  # the study's order
    assert all(x.startswith("agrees") for x in fiqa_findings(study, FIQA_OFFLINE, pair))
    flipped = {**study, "rubric-point": 0.95}
    got = fiqa_findings(flipped, FIQA_OFFLINE, pair)
    assert got[0].startswith("differs (rubric-point") and got[1].startswith("differs (rank 3")
    assert got[2].startswith("differs")
    assert fiqa_findings({"bm25": 1.0}, FIQA_OFFLINE, pair) == ["not enough of the study's systems ran"]
