"""Ingest: readers, field mapping, dates, encodings and every bad-input case (with file:line)."""
from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path

import pytest

from fincprg.config import load_config
from fincprg.errors import InputError
from fincprg.ingest.dates import parse_date
from fincprg.ingest.mapping import parse_title_company
from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext
from fincprg.records import Rejection, Report

TEXT = "公司2023年实现营业收入46.51亿元，同比增长39.7%。毛利率为30.0%，同比下降2.0个百分点。"


def run_ingest(corpus: Path, out: Path, overrides: list[str] | None = None) -> tuple[dict, list[Report], list[Rejection]]:
    from fincprg.ingest.stage import run

    cfg = load_config(None, overrides)
    ctx = StageContext(STAGE_BY_NAME["ingest"], out, cfg, "sig", corpus=corpus, show_progress=False)
    ctx.dir.mkdir(parents=True, exist_ok=True)
    counts = run(ctx)
    reports = [Report.model_validate_json(x) for x in (ctx.dir / "reports.jsonl").read_text().splitlines()]
    rejected = [Rejection.model_validate_json(x) for x in (ctx.dir / "rejected.jsonl").read_text().splitlines()]
    return counts, reports, rejected


def jl(*objs: dict) -> str:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)


def good(i: int, **kw) -> dict:
    return {"id": f"r{i}", "title": f"星河科技（688321）：报告{i}", "text": TEXT, "date": "2024-03-01", **kw}


@pytest.mark.parametrize("raw,expected", [
    ("2024-03-01", dt.date(2024, 3, 1)), ("2024/3/1", dt.date(2024, 3, 1)), ("20240301", dt.date(2024, 3, 1)),
    ("2022-04-10 00:00:00", dt.date(2022, 4, 10)), ("2024-03-01T09:30:00+08:00", dt.date(2024, 3, 1)),
    ("2024年3月1日", dt.date(2024, 3, 1)), ("2024年03月", dt.date(2024, 3, 1)), ("2024.03.05", dt.date(2024, 3, 5)),
    (20240301, dt.date(2024, 3, 1)), ("", None), (None, None),
])
def test_date_forms(raw, expected):
    assert parse_date(raw) == expected


@pytest.mark.parametrize("raw", ["yesterday", "2024-13-01", "2024-02-30", "03/01/2024"])
def test_bad_dates_raise(raw):
    with pytest.raises(ValueError):
        parse_date(raw)


def test_title_company_parser():
    assert parse_title_company("景津装备（603279）：业绩符合预期") == ("景津装备", "603279")
    assert parse_title_company("贵州茅台(600519.SH)：高端白酒龙头") == ("贵州茅台", "600519")
    assert parse_title_company("半导体行业周报：存储价格触底") == (None, None)


def test_jsonl_good_and_every_bad_line(tmp_path):
    f = tmp_path / "c.jsonl"
    lines = [
        json.dumps(good(1), ensure_ascii=False),
        '{"id": "r2", "title": "坏行", "text": ',                      # 2 malformed JSON
        json.dumps({"id": "r3", "title": "无正文"}, ensure_ascii=False),  # 3 missing text
        json.dumps(good(1), ensure_ascii=False),                       # 4 duplicate id
        json.dumps(good(5, date="not a date"), ensure_ascii=False),    # 5 bad date (kept with date=None)
        json.dumps({"id": "r6", "text": TEXT}, ensure_ascii=False),    # 6 missing title
        "[1, 2]",                                                      # 7 not an object
        "",                                                            # blank: ignored
    ]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts, reports, rejected = run_ingest(f, tmp_path / "out", ["ingest.require_title=true"])
    assert [r.id for r in reports] == ["r1", "r5"]
    by = {r.reason: r for r in rejected}
    assert set(by) == {"malformed_json", "missing_text", "duplicate_id", "missing_title", "bad_row"}
    assert by["malformed_json"].source == f"{f}:2" and f"{f}:2" in by["malformed_json"].detail
    assert f"{f}:3" in by["missing_text"].detail and "ingest.fields" in by["missing_text"].detail
    assert f"{f}:4" in by["duplicate_id"].detail and f"{f}:1" in by["duplicate_id"].detail
    assert f"{f}:6" in by["missing_title"].detail
    assert f"{f}:7" in by["bad_row"].detail
    assert counts["reports"] == 2 and counts["rejected"] == 5
    assert counts["rejected_by_reason"] == {"bad_row": 1, "duplicate_id": 1, "malformed_json": 1,
                                            "missing_text": 1, "missing_title": 1}
    r5 = reports[1]
    assert r5.date is None and r5.meta["_bad_date"] == "not a date" and counts["dates_unparsed"] == 1
    assert reports[0].company == "星河科技" and reports[0].stock_code == "688321"
    assert reports[0].source == f"{f}:1"


