"""A refactor must not change what a build writes: a clean build of datasets/sample (the CLI, default config)
matches what was recorded (sample_build.sha256.json).

What may differ is in _sample_hashes.py: manifests are compared over stage, config and counts only (timing,
signatures and provenance fields may change), the cards with their signature lines blanked, and computed floats
(float tensors, long decimals) within a tolerance, since their last bits follow the CPU, not the code.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration._sample_hashes import build_hashes, matches

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
    differ = sorted(name for name in want if not matches(got[name], want[name]))
    assert differ == [], f"files whose bytes changed: {differ}"


def test_computed_floats_match_within_tolerance_and_nothing_else_does(tmp_path):
    """The tolerance is BLAS noise, not a real change: a tensor value moved by 1e-6 still matches, by 1e-2 not;
    a changed shape or text never matches."""
    import numpy as np
    from safetensors.numpy import save_file

    from tests.integration._sample_hashes import file_digest

    def entry(values, name="t.safetensors"):
        save_file({"emb": np.asarray(values, dtype=np.float32), "n": np.arange(3)}, str(tmp_path / name))
        return file_digest(tmp_path, tmp_path / name)

    base = np.linspace(-1, 1, 12).reshape(3, 4)
    want = entry(base)
    for delta, same in ((1e-6, True), (1e-2, False)):
        moved = base.copy()
        moved[1, 2] += delta
        assert matches(entry(moved), want) is same, delta
    assert not matches(entry(base.reshape(4, 3)), want)  # shape
    page = tmp_path / "p.html"
    page.write_text('{"x": [1.08883, 3.2404542], "label": "a"}')
    want = file_digest(tmp_path, page)
    page.write_text('{"x": [1.08884, 3.2404542], "label": "a"}')  # one rounding flip in the last digit
    assert matches(file_digest(tmp_path, page), want)
    page.write_text('{"x": [1.09883, 3.2404542], "label": "a"}')
    assert not matches(file_digest(tmp_path, page), want)
    page.write_text('{"x": [1.08883, 3.2404542], "label": "b"}')
    assert not matches(file_digest(tmp_path, page), want)
