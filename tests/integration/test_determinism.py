"""Two clean builds of datasets/sample (offline config, plots on) are byte-identical in every file under OUT.

No exception: wall and clock times go to ``--timings FILE`` outside OUT, not into the manifests. The builds run as
separate CLI processes with different PYTHONHASHSEED values, so an output that depends on set or dict
order of strings, a random id (plotly's element ids were UUIDs) or the clock shows up here.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fincprg import layout as L

ROOT = Path(__file__).resolve().parents[2]


def _build(out: Path, hash_seed: str, timings: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    env.pop("FINCPRG_KILL_AFTER", None)
    cmd = [sys.executable, "-m", "fincprg", "build", str(ROOT / "datasets" / "sample"), "-o", str(out), "-q",
           "--set", "topics.viz=bertopic", "--timings", str(timings)]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _files(out: Path) -> dict[str, bytes]:
    files = {}
    for p in sorted(out.rglob("*")):
        if not p.is_file():
            continue
        files[p.relative_to(out).as_posix()] = p.read_bytes()
    return files


def test_two_clean_builds_are_byte_identical(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    ta, tb = tmp_path / "a.timings.jsonl", tmp_path / "b.timings.jsonl"
    procs = [_build(a, "1", ta), _build(b, "2", tb)]  # in parallel: half the wall time
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
    fa, fb = _files(a), _files(b)
    assert sorted(fa) == sorted(fb)
    assert (a / L.STAGE_DIRS[L.TOPICS] / L.TOPICS_HTML).is_file()  # the plotly pages are part of the comparison
    assert "plotly" in (a / L.STAGE_DIRS[L.TOPICS] / L.HIERARCHY_HTML).read_text(encoding="utf-8")[:200_000]
    assert len(fa) > 40
    differ = [name for name in fa if fa[name] != fb[name]]
    rows = [json.loads(line) for line in ta.read_text(encoding="utf-8").splitlines()]
    assert [r["stage"] for r in rows] == list(L.STAGE_DIRS) and all(r["seconds"] >= 0 for r in rows)
    assert all(r["status"] == "ran" for r in rows)
    assert differ == [], f"files that differ between two clean builds: {differ}"
