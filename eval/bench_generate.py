"""Benchmark: passages per second of the offline template generator (TemplateGenerator).

Run: ``.venv/bin/python eval/bench_generate.py [--runs 3] [--templates OLD_templates.py] [--no-readme]``

Corpora: datasets/sample (31 fictional reports) and, when ../shared/data is present, the 200 AlphaFin
reports (../shared/data/reports/alphafin_reports.json; skipped with a message otherwise). Each is run
through ingest + chunk once (not timed); then ``TemplateGenerator.generate`` runs over all passages
``--runs`` times. Before each run every memo (finance.extract, the tokenizer's cut cache, the
generator's own caches) is cleared, so a run costs what a fresh corpus of unseen passages costs; the
one-off start-up (jieba dictionary, IDF table) is paid before the first run and reported apart.
Rates use CPU time of this process (the 2-core box is shared, wall time is noisy); the median of the
runs is quoted. ``--templates`` loads another copy of fincprg/generate/templates.py (e.g. from
``git show REV:fincprg/generate/templates.py``) to measure a before/after pair on the same inputs.

Results replace the ``<!-- generate-speed:start -->`` … ``<!-- generate-speed:end -->`` section of
eval/README.md.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

from fincprg.ingest.public import alphafin_to_jsonl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
ALPHAFIN = DATA / "reports" / "alphafin_reports.json"
SAMPLE = ROOT / "datasets" / "sample" / "reports.jsonl"
README = ROOT / "eval" / "README.md"
START, END = "<!-- generate-speed:start -->", "<!-- generate-speed:end -->"


def load_items(corpus: Path, work: Path) -> list[Any]:
    """Ingest + chunk ``corpus`` and return the generate stage's PassageInputs."""
    from fincprg.config import load_config
    from fincprg.finance import register_companies
    from fincprg.generate.base import PassageInput
    from fincprg.pipeline.runner import run_pipeline
    from fincprg.records import Passage, Report, Sentence

    run_pipeline(corpus, work, load_config(None), upto="chunk", show_progress=False)
    read = lambda p, m: [m.model_validate_json(x) for x in p.read_text(encoding="utf-8").splitlines() if x]  # noqa: E731
    reports = {r.id: r for r in read(work / "ingest" / "reports.jsonl", Report)}
    sents: dict[str, list[Sentence]] = defaultdict(list)
    for s in read(work / "chunk" / "sentences.jsonl", Sentence):
        sents[s.passage_id].append(s)
    register_companies(reports.values())
    return [PassageInput(reports[p.report_id], p, tuple(sorted(sents[p.id], key=lambda s: s.order)))
            for p in read(work / "chunk" / "passages.jsonl", Passage)]


def templates_module(path: str | None) -> ModuleType:
    if not path:
        import fincprg.generate.templates as mod

        return mod
    spec = importlib.util.spec_from_file_location("bench_templates_alt", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def clear_memos(mod: ModuleType) -> None:
    """Forget every memoised extract/tokenize/template result (the IDF table stays loaded)."""
    from fincprg.finance import extract, lexicon

    extract.cache_clear()
    lexicon._cut.cache_clear()
    for name in dir(mod):
        fn = getattr(mod, name)
        if name != "_idf_table" and callable(getattr(fn, "cache_clear", None)):
            fn.cache_clear()


def bench(items: list[Any], mod: ModuleType, runs: int) -> dict[str, Any]:
    from fincprg.finance import tokenize

    t = time.perf_counter()
    tokenize("启动")  # jieba dictionary
    if hasattr(mod, "_idf_table"):
        mod._idf_table()
    startup = time.perf_counter() - t
    gen = mod.TemplateGenerator()
    rates, walls, out = [], [], None
    for _ in range(runs):
        clear_memos(mod)
        c, w = time.process_time(), time.perf_counter()
        out = gen.generate(items)
        rates.append(len(items) / (time.process_time() - c))
        walls.append(len(items) / (time.perf_counter() - w))
    digest = json.dumps([repr(x) for x in out or []], ensure_ascii=False)
    import hashlib

    return {"passages": len(items), "sentences": sum(len(i.sentences) for i in items), "runs": runs,
            "rates": [round(r, 1) for r in rates], "median": round(statistics.median(rates), 1),
            "median_wall": round(statistics.median(walls), 1), "startup_s": round(startup, 2),
            "output_md5": hashlib.md5(digest.encode("utf-8")).hexdigest()[:12]}


def write_readme(results: dict[str, Any], args: argparse.Namespace) -> None:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=False).stdout.strip() or "?"
    except OSError:
        commit = "?"
    lines = [START, "## Template generator speed (`eval/bench_generate.py`)", "",
             f"Measured {time.strftime('%Y-%m-%d')} at commit {commit} on {platform.machine()} "
             f"({platform.python_version()}), CPU time of one process, median of {args.runs} runs, "
             "every memo cleared before each run (fresh passages); start-up (jieba dictionary + IDF "
             "table) is paid once per process and listed apart.", "",
             "| corpus | passages | sentences | passages/s (CPU, median) | passages/s (wall) | runs | start-up s |",
             "|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        if "skipped" in r:
            lines.append(f"| {name} | – | – | skipped: {r['skipped']} | – | – | – |")
        else:
            lines.append(f"| {name} | {r['passages']} | {r['sentences']} | {r['median']} | {r['median_wall']} | "
                         f"{', '.join(map(str, r['rates']))} | {r['startup_s']} |")
    lines += ["", *NOTES, END]
    block = "\n".join(lines)
    text = README.read_text(encoding="utf-8") if README.exists() else "# fincprg benchmarks and experiments\n"
    if START in text and END in text:
        text = text[:text.index(START)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


# Before/after figures of the speed-up (measured by hand with --templates on the old file).
NOTES = [
    "Before/after comparisons: run the script again with `--templates OLD_COPY_OF_templates.py`; the "
    "printed output_md5 shows whether the output changed. Start-up (jieba's dictionary and the IDF table, "
    "paid once per process) is reported separately as `startup_s`, so the per-passage rate is what a "
    "large corpus sees. Per passage the time goes to jieba and `fincprg.finance.extract`.",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--templates", help="another copy of fincprg/generate/templates.py to time instead")
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    args = ap.parse_args()
    mod = templates_module(args.templates)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        corpora = {"datasets/sample": SAMPLE}
        if ALPHAFIN.exists():
            corpora["AlphaFin (200 reports)"] = Path(tmp) / "alphafin.jsonl"
            alphafin_to_jsonl(ALPHAFIN, corpora["AlphaFin (200 reports)"])
        else:
            print(f"skipping AlphaFin: {ALPHAFIN} is absent")
            results["AlphaFin (200 reports)"] = {"skipped": "../shared/data absent"}
        for name, path in corpora.items():
            items = load_items(path, Path(tmp) / name.split()[0].replace("/", "_"))
            results[name] = bench(items, mod, args.runs)
            print(name, json.dumps(results[name], ensure_ascii=False))
    if not args.no_readme and not args.templates:
        write_readme(results, args)
        print(f"wrote the generate-speed section of {README}")


if __name__ == "__main__":
    main()
