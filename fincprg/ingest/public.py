"""Converters from public Chinese finance corpora to fincprg's JSONL input.

- AlphaFin research reports (``{summary, content}`` records): title and date come from the summary.
- FinGLM parsed annual reports (``{page: [{content, content_type, ...}]}``): one report, text items
  and table rows in page order.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

# AlphaFin's summary: "这是以<title>为题目,在<YYYY-MM-DD hh:mm:ss>日期发布的研究报告。研报内容如下:"
_ALPHAFIN_SUMMARY = re.compile(r"这是以(?P<title>.+)为题目,在(?P<date>[\d\- :]+)日期发布的研究报告")


def _write_jsonl(dst: Path, rows: list[dict]) -> int:
    dst.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return len(rows)


def alphafin_to_jsonl(src: Path, dst: Path) -> int:
    """Write AlphaFin reports as JSONL (title, 发布日期, content); returns the number of reports."""
    rows = []
    for item in json.loads(src.read_text(encoding="utf-8")):
        m = _ALPHAFIN_SUMMARY.search(item["summary"])
        rows.append({"title": m.group("title") if m else "", "发布日期": m.group("date") if m else "",
                     "content": item["content"]})
    return _write_jsonl(dst, rows)


def annual_report_to_jsonl(src: Path, dst: Path, *, report_id: str, title: str, date: str) -> int:
    """Write one FinGLM parsed annual report as a single JSONL report (the file has no title or date)."""
    lines = []
    for items in json.loads(src.read_text(encoding="utf-8")).values():
        for it in items:
            content = it["content"].strip()
            if it["content_type"] == "excel" and content.startswith("["):
                cells = [str(c).strip() for c in ast.literal_eval(content)]  # "['a', 'b']" row dumps
                content = " | ".join(c for c in cells if c) if len(cells) > 1 else "".join(cells)
            if content:
                lines.append(content)
    return _write_jsonl(dst, [{"id": report_id, "title": title, "date": date, "report_type": "annual",
                               "text": "\n".join(lines)}])
