"""Benchmark: would a finance reader trust the offline queries and mined labels? (issue 11)

Run: ``.venv/bin/python eval/bench_quality.py [--before REV] [--n 100] [--no-readme]``

Corpus: the 200 AlphaFin reports and the 2019 annual report of 安靠智电 (300617) from ../shared/data,
converted with ``fincprg.ingest.public`` (skipped with a message when ../shared/data is absent). The
corpus is built offline up to ``mine`` (``topics.viz=none``; the current code also gets
``topics.classifier.stock_table=../shared/data/taxonomy/stock_basic.csv``) twice: with the code of
``--before REV`` (default: the commit issue 11 started from, extracted with ``git archive``) and with
the working tree (``--also REV`` adds a build of REV between them). Every build is measured by the
*current* rules, judge and audit, so the rows differ only in the code that built them.

Measured per build:
- Query rules (:mod:`fincprg.generate.quality`, stated in the README section): a fixed random sample
  of ``--n`` queries per level (seeded, drawn from the sorted query ids), each checked against its
  source (sentence: the sentence and its passage; passage: the passage and the report title; topic
  subquery and intent: the titles and dates of the topic's reports). A query passes when it passes
  every rule; the share of passing queries per level is the headline figure.
- The label audit (``run_audit`` with the rules judge, 50 pairs per interval and level, seed 42): FP
  rate over the judged pairs above the threshold, accepted pairs judged < 3, and vetoed pairs judged
  > 3 (the vetoes the judge overturned), per space.
- Industry: the share of kept titles whose industry is unknown (topics manifest).
- Lexical bias (:func:`fincprg.generate.quality.lexical_bias`) on the passage subset (direct qrels).

Results replace the ``<!-- query-quality:start -->`` … ``<!-- query-quality:end -->`` section of
eval/README.md.
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
DATA = ROOT.parent / "shared" / "data"
ALPHAFIN = DATA / "reports" / "alphafin_reports.json"
ANNUAL = DATA / "annual_report" / "annual_report_300617_2019.json"
STOCKS = DATA / "taxonomy" / "stock_basic.csv"
README = ROOT / "eval" / "README.md"
START, END = "<!-- query-quality:start -->", "<!-- query-quality:end -->"
BEFORE = "5e80b21"  # the commit issue 11 started from
LEVELS = ("sentence", "passage", "topic", "intent")


def corpus(work: Path) -> Path:
    from fincprg.ingest.public import alphafin_to_jsonl, annual_report_to_jsonl

    a, b = work / "alphafin.jsonl", work / "annual.jsonl"
    alphafin_to_jsonl(ALPHAFIN, a)
    # date: the disclosure date in annual_report_index_2019_2021.csv
    annual_report_to_jsonl(ANNUAL, b, report_id="ar300617-2019", title="安靠智电（300617）：2019年年度报告",
                           date="2020-01-21")
    out = work / "corpus.jsonl"
    out.write_text(a.read_text(encoding="utf-8") + b.read_text(encoding="utf-8"), encoding="utf-8")
    return out


def build(code: Path, src: Path, out: Path, stock_table: bool) -> float:
    sets = ["topics.viz=none"] + ([f"topics.classifier.stock_table={STOCKS}"] if stock_table else [])
    cmd = [sys.executable, "-m", "fincprg", "build", str(src), "-o", str(out), "--upto", "mine", "-q"]
    for s in sets:
        cmd += ["--set", s]
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1"}
    t = time.perf_counter()
    subprocess.run(cmd, cwd=code, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def _jsonl(p: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()] if p.is_file() else []


def sources(out: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Every query of the build with what the rules check it against."""
    reports = {r["id"]: r for r in _jsonl(out / "ingest" / "reports.jsonl")}
    passages = {p["id"]: p for p in _jsonl(out / "chunk" / "passages.jsonl")}
    sentences = {s["id"]: s["text"] for s in _jsonl(out / "chunk" / "sentences.jsonl")}
    from fincprg.finance import parse_title_company, register_companies
    from fincprg.records import Report

    register_companies([Report.model_validate(r) for r in reports.values()])  # the tokens BM25 sees

    def company(rid: str | None) -> str | None:
        r = reports.get(rid or "", {})
        return r.get("company") or parse_title_company(r.get("title"))[0]

    rows = []
    for q in _jsonl(out / "generate" / "queries.jsonl"):
        p = passages.get(q["source_ids"][0], {})
        title = reports.get(q.get("report_id") or "", {}).get("title", "")
        src = p.get("text", "") + "\n" + title
        if q["level"] == "sentence":
            src = sentences.get(q["provenance"].get("sentence_id"), "") + "\n" + src
        rows.append({"id": q["id"], "level": q["level"], "text": q["text"], "source": src,
                     "subjects": [company(q.get("report_id"))]})
    tree = json.loads((out / "topics" / "tree.json").read_text(encoding="utf-8")) \
        if (out / "topics" / "tree.json").is_file() else {"nodes": []}
    nodes = {n["id"]: n for n in tree["nodes"]}
    for q in _jsonl(out / "topics" / "queries.jsonl"):
        node = nodes.get(q["source_ids"][0], {})
        rids = node.get("title_ids", [])
        years = sorted({int(reports[r]["date"][:4]) for r in rids if reports.get(r, {}).get("date")})
        rows.append({"id": q["id"], "level": q["level"], "text": q["text"],
                     "source": "\n".join(reports[r]["title"] for r in rids if r in reports),
                     # the topic's industry is its subject as the classifier assigned it, not a copy of a title
                     "subjects": [company(r) for r in rids] + [node.get("industry")], "years": years})
    return rows, reports


