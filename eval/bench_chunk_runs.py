"""Benchmark (issue 47): chunk time on one report that is a single run of one character (a pasted hash, base64 or a
table flattened into one token), through the CLI a user runs.

Run: ``.venv/bin/python eval/bench_chunk_runs.py [--sizes 250000,500000,1000000] [--repeats 3] [--no-readme]``

For each size, a corpus of one JSONL report whose text is that many ``a`` characters (bytes) is built with
``python -m fincprg build CORPUS -o OUT --upto chunk --timings T`` (default config); the chunk stage's own seconds
come from ``--timings``, the median of ``--repeats`` fresh builds. Target: 4x the input costs at most 5x the
time (largest size against the one a quarter its length). Before the fix the e-mail pattern rescanned the run
from every start: 40k characters took 11.6 s and 1 MB did not finish in 120 s.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval._readme import commit, fincprg_build, write_section  # noqa: E402

CHAR = "a"
MAX_RATIO = 5.0  # time(4n) / time(n)


def chunk_seconds(size: int, work: Path, repeats: int) -> list[float]:
    corpus = work / f"run-{size}.jsonl"
    corpus.write_text(json.dumps({"id": f"run{size}", "title": "单字符长串", "text": CHAR * size}) + "\n", "utf-8")
    out = []
    for i in range(repeats):
        timings = work / f"t-{size}-{i}.jsonl"
        fincprg_build(corpus, work / f"out-{size}-{i}", "--upto", "chunk", "--timings", str(timings))
        rows = [json.loads(x) for x in timings.read_text("utf-8").splitlines()]
        out.append(next(r["seconds"] for r in rows if r["stage"] == "chunk"))
    return out


def render(result: dict[str, Any]) -> str:
    rows = result["rows"]
    md = ["## Chunking a long single-character run (`eval/bench_chunk_runs.py`, issue 47)", "",
          f"Measured {result['date']} at commit {result['commit']} on {result['cpus']} CPU cores ({result['system']}), "
          f"load {result['load']:.1f} at the start. One report of N × `{CHAR}` built with `fincprg build --upto chunk` "
          f"(default config); the chunk stage's seconds from `--timings`, median of {result['repeats']} fresh "
          "builds.", "", "| characters | chunk seconds (median) | runs | × time of N/4 |", "|---:|---:|---|---:|"]
    by = {r["size"]: r["median"] for r in rows}
    for r in rows:
        q = by.get(r["size"] // 4)
        times = ", ".join(f"{s:.2f}" for s in r["runs"])
        growth = "–" if q is None else f"{r['median'] / q:.2f}"
        md.append(f"| {r['size']:,} | {r['median']:.2f} | {times} | {growth} |")
    big = max(by)
    if big // 4 in by:
        ratio = by[big] / by[big // 4]
        md += ["", f"4× the input ({big // 4:,} → {big:,}) cost {ratio:.2f}× the time: target ≤ {MAX_RATIO:g}× "
                   f"{'met' if ratio <= MAX_RATIO else '**not met**'}."]
    return "\n".join(md) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="250000,500000,1000000", help="comma-separated run lengths in characters")
    ap.add_argument("--repeats", type=int, default=3, help="fresh builds per size (the median is reported)")
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    args = ap.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    result: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "cpus": os.cpu_count(),
                              "system": f"{platform.system()} {platform.machine()}", "load": os.getloadavg()[0],
                              "repeats": args.repeats, "rows": []}
    with tempfile.TemporaryDirectory(prefix="fincprg-runs-") as tmp:
        for size in sizes:
            runs = chunk_seconds(size, Path(tmp), args.repeats)
            result["rows"].append({"size": size, "runs": runs, "median": statistics.median(runs)})
            print(result["rows"][-1], flush=True)
    text = render(result)
    print(text)
    if not args.no_readme:
        write_section("chunk-runs", text)
    by = {r["size"]: r["median"] for r in result["rows"]}
    big = max(by)
    return 0 if big // 4 not in by or by[big] / by[big // 4] <= MAX_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
