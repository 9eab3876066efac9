"""Near-duplicate queries within a level, and each query's lexical overlap with its positive passage."""
from __future__ import annotations

import itertools
import random

import pytest

from fincprg.export.dedup import dedup_queries, first_kept_matches, grams
from fincprg.finance import extract
from fincprg.export.quality import Overlaps, annotate, card_lines
from fincprg.finance.easiness import distribution, keeps_facts, overlap
from fincprg.records import Qrel, Query


def _brute(texts, threshold, n):
    out = []
    for i, j in itertools.combinations(range(len(texts)), 2):
        a, b = grams(texts[i], n), grams(texts[j], n)
        if a and b and len(a & b) / len(a | b) >= threshold and extract(texts[i]) == extract(texts[j]):
            out.append((i, j))
    return out


@pytest.mark.parametrize("threshold, n", [(0.9, 2), (0.7, 2), (0.6, 3)])
def test_prefix_filtering_finds_exactly_the_pairs_a_brute_force_finds(threshold, n):
    rng = random.Random(0)
    words = ["营业收入", "毛利率", "增长", "原因", "是什么", "情况", "如何", "净利润", "下滑", "提升", "的", "主要"]
    texts = ["".join(rng.choice(words) for _ in range(rng.randint(2, 6))) for _ in range(300)]
    texts += [t + "？" for t in texts[:30]] + [t[:-1] for t in texts[30:60]]
    pairs = _brute(texts, threshold, n)
    kept: list[int] = []
    want = []  # greedy over the brute-force pairs: removed for the first kept text it pairs with
    for j in range(len(texts)):
        want.append(next((i for i in kept if (i, j) in pairs), None))
        if want[-1] is None:
            kept.append(j)
    got = [m and m[0] for m in first_kept_matches(texts, threshold, n)]
    assert pairs and any(m is not None for m in got) and got == want


def test_different_periods_or_directions_are_never_duplicates():
    texts = ["云岭酒业2023年三季度营业收入增长的原因是什么？", "云岭酒业2023年前三季度营业收入增长的原因是什么？",
             "云岭酒业2023年三季度营业收入下降的原因是什么？", "云岭酒业2023年三季度营业收入增长的原因是什么",
             "云岭酒业2024年三季度营业收入增长的原因是什么？"]
    assert [m and m[0] for m in first_kept_matches(texts, 0.7, 2)] == [None, None, None, 0, None]


def _q(qid, text, level="sentence", parent=None, pid="p1"):
    return Query(id=qid, level=level, text=text, source_ids=(pid,), parent_id=parent, report_id="r")


def test_a_removed_duplicate_hands_its_labels_and_children_to_the_kept_query():
    queries = [_q("qp:a", "星河科技2023年营收是多少？", "passage", pid="pa"),
               _q("qp:b", "星河科技2023年营收是多少", "passage", pid="pb"),
               _q("qs:b1", "星河科技AI芯片收入是多少？", parent="qp:b", pid="pb"),
               _q("qs:c", "星河科技AI芯片收入是多少？", pid="pc")]  # another level: compared within its own
    qrels = [Qrel(query_id="qp:a", passage_id="pa"), Qrel(query_id="qp:b", passage_id="pb"),
             Qrel(query_id="qs:b1", passage_id="pb"), Qrel(query_id="qs:c", passage_id="pc")]
    kept, rels, summary = dedup_queries(queries, qrels, threshold=0.9, ngram=2)
    assert [q.id for q in kept] == ["qp:a", "qs:b1"]
    assert summary["removed"] == {"passage": 1, "sentence": 1} and summary["labels_moved"] == 2
    assert next(q for q in kept if q.id == "qs:b1").parent_id == "qp:a"
    moved = {(r.query_id, r.passage_id): r for r in rels}
    assert moved[("qp:a", "pb")].provenance == "mined" and moved[("qp:a", "pb")].via == "qp:b"
    assert moved[("qs:b1", "pc")].via == "qs:c"
    assert not any(r.query_id in ("qp:b", "qs:c") for r in rels)
    assert any("duplicates" in line for line in card_lines(summary, None))


def test_overlap_measures_the_share_of_the_query_copied_from_the_passage():
    passage = "2023年星河科技实现营业收入52.18亿元，同比增长14.4%。"
    assert overlap("星河科技实现营业收入", passage) == 1.0
    assert overlap("星河科技营业收入", passage) == 0.8571  # 技营 is not in the passage
    assert overlap("星河科技营业收入", passage, "token") == 1.0
    assert overlap("哪家芯片公司的订单回暖？", passage) == 0.0
    assert 0 < overlap("星河科技的利润率？", passage) < 1
    assert overlap("", passage) == 0.0
    with pytest.raises(ValueError):
        overlap("a", "b", "cosine")
    d = distribution([0.1, 0.5, 0.9, 1.0])
    assert d["n"] == 4 and d["share_ge_0.8"] == 0.5 and sum(d["histogram"]) == 4


