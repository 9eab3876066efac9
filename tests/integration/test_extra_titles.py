"""ingest.extra_titles: titles without bodies join the topic clustering (issue 38: topics that mix companies, as
a large corpus makes them), get no passages, and a bad file says what is wrong."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fincprg.config import load_config
from fincprg.pipeline.runner import run_pipeline

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample" / "reports.jsonl"


def _catalogue(path: Path) -> Path:
    rows = [{"id": f"em{i}", "title": f"光伏行业周报：组件排产回升，硅料价格企稳（第{i}期）", "publish_date": f"2024-0{1 + i % 9}-15",
             "industry_name": "光伏设备"} for i in range(12)]
    rows.append({"id": "bad", "publish_date": "2024-03-01"})  # no title: rejected, the others go on
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_extra_titles_join_the_topics_and_nothing_else(tmp_path):
    cat = _catalogue(tmp_path / "titles.jsonl")
    out = tmp_path / "out"
    cfg = load_config(None, ["topics.viz=none", f"ingest.extra_titles={cat}"])
    outcomes = {o.name: o for o in run_pipeline(SAMPLE, out, cfg, upto="verify", show_progress=False)}
    extra = [json.loads(x) for x in (out / "ingest" / "extra_titles.jsonl").read_text("utf-8").splitlines()]
    assert len(extra) == 12 and all(r["id"].startswith("extra:") and r["text"] == "" for r in extra)
    assert outcomes["ingest"].counts["extra_titles"] == 12
    rejected = [json.loads(x) for x in (out / "ingest" / "rejected.jsonl").read_text("utf-8").splitlines()]
    assert [r["reason"] for r in rejected if r["report_id"] == "bad"] == ["extra_titles:missing_title"]
    titles = [json.loads(x) for x in (out / "topics" / "titles.jsonl").read_text("utf-8").splitlines()]
    kept = {t["report_id"] for t in titles if t["kept"]}
    assert {r["id"] for r in extra} <= kept | {t["report_id"] for t in titles if t["reason"] == "duplicate"}
    assigned = {json.loads(x)["report_id"] for x in (out / "topics" / "assignments.jsonl").read_text("utf-8").splitlines()}
    assert any(i.startswith("extra:") for i in assigned)
    # the East Money industry name is read as CITIC's
    assert {t["industry"] for t in titles if t["report_id"].startswith("extra:") and t["kept"]} == {"电力设备及新能源"}
    # no passage comes from a title
    passages = (out / "chunk" / "passages.jsonl").read_text("utf-8")
    assert "extra:" not in passages
    # verify reads a topic's titles without bodies as its sources: a topic of catalogue titles alone keeps its
    # intent (no "no_source"), which names the theme the titles share
    dropped = [json.loads(x) for x in (out / "verify" / "dropped.jsonl").read_text("utf-8").splitlines()]
    assert not [d for d in dropped if d["level"] == "intent" and d["reason"] == "no_source"], dropped
    kept = [json.loads(x) for x in (out / "verify" / "queries.jsonl").read_text("utf-8").splitlines()]
    assert any(q["level"] == "intent" and "光伏" in q["text"] for q in kept), [q["text"] for q in kept
                                                                           if q["level"] == "intent"]


def test_a_missing_extra_titles_file_is_a_clear_error(tmp_path):
    cfg = load_config(None, ["topics.viz=none", f"ingest.extra_titles={tmp_path / 'nope.jsonl'}"])
    with pytest.raises(Exception, match="extra_titles"):
        run_pipeline(SAMPLE, tmp_path / "out", cfg, upto="ingest", show_progress=False)


def test_editing_the_extra_titles_reruns_ingest_and_topics(tmp_path):
    cat = _catalogue(tmp_path / "titles.jsonl")
    out = tmp_path / "out"
    cfg = load_config(None, ["topics.viz=none", f"ingest.extra_titles={cat}"])
    run_pipeline(SAMPLE, out, cfg, upto="ingest", show_progress=False)
    cat.write_text(cat.read_text("utf-8").replace("第1期", "第一期"), encoding="utf-8")
    again = {o.name: o.status for o in run_pipeline(SAMPLE, out, cfg, upto="ingest", show_progress=False)}
    assert again["ingest"] == "ran"
