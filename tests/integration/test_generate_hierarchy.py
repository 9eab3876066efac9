"""generate/hierarchy.json: each report's queries merged into report -> passages -> sentences.

(Its bytes under another batch size and a forced re-run: test_generate_sample.py.)"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fincprg.config import load_config
from fincprg.pipeline.runner import run_pipeline

pytestmark = pytest.mark.slow
SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample" / "reports.jsonl"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    assert SAMPLE.exists(), "datasets/sample/reports.jsonl is part of the repository"
    out = tmp_path_factory.mktemp("hier") / "out"
    run_pipeline(SAMPLE, out, load_config(), upto="generate", show_progress=False)
    return out


def test_hierarchy_holds_every_query_once(built):
    queries = [json.loads(x) for x in (built / "generate" / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    tree = json.loads((built / "generate" / "hierarchy.json").read_text(encoding="utf-8"))
    assert list(tree) == sorted({q["report_id"] for q in queries})
    seen = []
    for rid, rep in tree.items():
        assert rep["report_id"] == rid
        for node in rep["passages"]:
            assert node["passage_id"].startswith(rid + "#p")
            if node["query"] is not None:
                assert node["query"]["id"] == f"qp:{node['passage_id']}" and node["query"]["level"] == "passage"
                seen.append(node["query"])
            orders = [int(s["sentence_id"].rsplit("#s", 1)[1]) for s in node["sentences"]]
            assert orders == sorted(orders)
            for s in node["sentences"]:
                assert s["query"]["id"] == f"qs:{s['sentence_id']}" and s["query"]["source_ids"] == [node["passage_id"]]
                seen.append(s["query"])
    assert sorted(seen, key=lambda q: q["id"]) == sorted(queries, key=lambda q: q["id"])
    manifest = json.loads((built / "generate" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["hierarchy_reports"] == len(tree)




class _SpyGC:
    """Records gc.freeze/unfreeze calls (and passes them on) for the generate stage."""

    def __init__(self) -> None:
        import gc

        self._gc, self.calls = gc, []

    def freeze(self) -> None:
        self.calls.append("freeze")
        self._gc.freeze()

    def unfreeze(self) -> None:
        self.calls.append("unfreeze")
        self._gc.unfreeze()


@pytest.mark.parametrize("fail", [False, True])
def test_the_stage_unfreezes_what_it_froze(tmp_path, monkeypatch, fail):
    # generate freezes the heap it starts with (gc.freeze) and must unfreeze it, also when it fails:
    # garbage cycles among frozen objects are never collected
    import gc

    from fincprg.generate import stage

    spy = _SpyGC()
    monkeypatch.setattr(stage, "gc", spy)
    if fail:
        def boom(*a, **k):
            raise RuntimeError("boom")
        monkeypatch.setattr(stage, "tree_records", boom)
        monkeypatch.setattr(stage, "process_batch", boom)
        with pytest.raises(RuntimeError, match="boom"):
            run_pipeline(SAMPLE, tmp_path / "out", load_config(), upto="generate", show_progress=False)
    else:
        run_pipeline(SAMPLE, tmp_path / "out", load_config(), upto="generate", show_progress=False)
    assert spy.calls == ["freeze", "unfreeze"] and gc.get_freeze_count() == 0
