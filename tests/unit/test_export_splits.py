"""Export splits: a labelled topic node is kept in test even when the hash split put all of them in train."""
from __future__ import annotations

from collections import Counter

from fincprg.records import Topic, TopicAssignment
from fincprg.export.splits import ensure_topic_test, report_units, split_reports, split_topics

# six leaf clusters of different sizes; a parent joins the first two
SIZES = {"t0": 6, "t1": 5, "t2": 4, "t3": 3, "t4": 3, "t5": 2}
ASSIGN = {f"{t}r{i}": TopicAssignment(report_id=f"{t}r{i}", title="", leaf_topic=t)
          for t, n in SIZES.items() for i in range(n)}
NODES = {t: Topic(id=t, title_ids=tuple(f"{t}r{i}" for i in range(n))) for t, n in SIZES.items()}
NODES["h0"] = Topic(id="h0", children=("t0", "t1"))


def _labels(*topics: str) -> dict[str, set[str]]:
    """Each labelled topic's labels point into its own first two reports."""
    return {t: {f"{t}r0", f"{t}r1"} for t in topics}


def _surviving(rs: dict[str, str], labels: dict[str, set[str]], seed: int, frac: float) -> dict[str, set[str]]:
    ts = split_topics(sorted(labels), NODES, rs, seed=seed, test_fraction=frac)
    return {sp: {t for t, rids in labels.items() if ts[t] == sp and any(rs[r] == sp for r in rids)}
            for sp in ("train", "test")}


def test_smallest_labelled_topic_moves_to_test_and_share_stays_near_target():
    units = report_units(ASSIGN, ASSIGN, "leaf")
    # the hash split's outcome, forced: every labelled topic (t0, t2, t4) in train
    unit_split = {"topic:t0": "train", "topic:t1": "train", "topic:t2": "train", "topic:t3": "test",
                  "topic:t4": "train", "topic:t5": "test"}
    labels = _labels("t0", "t2", "t4")
    out = ensure_topic_test(units, unit_split, NODES, labels, seed=0, test_fraction=0.2)
    assert out["topic:t4"] == "test"  # fewest reports to move (3)
    assert out["topic:t0"] == out["topic:t2"] == "train"
    rs = {r: out[u] for r, u in units.items()}
    got = _surviving(rs, labels, 0, 0.2)
    assert got == {"train": {"t0", "t2"}, "test": {"t4"}}
    # 23 reports, target round(4.6) = 5: t3 (3) and t5 (2) are given back as far as that helps
    test_size = sum(v == "test" for v in rs.values())
    assert test_size in (5, 6)  # 8 before the give-back
    assert ensure_topic_test(units, unit_split, NODES, labels, seed=0, test_fraction=0.2) == out  # deterministic


def test_labels_outside_the_node_move_with_it():
    units = report_units(ASSIGN, ASSIGN, "leaf")
    unit_split = dict.fromkeys(set(units.values()), "train") | {"topic:t1": "test"}
    labels = {"t5": {"t5r0", "t3r0"}, "t0": {"t0r0"}}  # t5's label sits in a t3 report
    out = ensure_topic_test(units, unit_split, NODES, labels, seed=0, test_fraction=0.2)
    assert out["topic:t5"] == out["topic:t3"] == "test"
    assert out["topic:t0"] == "train"


def test_nothing_changes_when_not_needed_or_not_possible():
    units = report_units(ASSIGN, ASSIGN, "leaf")
    all_train = dict.fromkeys(set(units.values()), "train") | {"topic:t5": "test"}
    # one labelled topic only: it stays in train (the train side needs it)
    assert ensure_topic_test(units, all_train, NODES, _labels("t2"), seed=0, test_fraction=0.2) == all_train
    # a topic label already survives in test
    with_test = all_train | {"topic:t3": "test"}
    assert ensure_topic_test(units, with_test, NODES, _labels("t2", "t3"), seed=0, test_fraction=0.2) == with_test
    # moving either topic would take the other's labels out of train too (labels shared)
    shared = {"t2": {"t2r0", "t3r0"}, "t3": {"t3r0", "t2r0"}}
    assert ensure_topic_test(units, all_train, NODES, shared, seed=0, test_fraction=0.2) == all_train


def test_split_reports_keeps_topic_labels_in_both_splits_for_every_seed():
    labels = _labels("t0", "t2", "t4")
    moved = 0
    for seed in range(40):
        plain = split_reports(ASSIGN, ASSIGN, unit="leaf", seed=seed, test_fraction=0.2)
        rs = split_reports(ASSIGN, ASSIGN, unit="leaf", seed=seed, test_fraction=0.2, nodes=NODES,
                           topic_labels=labels)
        got = _surviving(rs, labels, seed, 0.2)
        assert got["train"] and got["test"], seed
        units = report_units(ASSIGN, ASSIGN, "leaf")
        by_unit = Counter((u, rs[r]) for r, u in units.items())
        assert len(by_unit) == len(set(units.values()))  # units still move whole
        moved += rs != plain
    assert moved  # some seeds needed the move (else this test proves nothing)
