"""eval/bench_topics.py: the topics-e5 section's LSA row comes from the LSA run, saved or as the topics section
words it (the parse must follow what write_readme writes, and read nothing outside that section)."""
from __future__ import annotations

import json

import pytest

bt = pytest.importorskip("eval.bench_topics")

RES = {"titles": 100, "kept": 90, "dropped": {"duplicate": 10}, "dims": 165, "cluster_config": {},
       "time2vec_weight": 0.3, "wall_s": 12.5, "wall_s_range": (12.0, 13.0), "steps_s": {}, "peak_rss_mb": 900,
       "cpu_s": 10.0, "topics": 7, "tree_nodes": 13, "outlier_share": 0.25, "purity_eastmoney": 0.5,
       "eastmoney_industries": 40, "purity_citic": 0.8125, "subtree_above_leaf": 0.1, "repeats": 3,
       "same_result": True}
IND = {"cfbenchmark_items": 10, "cfbenchmark_accuracy": 0.5, "cfbenchmark_unlabelled": 0.1,
       "eastmoney_titles_mapped": 90, "eastmoney_agreement": 0.8, "eastmoney_unlabelled": 0.05}


def test_lsa_row_parsed_from_the_topics_section_write_readme_wrote(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    # a section before it with look-alike bold figures must not be read
    readme.write_text("# x\n\n**Wall time 999 s** **1 topics** **outlier share 99.0%**: 1.0% on the "
                      "1 raw, 1.0% after mapping them to CITIC\n", encoding="utf-8")
    monkeypatch.setattr(bt, "README", readme)
    monkeypatch.setattr(bt, "RESULTS", tmp_path / "none")
    bt.write_readme(RES, IND)
    assert bt.lsa_figures() == {"runs": "3", "wall_s": "12.5", "topics": "7", "outlier": "25.0%",
                                "citic": "81.2%", "em": "50.0%"}


def test_lsa_row_prefers_the_saved_result(tmp_path, monkeypatch):
    monkeypatch.setattr(bt, "README", tmp_path / "README.md")
    monkeypatch.setattr(bt, "RESULTS", tmp_path)
    (tmp_path / "result-lsa.json").write_text(json.dumps(RES), encoding="utf-8")
    assert bt.lsa_figures() == {"runs": 3, "wall_s": 12.5, "topics": 7, "outlier": "25.0%", "citic": "81.2%",
                                "em": "50.0%"}
