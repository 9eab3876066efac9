"""Tolerant JSON parsing and versioned prompt loading."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fincprg.errors import ConfigError
from fincprg.llm import JSONParseError, load_prompt, parse_json

TREE = {"passage_query": "贵州茅台2023年业绩如何？", "sentence_queries": ["营收增速是多少？", ""]}
TREE_S = json.dumps(TREE, ensure_ascii=False)


@pytest.mark.parametrize(
    "text",
    [
        TREE_S,
        f"```json\n{TREE_S}\n```",
        f"```\n{TREE_S}\n```",
        f"好的，以下是结果：\n{TREE_S}\n希望对你有帮助。",
        f"Here you go: ```json\n{TREE_S}``` done",
        f"```json\n{TREE_S}",  # unterminated fence
    ],
)
def test_fences_and_surrounding_text(text):
    assert parse_json(text) == TREE


def test_repairs_small_syntax_slips():
    missing_quote = '{"passage_query": "茅台业绩, "sentence_queries": ["a", "b"]}'
    out = parse_json(missing_quote)
    assert out["sentence_queries"] == ["a", "b"] and out["passage_query"].startswith("茅台业绩")
    assert parse_json('{"a": [1, 2,],}') == {"a": [1, 2]}  # trailing commas
    assert parse_json("{'a': '单引号'}") == {"a": "单引号"}
    truncated = '{"passage_query": "q", "sentence_queries": ["x", "y'  # cut off by max_tokens
    assert parse_json(truncated)["sentence_queries"][0] == "x"


def test_prose_with_brackets_before_json():
    assert parse_json('注意 [1] 条：{"a": 1}') == {"a": 1}


@pytest.mark.parametrize("text", [None, "", "   ", "没有任何 JSON 内容", "```\n```"])
def test_nothing_to_recover(text):
    with pytest.raises(JSONParseError):
        parse_json(text)


# Backticks inside values would make the text ambiguous with code fences, which answers never do.
TEXT = st.characters(blacklist_characters="`", blacklist_categories=("Cs",))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(TEXT, max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(TEXT, max_size=5), kids, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    value=st.dictionaries(st.text(TEXT, min_size=1, max_size=6), json_values, min_size=1, max_size=4),
    prefix=st.sampled_from(["", "结果：", "Sure!\n", "```json\n", "```\n"]),
    suffix=st.sampled_from(["", "\n```", "。以上。", "\n\nThanks"]),
    ascii_=st.booleans(),
)
def test_roundtrip_property(value, prefix, suffix, ascii_):
    text = prefix + json.dumps(value, ensure_ascii=ascii_) + suffix
    assert parse_json(text) == value


@pytest.mark.parametrize("name", ["hierarchical_query", "topic_intent", "synonymy_judge"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_prompt_loads_and_renders(name, lang):
    p = load_prompt(name, lang)
    assert p.id == f"{name}.{lang}" and p.version >= 1
    msgs = p.render(sentences=["甲", "乙"], keywords=["光伏"], titles=["隆基绿能：业绩承压"],
                    query_a="茅台营收", query_b="贵州茅台收入")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert all(m["content"].strip() for m in msgs)
    assert "JSON" in msgs[0]["content"] + msgs[1]["content"]  # required by OpenAI JSON mode
    assert p.render_block("reask", error="E!", n=2).count("E!") == 1


def test_hierarchical_prompt_carries_sentences_verbatim():
    sents = ["贵州茅台2023年实现营业收入1505亿元，同比增长18%。", 'He said "ok" <b>&</b>']
    user = load_prompt("hierarchical_query", "zh").render(sentences=sents, title="贵州茅台（600519）")[1]["content"]
    assert json.dumps(sents, ensure_ascii=False) in user  # CJK and <>& not escaped
    assert "切分为 2 个句子" in user and "恰好为 2 个" in user  # the count the answer must match
    assert "贵州茅台（600519）" in user
    for word in ('""', "免责声明", "公司名称"):  # the paper's instructions are there
        assert word in user


def test_missing_prompt_names_the_fix():
    with pytest.raises(ConfigError, match="available: .*hierarchical_query.zh.j2"):
        load_prompt("no_such_prompt", "zh")


# -- how far an answer can be trusted (issue 12, case 3) -------------------------------------------

def test_detailed_flags_repair_and_truncation():
    from fincprg.llm import parse_json_detailed

    assert parse_json_detailed(TREE_S) == parse_json_detailed(f"```json\n{TREE_S}\n```")
    assert not parse_json_detailed(TREE_S).repaired
    cut = parse_json_detailed('{"passage_query": "q", "sentence_queries": ["x", "销售费用率为18.6')
    assert (cut.repaired, cut.truncated, cut.cut_string) == (True, True, True)
    assert cut.value == {"passage_query": "q", "sentence_queries": ["x", "销售费用率为18.6"]}
    closed = parse_json_detailed('{"passage_query": "q", "sentence_queries": ["x", "y"], ')
    assert closed.truncated and not closed.cut_string and closed.value["sentence_queries"] == ["x", "y"]
    broken = parse_json_detailed('{"passage_query": 茅台", "sentence_queries": ["a"]}')  # broken, not cut
    assert broken.repaired and not broken.truncated


def test_finished_strings_of_a_cut_answer_are_kept_exactly():
    from fincprg.llm import parse_json_detailed

    # json_repair alone turns the first value into '0000\r["'
    got = parse_json_detailed('{"passage_query": "0000\\r[", "sentence_queries": ["0", "00')
    assert got.value == {"passage_query": "0000\r[", "sentence_queries": ["0", "00"]} and got.cut_string
    assert parse_json_detailed('["a\\u4e2').value == ["a"]  # a cut-off escape is dropped


def test_surrogates_are_joined_or_replaced():
    text = json.dumps({"q": "涨😀", "bad": "\ud800"}, ensure_ascii=True)  # "\ud83d\ude00" and a lone "\ud800"
    assert parse_json(text) == {"q": "涨😀", "bad": "\ufffd"}
    assert parse_json(text[:-2])["q"] == "涨😀"  # also through the repair path
