"""Word lists as data (issue 39): the event, direction, part-of-the-year, metric and broker vocabularies are JSONL files compiled by
fincprg/wordlists.py, and each file is part of the code hash of the stages that read it."""
from __future__ import annotations

import importlib
import re

import pytest

from fincprg.codehash import PKG, stage_files
from fincprg.contract import STAGE_BY_NAME
from fincprg.finance.crosscheck.spans import PART_WORDS, directions, periods
from fincprg.finance.events import event_of
from fincprg.verify.events import events_in
from fincprg.wordlists import WordLists, alternation, read_entries, read_for

GENERATOR_EVENTS = PKG / "finance" / "data" / "events.jsonl"
STATED_EVENTS = PKG / "finance" / "data" / "stated_events.jsonl"
VERIFY_EVENTS = PKG / "verify" / "data" / "events.jsonl"
DIRECTIONS = PKG / "finance" / "data" / "directions.jsonl"
PARTS = PKG / "finance" / "data" / "parts.jsonl"
BROKERS = PKG / "verify" / "data" / "brokers.jsonl"
METRICS = PKG / "finance" / "data" / "metrics.jsonl"


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
    known = {"word", "not_before", "not_after", "note", "kinds", "questions", "ask_if", "event"}
    for package, name in (("fincprg.finance", "events.jsonl"), ("fincprg.verify", "events.jsonl")):
        for e in read_entries(package, name):
            assert e["word"] and set(e) <= known, (name, e)
            assert set(e.get("ask_if", {})) <= set(e.get("questions", ())), e  # a condition for a stem it has
    for e in read_entries("fincprg.finance", "stated_events.jsonl"):
        assert set(e) == {"event", "asked", "stated"} and e["asked"] and e["stated"], e


def test_each_list_is_in_the_code_hash_of_the_stages_that_read_it():
    """Hashing is per package (a package's whole data/ folder), so the positive checks fail only if data files
    leave the code hash; the negative ones check that verify's own lists stay out of the generator's hash."""
    files = {name: set(stage_files(STAGE_BY_NAME[name])) for name in ("generate", "topics", "verify", "mine")}
    assert GENERATOR_EVENTS in files["generate"] and GENERATOR_EVENTS in files["topics"]
    assert STATED_EVENTS in files["mine"]
    assert VERIFY_EVENTS in files["verify"]
    # one direction per word, read by the generator's frame and by the cross-check verify runs
    assert DIRECTIONS in files["generate"] and DIRECTIONS in files["verify"]
    assert PARTS in files["generate"] and PARTS in files["verify"] and PARTS in files["mine"]
    assert BROKERS in files["verify"] and BROKERS not in files["generate"]
    assert all(METRICS in files[name] for name in ("generate", "topics", "verify", "mine"))
    # verify's own list is not the generator's: editing it re-runs verify, not generate
    assert VERIFY_EVENTS not in files["generate"]


def test_each_direction_word_is_written_once_with_one_direction_and_known_readers():
    entries = read_entries("fincprg.finance", "directions.jsonl")
    words = [e["word"] for e in entries]
    assert len(words) == len(set(words))
    for e in entries:
        assert set(e) <= {"word", "direction", "readers", "note"} and e["direction"] in ("up", "down"), e
        assert e["readers"] and set(e["readers"]) <= {"figures", "frame", "continues", "crosscheck"}, e


def test_the_readers_take_their_words_and_directions_from_the_file():
    figures = importlib.import_module("fincprg.finance.extract")
    assert figures.extract("营收同比减少5%").directions == frozenset({"down"})
    assert figures.extract("毛利率提至30%").directions == frozenset({"up"})
    # 稳中有升 and 承压 are the cross-check's words only; 跌 the figure reader's
    assert [d for _, d in directions("需求稳中有升，利润承压")] == ["up", "down"]
    assert "跌" not in {e["word"] for e in read_for("fincprg.finance", "directions.jsonl", "crosscheck")}
    # a clause continued by its change: every continuing word is also a frame word
    frame = {e["word"] for e in read_for("fincprg.finance", "directions.jsonl", "frame")}
    assert {e["word"] for e in read_for("fincprg.finance", "directions.jsonl", "continues")} <= frame


def test_each_part_word_is_written_once_with_one_part():
    entries = read_entries("fincprg.finance", "parts.jsonl")
    words = [e["word"] for e in entries]
    assert len(words) == len(set(words))
    for e in entries:
        assert set(e) <= {"word", "part", "readers", "note"}, e
        assert e["part"] in {"Q1", "Q2", "Q3", "Q4", "H1", "H2", "Q1-Q3", "FY", "Q", "M"}, e
        assert e["readers"] and set(e["readers"]) <= {"periods", "after_year", "crosscheck"}, e


