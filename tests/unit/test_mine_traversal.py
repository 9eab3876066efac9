"""Traversal spaces exactly as §4.2 specifies, the §7.1 cost model, direction, dedup, propagation."""
from __future__ import annotations

import itertools

import pytest

from fincprg.mine.propagate import propagate
from fincprg.mine.spaces import expected_pairs, passage_spaces, sentence_spaces, topic_spaces
from fincprg.mine.traverse import MineEnv, score_spaces
from fincprg.records import Qrel, Query, ScoredPair
from tests.unit._mine_fixture import SUBTREE, build


class Recorder:
    """Pair reranker stand-in: records every text pair it is asked about; fixed score table."""

    name = "recorder"
    default_threshold = 0.9

    def __init__(self, high: set[tuple[str, str]] | None = None):
        self.calls: list[tuple[str, str]] = []
        self.high = high or set()

    def score(self, pairs):
        self.calls.extend(pairs)
        return [0.95 if p in self.high else 0.1 for p in pairs]


@pytest.fixture
def fx():
    return build()


def _all_pairs(spaces, fx, direction="both", reranker=None, **kw):
    texts = {q.id: q.text for q in fx["queries"] + fx["topic_queries"]}
    env = MineEnv(texts=texts, reranker=reranker or Recorder(), threshold=0.9, direction=direction,
                  keep_min_score=0.0, **kw)
    res = score_spaces(spaces, env)
    return res, [(p.query_a, p.query_b) for r in res for p in r.pairs], env


def _report(qid):
    return qid.split(":", 1)[1].split("#", 1)[0]


def _passage(qid):
    return qid.split(":", 1)[1].rsplit("#s", 1)[0]


def test_sentence_space_pairs_exactly(fx):
    spaces = sentence_spaces(fx["queries"])
    assert [s.key for s in spaces] == ["R1", "R3"]  # R2 and R4 have a single passage each
    _, pairs, _ = _all_pairs(spaces, fx)
    sq = [q.id for q in fx["queries"] if q.level == "sentence"]
    want = {(a, b) for a, b in itertools.permutations(sq, 2)
            if _report(a) == _report(b) and _passage(a) != _passage(b)}
    assert set(pairs) == want and len(pairs) == len(want) == 22 + 2
    assert all(_report(a) == _report(b) for a, b in pairs)  # none across reports
    assert all(_passage(a) != _passage(b) for a, b in pairs)  # none within a passage


def test_passage_space_limited_to_subtree(fx):
    spaces, unassigned, _ = passage_spaces(fx["queries"], SUBTREE)
    assert unassigned == 1  # R4 has no subtree assignment
    _, pairs, _ = _all_pairs(spaces, fx)
    pq = [q for q in fx["queries"] if q.level == "passage"]
    want = {(a.id, b.id) for a, b in itertools.permutations(pq, 2)
            if SUBTREE.get(a.report_id) is not None and SUBTREE.get(a.report_id) == SUBTREE.get(b.report_id)}
    assert set(pairs) == want and len(pairs) == 4 * 3 + 2 * 1


def test_outlier_titles_are_localised_by_industry_and_large_spaces_windowed():
    qs = [Query(id=f"qp:{r}#p{k}", level="passage", text="q", source_ids=(f"{r}#p{k}",), report_id=r)
          for r in ("a", "b", "c", "d", "e") for k in range(2)]
    subtree = dict.fromkeys("abcde", "t-1")
    industry = {"a": "银行", "b": "银行", "c": "银行", "d": "医药", "e": None}
    spaces, unassigned, windowed = passage_spaces(qs, subtree, industry)
    assert unassigned == 0 and windowed == 0
    assert {s.key: len(s.left) for s in spaces} == {"t-1/银行": 6, "t-1/医药": 2, "t-1/unknown": 2}
    spaces, _, windowed = passage_spaces(qs, subtree, industry, cap=4)
    assert windowed == 1  # the bank space: windows of whole reports, at most 4 queries each
    banks = [s for s in spaces if s.key.startswith("t-1/银行")]
    assert [s.left for s in banks] == [("qp:a#p0", "qp:a#p1", "qp:b#p0", "qp:b#p1"), ("qp:c#p0", "qp:c#p1")]


