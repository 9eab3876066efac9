"""A refactor must not change what a build writes: a clean build of datasets/sample (the CLI, default config)
matches the hashes recorded before the engine/stage split (sample_build.sha256.json).

What may differ is in _sample_hashes.py: manifests are compared over stage, config and counts only (timing,
signatures and provenance fields may change), and the cards with their signature lines blanked.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration._sample_hashes import build_hashes

pytestmark = pytest.mark.slow  # one sample build (~30 s)

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = Path(__file__).with_name("sample_build.sha256.json")


def test_a_sample_build_writes_the_recorded_bytes(tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    env.pop("FINCPRG_KILL_AFTER", None)
    # the corpus as the recorded build named it: each Report's source is "<corpus path>/<file>:<line>"
    proc = subprocess.run([sys.executable, "-m", "fincprg", "build", "datasets/sample", "-o", str(out), "-q"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got, want = build_hashes(out), json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert sorted(got) == sorted(want), "files added or missing"
    differ = sorted(name for name in want if got[name] != want[name])
    assert differ == [], f"files whose bytes changed: {differ}"
