"""Real public data (../shared/data): the 200 AlphaFin reports and the 2019 annual report of 300617
ingest and clean without error and with plausible counts. Skips when the data is absent."""
from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from fincprg.config import load_config
from fincprg.ingest.public import alphafin_to_jsonl, annual_report_to_jsonl
from fincprg.pipeline.runner import run_pipeline

def _build(corpus: Path, out: Path) -> dict:
    outcomes = run_pipeline(corpus, out, load_config(None), upto="chunk", show_progress=False)
    return {o.name: o.counts for o in outcomes}


@pytest.mark.slow
def test_alphafin_reports(shared_data, tmp_path):
    corpus = tmp_path / "alphafin.jsonl"
    assert alphafin_to_jsonl(shared_data / "reports" / "alphafin_reports.json", corpus) == 200
    counts = _build(corpus, tmp_path / "out")
    ing, ch = counts["ingest"], counts["chunk"]
    assert ing["reports"] == 200 and ing["rejected"] == 0 and ing["dates_unparsed"] == 0
    reports = [json.loads(x) for x in (tmp_path / "out" / "ingest" / "reports.jsonl").read_text().splitlines()]
    assert sum(1 for r in reports if r["stock_code"] and r["company"]) >= 190  # 「景津装备（603279）：…」
    # ~1,170 chars per report -> a few 500-char passages each; sentences ~100 chars
    assert 400 <= ch["passages"] <= 1200 and ch["sentences"] >= 3 * ch["passages"]
    assert ch["removed_share"] < 0.2
    passages = [json.loads(x)["text"] for x in (tmp_path / "out" / "chunk" / "passages.jsonl").read_text().splitlines()]
    assert max(len(p) for p in passages) <= 750
    assert 300 <= statistics.median(len(p) for p in passages) <= 600


@pytest.mark.slow
def test_annual_report(shared_data, tmp_path):
    corpus = tmp_path / "annual.jsonl"
    annual_report_to_jsonl(shared_data / "annual_report" / "annual_report_300617_2019.json", corpus,
                           report_id="300617-2019", title="安靠智电（300617）：2019年年度报告", date="2020-04-20")
    counts = _build(corpus, tmp_path / "out")
    ch = counts["chunk"]
    assert counts["ingest"]["reports"] == 1
    # 2,571 of 4,791 items are table rows dumped as ['a', 'b'] lists: the table rule takes them
    assert ch["removed_by_rule"].get("table", 0) >= 100
    assert 0.2 <= ch["removed_share"] <= 0.8
    assert ch["passages"] >= 100
    passages = [json.loads(x)["text"] for x in (tmp_path / "out" / "chunk" / "passages.jsonl").read_text().splitlines()]
    assert max(len(p) for p in passages) <= 750
    assert not any(re.match(r"[\d.,%| -]{30,}$", ln) for p in passages for ln in p.split("\n"))
