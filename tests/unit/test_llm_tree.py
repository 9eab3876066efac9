"""LLMTreeGenerator with the real client against the local server: validation, re-ask, alignment, failures."""
from __future__ import annotations

import json

import pytest

from fincprg.config import GenerateConfig, LLMConfig
from fincprg.generate.base import PassageInput, QueryTree, TreeGenerator
from fincprg.generate.llm_tree import LLMTreeGenerator, TreeAnswer, TreeProblem, failure_for, parse_tree
from fincprg.llm import LLMClient
from fincprg.records import Failure, Passage, Report, Sentence
from tests.llm_server import error_body


def make_items(sizes: list[int]) -> list[PassageInput]:
    items = []
    for k, n in enumerate(sizes):
        rep = Report(id=f"r{k}", title=f"公司{k}（60000{k}）：业绩点评", text="x")
        pid = f"r{k}#p0"
        sents = tuple(
            Sentence(id=f"{pid}#s{j}", passage_id=pid, order=j, text=f"r{k}句子{j}：营收同比增长{j}0%。")
            for j in range(n)
        )
        items.append(PassageInput(rep, Passage(id=pid, report_id=rep.id, order=0,
                                               text="".join(s.text for s in sents)), sents))
    return items


def sentences_of(req: dict) -> list[str]:
    user = next(m["content"] for m in req["messages"] if m["role"] == "user")
    start = user.index('["')
    return json.JSONDecoder().raw_decode(user, start)[0]


def tree_json(sents: list[str], extra: int = 0) -> str:
    return json.dumps({"passage_query": "Q:" + sents[0][:3],
                       "sentence_queries": [f"q:{s}" for s in sents] + ["extra"] * extra}, ensure_ascii=False)


@pytest.fixture
def make_gen(llm_server, tmp_path):
    def make(**gen_kw) -> LLMTreeGenerator:
        client = LLMClient(LLMConfig(base_url=llm_server.base_url, model="tree-model", api_key_env="FINCPRG_NOKEY",
                                     concurrency=4, max_retries=1, timeout=5), tmp_path / "cache")
        return LLMTreeGenerator(client, GenerateConfig(backend="llm", **gen_kw), progress=False)
    return make


def test_protocol_and_happy_path(llm_server, make_gen):
    gen = make_gen()
    assert isinstance(gen, TreeGenerator) and gen.name == "llm"
    items = make_items([3, 1, 2])
    out = gen.generate(items)
    assert all(isinstance(t, QueryTree) for t in out)
    assert [t.passage_id for t in out] == [it.passage.id for it in items]
    assert [len(t.sentence_queries) for t in out] == [3, 1, 2]
    prov = out[0].provenance
    assert prov == {"generator": "llm", "model": "tree-model", "template": "hierarchical_query.zh",
                    "version": 1}
    # the prompt carried the sentences, the title and JSON mode
    # requests run concurrently: find passage 0's by its content, not by arrival order
    first = next(r for r in llm_server.requests if items[0].sentences[0].text in r["messages"][1]["content"])
    assert sentences_of(first) == [s.text for s in items[0].sentences]
    assert "公司0（600000）" in first["messages"][1]["content"]
    assert failure_for(out[0]) is None


def test_english_prompt(llm_server, make_gen):
    make_gen(language="en").generate(make_items([1]))
    assert "Report title" in llm_server.requests[0]["messages"][1]["content"]


def test_malformed_json_is_repaired(llm_server, make_gen):
    def responder(req):
        s = sentences_of(req)
        body = tree_json(s)
        if s[0].startswith("r0"):
            return f"```json\n{body}\n```"
        if s[0].startswith("r1"):
            return f"好的，结果如下：{body}（以上）"
        return body.replace('"Q:', 'Q:', 1)  # missing opening quote

    llm_server.set_responder(responder)
    out = make_gen().generate(make_items([2, 2, 2]))
    assert all(isinstance(t, QueryTree) for t in out), out
    assert out[0].sentence_queries == ("q:r0句子0：营收同比增长00%。", "q:r0句子1：营收同比增长10%。")
    assert len(llm_server.requests) == 3  # repaired without a re-ask


