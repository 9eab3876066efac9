"""`import fincprg` and `fincprg --help` must not import torch or other heavy libraries."""
from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "sentence_transformers", "FlagEmbedding", "bertopic", "umap", "hdbscan", "ray")

CODE = f"""
import sys
from typer.testing import CliRunner
import fincprg
from fincprg.cli import app
for args in (["--help"], ["build", "--help"], ["eval", "--help"], ["audit", "--help"], ["report", "--help"],
             ["train", "--help"], ["estimate", "--help"]):
    assert CliRunner().invoke(app, args).exit_code == 0, args
print(",".join(m for m in {HEAVY!r} if m in sys.modules))
"""


def test_import_and_help_stay_light():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"heavy modules imported: {out.stdout.strip()}"
