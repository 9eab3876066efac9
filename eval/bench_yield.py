"""Issue 48's yield measure: kept queries per 1,000 body characters on full-length reports against the same measure
on the abstract-length reports of the same companies and industries.

* **Full-length**: ``--n`` reports from eval/_fullreports.py (``--reports DIR`` reuses them), their hard-wrapped
  text built as a user builds a folder of report texts: ``fincprg build DIR/wrapped -o WORK/full -q`` (default
  config). Body characters: the truth's body sentences (non-space).
* **Abstract-length**: the CFBenchmark bodies those reports were made of (a body counts when one of its sentences is
  one of a report's body sentences), one record each, as a JSONL corpus ``{id, text, company, stock_code}`` (the
  company and code where the generator filed the body under a company, else none: CFBenchmark gives no title),
  built the same way into WORK/abstract. Body characters: the bodies' non-space characters.

Kept queries: sentence and passage queries in OUT/verify/queries.jsonl (topic-level queries are counted apart: they
come from titles, not bodies). Per kind: a full-length report's kind (company, industry) from the truth; a body counts
for each kind of report it went into. Target (issue 48): full-length >= 60% of abstract-length.

Run: ``python eval/bench_yield.py [--n 60] [--seed 0] [--reports DIR] [--work DIR] [--code DIR] [--record]``; needs
../shared/data. ``--code`` builds with another checkout (a revision before a change) for comparison.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from eval import _fullreports as FR  # noqa: E402
from eval import _fullreports_bodies as B  # noqa: E402
from eval._readme import commit, fincprg_build, finish  # noqa: E402

SECTION = "yield"
TARGET = 0.60
LEVELS = ("sentence", "passage")


def nonspace(s: str) -> int:
    return sum(1 for c in s if not c.isspace())


def abstract_corpus(truths: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, set[str]]]:
    """The CFBenchmark bodies the reports were made of, as corpus records, and each body's report kinds."""
    used: dict[str, set[str]] = defaultdict(set)
    sentence_kinds: dict[str, set[str]] = defaultdict(set)
    for t in truths:
        for s in t["body_sentences"]:
            sentence_kinds[s].add(t["kind"])
    company_of: dict[str, tuple[str, str]] = {}
    pools = B.load_cfb()
    for name, bodies in pools.company_bodies.items():
        for paras in bodies:
            company_of.setdefault("".join(s for p in paras for s in p), (name, pools.company_meta[name][0]))
    records = []
    with open(B.SHARED / "reports" / "cfbenchmark_reports.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            paras = B.body(row["text"])
            kinds = {k for p in paras for s in p for k in sentence_kinds.get(s, ())}
            if not kinds:
                continue
            rid = f"cfb{row['id']}"
            used[rid] = kinds
            rec: dict[str, Any] = {"id": rid, "text": row["text"]}
            if co := company_of.get("".join(s for p in paras for s in p)):
                rec["company"], rec["stock_code"] = co
            records.append(rec)
    return records, used


def kept(out: Path) -> dict[str, Counter[str]]:
    """Kept queries per report id, by level."""
    by: dict[str, Counter[str]] = defaultdict(Counter)
    with open(out / "verify" / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            by[q.get("report_id") or ""][q["level"]] += 1
    return by


def measure(by: dict[str, Counter[str]], chars: dict[str, int], kinds: dict[str, set[str]]) -> dict[str, Any]:
    """Per kind and overall: kept sentence/passage queries, body characters, queries per 1,000 characters."""
    out: dict[str, Any] = {}
    for kind in ("all", "company", "industry"):
        ids = [r for r in chars if kind == "all" or kind in kinds[r]]
        n = {lv: sum(by[r][lv] for r in ids) for lv in LEVELS}
        c = sum(chars[r] for r in ids)
        out[kind] = {"reports": len(ids), "body_chars": c, **n,
                     "per_1k": round(1000 * sum(n.values()) / c, 3) if c else None}
    out["topic_level"] = sum(v[lv] for v in by.values() for lv in ("topic", "intent"))
    return out


def run(reports: Path, work: Path, n: int, seed: int, code: Path = ROOT) -> dict[str, Any]:
    if not (reports / "truth.jsonl").exists():
        FR.generate(reports, n, seed, "cfb")
    truths = [json.loads(ln) for ln in (reports / "truth.jsonl").read_text("utf-8").splitlines() if ln.strip()]
    records, body_kinds = abstract_corpus(truths)
    (work / "abstract").mkdir(parents=True, exist_ok=True)
    with open(work / "abstract" / "reports.jsonl", "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    full_s = fincprg_build(reports / "wrapped", work / "full", code=code)
    abs_s = fincprg_build(work / "abstract" / "reports.jsonl", work / "abstract_out", code=code)
    full = measure(kept(work / "full"), {t["id"]: t["chars"]["body"] for t in truths},
                   {t["id"]: {t["kind"]} for t in truths})
    abstract = measure(kept(work / "abstract_out"), {r["id"]: nonspace(r["text"]) for r in records}, body_kinds)
    ratio = {k: (round(full[k]["per_1k"] / abstract[k]["per_1k"], 3) if full[k]["per_1k"] and abstract[k]["per_1k"]
                 else None) for k in ("all", "company", "industry")}
    return {"date": dt.date.today().isoformat(), "commit": commit(), "machine": f"{platform.machine()} CPU",
            "n": len(truths), "seed": seed, "full": full, "abstract": abstract, "ratio": ratio,
            "abstract_bodies": len(records), "build_s": {"full": round(full_s, 1), "abstract": round(abs_s, 1)}}


def render(r: dict[str, Any], before: dict[str, Any] | None = None) -> str:
    f, a = r["full"], r["abstract"]
    rows = []
    for k in ("all", "company", "industry"):
        ratio = r["ratio"][k]
        rows.append(f"| {k} | {f[k]['reports']} | {f[k]['body_chars']:,} | {f[k]['sentence']} / {f[k]['passage']} | "
                    f"{f[k]['per_1k']} | {a[k]['reports']} | {a[k]['body_chars']:,} | {a[k]['sentence']} / "
                    f"{a[k]['passage']} | {a[k]['per_1k']} | {'–' if ratio is None else f'{100 * ratio:.0f}%'} |")
    met = r["ratio"]["all"] is not None and r["ratio"]["all"] >= TARGET
    return "\n".join([
        "## Full-length reports: kept queries per 1,000 body characters (`eval/bench_yield.py`)", "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}. {r['n']} generated reports "
        f"(`python -m eval._fullreports --n {r['n']} --seed {r['seed']} --source cfb`), their hard-wrapped text built "
        "with `fincprg build DIR/wrapped` (default config), against the "
        f"{r['abstract_bodies']} CFBenchmark bodies they were made of, built as a JSONL corpus (company and code where "
        "the generator filed the body under a company). Kept: sentence / passage queries after verify; body characters "
        "non-space (full-length: the truth's body sentences). A body counts for each kind of report it went into. "
        f"Target (issue 48): full-length >= {100 * TARGET:.0f}% of abstract-length.", "",
        "| kind | full reports | body chars | kept s / p | per 1k | abstract bodies | body chars | kept s / p | per 1k "
        "| full / abstract |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", *rows, "",
        f"- target >= {100 * TARGET:.0f}%: {'met' if met else '**not met**'}; topic-level queries kept (from titles, "
        f"not counted above): full {f['topic_level']}, abstract {a['topic_level']}; builds {r['build_s']['full']} s "
        f"/ {r['build_s']['abstract']} s",
        *([_before_line(before)] if before else []),
    ])


def _before_line(b: dict[str, Any]) -> str:
    """One line for a measurement of the same reports at an earlier revision (``--before``)."""
    def share(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.0f}%"

    parts = [f"{k} {b['full'][k]['per_1k']} vs {b['abstract'][k]['per_1k']} ({share(b['ratio'][k])})"
             for k in ("all", "company", "industry")]
    return f"- the same reports at {b['commit']}: per 1k full vs abstract (share): " + "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reports", type=Path, help="reuse reports made by eval/_fullreports.py")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--code", type=Path, default=ROOT, help="build with this checkout (an earlier revision)")
    ap.add_argument("--before", type=Path, help="WORK/result.json of a run at an earlier revision, shown beside")
    ap.add_argument("--record", action="store_true", help="write the section into eval/README.md")
    a = ap.parse_args(argv)
    if not B.shared_available():
        print(f"skipped: {B.SHARED} (CFBenchmark bodies) is absent", file=sys.stderr)
        return 0
    work = a.work or Path(tempfile.mkdtemp(prefix="fincprg-yield-"))
    work.mkdir(parents=True, exist_ok=True)
    result = run(a.reports or work / "reports", work, a.n, a.seed, a.code)
    if a.code != ROOT:
        result["commit"] = f"the checkout at {a.code}"
    text = render(result, json.loads(a.before.read_text("utf-8")) if a.before else None)
    return finish(work, result, text, SECTION, write=a.record)


if __name__ == "__main__":
    sys.exit(main())
