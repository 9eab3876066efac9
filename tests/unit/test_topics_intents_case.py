"""Topic keywords keep the casing the titles use (AI, A股), not the tokenizer's lower case."""
from __future__ import annotations

from fincprg.topics.intents import TopicInput, surface_form, template_intents


def test_surface_form_restores_title_casing():
    titles = ("电子行业周报：AI芯片需求旺盛", "A股策略：关注ai应用", "Chiplet与HBM")
    assert surface_form("ai", titles) == "AI"  # the first (most representative) title wins
    assert surface_form("a股", titles) == "A股"
    assert surface_form("hbm", titles) == "HBM"
    assert surface_form("chiplet", titles) == "Chiplet"
    assert surface_form("gpu", titles) == "gpu"  # no title has it: unchanged
    assert surface_form("芯片", titles) == "芯片"


def test_template_intents_use_title_casing():
    topic = TopicInput("t0", ("ai", "a股", "算力"), ("A股AI行情回顾：算力领涨", "AI算力周报"), "电子")
    [it] = template_intents(topic)
    texts = [it["intent"], *it["subqueries"]]
    assert "AI" in it["intent"] and "算力" in it["intent"]
    assert not any("ai" in t or "a股" in t for t in texts), texts
    assert any(t.startswith("电子行业AI") for t in it["subqueries"])
