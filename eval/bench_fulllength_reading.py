"""Blind strict reading of a full-length build (issue 48): generated sell-side PDFs, company and industry reports.

Three steps, like eval/bench_quality.py (the reader sees only ``DIR/reader`` and /work/shared/QUALITY_RUBRIC.md):

1. ``eval/bench_fulllength_reading.py --sheet DIR [--seed S] [--n 40] [--reports N] [--exclude TRUTH...]``
   generates ``--reports`` full-length reports (``python -m eval._fullreports --part held-out``: CFBenchmark bodies
   of one part only, without any body or news item an ``--exclude``d draw used, so no developer has looked at
   them), builds their PDF form with ``fincprg build DIR/pdf -o DIR/build`` (default offline config), and
   draws ``--n`` sentence and passage queries each into the blind sheet (``DIR/reader``) and its key.
2. A new reader fills ``DIR/reader/verdicts-fulllength.jsonl``.
3. ``eval/bench_fulllength_reading.py --verdicts DIR`` writes the ``fulllength-reading`` section of eval/README.md:
   acceptable k/n per level with the Wilson interval, reasons, failing examples, and whether any kept query
   names the broker that wrote its report. Target: >= 85% at sentence and passage level, no broker as subject.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))

from _quality_reading import aggregate, read_verdicts, write_sheets  # noqa: E402
from _quality_sources import BuildView  # noqa: E402

from eval._readme import commit, write_section  # noqa: E402

RUBRIC = ROOT.parent / "shared" / "QUALITY_RUBRIC.md"
LEVELS = ("sentence", "passage")
TARGET = 0.85


def _run(*args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    subprocess.run([sys.executable, *args], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)


def brokers_named(view: BuildView, truth: dict[str, dict[str, Any]]) -> list[str]:
    """Every kept query (of any level) that names the broker of its own report (the generator's truth)."""
    from fincprg.finance.stocks import stock_table

    table = stock_table("bundled")
    out = []
    for q in view.queries:
        broker = (truth.get(q.get("report_id") or "") or {}).get("broker") or ""
        # a listed company whose name holds the broker's (东岳硅材 beside 东岳证券) is no broker named
        text = q["text"]
        for m in table.mentions(text):
            if not m.name.endswith("证券"):
                text = text.replace(m.name, "")
        if broker and broker.removesuffix("证券") in text:
            out.append(q["text"])
    return out


def _norm(text: str) -> str:
    return "".join(text.split())


SHINGLE = 10  # characters: a window this long found in the padding is padding (a chunk cuts sentences anywhere)


def off_topic_share(text: str, off: list[str]) -> float:
    """The share of ``text``'s 10-character windows found in the generator's padding (another company's or
    industry's sentences); windows, not whole sentences, since a chunk sentence may cut a body sentence anywhere."""
    t, pad = _norm(text), "\n".join(off)
    windows = [t[i:i + SHINGLE] for i in range(max(1, len(t) - SHINGLE + 1))]
    return sum(w in pad for w in windows) / len(windows) if t else 0.0


def on_topic(view: BuildView, truth: dict[str, dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The kept queries a reader can judge fairly, and how many were left out: those that ask the report's own
    subject (its company, or its industry) about text that is the generator's padding, another company's or
    industry's body in this report, which no real report holds (eval/_fullreports.py gather()). A query asking
    the company or industry the padded sentence itself names stays."""
    keep, dropped = [], 0
    for q in view.queries:
        t = truth.get(q.get("report_id") or "", {})
        off = [_norm(s) for s in t.get("off_topic_sentences", [])]
        own = t.get("company") if t.get("kind") == "company" else t.get("industry")
        src = view.show(q)
        if own and own in q["text"] and off_topic_share(src.get("sentence") or src["passage"], off) > 0.3:
            dropped += 1
        else:
            keep.append(q)
    return keep, dropped


def sheet(args: argparse.Namespace) -> int:
    d = args.sheet
    reports = d / "reports"
    t0 = time.perf_counter()
    if not (reports / "truth.jsonl").exists():
        _run("-m", "eval._fullreports", "--out", str(reports), "--n", str(args.reports), "--seed", str(args.seed),
             "--part", args.part, "--exclude", *map(str, args.exclude))
    if not (d / "build" / "dataset" / "manifest.json").exists():
        _run("-m", "fincprg", "build", str(reports / "pdf"), "-o", str(d / "build"), "-q")
    view = BuildView(d / "build")
    truth = {t["id"]: t for t in map(json.loads, (reports / "truth.jsonl").read_text("utf-8").splitlines())}
    brokers = brokers_named(view, truth)  # over every kept query, before the sheet's filters
    view.queries = [q for q in view.queries if q["level"] in LEVELS]
    kept = {lv: sum(q["level"] == lv for q in view.queries) for lv in LEVELS}
    view.queries, padding = on_topic(view, truth)
    counts = write_sheets(d, {"fulllength": view}, n_read=args.n, n_mined=0, seed=args.seed,
                          mined_from="fulllength", rubric=RUBRIC)
    measure = {"seed": args.seed, "reports": args.reports, "excluded_draws": len(args.exclude), "part": args.part,
               "commit": commit(), "date": time.strftime("%Y-%m-%d"), "seconds": round(time.perf_counter() - t0),
               "kept": kept, "drawn_from": {lv: sum(q["level"] == lv for q in view.queries) for lv in LEVELS},
               "padding_left_out": padding, "broker_named": brokers}
    (d / "measure.json").write_text(json.dumps(measure, ensure_ascii=False, indent=1), "utf-8")
    print(f"sheet: {counts}; kept {measure['kept']}; kept queries naming their broker: "
          f"{len(measure['broker_named'])}; give {d / 'reader'} to a reader")
    return 0


def render(d: Path) -> str:
    key = json.loads((d / "key.json").read_text("utf-8"))
    m = json.loads((d / "measure.json").read_text("utf-8"))
    agg = aggregate(key, read_verdicts(d, key))["reading"].get("fulllength", {})
    md = ["## Full-length reports read blind (`eval/bench_fulllength_reading.py`, issue 48)", "",
          f"Built {m['date']} at commit {m['commit']}: {m['reports']} generated full-length reports (PDF form, "
          f"`eval._fullreports --part {m.get('part', 'held-out')} --seed {m['seed']}`, CFBenchmark bodies of that "
          "part, " + (f"none used by any of {m['excluded_draws']} development draws" if m["excluded_draws"] else
                      "a part no rule was written from (no list of earlier draws was at hand, so a body an earlier "
                      "reading showed may recur)") + "; half company, half industry/weekly/strategy reports), "
          "`fincprg build` with the default offline config. One new reader per sheet saw only the sheet and "
          f"shared/QUALITY_RUBRIC.md. Kept queries: {m['kept']}; drawn from the {m['drawn_from']} that "
          f"a reader can judge ({m['padding_left_out']} left out: they ask the report's own company or industry "
          "about the generator's padding, another company's or industry's body, which no real report holds); "
          f"kept queries of any level naming their report's broker: {len(m['broker_named'])}"
          + (f" (a plain substring test also matched {len(m['broker_named_substring'])}, listed companies whose name "
             "holds the broker's: 东岳硅材 beside 东岳证券)" if m.get("broker_named_substring") else "") + ".", "", "| level | acceptable | 95% interval | reasons | target |",
          "|---|---:|---|---|---|"]
    for lv in LEVELS:
        r = agg.get(lv)
        if not r:
            md.append(f"| {lv} | not read | | | |")
            continue
        reasons = ", ".join(f"{k} {v}" for k, v in r["reasons"].most_common()) or "–"
        met = "met" if r["rate"] >= TARGET else "**not met**"
        md.append(f"| {lv} | {r['ok']}/{r['n']} ({100 * r['rate']:.0f}%) | {r['ci']} | {reasons} | ≥ 85%: {met} |")
    md += ["", "Failing examples:", ""]
    for lv in LEVELS:
        for e in (agg.get(lv) or {}).get("examples", []):
            md.append(f"- {lv}, {e['reason']}: 「{e['text']}」" + (f" ({e['note']})" if e["note"] else ""))
    return "\n".join(md) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sheet", type=Path, help="step 1: generate, build and draw the sheet into this folder")
    ap.add_argument("--verdicts", type=Path, help="step 3: record the verdicts of the folder --sheet wrote")
    ap.add_argument("--seed", type=int, default=4801)
    ap.add_argument("--n", type=int, default=40, help="queries per level on the sheet")
    ap.add_argument("--reports", type=int, default=120)
    ap.add_argument("--part", choices=("held-out", "learn"), default="held-out",
                    help="the CFBenchmark part the bodies come from (eval/_cfb_split.py); held-out: no rule was "
                         "written from it, but it holds few bodies per company")
    ap.add_argument("--exclude", type=Path, nargs="*", default=[], help="truth.jsonl of development draws")
    ap.add_argument("--no-readme", action="store_true")
    args = ap.parse_args()
    if not (ROOT.parent / "shared" / "data" / "reports" / "cfbenchmark_reports.jsonl").exists():
        print("skipped: ../shared/data (CFBenchmark bodies) is absent")
        return 0
    if args.sheet:
        return sheet(args)
    if args.verdicts:
        text = render(args.verdicts)
        print(text)
        if not args.no_readme:
            write_section("fulllength-reading", text)
        return 0
    ap.error("give --sheet DIR or --verdicts DIR")
    return 2


if __name__ == "__main__":
    sys.exit(main())
