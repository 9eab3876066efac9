"""What bench_faults and its sections (eval/_faults_*.py) share: the sample corpus, the small-batch config, the
build command and the dataset hash. Kept apart so that no section imports bench_faults, which imports them all."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fincprg import layout as L
from tests.llm_server import LocalLLMServer

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "datasets" / "sample"
# small batches, so every map stage has several commit points; viz off (HTML is not part of the data)
BASE = ["topics.viz=none", "chunk.batch_size=4", "generate.batch_size=8", "mine.batch_size=4"]


def llm_args(server: LocalLLMServer) -> list[str]:
    return ["generate.backend=llm", "topics.intents.backend=llm", f"llm.base_url={server.base_url}",
            "llm.model=local-test-model", "llm.concurrency=4"]


def cli_build(out: Path, sets: list[str], *, corpus: Path = SAMPLE, env: dict[str, str] | None = None,
              extra: tuple[str, ...] = (), prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    cmd = [*prefix, sys.executable, "-m", "fincprg", "build", str(corpus), "-o", str(out), "-q", *extra]
    for s in sets:
        cmd += ["--set", s]
    full_env = {**{k: v for k, v in os.environ.items() if k != "FINCPRG_KILL_AFTER"},
                "OPENAI_API_KEY": "bench-key", "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=900)


def dataset_hash(out: Path) -> str | None:
    """The export manifest's output hash (every dataset file but HTML), None when the build has none."""
    return (L.Build(out).manifest(L.EXPORT) or {}).get("output_hash")


def torn_lines(out: Path) -> int:
    """JSONL lines of every stage folder that are not whole JSON."""
    bad = 0
    for f in out.rglob("*.jsonl"):
        if L.CACHE_DIR in f.parts:
            continue
        for line in f.read_bytes().splitlines(keepends=True):
            try:
                json.loads(line)
                bad += not line.endswith(b"\n")
            except ValueError:
                bad += 1
    return bad
