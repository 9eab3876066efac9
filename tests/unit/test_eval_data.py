"""BEIR folder loading (fincprg.evaluate.data) on top of fincprg.io.read_jsonl."""
from __future__ import annotations

import json

import pytest

from fincprg.errors import InputError
from fincprg.evaluate.data import load_beir
from tests.unit import _eval_fixture as fx


def test_loads_ids_text_and_extra_fields(tmp_path):
    ds = load_beir(fx.write_beir(tmp_path / "ds"))
    assert ds.queries == fx.queries()
    assert all({"title", "text"} <= set(doc) for doc in ds.corpus.values())
    assert ds.corpus == fx.corpus()
    assert ds.query_meta == fx.query_meta()  # every field but _id and text


def test_integer_ids_and_blank_lines_are_accepted(tmp_path):
    folder = fx.write_beir(tmp_path / "ds")
    rows = [{"_id": 7, "title": "t", "text": "营业收入", "report_id": "r9"}]
    (folder / "corpus.jsonl").write_text("\n" + "\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    ds = load_beir(folder)
    assert ds.corpus == {"7": {"title": "t", "text": "营业收入", "report_id": "r9"}}


@pytest.mark.parametrize("line", ['{"_id": "d1", "text": "ok"}\n{not json\n', '{"_id": "d1"}\n{"text": "no id"}\n'])
def test_bad_lines_name_file_and_line(tmp_path, line):
    folder = fx.write_beir(tmp_path / "ds")
    (folder / "corpus.jsonl").write_text(line, encoding="utf-8")
    with pytest.raises(InputError, match=r"corpus\.jsonl:2"):
        load_beir(folder)


def test_missing_corpus_says_what_a_beir_folder_holds(tmp_path):
    folder = fx.write_beir(tmp_path / "ds")
    (folder / "corpus.jsonl").unlink()
    with pytest.raises(InputError, match="corpus.jsonl is missing"):
        load_beir(folder)


def test_merge_qrels_keeps_every_pair_at_its_highest_grade():
    from fincprg.evaluate.data import merge_qrels

    merged = merge_qrels([{"q1": {"a": 1, "b": 0}}, {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1}}, {"q1": {"a": 1}}])
    assert merged == {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1}}
