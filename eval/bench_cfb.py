"""Benchmark: CFBenchmark's untitled report bodies built out of the box (issue 38).

``eval/bench_cfb.py [--first 300] [--all] [--part all|learn|held-out] [--work DIR] [--no-readme]``

Writes the first ``--first`` bodies of ../shared/data/reports/cfbenchmark_reports.jsonl (``{id, text}``: no
title, date or company) to a JSONL file and builds it with the CLI a user runs, ``fincprg build SRC -o OUT -c
pipelines/offline.yaml`` and no ``--set`` (so the stock table is the bundled one), and once more with ``--set
finance.stock_table=none`` (a clone before the table was bundled: no untitled body has a subject). ``--all``
adds a default build of every body, the corpus the yield stated before issue 38 (0.19 passage and 0.45 sentence
queries per report, with the stock table) was measured on. ``--part`` keeps only the bodies of one part of the
fixed split (eval/_cfb_split.py): a rule developer measures the learn part; readings draw the held-out part
(``bench_quality.py --cfb N``).

Per build and level (sentence, passage; emitted = the exported dataset's queries.jsonl): queries, per report, per
passage, the share of passages with at least one emitted query, the share of queries naming a listed company
(a name or code of the bundled stock table, :meth:`fincprg.finance.stocks.StockTable.mentions`) and the share
naming the body's subject (the company generate took for it, :func:`fincprg.generate.subject.body_subject`).
Writes the ``<!-- cfb-untitled:start -->`` section of eval/README.md. Skipped with a message when
../shared/data is absent.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))
from _cfb_split import CFB_REPORTS, PARTS, part_of, read_bodies, write_bodies  # noqa: E402
from _quality_sources import BuildView  # noqa: E402
from _readme import commit, fincprg_build, write_section  # noqa: E402

LEVELS = ("sentence", "passage")
BEFORE = {"sentence": 0.45, "passage": 0.19}  # queries per report on every body, stated in issue 38
CONFIG = ROOT / "pipelines" / "offline.yaml"


def measure(out: Path, table: Any) -> dict[str, Any]:
    """The yield and the subjects of one build folder (``table``: a StockTable, for the names a query holds).

    A body's subject is the company generate took for it: its metadata, else what
    :func:`~fincprg.generate.subject.body_subject` reads with the table the build's generate stage used
    (its manifest's ``finance.stock_table``, read in the repository root as the build was)."""
    from fincprg.finance.stocks import stock_table
    from fincprg.generate.subject import body_subject

    view = BuildView(out)
    y = view.yield_()
    n_rep, n_pass = y["reports"], y["passages"]
    manifest = json.loads((out / "generate" / "manifest.json").read_text(encoding="utf-8"))
    counts = manifest["counts"]
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        used = stock_table((manifest.get("config") or {}).get("finance", {}).get("stock_table"))
    finally:
        os.chdir(cwd)
    subject: dict[str, str | None] = {}
    for rid, r in view.reports.items():
        found = r.get("company") or (used and body_subject(r.get("text") or "", used) or (None,))[0]
        subject[rid] = found
    res: dict[str, Any] = {
        "reports": n_rep, "passages": n_pass, "passages_with_query": y["passages_with_query"],
        "share_with_query": y["share_with_query"],
        "reports_with_subject": sum(1 for s in subject.values() if s),
        "no_subject_passages": counts.get("no_subject_passages", 0), "generated": counts.get("queries", {}),
        "levels": {}}
    verify = out / "verify" / "manifest.json"
    if verify.is_file():
        res["dropped"] = json.loads(verify.read_text(encoding="utf-8"))["counts"].get("reasons", {})
    every = [q for q in view.queries if q["level"] in LEVELS]
    for lv in (*LEVELS, "both"):
        qs = every if lv == "both" else [q for q in every if q["level"] == lv]
        listed = sum(1 for q in qs if table.mentions(q["text"]))
        own = sum(1 for q in qs if subject.get(q.get("report_id") or "") and subject[q["report_id"]] in q["text"])
        res["levels"][lv] = {
            "queries": len(qs), "per_report": round(len(qs) / n_rep, 3) if n_rep else None,
            "per_passage": round(len(qs) / n_pass, 3) if n_pass else None,
            "names_listed": listed, "names_listed_share": round(listed / len(qs), 3) if qs else None,
            "names_subject": own, "names_subject_share": round(own / len(qs), 3) if qs else None,
            "examples": [q["text"] for q in qs if not table.mentions(q["text"])][:3]}
    return res


def render(result: dict[str, Any]) -> str:
    m = result["meta"]
    lines = [
        f"Measured {m['date']} at commit {m['commit']} on {m['machine']}. Input: the first {m['first']} of "
        f"CFBenchmark's {m['bodies_in_file']} report bodies (`../shared/data/reports/cfbenchmark_reports.jsonl`, "
        f"part `{m['part']}` of the fixed split in eval/_cfb_split.py: {m['held_out']} of them are held out) "
        "written as `{id, text}`: no title, date or company, so every subject is read from the body. "
        "Each build is `fincprg build SRC -o OUT -c pipelines/offline.yaml -q` through the CLI; **default** has no "
        "`--set` (the stock table is the bundled one), **no table** adds `--set finance.stock_table=none` (what a "
        "clone without `../shared/data` had before the table was bundled)"
        + (", **all bodies** is the default build of every body" if "all bodies" in result["builds"] else "")
        + ". Queries are the emitted ones (the exported dataset's `queries.jsonl`); a query *names a listed "
        "company* when it holds a short name (3+ characters) or stock code of the bundled table; *names its "
        "subject* when it holds the company generate took for its body. "
        f"Times: {', '.join(f'{k} {v} s' for k, v in m['build_s'].items())}.", "",
        "| build | reports | with a subject (generate's) | passages | level | queries | per report | per passage "
        "| passages with a query | names a listed company | names its subject |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in result["builds"].items():
        for lv in (*LEVELS, "both"):
            x = r["levels"][lv]
            share = f"{r['passages_with_query']} ({_pct(r['share_with_query'])})" if lv == "both" else ""
            lines.append(
                f"| {name} | {r['reports']} | {r['reports_with_subject']} | {r['passages']} | {lv} | {x['queries']} | "
                f"{_num(x['per_report'])} | {_num(x['per_passage'])} | {share} | "
                f"{x['names_listed']} ({_pct(x['names_listed_share'])}) | "
                f"{x['names_subject']} ({_pct(x['names_subject_share'])}) |")
    lines += ["", f"Yield before issue 38 (stated in the issue: every body, `finance.stock_table` set to "
              f"stock_basic.csv): {BEFORE['passage']} passage and {BEFORE['sentence']} sentence queries per report."]
    if "all bodies" in result["builds"]:
        a = result["builds"]["all bodies"]["levels"]
        lines.append(f"Now, every body, no `--set`: {_num(a['passage']['per_report'])} passage and "
                     f"{_num(a['sentence']['per_report'])} sentence queries per report.")
    d = result["builds"].get("default", {})
    if d.get("dropped"):
        lines += ["", "verify's drops in the default build: " + ", ".join(
            f"{k} {v}" for k, v in sorted(d["dropped"].items(), key=lambda kv: -kv[1])) + "."]
    ex = [e for lv in LEVELS for e in d.get("levels", {}).get(lv, {}).get("examples", [])]
    if ex:
        lines += ["", "Queries naming no listed company (default build): " + "; ".join(f"「{e}」" for e in ex) + "."]
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:3]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--first", type=int, default=300, help="the first N bodies of the file (default 300)")
    ap.add_argument("--part", choices=PARTS, default="all", help="keep only this part of the fixed split")
    ap.add_argument("--all", action="store_true", help="also build every body of the part (default config)")
    ap.add_argument("--work", help="keep inputs and builds in this folder (default: a temporary one)")
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    args = ap.parse_args()
    if not CFB_REPORTS.is_file():
        print(f"skipping: {CFB_REPORTS} is absent (the team's ../shared/data)")
        return 0
    from fincprg.finance.stocks import stock_table

    table = stock_table("bundled")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        rows = read_bodies(CFB_REPORTS, args.part, args.first)
        src = write_bodies(rows, work / f"cfb_first{args.first}_{args.part}.jsonl")
        plan = [("default", src, []), ("no table", src, ["finance.stock_table=none"])]
        if args.all:
            plan.append(("all bodies", write_bodies(read_bodies(CFB_REPORTS, args.part), work / "cfb_all.jsonl"), []))
        builds, secs = {}, {}
        for name, corpus, sets in plan:
            out = work / name.replace(" ", "_")
            secs[name] = round(fincprg_build(corpus, out, "-c", str(CONFIG), "--force", sets=sets), 1)
            builds[name] = measure(out, table)
            print(name, json.dumps(builds[name], ensure_ascii=False), flush=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "first": args.first, "part": args.part,
            "bodies_in_file": len(read_bodies(CFB_REPORTS)), "held_out": sum(part_of(r["id"]) == "held-out" for r in rows),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}",
            "build_s": secs}
    text = render({"meta": meta, "builds": builds})
    print(text)
    if not args.no_readme:
        write_section("cfb-untitled", "## CFBenchmark's untitled bodies out of the box (`eval/bench_cfb.py`)\n\n"
                      + text)
        print("wrote the cfb-untitled section of eval/README.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
