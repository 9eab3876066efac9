"""Issue 48's cleaning benchmark: full-length reports as PDF, flattened text and hard-wrapped text.

Generates ``--n`` reports with eval/_fullreports.py (which knows every body sentence and every boilerplate segment),
then for each form runs what a user runs, ``fincprg build DIR/<form> -o OUT --upto chunk -q`` (default config), and
scores each report's kept text (its passages in OUT/chunk/passages.jsonl, joined in order) against the truth:

* **body sentences kept**: a sentence counts when its text appears in the kept text, compared without whitespace
  and with full-width ASCII folded (so a line-wrap join with or without a space still matches);
* **boilerplate characters kept**: the kept text minus every matched body sentence and the neutral title and
  headings is what leaked; it is attributed to the boilerplate segments it contains (their categories), the rest to
  the category of a segment it is part of, else ``other``; counted in non-space characters;
* **removed share** (1 - kept / all non-space characters) against the **boilerplate share** of the truth.

Targets (issue 48): >= 98% of body sentences kept, <= 1% of boilerplate characters kept, removed share within 5
points of the boilerplate share. A form fincprg cannot read (PDF before a reader lands) is reported as not
supported, not as a crash.

Run: ``python eval/bench_fulllength.py [--n 60] [--seed 0] [--source cfb|sample] [--forms pdf,flat,wrapped]
[--reports DIR] [--work DIR] [--record]``; ``--source cfb`` needs ../shared/data (else use ``sample``). WORK keeps
the builds, ``result.json`` and ``scores-<form>.jsonl`` (each report's lost sentences and leaks by category).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from eval._readme import commit, finish  # noqa: E402

FORMS = ("pdf", "flat", "wrapped")
SECTION = "fulllength"
TARGET_BODY, TARGET_LEAK, TARGET_GAP = 0.98, 0.01, 0.05
_FOLD = {0xFF01 + i: 0x21 + i for i in range(94)} | {0x3000: 0x20}


def norm(s: str) -> str:
    """Whitespace out, full-width ASCII folded: length-preserving apart from the whitespace, so counts stay fair."""
    return "".join(s.translate(_FOLD).split())


def _segments_leak(rest: list[str], truth: dict[str, Any], lost: list[str]) -> Counter[str]:
    """Attribute leaked fragments to boilerplate categories: whole segments first, then pieces of one; a piece of
    a body sentence that was cut (not kept whole) is ``body_part``, not a leak; anything else is ``other``."""
    by_cat: Counter[str] = Counter()
    segs = sorted(((norm(s["text"]), s["category"]) for s in truth["boilerplate"]), key=lambda x: -len(x[0]))
    frags = []
    for f in (f for f in rest if f):
        if any(f in b for b in lost):
            by_cat["body_part"] += len(f)
        else:
            frags.append(f)
    for text, cat in segs:
        if not text:
            continue
        for i, f in enumerate(frags):
            if text in f:
                by_cat[cat] += len(text)
                frags[i:i + 1] = [p for p in f.split(text, 1) if p]
                break
    for f in frags:
        cat = next((c for t, c in segs if f in t), None) or ("body_part" if any(f in b for b in lost) else "other")
        by_cat[cat] += len(f)
    return by_cat


def score_report(kept: str, truth: dict[str, Any]) -> dict[str, Any]:
    """Score one report's kept text against its truth (see the module docstring for the measures)."""
    k = norm(kept)
    sents = sorted({norm(s) for s in truth["body_sentences"]}, key=len, reverse=True)
    lost = [s for s in truth["body_sentences"] if norm(s) not in k]
    rest = k
    for s in sents:  # longest first, so a short sentence inside a long one is not cut out of it
        rest = rest.replace(s, "\0", 1)
    for n in sorted((norm(s["text"]) for s in truth["neutral"]), key=len, reverse=True):
        if n:
            rest = rest.replace(n, "\0", 1)
    leak = _segments_leak(rest.split("\0"), truth, [norm(s) for s in lost])
    body_part = leak.pop("body_part", 0)
    return {"id": truth["id"], "kind": truth["kind"], "sentences": len(truth["body_sentences"]),
            "sentences_kept": len(truth["body_sentences"]) - len(lost), "lost": lost,
            "boilerplate_chars": truth["chars"]["boilerplate"], "leak_chars": sum(leak.values()),
            "leak_by_category": dict(leak), "body_part_chars": body_part, "all_chars": truth["chars"]["all"],
            "kept_chars": len(k)}


