"""Benchmark: how the verify stage grows with the corpus (issue 40: verify at 16× ≤ 18× its 1× time).

Run: ``.venv/bin/python eval/bench_verify_scale.py [--reports 1000] [--scales 1,4,16] [--repeats 3] --work DIR``

The corpora are ``eval/bench_scale.py``'s (report k: a real East Money title, AlphaFin body k mod 200 interleaved
with real news and annual-report sentences; every smaller corpus a prefix of the bigger ones), written to
``DIR/corpus-{s}x.jsonl``. Each is built once up to topics (``fincprg build … --upto topics``, untimed, into
``DIR/out-{s}x``; a re-run with the same code skips the finished stages, so ``--work`` can be kept between runs
and only verify is timed again). Then verify alone, as a user runs it on a finished build
(``fincprg build CORPUS -o OUT --upto verify --timings``, its folder removed first), ``--repeats`` times at 1×
and 4× and once at larger scales: the stage's own seconds, and the invocation's peak RSS (``ru_maxrss`` of the
child, through bench_scale's launcher). The staged whole-build benchmark (``bench_scale.py --scales 1,4,16,64``)
rebuilds every stage at every scale; on two cores its 64× build takes hours, most of them in generate.

Skipped with a message when ``../shared/data`` is absent. Results replace the ``<!-- verify-scale:start -->`` …
``<!-- verify-scale:end -->`` section of eval/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval._readme import commit, write_section  # noqa: E402
from eval.bench_scale import (BASE_SETS, DATA, TARGET_VERIFY_16, invoke, master_corpus, sources,  # noqa: E402
                               write_corpus)
from fincprg import layout as L  # noqa: E402


def prepare(work: Path, reports: int, scales: list[float]) -> dict[float, Path]:
    """The corpora (written when absent) and their builds up to topics (skipped when finished)."""
    paths = {s: work / f"corpus-{s:g}x.jsonl" for s in scales}
    if not all(p.is_file() for p in paths.values()):
        with tempfile.TemporaryDirectory(dir=work) as tmp:
            master = master_corpus(sources(Path(tmp)), round(max(scales) * reports))
        for s, p in paths.items():
            if not p.is_file():
                write_corpus(master[:round(s * reports)], p)
    for s, p in paths.items():
        t = time.perf_counter()
        invoke(p, work / f"out-{s:g}x", BASE_SETS, upto=L.TOPICS)
        print(f"{s:g}×: built up to topics ({time.perf_counter() - t:.0f} s)", flush=True)
    return paths


def time_verify(corpus: Path, out: Path) -> dict[str, Any]:
    """verify alone on a build finished up to topics: its seconds, peak RSS and counts."""
    for stage in (L.VERIFY, L.MINE, L.EXPORT):
        shutil.rmtree(out / stage, ignore_errors=True)
    r = invoke(corpus, out, BASE_SETS, upto=L.VERIFY)
    counts = json.loads((out / L.VERIFY / L.MANIFEST).read_text(encoding="utf-8")).get("counts", {})
    levels = counts.get("levels", {})
    return {"seconds": r["stage_seconds"][L.VERIFY], "wall": r["wall"], "rss_mb": r["rss_mb"],
            "generated": sum(v["generated"] for v in levels.values()), "kept": counts.get("kept"),
            "load": os.getloadavg()[0]}


def render(meta: dict[str, Any], runs: dict[float, list[dict[str, Any]]]) -> str:
    med = {s: statistics.median(r["seconds"] for r in rs) for s, rs in runs.items()}
    rss = {s: statistics.median(r["rss_mb"] for r in rs) for s, rs in runs.items()}
    lines = [
        "## verify at scale (`eval/bench_verify_scale.py`)", "",
        f"Measured {meta['date']} at commit {meta['commit']} on {meta['cpus']} CPU cores ({meta['system']}), "
        f"1-minute load {meta['load_start']:.1f} at the start and {meta['load_end']:.1f} at the end (a shared "
        f"machine). bench_scale's corpus at {meta['reports']} reports per 1×, each scale built once up to topics; "
        "verify then run alone through `fincprg build --upto verify --timings` (stage seconds; peak RSS of the "
        "invocation). Median of the runs per scale.", "",
        "| scale | reports | queries checked | kept | verify s (median) | runs (s) | × the 1× time | peak RSS MB | "
        "× the 1× RSS | load |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for s, rs in sorted(runs.items()):
        lines.append(f"| {s:g}× | {meta['facts'][str(s)]} | {rs[0]['generated']} | {rs[0]['kept']} | {med[s]:.1f} | "
                     + ", ".join(f"{r['seconds']:.1f}" for r in rs) + f" | {med[s] / med[1.0]:.2f}× | "
                     f"{rss[s]:.0f} | {rss[s] / rss[1.0]:.2f}× | " + ", ".join(f"{r['load']:.1f}" for r in rs) + " |")
    if 16.0 in med:
        r16 = med[16.0] / med[1.0]
        lines += ["", f"verify at 16×: {r16:.2f}× its 1× seconds, target ≤ {TARGET_VERIFY_16:g}×: "
                      + ("**met**." if r16 <= TARGET_VERIFY_16 else "**not met**.")]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reports", type=int, default=1000, help="reports at 1× (default 1000)")
    ap.add_argument("--scales", default="1,4,16", help="comma-separated scales; must include 1 (default 1,4,16)")
    ap.add_argument("--repeats", type=int, default=3, help="verify runs at 1× and 4× (larger scales: one)")
    ap.add_argument("--work", type=Path, required=True,
                    help="folder for the corpora and builds, kept: a re-run times verify again without rebuilding")
    ap.add_argument("--no-readme", action="store_true", help="print the section, do not write eval/README.md")
    ap.add_argument("--build-only", action="store_true", help="write the corpora and build them up to topics, "
                    "then stop (a later run with the same code times verify without rebuilding)")
    args = ap.parse_args()
    if not (DATA / "reports" / "alphafin_reports.json").is_file():
        print(f"skipped: the shared data folder {DATA} (reports/alphafin_reports.json) is absent")
        return 0
    scales = sorted({float(s) for s in args.scales.split(",")})
    if 1.0 not in scales:
        ap.error("--scales must include 1")
    args.work.mkdir(parents=True, exist_ok=True)
    meta: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "cpus": os.cpu_count(),
                            "system": f"{platform.system()} {platform.machine()}", "reports": args.reports}
    corpora = prepare(args.work, args.reports, scales)
    if args.build_only:
        return 0
    meta["load_start"] = os.getloadavg()[0]
    meta["facts"] = {str(s): sum(1 for _ in open(p, encoding="utf-8")) for s, p in corpora.items()}
    runs: dict[float, list[dict[str, Any]]] = {}
    # 1x and 4x interleaved, so a change of load hits both alike; larger scales once
    order = [s for _ in range(args.repeats) for s in scales if s <= 4] + [s for s in scales if s > 4]
    for s in order:
        r = time_verify(corpora[s], args.work / f"out-{s:g}x")
        runs.setdefault(s, []).append(r)
        print(f"{s:g}× verify: {r['seconds']:.1f} s, {r['rss_mb']:.0f} MB, load {r['load']:.1f}", flush=True)
    meta["load_end"] = os.getloadavg()[0]
    text = render(meta, runs)
    print("\n" + text)
    if not args.no_readme:
        write_section("verify-scale", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
