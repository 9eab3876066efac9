"""QueryTally (the generate stage's counts and hierarchy.json, gathered query by query) against hierarchy()."""
from __future__ import annotations

import json

from fincprg.generate.complete import hierarchy
from fincprg.generate.tally import QueryTally
from fincprg.records import Query


def _q(qid: str, level: str, pid: str, rid: str | None, **prov) -> dict:
    q = Query(id=qid, level=level, text=f"问题「{qid}」", source_ids=(pid,) if pid else (), report_id=rid,
              parent_id=None, provenance={"generator": "llm", **prov})
    return q.model_dump(mode="json")


def _whole(rows: list[dict]) -> str:
    # what the stage wrote before: the whole tree through fincprg.io.atomic_write_json(compact=True)
    return json.dumps(hierarchy(rows), ensure_ascii=False, sort_keys=True, default=str)


def _rows() -> list[dict]:
    return [
        _q("qp:r2#p0", "passage", "r2#p0", "r2"),
        _q("qs:r2#p0#s10", "sentence", "r2#p0", "r2", sentence_id="r2#p0#s10", original="公司…"),
        _q("qs:r2#p0#s9", "sentence", "r2#p0", "r2", sentence_id="r2#p0#s9"),
        _q("qs:r10#p2#s0", "sentence", "r10#p2", "r10"),  # no sentence_id in provenance: taken from the id
        _q("qp:r10#p10", "passage", "r10#p10", None),  # no report id: taken from the passage id
        _q("qp:r10#p9", "passage", "r10#p9", "r10"),
        _q("qt:t1", "topic", "", None),  # not in the hierarchy, but counted
        _q("qs:r2#p1#s0", "sentence", "r2#p1", "r2", sentence_id="r2#p1#s0"),  # r2 again, after r10
        _q("qp:r2#p1", "passage", "r2#p1", "r2", generator="templates"),
    ]


def test_tally_writes_the_bytes_of_the_whole_tree_dump():
    rows = _rows()
    tally = QueryTally()
    for q in rows:
        tally.add(q)
    text = tally.hierarchy_json()
    assert text == _whole(json.loads(json.dumps(rows)))  # as queries.jsonl reads back
    tree = json.loads(text)
    assert list(tree) == ["r10", "r2"] and tally.reports == 2
    assert [n["passage_id"] for n in tree["r10"]["passages"]] == ["r10#p2", "r10#p9", "r10#p10"]
    assert [s["sentence_id"] for s in tree["r2"]["passages"][0]["sentences"]] == ["r2#p0#s9", "r2#p0#s10"]
    assert tree["r2"]["passages"][1]["query"]["id"] == "qp:r2#p1"  # the reopened report kept its first part
    assert tally.levels == {"passage": 4, "sentence": 4, "topic": 1}
    assert tally.generators == {"llm": 8, "templates": 1} and tally.completed == 1


def test_tally_in_any_order_of_reports_gives_the_same_bytes():
    rows = _rows()
    want = _whole(rows)
    for order in (rows[::-1], sorted(rows, key=lambda q: q["id"]), rows[3:] + rows[:3]):
        tally = QueryTally()
        for q in order:
            tally.add(q)
        assert tally.hierarchy_json() == want


def test_empty_tally():
    tally = QueryTally()
    assert tally.hierarchy_json() == _whole([]) == "{}" and tally.reports == 0


def test_tree_records_are_what_validated_records_write():
    """tree_records builds Query and Qrel without validating them again: each equals its validated self, byte
    for byte on disk, with the completed text and the sentence's provenance."""
    import datetime as dt

    from fincprg import layout as L
    from fincprg.generate.base import PassageInput, QueryTree
    from fincprg.generate.stage import tree_records
    from fincprg.records import Passage, Qrel, Report, Sentence

    report = Report(id="r1", title="贵州茅台（600519）：业绩点评", text="", date=dt.date(2024, 4, 1), company="贵州茅台")
    passage = Passage(id="r1#p0", report_id="r1", text="2023年公司营业收入1505亿元。毛利率提升。", order=0)
    sents = tuple(Sentence(id=f"r1#p0#s{i}", passage_id="r1#p0", text=t, order=i)
                  for i, t in enumerate(["2023年公司营业收入1505亿元。", "毛利率提升。"]))
    tree = QueryTree("r1#p0", "公司营收情况如何？", ("公司营收是多少？", ""), {"generator": "llm", "model": "m"})
    out = tree_records(PassageInput(report, passage, sents), tree, complete=True)
    assert [q.id for q in out[L.QUERIES]] == ["qp:r1#p0", "qs:r1#p0#s0"] and len(out[L.QRELS]) == 2
    assert out[L.QUERIES][1].provenance["sentence_id"] == "r1#p0#s0"
    assert "贵州茅台" in out[L.QUERIES][0].text  # completed: 公司 -> the company
    for rec, model in [*((q, Query) for q in out[L.QUERIES]), *((r, Qrel) for r in out[L.QRELS])]:
        again = model.model_validate(rec.model_dump())
        assert again == rec and again.model_dump_json() == rec.model_dump_json()