def test_topic_space_limited_to_topic_titles(fx):
    spaces = topic_spaces(fx["queries"] + fx["topic_queries"], fx["nodes"])
    assert [s.key for s in spaces] == ["h1", "t0"]
    _, pairs, _ = _all_pairs(spaces, fx)
    t0_right = {"qp:R1#p0", "qp:R1#p1", "qp:R1#p2"}
    h1_right = t0_right | {"qp:R2#p0"}
    want = set()
    for sub in ("qt:t0:0:0", "qt:t0:0:1"):
        want |= {(sub, p) for p in t0_right} | {(p, sub) for p in t0_right}
    want |= {("qt:h1:0:0", p) for p in h1_right} | {(p, "qt:h1:0:0") for p in h1_right}
    assert set(pairs) == want and len(pairs) == len(want) == 2 * (2 * 3 + 1 * 4)
    assert not any("qi:" in a or "qi:" in b for a, b in pairs)  # intents are not traversed


@pytest.mark.parametrize("direction", ["both", "one"])
def test_counts_follow_cost_model(fx, direction):
    spaces = (sentence_spaces(fx["queries"]) + passage_spaces(fx["queries"], SUBTREE)[0]
              + topic_spaces(fx["queries"] + fx["topic_queries"], fx["nodes"]))
    res, pairs, _ = _all_pairs(spaces, fx, direction=direction)
    exp = expected_pairs(spaces, direction)
    for kind in ("sentence", "passage", "topic"):
        got = sum(r.counts["pairs"] for r in res if r.kind == kind)
        assert got == exp[kind] == sum(1 for r in res if r.kind == kind for _ in r.pairs)
    factor = 1 if direction == "both" else 2
    assert exp == {"sentence": 24 // factor, "passage": 14 // factor, "topic": 20 // factor}
    if direction == "one":  # each unordered pair once
        assert len({frozenset(p) for p in pairs}) == len(pairs)
        assert all(a.startswith("qt:") for a, b in pairs if "qt:" in a + b)  # subquery is the query side


def test_identical_texts_are_equivalent_and_not_rescored(fx):
    qs = [q.model_copy(update={"text": "同一个问题"}) if q.id in ("qs:R1#p0#s0", "qs:R1#p1#s0") else q
          for q in fx["queries"]]
    spaces = sentence_spaces(qs)
    rec = Recorder()
    fx2 = dict(fx, queries=qs)
    res, _, _ = _all_pairs(spaces, fx2, reranker=rec)
    assert ("同一个问题", "同一个问题") not in rec.calls
    r1 = next(r for r in res if r.key == "R1")
    assert r1.counts["identical_text_pairs"] == 2
    # distinct ordered text pairs: T->{B,D,E,F}, B->{T,D,E,F}, {D,E,F}->{T,B}: 4 + 4 + 3*2
    assert r1.counts["text_pairs_scored"] == 14 == len(rec.calls) - 2  # (R3 adds its 2 pairs)
    same = [p for p in r1.pairs if {p.query_a, p.query_b} == {"qs:R1#p0#s0", "qs:R1#p1#s0"}]
    assert len(same) == 2 and all(p.score == 1.0 and p.accepted for p in same)


def test_threshold_and_kept_records(fx):
    spaces = sentence_spaces(fx["queries"])
    rec = Recorder(high={("问题R1#p0#s0", "问题R1#p2#s1")})
    texts = {q.id: q.text for q in fx["queries"]}
    env = MineEnv(texts=texts, reranker=rec, threshold=0.9, keep_min_score=0.85)
    res = score_spaces(spaces, env)
    kept = [p for r in res for p in r.pairs]
    assert [(p.query_a, p.query_b, p.accepted) for p in kept] == [("qs:R1#p0#s0", "qs:R1#p2#s1", True)]
    assert sum(int(r.hist.sum()) for r in res) == 24  # every traversed pair is in the histogram
    assert res[0].hist[95] == 1 and res[0].hist[10] == 21


def test_boilerplate_pairs_are_vetoed_and_counted(fx):
    spaces = sentence_spaces(fx["queries"])
    rec = Recorder(high={("问题R1#p0#s0", "问题R1#p2#s1"), ("问题R1#p0#s1", "问题R1#p1#s0")})
    texts = {q.id: q.text for q in fx["queries"]}
    env = MineEnv(texts=texts, reranker=rec, threshold=0.9, boilerplate=frozenset({"qs:R1#p1#s0"}))
    res = score_spaces(spaces, env)
    pairs = {(p.query_a, p.query_b): p for r in res for p in r.pairs}
    assert pairs[("qs:R1#p0#s1", "qs:R1#p1#s0")].veto == "boilerplate"
    assert not pairs[("qs:R1#p0#s1", "qs:R1#p1#s0")].accepted
    assert pairs[("qs:R1#p0#s0", "qs:R1#p2#s1")].accepted
    assert res[0].counts["veto_boilerplate"] == 1


def test_propagation_direct_positives_and_topic(fx):
    pairs = [
        ScoredPair(space="sentence", query_a="qs:R1#p0#s0", query_b="qs:R1#p2#s1", score=0.995, accepted=True),
        ScoredPair(space="sentence", query_a="qs:R1#p0#s1", query_b="qs:R1#p1#s0", score=0.999, accepted=False,
                   veto="period_year"),
        ScoredPair(space="topic", query_a="qt:t0:0:0", query_b="qp:R1#p1", score=0.992, accepted=True),
        ScoredPair(space="topic", query_a="qt:t0:0:0", query_b="qp:R1#p2", score=0.991, accepted=True),
        # same passage as already gained: the higher score wins
        ScoredPair(space="sentence", query_a="qs:R1#p0#s0", query_b="qs:R1#p2#s0", score=0.999, accepted=True),
        # a passage the query already has directly is skipped
        ScoredPair(space="sentence", query_a="qs:R1#p0#s0", query_b="qs:R1#p0#s1", score=0.999, accepted=True),
    ]
    mined = propagate(pairs, fx["qrels"], "both")
    assert mined == [
        Qrel(query_id="qs:R1#p0#s0", passage_id="R1#p2", provenance="mined", score=0.999, via="qs:R1#p2#s0"),
        Qrel(query_id="qt:t0:0:0", passage_id="R1#p1", provenance="mined", score=0.992, via="qp:R1#p1"),
        Qrel(query_id="qt:t0:0:0", passage_id="R1#p2", provenance="mined", score=0.991, via="qp:R1#p2"),
    ]
    # direction=one: the unordered pair gives both sides the other's passage
    both_ways = propagate(pairs[:1], fx["qrels"], "one")
    assert {(m.query_id, m.passage_id, m.via) for m in both_ways} == {
        ("qs:R1#p0#s0", "R1#p2", "qs:R1#p2#s1"), ("qs:R1#p2#s1", "R1#p0", "qs:R1#p0#s0")}


def test_huge_sentence_space_is_cut_into_windows_of_whole_passages():
    from fincprg.mine.spaces import Space, expected_pairs, window_space

    groups = tuple(f"r#p{p}" for p in range(10) for _ in range(3))  # 10 passages x 3 sentence queries
    space = Space("sentence", "r", tuple(f"q{i}" for i in range(30)), groups=groups)
    assert window_space(space, 30) == [space]
    wins = window_space(space, 7)
    assert all(len(w.left) <= 7 for w in wins) and [w.key for w in wins][:2] == ["r@w0", "r@w1"]
    assert sorted(q for w in wins for q in w.left) == sorted(space.left)  # no query lost
    for w in wins:  # passages are never split across windows
        assert all(set(w.groups) & set(o.groups) == set() for o in wins if o is not w)
    full, cut = expected_pairs([space], "both")["sentence"], expected_pairs(wins, "both")["sentence"]
    assert cut == 5 * (6 * 5 - 2 * 3 * 2) and cut < full  # five windows of two passages each
