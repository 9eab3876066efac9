"""run.sample_reports / --limit: a reproducible sample, stratified by industry and year, drawn before chunking."""
from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter

from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.ingest.sample import quotas, sample_reports, stratum
from fincprg.records import Report


def _reports() -> list[Report]:
    out = []
    for i in range(100):
        industry = "电子" if i < 60 else ("医药" if i < 90 else "银行")
        year = 2023 if i % 2 else 2024
        out.append(Report(id=f"r{i:03d}", title=f"t{i}", text="营业收入增长。", industry=industry,
                          date=dt.date(year, 3, 1)))
    return out


def test_quotas_are_proportional_and_sum_to_n():
    q = quotas({("a", "1"): 60, ("b", "1"): 30, ("c", "1"): 10}, 10)
    assert q == {("a", "1"): 6, ("b", "1"): 3, ("c", "1"): 1}
    q = quotas({("a", "1"): 1, ("b", "1"): 1, ("c", "1"): 1}, 2)
    assert sum(q.values()) == 2


def test_sample_keeps_the_mix_of_industries_and_years():
    kept, counts = sample_reports(_reports(), 20, seed=42)
    assert counts == {"from": 100, "kept": 20, "strata": 6}
    mix = Counter(stratum(r) for r in kept)
    assert mix == {("电子", "2023"): 6, ("电子", "2024"): 6, ("医药", "2023"): 3, ("医药", "2024"): 3,
                   ("银行", "2023"): 1, ("银行", "2024"): 1}


def test_sample_is_reproducible_and_independent_of_input_order():
    reports = _reports()
    a, _ = sample_reports(reports, 20, seed=42)
    shuffled = reports[:]
    random.Random(0).shuffle(shuffled)
    b, _ = sample_reports(shuffled, 20, seed=42)
    assert {r.id for r in a} == {r.id for r in b}
    assert [r.id for r in b] == [r.id for r in shuffled if r.id in {x.id for x in b}]  # input order kept
    c, _ = sample_reports(reports, 20, seed=7)
    assert {r.id for r in c} != {r.id for r in a}
    everything, counts = sample_reports(reports, 500, seed=42)
    assert everything == reports and counts["kept"] == 100


def test_build_limit_ingests_n_reports(tmp_path, sample_corpus):
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["build", str(sample_corpus), "-o", str(out), "-q", "--upto", "chunk",
                                   "--limit", "5"])
    assert res.exit_code == 0, res.output
    reports = (out / "ingest" / "reports.jsonl").read_text("utf-8").splitlines()
    assert len(reports) == 5
    manifest = json.loads((out / "ingest" / "manifest.json").read_text("utf-8"))
    assert manifest["counts"]["sample"]["from"] == 31 and manifest["config"]["run.sample_reports"] == 5
    passages = [json.loads(x) for x in (out / "chunk" / "passages.jsonl").read_text("utf-8").splitlines()]
    assert {p["report_id"] for p in passages} == {json.loads(r)["id"] for r in reports}