def rule_rates(rows: list[dict[str, Any]], n: int, seed: int) -> dict[str, Any]:
    from fincprg.generate.quality import RULES, check_query

    out: dict[str, Any] = {}
    for level in LEVELS:
        pool = sorted((r for r in rows if r["level"] == level), key=lambda r: r["id"])
        sample = random.Random(f"{seed}|{level}").sample(pool, min(n, len(pool)))
        fails: Counter[str] = Counter()
        ok, examples = 0, []
        for r in sample:
            yrs = r.get("years") or []
            res = check_query(r["text"], r["source"], subjects=r["subjects"],
                              year_span=(yrs[0], yrs[-1]) if yrs else None, date_years=yrs)
            bad = [k for k in RULES if not res[k]]
            fails.update(bad)
            ok += not bad
            if bad and len(examples) < 3:
                examples.append(f"{r['text']} ({', '.join(bad)})")
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


def measure(name: str, code: Path, src: Path, work: Path, args: argparse.Namespace, current: bool,
            stock_table: bool = True) -> dict[str, Any]:
    out = work / name
    stamp = out / "build_s.txt"
    if not current and stamp.is_file():  # --work kept a build of a fixed revision: its code cannot have changed
        secs = float(stamp.read_text())
    else:
        secs = build(code, src, out, stock_table)
        stamp.write_text(f"{secs:.1f}")
    rows, _ = sources(out)
    res = {"build_s": round(secs, 1), "rules": rule_rates(rows, args.n, args.seed), "audit": audit(out),
           "industry": industry(out), "bias": bias(out), "generate": generate_counts(out)}
    print(name, json.dumps(res, ensure_ascii=False), flush=True)
    return res


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=False).stdout.strip() or "?"
    except OSError:
        return "?"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


