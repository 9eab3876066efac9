"""Ingest under bad input (issue 12, cases 4-6): one bad record is one recorded rejection, the rest goes on;
titles and dates are optional; folder reports get ids from their relative paths."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.test_ingest import TEXT, good, jl, run_ingest


def _lines(*raw: str) -> str:
    return "\n".join(raw) + "\n"


@pytest.mark.parametrize("literal", ["Infinity", "-Infinity", "1e999", "NaN", "1e308", '"2024-13-45"',
                                     '{"y": 2024}', "true", "[2024, 3, 1]"])
def test_every_bad_date_is_one_rule_kept_and_counted_or_rejected(tmp_path, literal):
    f = tmp_path / "c.jsonl"
    bad = json.dumps(good(2), ensure_ascii=False).replace('"2024-03-01"', literal)
    f.write_text(_lines(json.dumps(good(1), ensure_ascii=False), bad, json.dumps(good(3), ensure_ascii=False)),
                 encoding="utf-8")
    counts, reports, _ = run_ingest(f, tmp_path / "kept")
    assert [r.id for r in reports] == ["r1", "r2", "r3"] and reports[1].date is None
    assert counts["dates_unparsed"] == 1 and counts["undated"] == 1 and "_bad_date" in reports[1].meta
    json.loads((tmp_path / "kept" / "ingest" / "reports.jsonl").read_text(encoding="utf-8").splitlines()[1],
               parse_constant=lambda c: pytest.fail(f"{c} written into reports.jsonl"))
    _, reports, rejected = run_ingest(f, tmp_path / "rejected", ["ingest.on_bad_date=reject"])
    assert [r.id for r in reports] == ["r1", "r3"]
    assert [(r.reason, r.source) for r in rejected] == [("bad_date", f"{f}:2")]


def test_deeply_nested_line_is_rejected_and_the_rest_survives(tmp_path):
    f = tmp_path / "c.jsonl"
    deep = '{"id": "r2", "title": "t", "text": "x", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}"
    f.write_text(_lines(json.dumps(good(1), ensure_ascii=False), deep, json.dumps(good(3), ensure_ascii=False)),
                 encoding="utf-8")
    _, reports, rejected = run_ingest(f, tmp_path / "out")
    assert [r.id for r in reports] == ["r1", "r3"]
    assert rejected[0].reason == "malformed_json" and rejected[0].source == f"{f}:2"
    assert "nested too deeply" in rejected[0].detail


def test_deeply_nested_json_array_file_is_one_rejection(tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (d / "b.jsonl").write_text(jl(good(1)), encoding="utf-8")
    _, reports, rejected = run_ingest(d, tmp_path / "out")
    assert [r.id for r in reports] == ["r1"] and rejected[0].reason == "malformed_json"


def test_unserialisable_record_is_rejected_and_the_file_is_still_written(tmp_path):
    f = tmp_path / "c.jsonl"
    surrogate = '{"id": "r2", "title": "\\ud800坏", "text": "正文"}'  # a lone surrogate escape
    f.write_text(_lines(json.dumps(good(1), ensure_ascii=False), surrogate), encoding="utf-8")
    counts, reports, rejected = run_ingest(f, tmp_path / "out")
    assert [r.id for r in reports] == ["r1"]
    assert rejected[0].reason == "bad_record" and rejected[0].source == f"{f}:2"
    (tmp_path / "out" / "ingest" / "rejected.jsonl").read_bytes().decode("utf-8")  # valid UTF-8


def test_any_exception_for_one_record_becomes_a_rejection(tmp_path, monkeypatch):
    import fincprg.ingest.stage as stage

    real = stage.to_report

    def flaky(raw, cfg, mapper):
        if raw.fields.get("id") == "r2":
            raise ZeroDivisionError("a bug in one record's path")
        return real(raw, cfg, mapper)

    monkeypatch.setattr(stage, "to_report", flaky)
    f = tmp_path / "c.jsonl"
    f.write_text(jl(good(1), good(2), good(3)), encoding="utf-8")
    counts, reports, rejected = run_ingest(f, tmp_path / "out")
    assert [r.id for r in reports] == ["r1", "r3"] and counts["rejected_by_reason"] == {"bad_record": 1}
    assert "ZeroDivisionError" in rejected[0].detail and f"{f}:2" in rejected[0].detail


def test_unreadable_file_is_one_rejection(tmp_path, monkeypatch):
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a.jsonl").write_text(jl(good(1)), encoding="utf-8")
    (d / "b.jsonl").write_text(jl(good(2)), encoding="utf-8")
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == "a.jsonl":  # tests run as root, so chmod cannot make a file unreadable
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    _, reports, rejected = run_ingest(d, tmp_path / "out")
    assert [r.id for r in reports] == ["r2"]
    assert rejected[0].reason == "unreadable" and "Permission denied" in rejected[0].detail


def test_csv_field_longer_than_the_csv_default_limit(tmp_path):
    f = tmp_path / "c.csv"
    body = TEXT * 3000  # ~170k characters: over csv's 131072 default
    f.write_text(f'title,text\n星河科技：长报告,"{body}"\n短报告标题,{TEXT}\n', encoding="utf-8")
    _, reports, rejected = run_ingest(f, tmp_path / "out")
    assert not rejected and len(reports) == 2 and reports[0].text == body


@pytest.mark.parametrize("rid", ["a\tb", "a\nb", "r#1"])
def test_ids_that_would_break_qrels_or_passage_ids(tmp_path, rid):
    f = tmp_path / "c.jsonl"
    f.write_text(jl(good(1), {"id": rid, "title": "标题标题", "text": TEXT}), encoding="utf-8")
    _, reports, rejected = run_ingest(f, tmp_path / "out")
    assert [r.id for r in reports] == ["r1"] and rejected[0].reason == "bad_id"


def test_bare_report_bodies_are_kept_and_counted(tmp_path):
    """Case 5: a file of {id, text} report bodies (no titles, no dates) used to be rejected entirely."""
    f = tmp_path / "bodies.jsonl"
    f.write_text(jl(*({"id": f"b{i}", "text": TEXT} for i in range(3)), good(9)), encoding="utf-8")
    counts, reports, rejected = run_ingest(f, tmp_path / "out")
    assert not rejected and [r.title for r in reports] == ["", "", "", good(9)["title"]]
    assert counts["untitled"] == 3 and counts["undated"] == 3
    _, _, rejected = run_ingest(f, tmp_path / "strict", ["ingest.require_title=true"])
    assert [r.reason for r in rejected] == ["missing_title"] * 3 and "require_title" in rejected[0].detail


def test_untitled_reports_get_bottom_up_queries_and_topics_skips_them(tmp_path):
    from fincprg.config import load_config
    from fincprg.pipeline.runner import run_pipeline

    from tests.conftest import SAMPLE

    rows = [json.loads(x) for x in (SAMPLE / "reports.jsonl").read_text(encoding="utf-8").splitlines()[:4]]
    f = tmp_path / "bodies.jsonl"
    f.write_text(jl(*({"id": r["id"], "text": r["text"]} for r in rows)), encoding="utf-8")
    # an untitled body's subject is the listed company it names (finance.stock_table); without a table (or,
    # as here, with the bundled one, which lists none of the sample's made-up companies) no subject can be
    # found, so no query is emitted and the passages are counted instead of guessed at
    for off in ("none", "bundled"):
        bare = {o.name: o for o in run_pipeline(f, tmp_path / off, load_config(
            overrides=["topics.viz=none", f"finance.stock_table={off}"]), upto="generate", show_progress=False)}
        assert sum(bare["generate"].counts["queries"].values()) == 0
        assert bare["generate"].counts["no_subject_passages"] > 0
    stocks = tmp_path / "stocks.csv"
    stocks.write_text("symbol,name,industry\n688321,星河科技,电子\n688517,恒芯存储,电子\n", encoding="utf-8")
    cfg = load_config(overrides=["topics.viz=simple", f"finance.stock_table={stocks}"])
    outcomes = {o.name: o for o in run_pipeline(f, tmp_path / "out", cfg, show_progress=False)}
    assert outcomes["ingest"].counts["untitled"] == 4
    assert sum(outcomes["generate"].counts["queries"].values()) > 0
    assert outcomes["topics"].counts["titles_kept"] == 0 and outcomes["topics"].counts["titles_dropped"] == {"empty": 4}
    assert (tmp_path / "out" / "topics" / "queries.jsonl").read_text() == ""
    card = (tmp_path / "out" / "dataset" / "README.md").read_text(encoding="utf-8")
    assert "4 reports without a title, which get bottom-up queries only" in card  # the card says how many and why


def test_folder_ids_come_from_relative_paths(tmp_path):
    """Case 6: same-named reports in different sub-folders (or with .md and .txt) no longer collide."""
    d = tmp_path / "docs"
    for rel in ("y2024/q1/r0.md", "y2024/q1/r0.txt", "y2023/r0.txt", "top.txt"):
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(f"{rel} 的标题\n{TEXT}", encoding="utf-8")
    counts, reports, rejected = run_ingest(d, tmp_path / "out")
    assert not rejected
    assert sorted(r.id for r in reports) == ["top", "y2023/r0", "y2024/q1/r0.md", "y2024/q1/r0.txt"]
