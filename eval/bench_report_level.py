"""Benchmark: the report level and the frames of intents and topic queries (issue 50).

``eval/bench_report_level.py [--work DIR] [--cfb N] [--no-readme]``

Builds three corpora with the default config (``fincprg build SRC -o OUT -q --set topics.viz=none``, the plots
left out to save time): AlphaFin's 200 titled reports (``../shared/data/reports/alphafin_reports.json`` as
eval/_alphafin.py reads them), CFBenchmark's untitled bodies (``--cfb N``: the first N, default all) and the
bundled sample. From each exported dataset (the emitted queries, ``dataset/queries.jsonl``) it records

* per level ``intent`` and ``topic``: how the emitted queries spread over frames (the ``frame`` each query's
  provenance names, :mod:`fincprg.topics.frames`), the largest share and its frame; target ≤ 25%;
* the report level: emitted report queries per titled report (target ≥ 0.5) and per report, and their frames.

Writes the ``<!-- report-level:start -->`` section of eval/README.md. Skipped with a message when
../shared/data is absent.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval._alphafin import ALPHAFIN, DATA, input_rows, split_alphafin, write_jsonl  # noqa: E402
from eval._readme import commit, fincprg_build, finish  # noqa: E402

SECTION = "report-level"
MAX_SHARE, MIN_PER_TITLED = 0.25, 0.5  # issue 50's targets
CFB = DATA / "reports" / "cfbenchmark_reports.jsonl"


def frame_shares(queries: list[dict[str, Any]], level: str) -> dict[str, Any]:
    """{n, shares: frame -> share, max_frame, max_share} of one level's emitted queries (frame "unlabelled" where
    the provenance names none, e.g. an LLM's)."""
    frames = Counter(str((q.get("provenance") or {}).get("frame") or "unlabelled")
                     for q in queries if q.get("level") == level)
    n = sum(frames.values())
    shares = {f: round(c / n, 4) for f, c in frames.most_common()} if n else {}
    top = next(iter(shares), None)
    return {"n": n, "shares": shares, "max_frame": top, "max_share": shares.get(top, 0.0) if top else 0.0}


def measure(out: Path) -> dict[str, Any]:
    """The figures of one build folder."""
    queries = [json.loads(x) for x in (out / "dataset" / "queries.jsonl").read_text("utf-8").splitlines() if x]
    reports = [json.loads(x) for x in (out / "ingest" / "reports.jsonl").read_text("utf-8").splitlines() if x]
    titled = {r["id"] for r in reports if (r.get("title") or "").strip()}
    report_q = [q for q in queries if q["level"] == "report"]
    on_titled = sum(q.get("report_id") in titled for q in report_q)
    levels = Counter(q["level"] for q in queries)
    return {"reports": len(reports), "titled": len(titled), "levels": dict(sorted(levels.items())),
            "intent": frame_shares(queries, "intent"), "topic": frame_shares(queries, "topic"),
            "report": {**frame_shares(queries, "report"), "per_titled": round(on_titled / len(titled), 3)
                       if titled else None, "per_report": round(len(report_q) / len(reports), 3) if reports else 0,
                       "reports_with_query": len({q.get("report_id") for q in report_q})}}


def _share(s: dict[str, Any]) -> str:
    if not s["n"]:
        return "– (none emitted)"
    ok = "met" if s["max_share"] <= MAX_SHARE else "not met"
    return f"{s['max_share']:.0%} `{s['max_frame']}` of {s['n']} ({ok})"


def render(r: dict[str, Any]) -> str:
    lines = ["## Report level and varied frames (`eval/bench_report_level.py`, issue 50)", "",
             f"Measured {r['date']} at commit {r['commit']} on {r['machine']}, {r['cpus']} CPU cores (shared), "
             f"Python {r['python']}; default config, `--set topics.viz=none`. Emitted = the exported dataset's "
             "queries.jsonl. A query's frame is the one its provenance names (fincprg/topics/frames.py for intents "
             "and topic queries, fincprg/generate/report_level.py for report queries).", "",
             "| corpus | reports (titled) | build s | intent: largest frame share | topic: largest frame share | "
             "report queries | per titled report | per report |", "|---|---:|---:|---|---|---:|---:|---:|"]
    for name, m in r["corpora"].items():
        rp = m["report"]
        per_t = "–" if rp["per_titled"] is None else f"{rp['per_titled']:.2f}" + (
            " (met)" if rp["per_titled"] >= MIN_PER_TITLED else " (not met)")
        lines.append(f"| {name} | {m['reports']} ({m['titled']}) | {m['build_s']:.0f} | {_share(m['intent'])} | "
                     f"{_share(m['topic'])} | {rp['n']} | {per_t} | {rp['per_report']:.2f} |")
    lines += ["", "Frame shares per level:", ""]
    for name, m in r["corpora"].items():
        for level in ("intent", "topic", "report"):
            if m[level]["n"]:
                lines.append(f"- {name}, {level} ({m[level]['n']}): " + ", ".join(
                    f"{f} {s:.0%}" for f, s in m[level]["shares"].items()))
    lines += ["", f"**Targets:** no frame above {MAX_SHARE:.0%} of a level's emitted intent or topic queries; "
              f"≥ {MIN_PER_TITLED} emitted report queries per titled report."]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=ROOT / "runs" / "bench_report_level", help="scratch folder")
    ap.add_argument("--cfb", type=int, default=None, help="only the first N CFBenchmark bodies (default: all)")
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    args = ap.parse_args()
    if not (ALPHAFIN.exists() and CFB.exists()):
        print(f"skipped: real data not found under {DATA} (needs reports/alphafin_reports.json and "
              "reports/cfbenchmark_reports.jsonl; only present in the team workspace)")
        return 0
    from eval._cfb_split import read_bodies, write_bodies

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    train, held = split_alphafin()
    write_jsonl(work / "alphafin.jsonl", input_rows(train + held))
    write_bodies(read_bodies(first=args.cfb), work / "cfb.jsonl")
    sources = {"AlphaFin (titled)": work / "alphafin.jsonl", "CFBenchmark (untitled)": work / "cfb.jsonl",
               "sample": ROOT / "datasets" / "sample"}
    corpora = {}
    for i, (name, src) in enumerate(sources.items()):
        out = work / f"build{i}"
        secs = fincprg_build(src, out, "--force", sets=["topics.viz=none"])
        corpora[name] = {**measure(out), "build_s": secs}
    result = {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "machine": platform.machine(),
              "cpus": os.cpu_count(), "python": platform.python_version(), "corpora": corpora}
    return finish(work, result, render(result), SECTION, write=not args.no_readme)


if __name__ == "__main__":
    raise SystemExit(main())