def test_misaligned_reask_uses_second_answer(llm_server, make_gen):
    def responder(req):
        s = sentences_of(req)
        if len(req["messages"]) == 2:  # first round: one query too few
            return json.dumps({"passage_query": "p", "sentence_queries": ["only one"]})
        return tree_json(s)

    llm_server.set_responder(responder)
    [tree] = make_gen().generate(make_items([3]))
    assert len(llm_server.requests) == 2
    convo = llm_server.requests[1]["messages"]
    assert [m["role"] for m in convo] == ["system", "user", "assistant", "user"]
    assert "1 items but there are 3 sentences" in convo[3]["content"] and "3" in convo[3]["content"]
    assert isinstance(tree, QueryTree) and len(tree.sentence_queries) == 3
    assert tree.sentence_queries[0].startswith("q:") and "reasked" not in tree.provenance  # history, not output
    assert "warning" not in tree.provenance


@pytest.mark.parametrize("got,expect", [(["a"], ("a", "", "")), (["a", "b", "c", "d", "e"], ("a", "b", "c"))])
def test_still_misaligned_keeps_aligned_part_and_records_failure(llm_server, make_gen, got, expect):
    llm_server.set_responder(lambda req: json.dumps({"passage_query": "p", "sentence_queries": got}))
    [tree] = make_gen().generate(make_items([3]))
    assert len(llm_server.requests) == 2  # asked, re-asked once, then stopped
    assert isinstance(tree, QueryTree) and tree.sentence_queries == expect and tree.passage_query == "p"
    fail = failure_for(tree)
    assert isinstance(fail, Failure) and fail.kind == "misaligned" and fail.item_id == "r0#p0"
    assert fail.stage == "generate" and "there are 3 sentences" in fail.message


def test_partial_from_first_round_survives_bad_second_answer(llm_server, make_gen):
    llm_server.set_responder(lambda req: json.dumps({"passage_query": "p", "sentence_queries": ["a"]})
                             if len(req["messages"]) == 2 else "抱歉，我无法回答。")
    [tree] = make_gen().generate(make_items([2]))
    assert isinstance(tree, QueryTree) and tree.sentence_queries == ("a", "") and failure_for(tree)


def test_bad_json_twice_is_a_failure_with_raw(llm_server, make_gen):
    llm_server.set_responder(lambda req: "我不知道")
    [f] = make_gen().generate(make_items([2]))
    assert isinstance(f, Failure) and f.kind == "bad_json" and f.raw == "我不知道" and f.item_id == "r0#p0"
    assert len(llm_server.requests) == 2


def test_schema_failure_and_no_reask_when_disabled(llm_server, make_gen):
    llm_server.set_responder(lambda req: json.dumps({"queries": ["a", "b"]}))
    [f] = make_gen(reask=0).generate(make_items([2]))
    assert isinstance(f, Failure) and f.kind == "schema" and "passage_query" in f.message
    assert len(llm_server.requests) == 1


def test_request_failure_is_recorded_not_raised(llm_server, make_gen):
    llm_server.set_responder(lambda req: (400, error_body("context length exceeded"), {})
                             if sentences_of(req)[0].startswith("r1") else tree_json(sentences_of(req)))
    out = make_gen().generate(make_items([1, 1, 1]))
    assert isinstance(out[0], QueryTree) and isinstance(out[2], QueryTree)
    assert isinstance(out[1], Failure) and out[1].kind == "request_failed" and "context length" in out[1].message


def test_rerun_is_served_from_cache(llm_server, make_gen):
    items = make_items([2, 3])
    first = make_gen().generate(items)
    n = len(llm_server.requests)
    gen = make_gen()
    again = gen.generate(items)
    assert len(llm_server.requests) == n and again == first
    assert gen.client.stats["cache_hits"] == 2 and gen.client.stats["requests"] == 0


