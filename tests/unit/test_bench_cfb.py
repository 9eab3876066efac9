"""eval/bench_cfb.py and the fixed CFBenchmark split (eval/_cfb_split.py) on made-up bodies and a toy build
folder (no ../shared/data needed)."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "eval"))

from _cfb_split import held_out, part_of, read_bodies, reading_corpus  # noqa: E402
from bench_cfb import measure, render  # noqa: E402

from fincprg.finance.stocks import StockTable  # noqa: E402


def _w(p: Path, rows: list[dict]) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_the_split_is_a_fixed_hash_of_the_id_and_one_for_every_benchmark(tmp_path):
    ids = [f"r{i:04d}" for i in range(400)]
    held = [i for i in ids if held_out(i)]
    assert held == [i for i in ids if int(hashlib.sha1(i.encode()).hexdigest(), 16) % 4 == 0]
    assert 60 < len(held) < 140  # about a quarter
    from eval._train_human import cfb_held_out  # bench_train holds out the same bodies

    assert [i for i in ids if cfb_held_out(i)] == held
    f = tmp_path / "bodies.jsonl"
    _w(f, [{"id": i, "text": f"正文{i}", "extra": 1} for i in ids])
    first = read_bodies(f, "all", 10)
    assert [r["id"] for r in first] == ids[:10] and set(first[0]) == {"id", "text"}
    assert [r["id"] for r in read_bodies(f, "held-out")] == held
    assert {part_of(r["id"]) for r in read_bodies(f, "learn", 50)} == {"learn"}
    # a reading's build draws from the held-out part only
    got = [json.loads(x)["id"] for x in reading_corpus(5, tmp_path / "r.jsonl", f).read_text("utf-8").splitlines()]
    assert got == held[:5]
    with pytest.raises(ValueError, match="part"):
        read_bodies(f, "train")


def test_measure_counts_yield_and_the_companies_queries_name(tmp_path):
    table_csv = tmp_path / "stocks.csv"
    table_csv.write_text("symbol,name,industry\n300014,亿纬锂能,电气设备\n300769,德方纳米,化工原料\n", encoding="utf-8")
    table = StockTable(table_csv)
    out = tmp_path / "out"
    _w(out / "ingest" / "reports.jsonl", [
        {"id": "a", "title": "", "text": "亿纬锂能（300014）发布2021年半年报，公司营收增长。"},
        {"id": "b", "title": "", "text": "公司发布年报，营收增长。"}])
    _w(out / "chunk" / "passages.jsonl", [{"id": f"{r}#p{k}", "report_id": r, "order": k, "text": "营收增长。"}
                                          for r in "ab" for k in range(2)])
    _w(out / "chunk" / "sentences.jsonl", [])
    gen = [{"id": "qp:a#p0", "level": "passage", "text": "亿纬锂能2021年上半年营收如何？", "report_id": "a",
            "source_ids": ["a#p0"]},
           {"id": "qs:a#p0#s0", "level": "sentence", "text": "德方纳米2021年二季度的归母净利润是多少？", "report_id": "a",
            "source_ids": ["a#p0"], "provenance": {"sentence_id": "a#p0#s0"}},
           {"id": "qs:a#p1#s0", "level": "sentence", "text": "公司营收增长了多少？", "report_id": "a",
            "source_ids": ["a#p1"], "provenance": {"sentence_id": "a#p1#s0"}}]
    _w(out / "generate" / "queries.jsonl", gen)
    (out / "generate" / "manifest.json").write_text(json.dumps(
        {"config": {"finance": {"stock_table": str(table_csv)}},
         "counts": {"no_subject_passages": 2, "queries": {"passage": 1, "sentence": 2}}}), encoding="utf-8")
    _w(out / "dataset" / "queries.jsonl", [{"_id": q["id"], "text": q["text"], "level": q["level"],
                                            "report_id": q["report_id"]} for q in gen])
    r = measure(out, table)
    assert (r["reports"], r["passages"], r["passages_with_query"], r["reports_with_subject"]) == (2, 4, 2, 1)
    s, p, both = r["levels"]["sentence"], r["levels"]["passage"], r["levels"]["both"]
    assert (s["queries"], s["per_report"], s["per_passage"]) == (2, 1.0, 0.5)
    # the partner names a listed company but not the body's subject; the bare 「公司」 names neither
    assert (s["names_listed"], s["names_subject"], p["names_listed"], p["names_subject"]) == (1, 0, 1, 1)
    assert both["names_listed_share"] == round(2 / 3, 3) and s["examples"] == ["公司营收增长了多少？"]
    # a build without a table found no subject, whatever the table that reads the queries knows
    (out / "generate" / "manifest.json").write_text(json.dumps(
        {"config": {"finance": {"stock_table": "none"}}, "counts": {}}), encoding="utf-8")
    assert measure(out, table)["reports_with_subject"] == 0
    meta = {"date": "d", "commit": "c", "machine": "m", "first": 2, "bodies_in_file": 2, "part": "all",
            "held_out": 0, "build_s": {"default": 1.0}}
    text = render({"meta": meta, "builds": {"default": r}})
    assert "| default | 2 | 1 | 4 | sentence | 2 | 1.000 | 0.500 |" in text and "0.19 passage" in text
