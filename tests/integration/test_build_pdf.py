"""`fincprg build DIR` on a folder of report PDFs, with the default config: titled reports, passages from the
body only, layout removals counted in the ingest manifest, a scanned PDF rejected with its reason."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("reportlab")

from tests.pdf_report import make_report, make_scanned  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_build_reads_a_folder_of_pdfs(tmp_path):
    corpus, out = tmp_path / "reports", tmp_path / "out"
    corpus.mkdir()
    make_report(corpus / "maotai.pdf", company="贵州茅台", body_pages=2)
    make_report(corpus / "wuliangye.pdf", company="五粮液", body_pages=2)
    make_scanned(corpus / "scanned.pdf", pages=1)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    done = subprocess.run([sys.executable, "-m", "fincprg", "build", str(corpus), "-o", str(out), "--upto", "chunk"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    reports = [json.loads(x) for x in (out / "ingest" / "reports.jsonl").read_text("utf-8").splitlines()]
    assert {(r["id"], r["company"]) for r in reports} == {("maotai", "贵州茅台"), ("wuliangye", "五粮液")}
    assert all(r["title"].endswith("业绩稳健增长，维持买入评级") for r in reports)
    (reject,) = [json.loads(x) for x in (out / "ingest" / "rejected.jsonl").read_text("utf-8").splitlines()]
    assert (reject["report_id"], reject["reason"]) == ("scanned", "pdf_no_text")
    counts = json.loads((out / "ingest" / "manifest.json").read_text("utf-8"))["counts"]
    assert counts["pdf"]["reports"] == 2 and counts["pdf"]["removed_share"] > 0.1
    passages = [json.loads(x)["text"] for x in (out / "chunk" / "passages.jsonl").read_text("utf-8").splitlines()]
    assert len(passages) >= 6
    text = "".join(passages)
    assert "请务必阅读" not in text and "免责声明" not in text and "资料来源" not in text
    assert "pdf_no_text" in done.stderr + done.stdout  # the rejection is in the summary, not silent