def test_empty_strings_and_nulls_mean_unclear():
    ans = parse_tree('{"passage_query": "p", "sentence_queries": ["a", "", null, "  b "]}', 4)
    assert isinstance(ans, TreeAnswer) and ans.sentence_queries == ("a", "", "", "b")


@pytest.mark.parametrize("text,kind", [
    ('["a", "b"]', "schema"),
    ('{"passage_query": 1.5, "sentence_queries": "a"}', "schema"),
    ('{"passage_query": "p", "sentence_queries": [["x"]]}', "schema"),
    ('{"passage_query": "p", "sentence_queries": ["a"]}', "misaligned"),
    ("", "bad_json"),
])
def test_parse_problems(text, kind):
    res = parse_tree(text, 2)
    assert isinstance(res, TreeProblem) and res.kind == kind
    assert (res.partial is not None) == (kind == "misaligned")


# -- answers cut off before their JSON closed (max_tokens, a dropped connection) -------------------

CUT = '{"passage_query": "P", "sentence_queries": ["销售费用率是多少？", "销售费用率为18.6'


@pytest.mark.parametrize("finish", ["length", "stop"])
def test_truncated_answer_never_exports_the_cut_query(llm_server, make_gen, finish):
    from tests.llm_server import completion_body

    llm_server.set_responder(lambda req: completion_body(CUT, req, finish_reason=finish))
    [tree] = make_gen().generate(make_items([3]))
    assert len(llm_server.requests) == 2  # re-asked once ("answer again, shorter")
    assert "cut off" in llm_server.requests[1]["messages"][-1]["content"]
    assert isinstance(tree, QueryTree) and tree.sentence_queries == ("销售费用率是多少？", "", "")
    assert not any("18.6" in q for q in tree.sentence_queries)
    fail = failure_for(tree)
    assert fail is not None and fail.kind == "truncated"


def test_truncated_with_every_query_cut_inside_the_last(llm_server, make_gen):
    # all n items present, but the last one is unfinished: drop it, keep the rest, record it
    llm_server.set_responder(lambda req: '{"passage_query": "P", "sentence_queries": ["a", "b", "c的营收为1')
    [tree] = make_gen(reask=0).generate(make_items([3]))
    assert tree.sentence_queries == ("a", "b", "") and failure_for(tree).kind == "truncated"


def test_cut_after_a_closed_last_item_is_a_complete_tree():
    ans = parse_tree('{"passage_query": "P", "sentence_queries": ["a", "b"', 2)
    assert isinstance(ans, TreeAnswer) and ans.sentence_queries == ("a", "b")


def test_cut_inside_passage_query_is_truncated_without_partial():
    res = parse_tree('{"passage_query": "贵州茅台2023', 2, "length")
    assert isinstance(res, TreeProblem) and res.kind == "truncated" and res.partial is None


def test_invalid_answers_are_not_replayed_from_the_cache(llm_server, make_gen):
    """Case 2 of issue 12: a re-run re-asks exactly the passages whose answer failed validation."""
    broken = {"on": True}

    def responder(req):
        s = sentences_of(req)
        if s[0].startswith("r1") and broken["on"]:
            return json.dumps({"queries": s})  # schema failure
        return tree_json(s)

    llm_server.set_responder(responder)
    items = make_items([2, 2, 2])
    first = make_gen().generate(items)
    assert isinstance(first[1], Failure) and first[1].kind == "schema"
    assert len(llm_server.requests) == 4  # 3 asked + 1 re-ask
    llm_server.reset()
    gen = make_gen()
    again = gen.generate(items)  # the same failure is asked again, not replayed
    assert isinstance(again[1], Failure) and len(llm_server.requests) == 2
    assert gen.client.stats["cache_hits"] == 2
    broken["on"] = False
    llm_server.reset()
    fixed = make_gen().generate(items)
    assert len(llm_server.requests) == 1 and all(isinstance(t, QueryTree) for t in fixed)
    assert fixed[0] == first[0] and fixed[2] == first[2]
    assert fixed[1].provenance == fixed[0].provenance  # as if it had succeeded the first time
