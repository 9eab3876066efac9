"""`import fincprg` and `fincprg --help` must not import torch or other heavy libraries."""
from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "sentence_transformers", "FlagEmbedding", "bertopic", "umap", "hdbscan", "ray")
# modules that ingest, the LLM layer and export load on every build: a heavy import at their top would
# slow every stage and `fincprg estimate`, though `--help` itself never imports them
LIGHT_MODULES = ("fincprg.cli._help", "fincprg.llm", "fincprg.llm.redact", "fincprg.llm.auth", "fincprg.llm.cache",
                 "fincprg.ingest.decode", "fincprg.ingest.walk", "fincprg.ingest.readers", "fincprg.ingest.stage",
                 "fincprg.pipeline.runner", "fincprg.pipeline.outputs", "fincprg.export.hf", "fincprg.export.card")

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

MODULES_CODE = f"""
import importlib, sys
for name in {LIGHT_MODULES!r}:
    importlib.import_module(name)
print(",".join(m for m in {HEAVY!r} if m in sys.modules))
"""


def test_import_and_help_stay_light():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"heavy modules imported: {out.stdout.strip()}"


def test_stage_modules_stay_light():
    out = subprocess.run([sys.executable, "-c", MODULES_CODE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"heavy modules imported: {out.stdout.strip()}"
