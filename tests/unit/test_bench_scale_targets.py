"""eval/bench_scale.py: issue 23's targets are computed from the measurements (met and missed alike), and the
peak RSS of a build is its own, not the size of the benchmark process that started it."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from eval import bench_scale as B  # noqa: E402


def _run(seconds: float, rss: float, export_s: float | None = None, load: float = 1.0) -> dict:
    stages = {s: {"seconds": seconds, "wall": seconds + 1, "rss_mb": rss} for s in B.STAGES}
    if export_s is not None:
        stages[B.L.EXPORT]["seconds"] = export_s
    return {"stages": stages, "load": load}


def _facts() -> dict:
    return {s: {"reports": int(1000 * s)} for s in (1.0, 4.0, 16.0)}


def test_targets_met():
    by = {1.0: [_run(10, 500)], 4.0: [_run(38, 700, export_s=40)], 16.0: [_run(150, 1900)]}
    text = "\n".join(B.targets(by, _facts()))
    assert text.count("**met**") == 3 and "not met" not in text
    assert "| **total** |" in text and "15.00×" in text  # 16× stage seconds over 1×


def test_targets_missed_say_which():
    by = {1.0: [_run(10, 500)], 4.0: [_run(38, 700, export_s=50)], 16.0: [_run(200, 2100)]}
    by[16.0][0]["stages"][B.L.EXPORT]["rss_mb"] = 2600  # 5.2× the 1× peak
    text = "\n".join(B.targets(by, _facts()))
    assert text.count("**not met**") == 3
    assert "export 5.20×" in text and "ingest 4.20×" in text


def test_invoke_measures_the_build_not_the_benchmark(tmp_path):
    ballast = bytearray(300 * 2**20)  # this process grows by 300 MB; a build forked from it would report that
    ballast[::4096] = b"x" * len(ballast[::4096])
    got = B.invoke(ROOT / "datasets" / "sample", tmp_path / "out", B.BASE_SETS, upto=B.L.INGEST)
    assert 0 < got["rss_mb"] < 250 and got["wall"] > 0
