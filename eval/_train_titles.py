"""bench_train's held-out-titles benchmark of a titled build (issue 49).

The training build's own held-out reports (those with no training label: the export's test reports, and any the
split left unlabelled) are never trained on. Each titled one gives a query, its analysts' title, labelled with
every passage of its report; the documents are every passage of every held-out report, shown without their
title (which would repeat the query). Two benchmarks:

- ``titles_held_out``: the titles as written;
- ``titles_no_company``: the same titles with the company's name and stock code removed (「贵州茅台（600519）：
  业绩稳健增长」 → 「业绩稳健增长」), so that matching the company alone no longer finds the report. A title
  that says nothing without its company (under :data:`MIN_CHARS` characters left) is left out of it.
"""
from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from eval._alphafin import write_beir

NAMES = ("titles_held_out", "titles_no_company")
MIN_CHARS = 4
# what follows the code in a title's head: the exchange suffix, the closing bracket, a separator
_AFTER_CODE = re.compile(r"^(?:\.(?:SH|SZ|BJ|SS|HK))?[^)\]】:：]{0,16}?[)\]】]?\s*[:：\-—_,，]*\s*", re.IGNORECASE)


def without_company(title: str) -> str:
    """``title`` with its company's head (name, code, bracket, separator) and any other mention of the name cut."""
    from fincprg.finance.extract import parse_title_company

    t = unicodedata.normalize("NFKC", title).strip()
    name, code = parse_title_company(t)
    if not name:
        return title.strip()  # an industry or strategy title names no company: kept as written
    digits = (code or "").split(".")[0]
    at = t.find(digits) if digits else -1
    if at < 0 and digits.startswith("0"):  # 00700.HK written as 0700.HK
        digits = digits.lstrip("0")
        at = t.find(digits)
    if at >= 0 and at <= t.find(name) + len(name) + 4:  # the code sits in the head, right after the name
        rest = t[at + len(digits):]
        t = rest[_AFTER_CODE.match(rest).end():]
    return t.replace(name, "").strip(" :：-—_,，")


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]


def held_out_reports(dataset: Path) -> set[str]:
    """Reports of the build with no training label (by report: a report with one train positive is trained on)."""
    corpus = _read(dataset / "corpus.jsonl")
    report_of = {c["_id"]: c.get("report_id") for c in corpus}
    trained = set()
    for f in (dataset / "qrels").glob("*-train.tsv"):
        for line in f.read_text("utf-8").splitlines()[1:]:
            parts = line.split("\t")
            if len(parts) >= 3 and float(parts[2]) > 0:
                trained.add(report_of.get(parts[1]))
    return {c["report_id"] for c in corpus if c.get("report_id") and c["report_id"] not in trained}


def title_benchmarks(dataset: Path, work: Path) -> tuple[dict[str, Path], dict[str, dict[str, int]]]:
    """``{name: BEIR folder}`` and their counts; empty when the build's held-out reports have no titles."""
    held = held_out_reports(dataset)
    corpus = [c for c in _read(dataset / "corpus.jsonl") if c.get("report_id") in held]
    docs = [{"_id": c["_id"], "title": "", "text": c["text"], "report_id": c["report_id"]} for c in corpus]
    by_title: dict[str, list[str]] = {}
    for c in corpus:
        if (c.get("title") or "").strip():
            by_title.setdefault(c["title"].strip(), []).append(c["_id"])
    benches: dict[str, Path] = {}
    info: dict[str, dict[str, int]] = {}
    for name, view in zip(NAMES, (lambda t: t, without_company)):
        queries, qrels = [], []
        for n, (title, pids) in enumerate(sorted(by_title.items())):
            text = view(title)
            if len(text) < MIN_CHARS:
                continue
            queries.append({"_id": f"t{n}", "text": text})
            qrels += [(f"t{n}", pid) for pid in pids]
        if queries:
            benches[name] = write_beir(work / name, docs, queries, {"all": qrels})
            info[name] = {"reports": len(held), "titled_reports": len({c["report_id"] for c in corpus
                                                                        if c.get("title")}),
                          "queries": len(queries), "passages": len(docs)}
    return benches, info