def test_bad_date_reject_mode_names_line(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(jl(good(1), good(2, date="2024年13月45日")), encoding="utf-8")
    _, reports, rejected = run_ingest(f, tmp_path / "out", ["ingest.on_bad_date=reject"])
    assert [r.id for r in reports] == ["r1"]
    assert rejected[0].reason == "bad_date" and f"{f}:2" in rejected[0].detail


def test_bad_date_null_mode_warns_with_line(tmp_path, caplog):
    f = tmp_path / "c.jsonl"
    f.write_text(jl(good(1, date="someday")), encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        _, reports, _ = run_ingest(f, tmp_path / "out")
    assert reports[0].date is None
    assert f"{f}:1" in caplog.text


def test_gbk_file_is_detected_and_decoded(tmp_path):
    f = tmp_path / "gbk.jsonl"
    f.write_bytes(jl(good(1), good(2)).encode("gbk"))
    counts, reports, rejected = run_ingest(f, tmp_path / "out")
    assert counts["encodings"] == {"gbk": 1} and not rejected
    assert reports[0].text == TEXT and reports[0].company == "星河科技"


def test_undecodable_bytes_are_reported_with_line(tmp_path):
    f = tmp_path / "mixed.jsonl"
    bad = b'{"id": "r2", "title": "\xff\xfe\xff", "text": "x"}\n'
    f.write_bytes(jl(good(1)).encode() + bad + jl(good(3)).encode())
    counts, reports, rejected = run_ingest(f, tmp_path / "out")
    assert [r.id for r in reports] == ["r1", "r3"]
    assert rejected[0].reason == "undecodable" and rejected[0].source == f"{f}:2"
    assert f"{f}:2" in rejected[0].detail and "UTF-8" in rejected[0].detail
    assert counts["encodings"] == {"utf-8": 1}


def test_zero_surviving_reports_is_an_input_error(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text('{"id": 1\n{"title": "t"}\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        run_ingest(f, tmp_path / "out")
    assert "no report survived" in str(e.value) and f"{f}:1" in str(e.value)


def test_duplicate_id_error_mode(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(jl(good(1), good(1)), encoding="utf-8")
    with pytest.raises(InputError, match=f"{f}:2"):
        run_ingest(f, tmp_path / "out", ["ingest.on_duplicate_id=error"])


def test_field_mapping_aliases_and_meta(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(jl(
        {"研报标题": "某某科技：点评", "研报内容": TEXT, "发布日期": "2023年5月8日", "股票代码": "688123.SH",
         "公司": "某某科技", "行业": "电子", "类型": "公司研究", "券商": "华辰证券"},
        {"标题": "行业周报", "正文": TEXT, "日期": "20230509", "类型": "行业研究"},
    ), encoding="utf-8")
    _, reports, rejected = run_ingest(f, tmp_path / "out", ["ingest.fields={研报标题: title, 研报内容: text}"])
    assert not rejected
    a, b = reports
    assert (a.title, a.date, a.stock_code, a.company, a.industry, a.report_type) == (
        "某某科技：点评", dt.date(2023, 5, 8), "688123", "某某科技", "电子", "company")
    assert a.meta == {"券商": "华辰证券"}
    assert b.title == "行业周报" and b.report_type == "industry" and b.date == dt.date(2023, 5, 9)
    assert a.id.startswith("r") and a.id != b.id  # stable content ids for id-less input


def test_generated_ids_are_stable(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(jl({"title": "甲", "text": TEXT}, {"title": "乙", "text": TEXT}), encoding="utf-8")
    _, r1, _ = run_ingest(f, tmp_path / "o1")
    f.write_text(jl({"title": "乙", "text": TEXT}, {"title": "甲", "text": TEXT}), encoding="utf-8")
    _, r2, _ = run_ingest(f, tmp_path / "o2")
    assert {r.title: r.id for r in r1} == {r.title: r.id for r in r2}


def test_csv_with_bad_row_and_missing_text(tmp_path):
    f = tmp_path / "c.csv"
    f.write_text('标题,正文,日期\n"星河科技（688321）：好","多行\n正文。",2024/3/1\n只有两列,x\n无正文,,2024-01-01\n',
                 encoding="utf-8")
    counts, reports, rejected = run_ingest(f, tmp_path / "out")
    assert len(reports) == 1 and reports[0].text == "多行\n正文。" and reports[0].stock_code == "688321"
    by = {r.reason: r for r in rejected}
    assert by["bad_row"].source == f"{f}:4"  # the quoted line break makes row 3 span lines 2-3
    assert by["missing_text"].source == f"{f}:5"


def test_txt_directory(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.txt").write_text("远航汽车（601234）：销量高增\n\n正文第一段。\n正文第二段。", encoding="utf-8")
    (d / "b.md").write_text("\n" + "很长的第一行" * 30 + "。\n第二行。", encoding="utf-8")
    (d / "c.txt").write_bytes("江城银行：息差企稳\n营收增长。".encode("gbk"))
    (d / "README.md").write_text("# about this folder", encoding="utf-8")
    counts, reports, rejected = run_ingest(d, tmp_path / "out")
    assert not rejected and counts["files"] == 3
    by = {r.id: r for r in reports}
    assert by["a"].title == "远航汽车（601234）：销量高增" and by["a"].text == "正文第一段。\n正文第二段。"
    assert by["a"].stock_code == "601234"
    assert by["b"].title == "b" and by["b"].text.startswith("很长的第一行")  # first line too long -> file name
    assert by["c"].title == "江城银行：息差企稳"
    assert counts["encodings"] == {"gbk": 1, "utf-8": 2}


def test_json_array(tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps([good(1), good(2), "oops"], ensure_ascii=False), encoding="utf-8")
    _, reports, rejected = run_ingest(f, tmp_path / "out")
    assert [r.id for r in reports] == ["r1", "r2"] and rejected[0].source == f"{f}:3"


def test_missing_corpus_is_input_error(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        run_ingest(tmp_path / "nope.jsonl", tmp_path / "out")


def test_ingest_uses_the_finance_title_parser():
    import fincprg.finance
    import fincprg.ingest.mapping as mapping

    # one parser: Report.company must agree with what generate/mine/topics derive from the title
    assert mapping.parse_title_company is fincprg.finance.parse_title_company
    assert not hasattr(mapping, "_TITLE_CO")


@pytest.mark.parametrize(("title", "company", "code"), [
    ("公司点评-贵州茅台（600519）：业绩符合预期", "贵州茅台", "600519"),
    ("中国平安(SH.601318)点评", "中国平安", "601318"),
    ("腾讯控股（00700.HK）：游戏回暖", "腾讯控股", "00700.HK"),
    ("贵州茅台[600519]深度报告", "贵州茅台", "600519"),
    ("贵州茅台600519：高端白酒龙头", "贵州茅台", "600519"),
    ("半导体行业周报：存储价格触底回升", None, None),
])
def test_ingest_fills_company_from_every_title_form(tmp_path, title, company, code):
    f = tmp_path / "c.jsonl"
    f.write_text(jl({"id": "r1", "title": title, "text": TEXT, "date": "2024-03-01"}), encoding="utf-8")
    _, reports, _ = run_ingest(f, tmp_path / "out")
    assert (reports[0].company, reports[0].stock_code) == (company, code)


def test_metadata_company_wins_over_title(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(jl(good(1, company="星河科技股份", stock_code="688321.SH")), encoding="utf-8")
    _, reports, _ = run_ingest(f, tmp_path / "out")
    assert (reports[0].company, reports[0].stock_code) == ("星河科技股份", "688321")
