"""eval/bench_quality.py's blind-reading plumbing on a toy build folder (no ../shared/data needed): the untitled
corpus loses its header, sheets are seeded and blind, verdicts are validated and counted right."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "eval"))

from _quality_reading import aggregate, emitted_share, read_verdicts, report_of, seen_reports, write_sheets  # noqa: E402
from _quality_sources import NO_TITLE, BuildView, corpora  # noqa: E402

TITLE = "贵州茅台（600519）：业绩稳健增长"


def _w(p: Path, rows: list[dict]) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def toy_build(out: Path, titled: bool = True) -> Path:
    title = TITLE if titled else ""
    _w(out / "ingest" / "reports.jsonl", [
        {"id": "r1", "title": title, "date": "2022-03-01" if titled else None, "text": "公司2021年营业收入增长。"}])
    sents = [f"公司2021年第{i}项业务收入为{i}亿元。" for i in range(12)]
    _w(out / "chunk" / "passages.jsonl", [{"id": "r1#p0", "report_id": "r1", "order": 0, "text": "".join(sents)},
                                          {"id": "r1#p1", "report_id": "r1", "order": 1, "text": "第二段。"}])
    _w(out / "chunk" / "sentences.jsonl", [{"id": f"r1#p0#s{i}", "passage_id": "r1#p0", "order": i, "text": s}
                                           for i, s in enumerate(sents)])
    gen = [{"id": f"qs:r1#p0#s{i}", "level": "sentence", "text": f"贵州茅台2021年第{i}项业务收入是多少？",
            "source_ids": ["r1#p0"], "report_id": "r1", "provenance": {"generator": "templates",
                                                                       "sentence_id": f"r1#p0#s{i}"}}
           for i in range(12)]
    gen.append({"id": "qp:r1#p0", "level": "passage", "text": "贵州茅台2021年各项业务收入如何？",
                "source_ids": ["r1#p0"], "report_id": "r1", "provenance": {"generator": "templates"}})
    _w(out / "generate" / "queries.jsonl", gen)
    if titled:
        (out / "topics").mkdir(parents=True, exist_ok=True)
        (out / "topics" / "tree.json").write_text(json.dumps({"nodes": [
            {"id": "t1", "title_ids": ["r1"], "industry": "食品饮料"}]}), encoding="utf-8")
        _w(out / "topics" / "queries.jsonl", [
            {"id": "qt:t1#0", "level": "topic", "text": "白酒行业2022年景气度如何？", "source_ids": ["t1"],
             "provenance": {"generator": "templates"}},
            {"id": "qi:t1", "level": "intent", "text": "白酒龙头的业绩", "source_ids": ["t1"]}])
    dropped = "qs:r1#p0#s11"  # export dropped it (e.g. a near-duplicate): never on a sheet
    emitted = [q for q in gen if q["id"] != dropped] + (
        [{"id": "qt:t1#0", "level": "topic", "text": "白酒行业2022年景气度如何？"},
         {"id": "qi:t1", "level": "intent", "text": "白酒龙头的业绩"}] if titled else [])
    _w(out / "dataset" / "queries.jsonl", [{"_id": q["id"], "text": q["text"], "level": q["level"],
                                            "report_id": q.get("report_id"), "provenance": q.get("provenance", {})}
                                           for q in emitted])
    _w(out / "mine" / "qrels.jsonl", [
        {"query_id": "qs:r1#p0#s1", "passage_id": "r1#p1", "relevance": 1, "provenance": "mined", "via": "x"},
        {"query_id": "qp:r1#p0", "passage_id": "r1#p1", "relevance": 1, "provenance": "mined", "via": "y"}])
    (out / "dataset" / "qrels").mkdir(parents=True, exist_ok=True)
    (out / "dataset" / "qrels" / "all-train.tsv").write_text("query-id\tcorpus-id\tscore\nqp:r1#p0\tr1#p1\t1\n",
                                                             encoding="utf-8")
    return out


def sheets(tmp: Path, seed: int, n: int = 5) -> Path:
    views = {"titled": BuildView(toy_build(tmp / "t")), "untitled": BuildView(toy_build(tmp / "u", titled=False))}
    sheet = tmp / f"sheet{seed}"
    write_sheets(sheet, views, n_read=n, n_mined=30, seed=seed, mined_from="titled")
    return sheet


def test_untitled_corpus_has_no_title_date_or_header(tmp_path: Path) -> None:
    src = tmp_path / "alphafin.json"
    src.write_text(json.dumps([{"summary": f"这是以{TITLE}为题目,在2022-03-01 00:00:00日期发布的研究报告。研报内容如下:",
                                "content": f"研报题目是:{TITLE}；目标价格是目标价格未公布，评分是7.0；研报摘要:事件 公司发布年报。"}],
                              ensure_ascii=False), encoding="utf-8")
    titled, untitled, stats = corpora(src, tmp_path)
    t = [json.loads(x) for x in titled.read_text(encoding="utf-8").splitlines()]
    u = [json.loads(x) for x in untitled.read_text(encoding="utf-8").splitlines()]
    assert t[0]["title"] == TITLE and TITLE in t[0]["content"]
    assert u == [{"content": "事件 公司发布年报。"}]
    assert stats == {"header_stripped": 1, "title_in_body": 0, "date_in_body": 0, "reports": 1,
                     "duplicate_bodies": 0}


def test_sheets_are_seeded_blind_and_keyed_apart(tmp_path: Path) -> None:
    a, b, c = sheets(tmp_path, 1), sheets(tmp_path, 1), sheets(tmp_path, 2)
    for f in ("sheet-titled.md", "verdicts-titled.jsonl", "sheet-untitled.md", "sheet-mined.md"):
        assert (a / "reader" / f).read_text(encoding="utf-8") == (b / "reader" / f).read_text(encoding="utf-8")
    key_a, key_c = (json.loads((s / "key.json").read_text(encoding="utf-8")) for s in (a, c))
    order = lambda k: [v["query_id"] for _, v in sorted(k["items"].items()) if v["sheet"] == "titled"]  # noqa: E731
    assert order(key_a) != order(key_c)  # another seed draws another sample or order
    assert not (a / "reader" / "key.json").exists()
    titled = (a / "reader" / "sheet-titled.md").read_text(encoding="utf-8")
    # blind: no query id, passage id, generator or provenance on what the reader sees
    for leak in ("qs:", "qp:", "qt:", "r1#p0", "templates", "provenance", "generator"):
        assert all(leak not in (a / "reader" / f).read_text(encoding="utf-8")
                   for f in ("sheet-titled.md", "sheet-untitled.md", "sheet-mined.md",
                             "verdicts-titled.jsonl", "verdicts-mined.jsonl")), leak
    assert TITLE in titled and "2022-03-01" in titled and "**Sentence:**" in titled
    assert "第11项业务收入是多少" not in titled  # the query export dropped is not emitted
    untitled = (a / "reader" / "sheet-untitled.md").read_text(encoding="utf-8")
    assert f"**Report title:** {NO_TITLE}" in untitled and TITLE not in untitled
    items = key_a["items"]
    levels = [v["level"] for v in items.values() if v["sheet"] == "titled"]
    assert levels.count("sentence") == 5 and levels.count("topic") == 1 and levels.count("intent") == 1
    mined = {v["query_id"]: v["exported"] for v in items.values() if v["sheet"] == "mined"}
    assert mined == {"qs:r1#p0#s1": False, "qp:r1#p0": True}
    template = [json.loads(x) for x in (a / "reader" / "verdicts-titled.jsonl").read_text().splitlines()]
    assert [t["item"] for t in template] == sorted(k for k, v in items.items() if v["sheet"] == "titled")


def test_a_reading_after_fixes_draws_no_report_an_earlier_sheet_showed(tmp_path: Path) -> None:
    """Issue 38: the figure after class fixes is a reading of bodies no reader has seen."""
    assert report_of("qs:r1#p0#s3") == "r1" and report_of("qp:r1#p0") == "r1" and report_of("qt:t1:0:1") == "t1"
    assert report_of("qi:t12:0") == "t12" and report_of("x") is None
    first = sheets(tmp_path, 1)
    assert seen_reports([first / "key.json"]) == {"r1", "t1"}
    views = {"titled": BuildView(toy_build(tmp_path / "t2"))}
    again = tmp_path / "again"
    write_sheets(again, views, n_read=5, n_mined=0, seed=3, mined_from="titled", unseen={"r1"})
    levels = [v["level"] for v in json.loads((again / "key.json").read_text(encoding="utf-8"))["items"].values()
              if v["sheet"] == "titled"]
    assert levels == ["topic", "intent"]  # r1's sentence and passage queries are not drawn again (t1 was not seen)
    also = tmp_path / "also"
    write_sheets(also, views, n_read=5, n_mined=0, seed=3, mined_from="titled", unseen={"r1", "t1"})
    assert not json.loads((also / "key.json").read_text(encoding="utf-8"))["items"]


def test_verdicts_are_validated_and_counted(tmp_path: Path) -> None:
    key = {"items": {
        "A001": {"sheet": "t", "build": "t", "level": "sentence", "text": "q1", "rule_fails": []},
        "A002": {"sheet": "t", "build": "t", "level": "sentence", "text": "q2", "rule_fails": []},
        "A003": {"sheet": "t", "build": "t", "level": "sentence", "text": "q3", "rule_fails": ["content_words"]},
        "A004": {"sheet": "t", "build": "t", "level": "sentence", "text": "q4", "rule_fails": ["period_placed"]},
        "A005": {"sheet": "t", "build": "t", "level": "passage", "text": "q5", "rule_fails": []},
        "M001": {"sheet": "mined", "build": "t", "level": "sentence", "text": "m1", "exported": True},
        "M002": {"sheet": "mined", "build": "t", "level": "sentence", "text": "m2", "exported": False},
        "M003": {"sheet": "mined", "build": "t", "level": "topic", "text": "m3", "exported": True}}}
    sheet = tmp_path / "s"
    _w(sheet / "verdicts" / "t.jsonl", [
        {"item": "A001", "acceptable": 1}, {"item": "A002", "acceptable": 0, "reason": "wrong_subject"},
        {"item": "A003", "acceptable": 1}, {"item": "A004", "acceptable": 0, "reason": "wrong_period"},
        {"item": "A005", "acceptable": None}])  # not read yet
    _w(sheet / "verdicts" / "mined.jsonl", [{"item": "M001", "score": 2}, {"item": "M002", "score": 5},
                                            {"item": "M003", "score": 3}])
    agg = aggregate(key, read_verdicts(sheet, key))
    s = agg["reading"]["t"]["sentence"]
    assert (s["n"], s["ok"], s["rate"]) == (4, 2, 0.5)
    assert dict(s["reasons"]) == {"wrong_subject": 1, "wrong_period": 1}
    assert (s["rules_pass_reader_fail"], s["rules_fail_reader_pass"], s["agree"]) == (1, 1, 2)
    assert [e["text"] for e in s["examples"]] == ["q2", "q4"]
    assert "passage" not in agg["reading"]["t"] and agg["unread"] == {"t": 1}
    m = agg["mined"]
    assert (m["sentence"]["n"], m["sentence"]["fp"], m["sentence"]["exported"]) == (2, 1, 1)
    assert (m["topic"]["fp"], m["topic"]["rate"]) == (0, 0.0)
    # the emitted share weights each level's rate by how many queries it emitted
    y = {"levels": {"sentence": {"emitted": 300}, "passage": {"emitted": 100}}}
    assert emitted_share({"sentence": {"n": 4, "rate": 0.5}, "passage": {"n": 4, "rate": 1.0}}, y) == 0.625

    _w(sheet / "verdicts" / "t.jsonl", [{"item": "A001", "acceptable": 0}])
    with pytest.raises(ValueError, match="needs one reason"):
        read_verdicts(sheet, key)
    _w(sheet / "verdicts" / "t.jsonl", [{"item": "Z999", "acceptable": 1}])
    with pytest.raises(ValueError, match="not in"):
        read_verdicts(sheet, key)
