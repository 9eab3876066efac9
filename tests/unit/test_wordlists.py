"""Word lists as data (issue 39): the event vocabularies are JSONL files compiled by fincprg/finance/wordlists.py,
and each file is part of the code hash of the stages that read it."""
from __future__ import annotations

import re

from fincprg.finance.events import event_of
from fincprg.finance.wordlists import alternation, read_entries
from fincprg.pipeline.codehash import PKG, stage_files
from fincprg.pipeline.contract import STAGE_BY_NAME
from fincprg.verify.events import events_in

GENERATOR_EVENTS = PKG / "finance" / "data" / "events.jsonl"
STATED_EVENTS = PKG / "finance" / "data" / "stated_events.jsonl"
VERIFY_EVENTS = PKG / "verify" / "data" / "events.jsonl"


def test_alternation_takes_the_longest_word_and_keeps_the_exceptions():
    pat = re.compile(alternation(["定向增发", {"word": "增发", "not_before": "新", "not_after": "电"}, "定增"]))
    assert pat.pattern.startswith("定向增发|")
    assert [m.group() for m in pat.finditer("新增发电量，定向增发，增发股份，增发电")] == ["定向增发", "增发"]


def test_the_event_exceptions_hold_in_both_vocabularies():
    """稳定增长 is no 定增 for the generator nor for verify, 进出口 no 出口, 竞争力 no 竞争, 新增发电量 no 增发."""
    assert event_of("公司收入稳定增长") is None and event_of("进出口贸易") is None and event_of("竞争力较强") is None
    assert event_of("公司完成定增") == "定增"
    assert events_in("收入稳定增长，新增发电量10亿千瓦时") == set()
    assert events_in("公司拟定向增发募集资金") == {"定增"}


def test_every_entry_has_a_word_and_only_known_fields():
    known = {"word", "not_before", "not_after", "note", "kinds", "questions", "event"}
    for package, name in (("fincprg.finance", "events.jsonl"), ("fincprg.verify", "events.jsonl")):
        for e in read_entries(package, name):
            assert e["word"] and set(e) <= known, (name, e)
    for e in read_entries("fincprg.finance", "stated_events.jsonl"):
        assert set(e) == {"event", "asked", "stated"} and e["asked"] and e["stated"], e


def test_each_list_is_in_the_code_hash_of_the_stages_that_read_it():
    files = {name: set(stage_files(STAGE_BY_NAME[name])) for name in ("generate", "topics", "verify", "mine")}
    assert GENERATOR_EVENTS in files["generate"] and GENERATOR_EVENTS in files["topics"]
    assert STATED_EVENTS in files["mine"]
    assert VERIFY_EVENTS in files["verify"]
    # verify's own list is not the generator's: editing it re-runs verify, not generate
    assert VERIFY_EVENTS not in files["generate"]
