"""Benchmark: would a demanding finance reader accept the offline queries and mined labels? (issues 11, 18)

Three steps (the reader is a person, or an agent in a person's role, who sees only the sheet):

1. Build and draw:  ``eval/bench_quality.py --sheet DIR [--seed N] [--n-read 40] [--n-mined 30]``
   builds AlphaFin's 200 reports from ../shared/data twice with ``fincprg build --upto export``
   (``topics.viz=none``, ``finance.stock_table`` and ``topics.classifier.stock_table`` = stock_basic.csv):
   ``titled`` = the records as ``fincprg.ingest.public.alphafin_to_jsonl`` converts them; ``untitled`` = the
   same bodies with the header that repeats title, target price and rating (「研报题目是:…；研报摘要:」)
   stripped and no title, date or other field. ``--annual`` adds the 2019 annual report of 安靠智电 to both.
   It measures the rules on the emitted queries (the exported dataset's queries.jsonl; the stage files when
   there is no export), the label audit (rules judge), industries, lexical bias and the yield, and writes
   blind reading sheets: ``DIR/reader/`` (one sheet per build, ``--n-read`` random queries per level with
   the sources the rubric lists, plus ``--n-mined`` mined labels per level of the titled build to score
   1-5, and JSONL verdict templates) and, apart, ``DIR/key.json`` (item -> query id and the rules' verdict)
   and ``DIR/measure.json``.
2. Read: a reader who sees only ``DIR/reader`` fills the verdict templates following
   /work/shared/QUALITY_RUBRIC.md (``{"item", "acceptable": 0|1, "reason": code}``, ``{"item", "score"}``),
   in place or as copies in ``DIR/verdicts/``.
3. Record:  ``eval/bench_quality.py --verdicts DIR`` reads the verdicts, the key and measure.json and writes
   the ``<!-- query-quality:start -->`` section of eval/README.md: acceptable k/n per build and level, reason
   counts, failing examples, agreement between rules and reader, yield, FP rate of mined labels, and the rule
   tables. Step 1 alone writes the same section with the reading marked as not done.

Without ``--sheet`` the script only builds and measures the rules (and writes the section). ``--before REV``
adds a build of an older revision (extracted with ``git archive``; titled input) judged by the current rules.
``--mixed`` builds, instead of titled and untitled, **titled-mixed**: the titled reports with the 49,148 East Money
titles (``titles/eastmoney_industry_report_titles.jsonl``) as ``ingest.extra_titles``, so that topics mix companies
and industry reports as a large corpus makes them (issue 38); its topic and intent levels are drawn from every
topic, most of them East Money's. ``--cfb N`` adds a third build, ``cfb-held-out``: the first N bodies of the held-out part of CFBenchmark's
untitled bodies (eval/_cfb_split.py: sha1 of the id mod 4 = 0; no rule is written from them), built and drawn
onto its own sheet like the others: the reading of untitled bodies no rule was written from.
Skipped with a message when ../shared/data is absent.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))
from _cfb_split import CFB_REPORTS, reading_corpus  # noqa: E402
from _quality_reading import aggregate, read_verdicts, rule_verdict, seen_reports, write_sheets  # noqa: E402
from _quality_readme import write_readme  # noqa: E402
from _quality_sources import LEVELS, BuildView, _jsonl, corpora  # noqa: E402
from _readme import commit, fincprg_build  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
ALPHAFIN = DATA / "reports" / "alphafin_reports.json"
ANNUAL = DATA / "annual_report" / "annual_report_300617_2019.json"
STOCKS = DATA / "taxonomy" / "stock_basic.csv"
EXTRA_TITLES = DATA / "titles" / "eastmoney_industry_report_titles.jsonl"
RUBRIC = ROOT.parent / "shared" / "QUALITY_RUBRIC.md"


def build(code: Path, src: Path, out: Path, stock_keys: tuple[str, ...], extra: tuple[str, ...] = ()) -> float:
    """``fincprg build SRC -o OUT --upto export`` with ``code`` on the path; seconds it took. ``stock_keys``: the
    settings that get stock_basic.csv (older revisions know fewer of them: ``finance.stock_table`` is new);
    ``extra``: more ``--set`` values."""
    sets = ["topics.viz=none", *(f"{k}={STOCKS}" for k in stock_keys), *extra]
    return fincprg_build(src, out, "--upto", "export", "--force", sets=sets, code=code)


def rule_rates(view: BuildView, n: int, seed: int) -> dict[str, Any]:
    """Share of ``n`` random emitted queries per level that pass every rule."""
    out: dict[str, Any] = {}
    for level in LEVELS:
        pool = sorted((q for q in view.queries if q["level"] == level), key=lambda q: q["id"])
        sample = random.Random(f"{seed}|{level}").sample(pool, min(n, len(pool)))
        fails: Counter[str] = Counter()
        ok, examples = 0, []
        for q in sample:
            bad = rule_verdict(view, q)
            fails.update(bad)
            ok += not bad
            if bad and len(examples) < 3:
                examples.append(f"{q['text']} ({', '.join(bad)})")
        out[level] = {"n": len(sample), "pool": len(pool), "pass": ok,
                      "rate": round(ok / len(sample), 3) if sample else None,
                      "fails": dict(fails), "examples": examples}
    return out


def audit(out: Path) -> dict[str, Any]:
    from fincprg.audit.run import run_audit
    from fincprg.audit.judge import RulesJudge

    s = run_audit(out, judge=RulesJudge(), per_interval=50, seed=42)
    mine = json.loads((out / "mine" / "manifest.json").read_text(encoding="utf-8"))["counts"]
    res = {}
    for space in ("sentence", "passage", "topic"):
        lv = s["levels"].get(space, {})
        sp = mine["spaces"].get(space, {})
        res[space] = {k: lv.get(k) for k in ("fp", "judged_above", "fp_rate", "accepted_fp", "accepted_judged",
                                             "vetoed_synonymous", "vetoed_judged")}
        res[space].update(accepted=sp.get("accepted", 0), pairs=sp.get("pairs", 0),
                          identical=sp.get("identical_text_pairs", 0), vetoed=sum(sp.get("vetoed", {}).values()))
    return res


def industry(out: Path) -> dict[str, Any]:
    c = json.loads((out / "topics" / "manifest.json").read_text(encoding="utf-8"))["counts"]
    kept = c["titles_kept"]
    unknown = c["industries"].get("unknown", 0)
    # topic purity: share of a leaf topic's titles in its largest industry, averaged over leaf topics
    rows = _jsonl(out / "topics" / "assignments.jsonl")
    by_topic: dict[str, list[str]] = defaultdict(list)
    for a in rows:
        if a["leaf_topic"] != "t-1":
            by_topic[a["leaf_topic"]].append(a.get("industry") or "unknown")
    purity = [Counter(v).most_common(1)[0][1] / len(v) for v in by_topic.values() if v]
    return {"titles": kept, "unknown": unknown, "unknown_share": round(unknown / kept, 3) if kept else None,
            "sources": c.get("industry_sources", {}), "topics": len(by_topic),
            "topic_purity": round(sum(purity) / len(purity), 3) if purity else None}


def bias(out: Path) -> dict[str, float]:
    from fincprg.finance import register_companies
    from fincprg.generate.quality import lexical_bias
    from fincprg.records import Report

    register_companies([Report.model_validate(r) for r in _jsonl(out / "ingest" / "reports.jsonl")])
    corpus_ = {p["id"]: p["text"] for p in _jsonl(out / "chunk" / "passages.jsonl")}
    qs = {q["id"]: q["text"] for q in _jsonl(out / "generate" / "queries.jsonl") if q["level"] == "passage"}
    return lexical_bias(qs, corpus_, {q: {q[3:]: 1} for q in qs})


def generate_counts(out: Path) -> dict[str, Any]:
    c = json.loads((out / "generate" / "manifest.json").read_text(encoding="utf-8"))["counts"]
    return {"queries": c["queries"], "empty_share": c["empty_share"]}


def _checkout(work: Path, rev: str) -> Path:
    code = work / f"code-{rev}"
    if not code.exists():
        code.mkdir()
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(code)], input=archive.stdout, check=True)
    return code


CURRENT = ("topics.classifier.stock_table", "finance.stock_table")


def measure(name: str, code: Path, src: Path, work: Path, args: argparse.Namespace, current: bool,
            stock_keys: tuple[str, ...] = CURRENT, extra: tuple[str, ...] = ()) -> tuple[dict[str, Any], BuildView]:
    out = work / name
    stamp = out / "build_s.txt"
    if not current and stamp.is_file():  # --work kept a build of a fixed revision: its code cannot have changed
        secs = float(stamp.read_text())
    else:
        secs = build(code, src, out, stock_keys, extra)
        stamp.write_text(f"{secs:.1f}")
    view = BuildView(out, STOCKS)
    t = time.perf_counter()
    res = {"build_s": round(secs, 1), "rules": rule_rates(view, args.n, args.seed), "audit": audit(out),
           "industry": industry(out), "bias": bias(out), "generate": generate_counts(out), "yield": view.yield_()}
    res["measure_s"] = round(time.perf_counter() - t, 1)
    print(name, json.dumps(res, ensure_ascii=False), flush=True)
    return res, view


def _meta(args: argparse.Namespace, corpus_stats: dict[str, Any]) -> dict[str, Any]:
    return {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "seed": args.seed, "n": args.n,
            "n_read": args.n_read, "n_mined": args.n_mined, "annual": args.annual, "before": args.before, "cfb": args.cfb,
            "also": args.also, "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, Python "
                                          f"{platform.python_version()}", "corpus": corpus_stats}


def run_builds(args: argparse.Namespace) -> None:
    if args.cfb_only and not args.cfb:
        sys.exit("--cfb-only needs --cfb N")
    if not ALPHAFIN.exists() or (args.annual and not ANNUAL.exists()) or (args.cfb and not CFB_REPORTS.exists()):
        print(f"skipping: {DATA} is absent (needs reports/alphafin_reports.json"
              f"{' and annual_report/' if args.annual else ''}{' and reports/cfbenchmark_reports.jsonl' if args.cfb else ''})")
        return
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        titled, untitled, stats = corpora(ALPHAFIN, work, ANNUAL if args.annual else None)
        results: dict[str, dict[str, Any]] = {}
        views: dict[str, BuildView] = {}
        if args.before:
            results["before"], _ = measure("before", _checkout(work, args.before), titled, work, args, False,
                                        stock_keys=())
        for rev in args.also:
            results[rev], _ = measure(rev, _checkout(work, rev), titled, work, args, False,
                                   stock_keys=CURRENT[:1])
        builds: list[tuple[str, Path, tuple[str, ...]]] = [("titled", titled, ()), ("untitled", untitled, ())]
        if args.mixed:  # issue 38: topics that mix companies, as a large corpus makes them
            builds = [("titled-mixed", titled, (f"ingest.extra_titles={EXTRA_TITLES}",))]
        if args.cfb_only:
            builds = []
        if args.cfb:
            builds.append(("cfb-held-out", reading_corpus(args.cfb, work / "cfb_held_out.jsonl"), ()))
        for name, src, extra in builds:
            results[name], views[name] = measure(name, ROOT, src, work, args, True, extra=extra)
        meta = _meta(args, stats)
        if args.sheet:
            sheet = Path(args.sheet)
            t = time.perf_counter()
            meta["sheets"] = write_sheets(sheet, views, n_read=args.n_read, n_mined=args.n_mined, seed=args.seed,
                                          mined_from=next(iter(views)), rubric=RUBRIC,
                                          unseen=seen_reports([Path(k) for k in args.unseen]))
            meta["sheet_s"] = round(time.perf_counter() - t, 1)
            print(f"sheets for the reader in {sheet / 'reader'}; key in {sheet / 'key.json'}")
        meta["total_s"] = round(time.perf_counter() - t0, 1)
        measured = {"meta": meta, "results": results}
        if args.sheet:
            (Path(args.sheet) / "measure.json").write_text(json.dumps(measured, ensure_ascii=False, indent=1),
                                                           encoding="utf-8")
    if not args.no_readme:
        write_readme(measured, None)
        print("wrote the query-quality section of eval/README.md (reading: not done yet)")


def record(args: argparse.Namespace) -> None:
    sheet = Path(args.verdicts)
    for f in ("key.json", "measure.json"):
        if not (sheet / f).is_file():
            sys.exit(f"{sheet / f} is missing: --verdicts takes the folder that --sheet wrote")
    key = json.loads((sheet / "key.json").read_text(encoding="utf-8"))
    measured = json.loads((sheet / "measure.json").read_text(encoding="utf-8"))
    try:
        agg = aggregate(key, read_verdicts(sheet, key))
    except ValueError as e:
        sys.exit(str(e))
    if not agg["reading"] and not agg["mined"]:
        sys.exit(f"no verdicts filled in {sheet / 'verdicts'} or {sheet / 'reader'}: step 2 (the reading) comes "
                 "first; an item counts once its `acceptable` (or `score`) is set")
    agg["read_on"] = time.strftime("%Y-%m-%d")
    (sheet / "reading.json").write_text(json.dumps(agg, ensure_ascii=False, indent=1, default=dict),
                                        encoding="utf-8")
    print(json.dumps(agg, ensure_ascii=False, default=dict))
    if not args.no_readme:
        write_readme(measured, agg)
        print("wrote the query-quality section of eval/README.md")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:4]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sheet", metavar="DIR", help="step 1: also write blind reading sheets, key and measures here")
    ap.add_argument("--verdicts", metavar="DIR",
                    help="step 3: record the verdicts of the folder --sheet wrote (no build)")
    ap.add_argument("--seed", type=int, default=0, help="seed of every random draw (rules sample, sheets)")
    ap.add_argument("--n-read", type=int, default=40, help="queries per level and build on the reading sheets")
    ap.add_argument("--n-mined", type=int, default=30, help="mined labels per level on the mined-labels sheet")
    ap.add_argument("--n", type=int, default=100, help="queries per level checked by the rules")
    ap.add_argument("--annual", action="store_true", help="add the 2019 annual report of 安靠智电 to both builds")
    ap.add_argument("--before", default="", help="also build this git revision (titled input), judged by the "
                                                 "current rules")
    ap.add_argument("--also", action="append", default=[], metavar="REV", help="another revision, as --before")
    ap.add_argument("--cfb", type=int, default=0, metavar="N",
                    help="also build and draw the first N held-out CFBenchmark bodies (eval/_cfb_split.py)")
    ap.add_argument("--mixed", action="store_true",
                    help="build only titled-mixed: the titled AlphaFin reports with the 49k East Money titles as "
                         "ingest.extra_titles, so topics mix companies (issue 38); no untitled build")
    ap.add_argument("--cfb-only", action="store_true", help="with --cfb: build and draw only cfb-held-out")
    ap.add_argument("--unseen", action="append", default=[], metavar="KEY",
                    help="an earlier reading's key.json: the queries of its reports and topics are not drawn "
                         "(a reading after class fixes reads bodies no reader has seen); repeatable")
    ap.add_argument("--work", help="keep the builds in this folder (default: a temporary one)")
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    args = ap.parse_args()
    if args.verdicts:
        record(args)
    else:
        run_builds(args)


if __name__ == "__main__":
    main()
