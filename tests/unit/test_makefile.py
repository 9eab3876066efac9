"""The Makefile's torch step: the CPU build from PyTorch's index, and a clear line before the fallback.

`make torch` runs against stub `python` and `pip` in a temp VENV that record their calls, so the recipe's
logic is tested without installing anything. (The real thing, `make VENV=/tmp/v install` on a machine that
reaches PyPI only, took the fallback and got the CPU wheel from pip's configured wheel folder.)"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

PIP = """#!/bin/sh
echo "pip $*" >> "{log}"
case "$*" in *--index-url*) [ -n "$CPU_INDEX_UP" ] && exit 0; echo "ERROR: index unreachable" >&2; exit 1;; esac
exit 0
"""
PYTHON = """#!/bin/sh
echo "python $*" >> "{log}"
case "$*" in *importlib.metadata*) exit 1;; *"import torch"*) echo "make: torch 2.13.0 (CUDA 12.8 build)";; esac
exit 0
"""


def _make(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    venv, log = tmp_path / "venv", tmp_path / "calls.log"
    (venv / "bin").mkdir(parents=True)
    for name, text in (("pip", PIP), ("python", PYTHON)):
        (venv / "bin" / name).write_text(text.format(log=log))
        (venv / "bin" / name).chmod(0o755)
    res = subprocess.run(["make", "-s", f"VENV={venv}", "torch"], cwd=ROOT, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", **env}, timeout=60)
    return res, log.read_text().splitlines()


def test_cpu_index_first_then_a_clear_fallback(tmp_path):
    res, calls = _make(tmp_path)
    assert res.returncode == 0, res.stderr
    torch_calls = [c for c in calls if c.startswith("pip") and "torch==" in c]
    assert torch_calls[0].startswith("pip --isolated install") and \
        "--index-url https://download.pytorch.org/whl/cpu torch==2.13.0" in torch_calls[0]
    assert torch_calls[1] == "pip install -q torch==2.13.0"  # the plain install, after the line below
    assert "make: could not install torch from https://download.pytorch.org/whl/cpu" in res.stdout
    assert "CUDA build" in res.stdout and (tmp_path / "venv" / ".torch").exists()


def test_no_fallback_when_the_cpu_index_answers(tmp_path):
    res, calls = _make(tmp_path, CPU_INDEX_UP="1")
    assert res.returncode == 0, res.stderr
    assert len([c for c in calls if "torch==" in c]) == 1 and "could not" not in res.stdout
    assert "make: installed torch==2.13.0 from https://download.pytorch.org/whl/cpu" in res.stdout
