"""Issue 48's yield measure (eval/bench_yield.py) and what ingest reads of the generated full-length report texts
(their title, kind and broker), on reports built from datasets/sample (no shared data needed)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("reportlab", reason="reportlab draws the test PDFs: pip install reportlab (test extra)")

from eval import _fullreports as G  # noqa: E402
from eval.bench_yield import kept, measure, render  # noqa: E402


def test_kept_queries_per_thousand_body_characters_per_kind(tmp_path: Path) -> None:
    (tmp_path / "verify").mkdir()
    rows = [("a", "sentence"), ("a", "passage"), ("a", "topic"), ("b", "sentence"), ("b", "sentence")]
    (tmp_path / "verify" / "queries.jsonl").write_text(
        "".join(json.dumps({"report_id": r, "level": lv}) + "\n" for r, lv in rows), encoding="utf-8")
    by = kept(tmp_path)
    assert by["a"] == Counter(sentence=1, passage=1, topic=1)
    m = measure(by, {"a": 1000, "b": 4000}, {"a": {"company"}, "b": {"industry", "company"}})
    assert m["all"]["per_1k"] == 0.8 and m["all"]["sentence"] == 3 and m["topic_level"] == 1
    assert m["industry"] == {"reports": 1, "body_chars": 4000, "sentence": 2, "passage": 0, "per_1k": 0.5}
    assert m["company"]["reports"] == 2  # a body that went into both kinds counts for both
    r = {"date": "d", "commit": "c", "machine": "m", "n": 2, "seed": 0, "full": m, "abstract": m,
         "ratio": {"all": 1.0, "company": 1.0, "industry": None}, "abstract_bodies": 2,
         "build_s": {"full": 1, "abstract": 1}}
    text = render(r)
    assert "| all | 2 | 5,000 | 3 / 1 | 0.8 |" in text and "100%" in text and "target >= 60%: met" in text


def test_ingest_reads_the_generated_reports_title_kind_and_broker(tmp_path: Path) -> None:
    from fincprg.config import IngestConfig
    from fincprg.ingest.mapping import FieldMapper, to_report
    from fincprg.ingest.readers import ReadStats, read_text_file

    truths = G.generate(tmp_path, 4, seed=3, source="sample")
    for t in truths:
        (raw,) = list(read_text_file(tmp_path / "wrapped" / f"{t['id']}.txt", ReadStats()))
        r = to_report(raw, IngestConfig(), FieldMapper({}))
        assert r.title == t["title"], (r.title, t["title"])
        assert (r.report_type == "company") == (t["kind"] == "company"), (r.report_type, t["report_type"])
        assert r.meta["broker"] == t["broker"]