def test_both_period_readers_read_a_part_word_as_its_one_part():
    figures = importlib.import_module("fincprg.finance.extract")
    assert {p.part for p in figures.extract("公司2023年前三季度营收增长").periods} == {"Q1-Q3"}
    assert {p.part for p in figures.extract("2023年单四季度").periods} == {"Q4"}
    # 年报 is a part only after a year; the cross-check calls the first nine months 9M
    assert {p.part for p in figures.extract("年报显示").periods} == set()
    assert "前三季度" in PART_WORDS["9M"] and "Q1-Q3" not in PART_WORDS
    assert [p.part for p in periods("2023年前三季度收入")] == ["9M"]


def test_a_broker_is_named_before_any_shorter_name_it_starts_with():
    """verify/subject takes the first broker a phrase starts with: 中信 before 中信建投 would cut it short."""
    from fincprg.verify.subject import BROKERS as brokers

    words = [e["word"] for e in read_entries("fincprg.verify", "brokers.jsonl")]
    assert set(words) == set(brokers) and len(words) == len(set(words))
    assert not [(a, b) for i, a in enumerate(brokers) for b in brokers[i + 1:] if b.startswith(a)]


def test_each_metric_surface_names_one_metric_and_keeps_its_exceptions():
    figures = importlib.import_module("fincprg.finance.extract")
    entries = read_entries("fincprg.finance", "metrics.jsonl")
    words = [e["word"].lower() for e in entries]  # metrics are matched ignoring case
    assert len(words) == len(set(words))
    assert all(set(e) <= {"word", "metric", "not_before", "not_after", "note"} and e["metric"] for e in entries)
    assert figures.METRIC_SYNONYMS["营业收入"][0] == "营业收入" and "营收" in figures.METRIC_SYNONYMS["营业收入"]
    # 成本收入比 is a bank's cost ratio and 生产能力 a capacity in words: no 营业收入, no 产能
    assert figures.extract("成本收入比为30%").metrics == frozenset()
    assert figures.extract("生产能力较强").metrics == frozenset()
    assert figures.extract("产能达到10万吨，收入增长").metrics == frozenset({"产能", "营业收入"})


# --- a package's named vocabularies (issue 51: patterns as data) ---------------------------------------------------
VOCABULARIES = {pkg: PKG / pkg / "data" / "words.jsonl" for pkg in ("chunking", "finance", "generate", "topics", "verify")}


def test_each_vocabulary_file_writes_a_word_once_with_its_lists_and_known_fields():
    for pkg in VOCABULARIES:
        entries = read_entries(f"fincprg.{pkg}", "words.jsonl")
        words = [e["word"] for e in entries]
        assert len(words) == len(set(words)), [w for w in words if words.count(w) > 1]
        for e in entries:
            assert e["word"] and e["lists"] and len(e["lists"]) == len(set(e["lists"])), (pkg, e)
            assert set(e) <= {"word", "lists", "not_before", "not_after", "note"}, (pkg, e)
            assert all(re.fullmatch(r"[a-z][a-z_]*", name) for name in e["lists"]), (pkg, e)


def test_each_vocabulary_is_read_by_its_package_and_compiles():
    """A list no code reads is dead data; every list a package names is in its file (WordLists raises otherwise)."""
    for pkg, path in VOCABULARIES.items():
        lists = {name for e in read_entries(f"fincprg.{pkg}", "words.jsonl") for name in e["lists"]}
        source = "\n".join(p.read_text(encoding="utf-8") for p in (PKG / pkg).rglob("*.py"))
        unread = sorted(n for n in lists if f'"{n}"' not in source and f"'{n}'" not in source)
        assert not unread, (pkg, unread)
        w = WordLists(f"fincprg.{pkg}")
        for name in lists:
            assert re.compile(w.pattern(name)).fullmatch(w.words(name)[0]), (pkg, name)


def test_word_lists_name_a_vocabulary_and_read_it_longest_first():
    w = WordLists("fincprg.verify")
    assert w.compile("change_or_cause_ask").search("毛利率为何下降")
    assert w.compile("reached").match("达到了多少").group() == "达到了"  # 达到了 before 达到
    # an entry's exception holds in every list it is in: 扣除非经常性损益 is no adjustment, 扣除后 is
    assert not w.compile("adjusted").search("扣除非经常性损益") and w.compile("adjusted").search("扣除防疫收入后")
    with pytest.raises(KeyError, match="verify/data/words.jsonl"):
        w.words("no_such_list")


def test_each_vocabulary_file_is_in_the_code_hash_of_the_stages_that_read_it():
    files = {name: set(stage_files(STAGE_BY_NAME[name])) for name in ("chunk", "generate", "topics", "verify", "mine")}
    assert VOCABULARIES["chunking"] in files["chunk"]
    assert VOCABULARIES["generate"] in files["generate"]
    assert VOCABULARIES["topics"] in files["topics"]
    assert VOCABULARIES["verify"] in files["verify"] and VOCABULARIES["verify"] not in files["generate"]
    assert all(VOCABULARIES["finance"] in files[name] for name in ("generate", "topics", "verify", "mine"))
    # chunk reads no finance: the reader sits at the package root, in no package with a data/ folder
    assert not any("finance" in f.parts for f in files["chunk"])
