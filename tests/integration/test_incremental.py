"""A rebuild after any single config change equals a clean build with that config (issue: stage contract)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fincprg import layout as L
from fincprg.config import load_config
from fincprg.pipeline.runner import STAGES, run_pipeline

pytestmark = pytest.mark.slow

BASE = ["topics.viz=none"]
# one key per stage family, including run.seed (read by topics and mine) and a topics clustering key
CHANGES = ["run.seed=7", "topics.cluster.min_cluster_size=3", "chunk.passage_chars=400",
           "verify.ambiguous_margin=0.5", "mine.reranker.threshold=0.8", "export.test_fraction=0.3"]


def _fingerprint(out: Path) -> dict[str, object]:
    """Per stage: signature and output hash; plus the bytes of every dataset file (the card included)."""
    build = L.Build(out)
    fp: dict[str, object] = {}
    for spec in STAGES:
        m = build.manifest(spec.name)
        assert m is not None, spec.name
        fp[spec.name] = (m["signature"], m["output_hash"])
    root = build.dataset.root
    fp["dataset"] = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
                     if p.is_file() and p.name != L.MANIFEST}
    return fp


@pytest.fixture(scope="module")
def base_build(tmp_path_factory) -> tuple[Path, Path]:
    corpus = Path(__file__).resolve().parents[2] / "datasets" / "sample"
    out = tmp_path_factory.mktemp("incremental") / "base"
    run_pipeline(corpus, out, load_config(None, BASE), show_progress=False)
    return corpus, out


@pytest.mark.parametrize("change", CHANGES)
def test_incremental_rebuild_equals_clean_build(base_build, tmp_path, change):
    corpus, base = base_build
    cfg = load_config(None, [*BASE, change])
    incremental = tmp_path / "incremental"
    shutil.copytree(base, incremental)
    outcomes = run_pipeline(corpus, incremental, cfg, show_progress=False)
    assert any(o.status == "ran" for o in outcomes), change  # the change re-ran something
    clean = tmp_path / "clean"
    run_pipeline(corpus, clean, cfg, show_progress=False)
    got, want = _fingerprint(incremental), _fingerprint(clean)
    assert got == want, change
    assert got != _fingerprint(base), f"{change} changed no output or signature"