RULE_TEXT = [
    "Rules (`fincprg/generate/quality.py`; a query passes when it passes all six):",
    "1. `no_phrase_list`: no 、 (no key phrases glued into a list);",
    "2. `no_cut_token`: every stretch of 2+ CJK characters copied from the source starts and ends on a token "
    "boundary of the source as fincprg's jieba tokenizer cuts it (one function character such as 的 at either "
    "end is allowed; the question's own words, i.e. periods, metric names, directions and frame words such as "
    "原因/多少, verdicts against expectations such as 符合预期/不及预期, and company names are not counted as "
    "copies);",
    "3. `content_words`: the copied content is made of words of the tokenizer's dictionary (no word jieba had "
    "to guess, like 以收 or 比仅) and ends in a noun (jieba's part-of-speech tags; fincprg's finance terms count "
    "as nouns; one function character such as 的/为 at either end of a copy is not content, as in rule 2);",
    "4. `period_in_source`: every period the query names is named by the source: same year and part; a "
    "forecast only where the source forecasts, an actual only where the source gives more than a forecast; "
    "a part the source writes without a year (公布2020年三季度报告，前三季度…) is read in the source's latest "
    "actual year; a query that says 预测/预计 asks forecasts (2021-2023年的盈利预测); "
    "topic level: a year inside the span of the topic's report dates also counts;",
    "5. `period_placed`: the first period stands at the start, right after the named company/subject (or an "
    "industry), or after 预计/在/截至;",
    "6. `subject_named`: the query names a company, a stock code, or a term of the CITIC industry lexicon.",
    "Sources: sentence query = its sentence + passage + report title; passage query = passage + title; "
    "topic subquery and intent = the titles and dates of the topic's reports; the subjects a query may name "
    "are the reports' companies (and, at topic level, the topic's industry, which the classifier assigns).",
    "",
    "Rule changes at this record (each where the old rule failed a query a finance reader accepts): 符合预期/"
    "不及预期 read as question vocabulary (「晨鸣纸业业绩是否符合预期？」 failed on the verb 符合); the edge 的/为 "
    "of a copy (「…总额为多少」); a bare part dated by the source's year (「南玻A2020年前三季度的营业收入」 from "
    "「公布2020年三季度报告，前三季度实现营业收入…」); 「…2021-2023年的盈利预测」 read as a forecast; the topic's "
    "industry as its subject (「银行行业」 failed no_cut_token against the title word 常熟银行). The middle row, "
    "when present, is the generator before this change under these rules: it separates what the rule "
    "changes gave from what the generator gave.",
]


