"""verify's rule registry (fincprg/verify/registry.py, loaded by fincprg/verify/rules.py): every rule with examples
fails its failing example with one of its reasons and passes its passing one; ids are unique; the loop honours
verify.disable; and no check writes a reason outside the Reason enum."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from fincprg.verify.reading import TextReading
from fincprg.verify.registry import ORDER
from fincprg.verify.rules import all_rules, by_id, first_strict_failure, unknown
from fincprg.verify.verdict import Reason

ROOT = Path(__file__).resolve().parents[2]


RULES = all_rules()
BY_ID = by_id()
WITH_EXAMPLES = [r for r in RULES if not r.tested_by]


@pytest.mark.parametrize("rule", WITH_EXAMPLES, ids=[r.id for r in WITH_EXAMPLES])
def test_each_rule_fails_and_passes_its_examples(rule):
    assert rule.fails is not None and rule.passes is not None, f"{rule.id} has no examples"
    assert rule.check is not None
    v = rule.check(rule.reads_example(rule.fails))
    assert v is not None, f"{rule.id} passes the query it must fail: {rule.fails.query}"
    assert v.reason in rule.reasons, f"{rule.id} gave {v.reason}, not one of its declared {rule.reasons}"
    assert rule.check(rule.reads_example(rule.passes)) is None, \
        f"{rule.id} fails the query it must pass: {rule.passes.query}"


def test_the_loop_stamps_the_rule_id_and_skips_disabled_rules():
    ex = BY_ID["vague"].fails
    assert ex is not None
    reading = BY_ID["vague"].reads_example(ex)
    first = first_strict_failure(reading)
    assert first is not None and first.rule and first.rule in BY_ID
    # switched off, the rule no longer decides: the next rule in order (or none) does
    later = first_strict_failure(reading, frozenset({first.rule}))
    assert later is None or later.rule != first.rule
    everything = frozenset(r.id for r in RULES if r.kind == "strict")
    assert first_strict_failure(reading, everything) is None


def test_ids_are_unique_and_every_reason_belongs_to_a_rule():
    ids = [r.id for r in RULES]
    assert ids == list(ORDER)  # every rule declared once, each in its place
    declared = {x for r in RULES for x in r.reasons}
    assert declared == set(Reason)
    assert unknown(["vague", "round_trip"]) == [] and unknown(["nope", "source"]) == ["nope", "source"]


def test_no_reason_string_is_written_outside_the_registry():
    """Every Verdict names its reason through the Reason enum (verify/verdict.py), never as a free string."""
    free = []
    for f in (ROOT / "fincprg").rglob("*.py"):
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"Verdict\(\s*[\"']", line):
                free.append(f"{f.relative_to(ROOT)}:{i}")
    assert free == []


def test_a_sentence_query_is_read_against_its_sentence():
    r = TextReading("q", "passage", "title", "sentence")
    assert r.source == "sentence" and TextReading("q", "passage", "title").source == "passage\ntitle"


@pytest.mark.parametrize("rule", [r for r in RULES if r.tested_by], ids=lambda r: r.id)
def test_a_rule_that_reads_the_corpus_names_the_test_that_runs_its_examples(rule):
    path, _, name = rule.tested_by.partition("::")
    assert path and (ROOT / path).is_file(), f"{rule.id}: no test named"
    assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), f"{rule.id}: {rule.tested_by} is gone"


def test_a_query_without_its_source_is_dropped_by_the_source_rule():
    from types import SimpleNamespace

    from fincprg.records import Query
    from fincprg.verify.stage import check_rules

    src = SimpleNamespace(passage=lambda pid: None, reports={}, topic_reports=lambda tid: [])
    q = Query(id="q1", level="sentence", text="某公司2021年营收是多少？", source_ids=["gone#p0"], report_id="gone")
    v = check_rules(q, src, {"subject", "answer"}, {})
    assert v is not None and (v.reason, v.rule) == ("no_source", "source")
    # its passage in the corpus, the source rule passes it (no other check switched on here)
    found = SimpleNamespace(passage=lambda pid: SimpleNamespace(report_id="r1"), reports={"r1": object()})
    assert check_rules(q, found, set(), {}) is None


def test_verify_disable_enters_the_signature_and_an_empty_list_leaves_it_as_it_was():
    from fincprg.config import load_config
    from fincprg.contract import STAGE_BY_NAME, declared_config, signature

    spec = STAGE_BY_NAME["verify"]
    default, off = load_config(), load_config(overrides=["verify.disable=[vague]"])
    # left out of the hashed config when empty: the config part of every signature is what it was before
    assert "disable" not in declared_config(default, spec.config_keys)["verify"]
    assert declared_config(off, spec.config_keys)["verify"]["disable"] == ["vague"]
    assert signature(spec, default, {}) != signature(spec, off, {})
