"""The threshold mining actually used (here the lexical scorer's default: none is configured) is recorded in the
mine manifest's ``used``, and the dataset card, the audit and the report read it from there."""
from __future__ import annotations

import json
import shutil

import pytest

from fincprg import layout as L
from fincprg.audit.judge import RulesJudge
from fincprg.audit.run import run_audit
from fincprg.mine.lexical import LEXICAL_THRESHOLD

pytestmark = pytest.mark.slow  # the session's sample build (~20 s)


def test_the_mine_manifest_records_what_was_used(sample_dataset):
    m = L.Build(sample_dataset.parent).manifest(L.MINE)
    assert m["config"][L.MINE]["reranker"]["threshold"] is None  # nothing configured ...
    assert m["used"] == {"reranker": "lexical", "model": None, "threshold": LEXICAL_THRESHOLD,
                         "keep_min_score": m["config"][L.MINE]["keep_min_score"]}  # ... the backend's default used


def test_the_card_shows_the_threshold_used(sample_dataset):
    for card in (sample_dataset / L.CARD, sample_dataset / L.HF_DIR / L.CARD):
        text = card.read_text(encoding="utf-8")
        assert f"finance-field agreement), threshold {LEXICAL_THRESHOLD} |" in text
        assert "backend default threshold" not in text


def test_the_audit_and_the_report_read_the_threshold_from_the_manifest(sample_dataset, tmp_path):
    out = tmp_path / "build"
    shutil.copytree(sample_dataset.parent, out)  # the session's build stays untouched
    summary = run_audit(out, judge=RulesJudge(), per_interval=3)
    assert summary["threshold"] == LEXICAL_THRESHOLD
    assert summary["threshold_source"] == f"{L.STAGE_DIRS[L.MINE]}/{L.MANIFEST}"
    assert f"threshold: {LEXICAL_THRESHOLD} (from mine/manifest.json)" in (out / L.AUDIT_DIR / L.SUMMARY_MD).read_text(
        encoding="utf-8")
    # the manifest is the one source: a different recorded value is what the audit and the report show
    path = L.Build(out).path(L.MINE, L.MANIFEST)
    m = json.loads(path.read_text(encoding="utf-8"))
    m["used"]["threshold"] = 0.93
    path.write_text(json.dumps(m), encoding="utf-8")
    assert run_audit(out, judge=RulesJudge(), per_interval=3)["threshold"] == 0.93
    from fincprg.report.data import backends, histograms

    assert histograms(out)["threshold"] == 0.93
    assert any(b["role"] == "reranker" and b["model"].endswith("threshold 0.93") for b in backends(out))
