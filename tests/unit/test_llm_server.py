"""The local OpenAI-compatible test server itself (other suites rely on its defaults)."""
from __future__ import annotations

import json

import openai
import pytest

from fincprg.llm import load_prompt
from tests.llm_server import completion_body, default_responder


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_default_answers_fit_each_prompt(lang):
    def answer(name: str) -> object:
        msgs = load_prompt(name, lang).render(keywords=["光伏"], titles=["隆基绿能：业绩承压", "通威股份：硅料"],
                                              query_a="a", query_b="b", sentences=["甲", "乙", "丙"])
        return json.loads(default_responder({"messages": msgs}))

    tree = answer("hierarchical_query")
    assert len(tree["sentence_queries"]) == 3 and tree["passage_query"]
    intents = answer("topic_intent")
    assert isinstance(intents, list) and all(i["intent"] and i["subqueries"] for i in intents)
    assert answer("synonymy_judge")["score"] in range(1, 6)


def test_real_openai_client_round_trip(llm_server):
    client = openai.OpenAI(base_url=llm_server.base_url, api_key="k", max_retries=0)
    assert client.models.list().data[0].id == "local-test-model"
    llm_server.set_responder(lambda req: (200, completion_body("好", req, prompt_tokens=7, completion_tokens=1)))
    r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert r.choices[0].message.content == "好" and r.usage.total_tokens == 8 and r.model == "m"
    llm_server.set_responder(lambda req: (418, {"error": {"message": "teapot"}}, {"X-Why": "test"}))
    with pytest.raises(openai.APIStatusError) as e:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 418 and e.value.response.headers["x-why"] == "test"
    assert len(llm_server.requests) == 2 and llm_server.max_in_flight == 1
