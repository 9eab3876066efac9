"""Issue 49's distillation pieces: teacher rankings cached and resumable, rows that follow the teacher's ranking
and never use a labelled positive or a passage of the positive's report as a negative."""
from __future__ import annotations

import json

import pytest

from fincprg.errors import ConfigError
from fincprg.train.data import Pairs
from fincprg.train.distill import distill_rows, row_candidates


def _pairs() -> Pairs:
    pool = {f"p{i}": f"passage {i}" for i in range(10)}
    report_of = {f"p{i}": f"r{i // 2}" for i in range(10)}  # p0/p1 one report, p2/p3 the next...
    return Pairs(queries=["q"], positives=["passage 0"], pos_ids=["p0"], pool=pool,
                 known={"q": {"p0", "p4"}}, by_text={}, report_of=report_of)


def test_negatives_come_from_below_the_positive_never_a_positive_or_its_report():
    ranking = {"p5": 9.0, "p0": 8.0, "p1": 7.0, "p4": 6.0, "p6": 5.0, "p7": 4.0, "p8": 3.0, "p9": 2.0}
    cands = row_candidates(_pairs(), 0, ranking, 3)
    assert cands[0] == ("p0", 9.0)  # the labelled positive heads the target, at the teacher's best score
    negs = [p for p, _ in cands[1:]]
    assert "p5" not in negs  # above the positive in the teacher's ranking
    assert "p1" not in negs and "p4" not in negs  # same report as the positive; a labelled positive
    assert negs == ["p6", "p8", "p9"]  # spread over p6..p9, the first and last included


def test_rows_carry_normalised_teacher_labels_and_the_control_permutes_them():
    ranking = {"p0": 8.0, "p6": 5.0, "p7": 4.0, "p9": 2.0}
    cols, counts = distill_rows(_pairs(), {"q": ranking}, 3)
    assert cols["label"] == [[1.0, 0.5, 1 / 3, 0.0]]
    assert [cols[f"negative_{j}"][0] for j in (1, 2, 3)] == ["passage 6", "passage 7", "passage 9"]
    assert counts == {"teacher": 3, "random": 0, "rows_skipped": 0}
    shuffled, _ = distill_rows(_pairs(), {"q": ranking}, 3, shuffle_labels=True, seed=3)
    assert sorted(shuffled["label"][0]) == sorted(cols["label"][0]) and shuffled["label"] != cols["label"]


def test_a_short_teacher_list_is_filled_with_random_passages_at_its_lowest_score():
    cols, counts = distill_rows(_pairs(), {"q": {"p0": 3.0, "p6": 1.0}}, 3)
    assert counts["teacher"] == 1 and counts["random"] == 2
    assert cols["label"][0][0] == 1.0 and cols["label"][0][1:] == [0.0, 0.0, 0.0]
    assert not {"passage 0", "passage 4"} & {cols[f"negative_{j}"][0] for j in (1, 2, 3)}


def test_teacher_rankings_are_cached_and_a_cut_line_is_ranked_again(tmp_path, monkeypatch):
    from fincprg.evaluate import retriever_specs
    from fincprg.train import teacher

    corpus = {f"d{i}": {"text": t} for i, t in enumerate(["营业收入增长", "净利润下降", "毛利率提升", "现金流改善"])}
    queries = ["营业收入增长多少", "净利润为何下降", "毛利率"]
    first = teacher.rank(queries, corpus, "bm25", 2, tmp_path, show_progress=False)
    assert set(first) == set(queries) and all(len(r) <= 2 for r in first.values())
    assert next(iter(first["营业收入增长多少"])) == "d0"
    calls = []
    real = retriever_specs.build
    monkeypatch.setattr(retriever_specs, "build", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert teacher.rank(queries, corpus, "bm25", 2, tmp_path, show_progress=False) == first and calls == []
    cache = next(tmp_path.glob("*.jsonl"))
    lines = cache.read_text("utf-8").splitlines()
    cache.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2], "utf-8")  # a kill mid-line
    assert teacher.rank(queries, corpus, "bm25", 2, tmp_path, show_progress=False) == first and len(calls) == 1
    assert teacher.rank(queries, corpus, "bm25", 3, tmp_path, show_progress=False) != {}  # another K: another file
    assert len(list(tmp_path.glob("*.jsonl"))) == 2
    json.loads(cache.read_text("utf-8").splitlines()[-1])  # the re-ranked line is whole


@pytest.mark.parametrize("kw, flag", [({"teacher": "bm25"}, "--teacher"), ({"loss": "marginmse", "negatives": 0}, "--negatives"),
                                      ({"loss": "kl", "negatives": 0}, "--negatives"),
                                      ({"loss": "kl", "student_temperature": 0.0}, "--student-temperature")])
def test_distillation_options_are_refused_where_nothing_reads_them(kw, flag):
    from fincprg.train.settings import TrainSettings

    with pytest.raises(ConfigError, match=flag):
        TrainSettings(**kw).check()
    TrainSettings(loss="kl", teacher="bm25", negatives=3).check()
    assert TrainSettings().teacher_spec("M") == "hybrid:0.75:dense:M"