def test_the_filter_drops_the_labels_of_copied_queries_and_marks_them():
    passages = {"p1": "2023年星河科技实现营业收入52.18亿元，同比增长14.4%。"}
    queries = [_q("q1", "星河科技实现营业收入52.18亿元"), _q("q2", "哪家芯片公司的订单回暖了？"),
               _q("qi", "了解芯片行业", level="intent")]
    qrels = [Qrel(query_id="q1", passage_id="p1"), Qrel(query_id="q2", passage_id="p1")]
    out_q, out_r, info = annotate(queries, qrels, Overlaps(passages), max_overlap=0.8, measure="bigram")
    by = {q.id: q for q in out_q}
    assert by["q1"].provenance["too_easy"] and by["q1"].provenance["overlap"]["bigram"] == 1.0
    assert "too_easy" not in by["q2"].provenance and "overlap" not in by["qi"].provenance
    assert [r.query_id for r in out_r] == ["q2"] and info["filtered"] == {"sentence": 1}
    kept_q, kept_r, _ = annotate(queries, qrels, Overlaps(passages), max_overlap=None, measure="bigram")
    assert len(kept_r) == 2 and all("too_easy" not in q.provenance for q in kept_q)


def test_a_rewrite_must_keep_numbers_periods_and_companies():
    assert keeps_facts("星河科技2023年营收增长多少？", "2023年星河科技的收入增幅是多少？", ["星河科技"])
    assert not keeps_facts("星河科技2023年营收增长多少？", "星河科技去年营收增长多少？", ["星河科技"])
    assert not keeps_facts("星河科技2023年营收增长多少？", "该公司2023年营收增长多少？", ["星河科技"])


def test_export_removes_duplicates_and_reports_easiness(tmp_path):
    import json

    from fincprg.config import load_config
    from tests.unit.test_export import run_export, write_build

    write_build(tmp_path)
    counts = run_export(tmp_path, load_config(None, ["export.test_fraction=0.3", "export.easiness.max_overlap=0.7"]))
    queries = {json.loads(x)["_id"]: json.loads(x) for x in (tmp_path / "dataset" / "queries.jsonl").open(encoding="utf-8")}
    # r0 and r6 share a boilerplate passage: its two passage queries are one question
    assert "qp:r6#p2" not in queries and "qp:r0#p2" in queries
    assert counts["dedup"]["removed"] == {"passage": 1} and counts["dedup"]["labels_moved"] == 1
    assert counts["easiness"]["by_subset"]["all"]["bigram"]["n"] > 0
    assert set(counts["easiness"]["by_level"]) == {"passage", "sentence", "topic"}
    easy = {q for q, row in queries.items() if row["provenance"].get("too_easy")}
    assert easy and sum(counts["easiness"]["filtered"].values()) == len(easy)
    labelled = set()
    for f in (tmp_path / "dataset" / "qrels").glob("*.tsv"):
        labelled |= {line.split("\t")[0] for line in f.read_text("utf-8").splitlines()[1:]}
    assert labelled and not easy & labelled  # a too-easy query has no label left; the others keep theirs
    card = (tmp_path / "dataset" / "README.md").read_text("utf-8")
    assert "## Query diversity and difficulty" in card and "max_overlap=0.7" in card


def test_report_shows_dedup_and_easiness_from_the_export_manifest(tmp_path):
    import json

    from fincprg.report.page import write_report
    from tests.unit._report_fixture import make_build

    out = make_build(tmp_path)
    dist = {"n": 12, "mean": 0.61, "median": 0.6, "p90": 0.93, "share_ge_0.8": 0.25}
    counts = {"dedup": {"threshold": 0.9, "ngram": 2, "removed": {"sentence": 3}, "labels_moved": 2},
              "easiness": {"measure": "bigram", "max_overlap": 0.95, "filtered": {"sentence": 4},
                           "by_subset": {"all": {"bigram": dist, "token": dist}, "sentence": {"bigram": dist,
                                                                                            "token": dist}},
                           "by_level": {"sentence": {"bigram": dist, "token": dist}}}}
    (out / "dataset" / "manifest.json").write_text(json.dumps({"counts": counts}), encoding="utf-8")
    html = write_report(out).read_text("utf-8")
    section = html[html.index('id="easiness"'):html.index('id="scores"')]
    assert "sentence 3" in section and "labels dropped for 4 queries" in section
    assert section.index("<td>sentence</td>") < section.index("<td>all</td>") < section.index("level sentence")
    assert section.count('<td class="num">0.93</td>') == 6  # bigram and token p90, three rows
