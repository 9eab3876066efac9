"""The bundled sample corpus keeps the properties issue 2 asks of it."""
from __future__ import annotations

import importlib.util
import json
from collections import Counter

from tests.conftest import SAMPLE


def test_sample_corpus_validates_and_has_the_required_spread():
    spec = importlib.util.spec_from_file_location("sample_validate", SAMPLE / "validate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.validate(SAMPLE / "reports.jsonl") == []

    rows = [json.loads(line) for line in (SAMPLE / "reports.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 20
    assert len({r["industry"] for r in rows}) >= 6
    assert len(Counter(r["report_type"] for r in rows)) >= 3
    assert {r["date"][:4] for r in rows} >= {"2022", "2023", "2024"}
    # boilerplate that cleaning must remove is present
    assert sum("免责声明" in r["text"] or "重要声明" in r["text"] for r in rows) >= 20
