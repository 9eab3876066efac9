"""Check datasets/sample/reports.jsonl and print its composition.

Run: ``.venv/bin/python datasets/sample/validate.py [path]``; exits non-zero on any problem.
"""
from __future__ import annotations

import collections
import datetime as dt
import json
import re
import sys
from pathlib import Path

FIELDS = ("id", "title", "date", "broker", "company", "stock_code", "industry", "report_type", "text")
TYPES = {"company", "industry", "strategy", "bond"}
BOILERPLATE = ("风险提示", "执业证书编号", "评级说明", "声明", "资料来源", "图表")


def validate(path: Path) -> list[str]:
    """Return a list of problems (empty when the file is valid) and print counts."""
    problems: list[str] = []
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: not JSON ({exc})")
            continue
        missing = [f for f in FIELDS if f not in row]
        if missing:
            problems.append(f"line {n}: missing {missing}")
            continue
        rows.append(row)
        rid = row["id"]
        if row["report_type"] not in TYPES:
            problems.append(f"{rid}: report_type {row['report_type']!r}")
        year = dt.date.fromisoformat(row["date"]).year
        if not 2022 <= year <= 2024:
            problems.append(f"{rid}: date {row['date']} outside 2022-2024")
        if row["report_type"] == "company":
            code = row["stock_code"] or ""
            if not re.fullmatch(r"\d{6}", code) or f"{row['company']}（{code}）" not in row["title"]:
                problems.append(f"{rid}: company title/code mismatch")
        if not 1100 <= len(row["text"]) <= 2600:
            problems.append(f"{rid}: text length {len(row['text'])}")
        if row["text"].count("\n") < 4:
            problems.append(f"{rid}: fewer than 5 paragraphs")
    ids = [r["id"] for r in rows]
    dupes = [i for i, c in collections.Counter(ids).items() if c > 1]
    if dupes:
        problems.append(f"duplicate ids {dupes}")
    with_boiler = sum(all(b in r["text"] for b in BOILERPLATE) for r in rows)
    print(f"{len(rows)} reports, {path.stat().st_size / 1024:.1f} KiB, "
          f"{with_boiler} with full boilerplate set")
    for key in ("industry", "report_type", "broker"):
        print(key, dict(collections.Counter(r[key] for r in rows).most_common()))
    print("year", dict(sorted(collections.Counter(r["date"][:4] for r in rows).items())))
    return problems


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("reports.jsonl")
    problems = validate(path)
    for p in problems:
        print("PROBLEM:", p)
    print("OK" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