def write_readme(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> None:
    names = list(results)
    lines = [START, "## Query and label quality of the offline backends (`eval/bench_quality.py`)", "",
             f"Measured {time.strftime('%Y-%m-%d')} at commit {_commit()} on {platform.machine()} "
             f"({platform.python_version()}): AlphaFin's 200 reports + the 2019 annual report of 安靠智电, built "
             f"offline up to `mine`; {args.n} random queries per level (seed {args.seed}). `before` = the code at "
             f"{args.before}, `after` = this commit"
             + "".join(f", `{r}` = the code at {r}" for r in args.also)
             + "; all judged by the same current rules and audit.", "",
             *RULE_TEXT, "", "| level | " + " | ".join(f"{n}: pass rate" for n in names) + " | after: failures by rule |",
             "|---|" + "---:|" * len(names) + "---|"]
    last = results[names[-1]]
    for lv in LEVELS:
        cells = [f"{_pct(results[n]['rules'][lv]['rate'])} ({results[n]['rules'][lv]['pass']}/"
                 f"{results[n]['rules'][lv]['n']})" for n in names]
        fails = ", ".join(f"{k} {v}" for k, v in sorted(last["rules"][lv]["fails"].items())) or "none"
        lines.append(f"| {lv} | " + " | ".join(cells) + f" | {fails} |")
    lines += ["", "Label audit (`fincprg audit` with the rules judge, 50 pairs per 0.02 interval and level). "
              "**FP rate of the labels** = accepted pairs (scored >= threshold, not vetoed: the qrels actually "
              "written) judged < 3, over the accepted pairs judged. **Before the veto** = every sampled pair "
              "scored >= threshold, vetoed ones included, judged < 3: what the reranker alone would have "
              "labelled; the difference is what the finance veto removed. Overturned = vetoed and judged > 3. "
              "The rules judge compares finance facts with the same function as the mining veto "
              "(`fincprg/finance/compare.py`), so it cannot overturn a veto on facts it reads the same way, and an "
              "accepted pair it judges false must differ in a way the veto does not read; it is a stand-in, not a "
              "person:", "",
              "| space | build | mined pairs accepted (identical texts among scored) | vetoed | FP rate of the labels "
              "(accepted judged < 3) | before the veto (all judged above the threshold < 3) | vetoes overturned |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for sp in ("sentence", "passage", "topic"):
        for n in names:
            a = results[n]["audit"][sp]
            acc = a["accepted_fp"] / a["accepted_judged"] if a["accepted_judged"] else None
            lines.append(f"| {sp} | {n} | {a['accepted']} ({a['identical']}) | {a['vetoed']} | {_pct(acc)} "
                         f"({a['accepted_fp']} / {a['accepted_judged']}) | {_pct(a['fp_rate'])} ({a['fp']} / "
                         f"{a['judged_above']}) | {a['vetoed_synonymous']} / {a['vetoed_judged']} |")
    lines += ["", "| build | titles | industry unknown | industry sources | leaf topics | topic industry purity "
              "| queries | empty sentence share |", "|---|---:|---:|---|---:|---:|---|---:|"]
    for n in names:
        i, g = results[n]["industry"], results[n]["generate"]
        src = ", ".join(f"{k} {v}" for k, v in i["sources"].items())
        qs = ", ".join(f"{k} {v}" for k, v in g["queries"].items())
        lines.append(f"| {n} | {i['titles']} | {i['unknown']} ({_pct(i['unknown_share'])}) | {src} | {i['topics']} "
                     f"| {i['topic_purity']} | {qs} | {g['empty_share']} |")
    lines += ["", "Lexical bias on the passage subset (direct qrels; BM25 over all passages of the build): "
              "nDCG@10 with fincprg's jieba tokens vs character bigrams, and the share of a query's tokens "
              "found in its own passage:", "",
              "| build | BM25 jieba | BM25 bigrams | gap | query tokens in passage (jieba) | (bigrams) |",
              "|---|---:|---:|---:|---:|---:|"]
    for n in names:
        b = results[n]["bias"]
        lines.append(f"| {n} | {b['bm25_jieba']} | {b['bm25_bigram']} | {b['gap']} | {b['token_overlap']} "
                     f"| {b['bigram_overlap']} |")
    lines += ["", "Reading the tables: the rules are proxies a script can apply; they check form (lists, cut words, "
              "periods, subject), not whether a finance reader would ask the question. The rules judge shares the "
              "veto's fact comparison "
              "(including the source sentences' figures), so 'vetoes overturned' can only come from its character "
              "overlap; a person or the LLM judge is the real test. Identical texts: templates ask the same question "
              "of several passages of a report; those pairs are kept only when the sources' figures agree.",
              "", "Failing examples (after):", ""]
    for lv in LEVELS:
        for e in last["rules"][lv]["examples"]:
            lines.append(f"- {lv}: {e}")
    lines.append(END)
    block = "\n".join(lines)
    text = README.read_text(encoding="utf-8") if README.exists() else "# fincprg benchmarks and experiments\n"
    if START in text and END in text:
        text = text[:text.index(START)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


def _checkout(work: Path, rev: str) -> Path:
    code = work / f"code-{rev}"
    if not code.exists():
        code.mkdir()
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(code)], input=archive.stdout, check=True)
    return code


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default=BEFORE, help="git revision for the 'before' build ('' to skip)")
    ap.add_argument("--also", action="append", default=[], metavar="REV",
                    help="also build this git revision (with the stock table), a row between before and after")
    ap.add_argument("--n", type=int, default=100, help="queries sampled per level")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", help="keep the builds in this folder (default: a temporary one)")
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    ap.add_argument("--skip-after", action="store_true", help="measure only the 'before' build")
    args = ap.parse_args()
    if not (ALPHAFIN.exists() and ANNUAL.exists()):
        print(f"skipping: {DATA} is absent (needs reports/alphafin_reports.json and annual_report/)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        src = corpus(work)
        results: dict[str, dict[str, Any]] = {}
        if args.before:
            results["before"] = measure("before", _checkout(work, args.before), src, work, args, current=False,
                                        stock_table=False)
        for rev in args.also:  # e.g. the generator before this change, judged by the current rules
            results[rev] = measure(rev, _checkout(work, rev), src, work, args, current=False)
        if not args.skip_after:
            results["after"] = measure("after", ROOT, src, work, args, current=True)
    if not args.no_readme:
        write_readme(results, args)
        print(f"wrote the query-quality section of {README}")


if __name__ == "__main__":
    main()
