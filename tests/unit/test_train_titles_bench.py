"""eval/_train_titles.py: the held-out-titles benchmark of a titled build (issue 49)."""
from __future__ import annotations

import json

from eval._train_titles import held_out_reports, title_benchmarks, without_company
from tests.unit.test_train_mix import _titled_beir


def test_without_company_cuts_the_name_and_the_code():
    assert without_company("贵州茅台（600519）：业绩稳健增长") == "业绩稳健增长"
    assert without_company("腾讯控股(00700.HK)：游戏回暖") == "游戏回暖"
    assert without_company("美团-W(3690.HK)：外卖稳健") == "外卖稳健"
    assert without_company("行业周报：白酒板块回暖") == "行业周报：白酒板块回暖"  # no company: as written


def test_title_benchmarks_hold_only_untrained_reports_without_their_titles(tmp_path):
    ds = _titled_beir(tmp_path / "ds", reports=6)
    assert held_out_reports(ds) == {"r5"}  # the test report; r0..r4 have train labels
    benches, info = title_benchmarks(ds, tmp_path / "work")
    assert set(benches) == {"titles_held_out", "titles_no_company"} and info["titles_held_out"]["queries"] == 1
    docs = [json.loads(x) for x in (benches["titles_held_out"] / "corpus.jsonl").read_text("utf-8").splitlines()]
    assert {d["report_id"] for d in docs} == {"r5"} and all(d["title"] == "" for d in docs)
    q = json.loads((benches["titles_no_company"] / "queries.jsonl").read_text("utf-8").splitlines()[0])
    assert q["text"] == "业绩稳健增长"
    qrels = (benches["titles_held_out"] / "qrels" / "test.tsv").read_text("utf-8").splitlines()[1:]
    assert sorted(x.split("\t")[1] for x in qrels) == ["r5#p0", "r5#p1", "r5#p2"]
    untitled = _titled_beir(tmp_path / "ds2", reports=6, untitled=(5,))
    assert title_benchmarks(untitled, tmp_path / "work2") == ({}, {})