def kept_texts(out: Path) -> dict[str, str]:
    """Each report's passages joined in order (passages tile the cleaned text, so the join is what survived)."""
    parts: dict[str, list[tuple[int, str]]] = defaultdict(list)
    path = out / "chunk" / "passages.jsonl"
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            p = json.loads(line)
            parts[p["report_id"]].append((p["order"], p["text"]))
    return {rid: "".join(t for _, t in sorted(ps)) for rid, ps in parts.items()}


def build(src: Path, out: Path) -> tuple[int, str, float]:
    """``fincprg build SRC -o OUT --upto chunk -q`` as a user runs it; (exit code, last error line, seconds)."""
    cmd = [sys.executable, "-m", "fincprg", "build", str(src), "-o", str(out), "--upto", "chunk", "-q"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    return p.returncode, (err[-1] if err else ""), round(time.perf_counter() - t, 1)


def aggregate(scores: list[dict[str, Any]], truths: list[dict[str, Any]]) -> dict[str, Any]:
    n_s = sum(s["sentences"] for s in scores)
    boiler = sum(s["boilerplate_chars"] for s in scores)
    every = sum(s["all_chars"] for s in scores)
    cat_total: Counter[str] = Counter()
    for t in truths:
        cat_total.update(t["chars"]["by_category"])
    cat_leak: Counter[str] = Counter()
    for s in scores:
        cat_leak.update(s["leak_by_category"])
    body = sum(s["sentences_kept"] for s in scores) / n_s if n_s else 0.0
    leak = sum(s["leak_chars"] for s in scores) / boiler if boiler else 0.0
    removed = 1 - sum(s["kept_chars"] for s in scores) / every if every else 0.0
    worst = sorted(scores, key=lambda s: (s["sentences_kept"] / max(1, s["sentences"])
                                          - s["leak_chars"] / max(1, s["boilerplate_chars"])))[:5]
    return {"reports": len(scores), "body_kept": round(body, 6), "boilerplate_kept": round(leak, 6),
            "removed_share": round(removed, 6), "boilerplate_share": round(boiler / every, 6) if every else 0.0,
            "leak_by_category": {c: [cat_leak.get(c, 0), cat_total[c]] for c in sorted(cat_total)}
            | ({"other": [cat_leak["other"], 0]} if cat_leak.get("other") else {}),
            "worst": [{k: s[k] for k in ("id", "kind", "sentences", "sentences_kept", "leak_chars",
                                          "boilerplate_chars")} | {"lost_example": s["lost"][:1]} for s in worst]}


def run_form(form: str, reports: Path, work: Path, truths: list[dict[str, Any]]) -> dict[str, Any]:
    out = work / f"build-{form}"
    rc, err, secs = build(reports / form, out)
    if rc != 0:
        err = err.replace(str(reports), "DIR")  # the temporary path means nothing in eval/README
        return {"status": "not supported", "reason": f"`fincprg build` exited {rc}: {err}", "build_s": secs}
    kept = kept_texts(out)
    stats = json.loads((out / "chunk" / "manifest.json").read_text(encoding="utf-8")).get("counts", {})
    scores = [score_report(kept.get(t["id"], ""), t) for t in truths]
    with open(work / f"scores-{form}.jsonl", "w", encoding="utf-8") as f:  # per report, to see what was lost
        for sc in scores:
            f.write(json.dumps(sc, ensure_ascii=False) + "\n")
    res = aggregate(scores, truths)
    res.update(status="ok", build_s=secs, passages=stats.get("passages"),
               chunk_removed_share=stats.get("removed_share"),
               reports_with_passages=sum(1 for t in truths if kept.get(t["id"])))
    return res


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _met(ok: bool) -> str:
    return "met" if ok else "**not met**"


def render(result: dict[str, Any]) -> str:
    m = result["meta"]
    lines = [
        "## Full-length reports: cleaning as PDF, flattened and hard-wrapped text (`eval/bench_fulllength.py`)", "",
        f"Measured {m['date']} at commit {m['commit']} on {m['machine']}. {m['n']} generated reports "
        f"(`python -m eval._fullreports --n {m['n']} --seed {m['seed']} --source {m['source']}`: "
        f"{m['company']} company, {m['n'] - m['company']} industry/weekly/strategy; {m['pages']} pages each; bodies: "
        f"{m['source_note']}), each form built with `fincprg build DIR/<form> -o OUT --upto chunk -q` (default "
        "config). Body sentences kept: text found in the report's joined passages (no whitespace, full-width ASCII "
        "folded). Boilerplate kept: what remains of the passages after every body sentence, the title and the "
        "headings are cut out, over the truth's boilerplate characters (non-space). Targets: >= 98% body, <= 1% "
        "boilerplate, removed share within 5 points of the boilerplate share.", "",
        "| form | status | reports with passages | passages | body sentences kept | boilerplate chars kept "
        "| removed share | boilerplate share | gap | build s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for form, r in result["forms"].items():
        if r["status"] != "ok":
            lines.append(f"| {form} | not supported: {r['reason']} | – | – | – | – | – | – | – | {r['build_s']} |")
            continue
        gap = r["removed_share"] - r["boilerplate_share"]
        lines.append(f"| {form} | ok | {r['reports_with_passages']}/{r['reports']} | {r['passages']} | "
                     f"{_pct(r['body_kept'])} | {_pct(r['boilerplate_kept'])} | {_pct(r['removed_share'])} | "
                     f"{_pct(r['boilerplate_share'])} | {100 * gap:+.1f} pt | {r['build_s']} |")
    lines.append("")
    for form, r in result["forms"].items():
        if r["status"] == "ok":
            gap = abs(r["removed_share"] - r["boilerplate_share"])
            lines.append(f"- **{form}**: body >= 98%: {_met(r['body_kept'] >= TARGET_BODY)}; boilerplate <= 1%: "
                         f"{_met(r['boilerplate_kept'] <= TARGET_LEAK)}; removed within 5 pt: "
                         f"{_met(gap <= TARGET_GAP)}")
        else:
            lines.append(f"- **{form}**: not supported (no target met)")
    lines += _category_table(result)
    lines += _worst(result)
    return "\n".join(lines)


def _category_table(result: dict[str, Any]) -> list[str]:
    ok = {f: r for f, r in result["forms"].items() if r["status"] == "ok"}
    if not ok:
        return []
    cats = sorted({c for r in ok.values() for c in r["leak_by_category"]})
    out = ["", "Boilerplate kept by category (characters kept / characters in the reports):", "",
           "| category | " + " | ".join(ok) + " |", "|---|" + "---:|" * len(ok)]
    for c in cats:
        cells = []
        for r in ok.values():
            kept, total = r["leak_by_category"].get(c, [0, 0])
            cells.append(f"{kept} / {total}" + (f" ({100 * kept / total:.1f}%)" if total else ""))
        out.append(f"| {c} | " + " | ".join(cells) + " |")
    return out


def _worst(result: dict[str, Any]) -> list[str]:
    out = []
    for form, r in result["forms"].items():
        if r["status"] != "ok":
            continue
        items = [f"{w['id']} ({w['kind']}): {w['sentences_kept']}/{w['sentences']} sentences, "
                 f"{w['leak_chars']}/{w['boilerplate_chars']} boilerplate chars kept" for w in r["worst"]]
        out += ["", f"Worst reports, {form}: " + "; ".join(items) + "."]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--source", choices=("cfb", "sample"), default="cfb")
    ap.add_argument("--forms", default=",".join(FORMS))
    ap.add_argument("--reports", type=Path, help="reuse reports generated earlier (DIR with truth.jsonl)")
    ap.add_argument("--work", type=Path, help="keep builds here (default: a temporary folder)")
    ap.add_argument("--record", action="store_true", help="write the section into eval/README.md")
    a = ap.parse_args(argv)
    from eval import _fullreports as G
    from eval._fullreports_bodies import shared_available

    if a.source == "cfb" and a.reports is None and not shared_available():
        print("skipped: --source cfb needs ../shared/data/reports/cfbenchmark_reports.jsonl; use --source sample")
        return 0
    work = a.work or Path(tempfile.mkdtemp(prefix="bench_fulllength_"))
    reports = a.reports or work / "reports"
    if a.reports is None:
        G.generate(reports, a.n, a.seed, a.source)
    truths = [json.loads(ln) for ln in (reports / "truth.jsonl").read_text(encoding="utf-8").splitlines()]
    forms = {f: run_form(f, reports, work, truths) for f in a.forms.split(",")}
    pages = [t["pages"] for t in truths]
    note = ("CFBenchmark report bodies and sector news, Apache-2.0, read from ../shared/data" if a.source == "cfb"
            else "datasets/sample (the team's own texts)")
    result = {"meta": {"date": dt.date.today().isoformat(), "commit": commit(), "n": len(truths), "seed": a.seed,
                       "source": a.source, "source_note": note, "company": sum(t["kind"] == "company" for t in truths),
                       "pages": f"{min(pages)}-{max(pages)}",
                       "machine": f"{platform.machine()} CPU ({os.cpu_count()} cores)"}, "forms": forms}
    return finish(work, result, render(result), SECTION, write=a.record)


if __name__ == "__main__":
    sys.exit(main())
