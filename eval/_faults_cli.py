"""bench_faults section ``cli-hardening`` (issue 21): help piped, `--version`, `fincprg eval` with a failing
retriever, and `fincprg train` pre-checks, each through the real CLI in a subprocess.

A dataset is built from datasets/sample with bench_faults' ``cli_build``; the train cases use a 1-layer
BERT written here whose 32 token positions are fewer than the default ``--max-seq-length`` (256) and
than the sample's passages. Every case records its exit code against the one wanted, tracebacks
("Traceback" in stderr) and what it checks besides; a case passes when all of that holds.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
POSITIONS = 32
TRAIN = ["--loss", "cosent", "--max-pairs", "16", "--batch-size", "8", "--eval", "no", "-q"]


def _cli(*args: str, timeout: int = 900) -> tuple[subprocess.CompletedProcess, float]:
    env = {**{k: v for k, v in os.environ.items() if k != "FINCPRG_KILL_AFTER"}, "HF_HUB_OFFLINE": "1"}
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "fincprg", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return r, time.perf_counter() - t0


def _tiny_model(folder: Path, dataset: Path) -> Path:
    """A 1-layer BERT with every character of the dataset in its vocabulary and POSITIONS positions."""
    from transformers import BertConfig, BertModel, BertTokenizer

    chars = sorted({c for name in ("corpus.jsonl", "queries.jsonl")
                    for line in (dataset / name).read_text("utf-8").splitlines()
                    for c in json.loads(line)["text"] + json.loads(line).get("title", "") if not c.isspace()})
    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars]) + "\n", "utf-8")
    tok = BertTokenizer.from_pretrained(str(folder))
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=POSITIONS)).save_pretrained(str(folder))
    tok.save_pretrained(str(folder))
    return folder


def _commands() -> list[list[str]]:
    from typer.main import get_command

    from fincprg.cli import app

    paths: list[list[str]] = []

    def walk(cmd: Any, path: list[str]) -> None:
        paths.append(path)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return paths


def _row(case: str, r: subprocess.CompletedProcess, secs: float, want_rc: int, checks: dict[str, bool],
         lost: int | None = None) -> dict[str, Any]:
    tb = int("Traceback" in r.stderr + r.stdout)
    return {"case": case, "rc": r.returncode, "want_rc": want_rc, "tracebacks": tb, "lost": lost,
            "seconds": round(secs, 1), "checks": checks,
            "ok": r.returncode == want_rc and not tb and all(checks.values()) and not lost}


def run(work: Path) -> dict[str, Any]:
    from eval._faults_common import BASE, cli_build

    rows: list[dict[str, Any]] = []

    # help piped into a file, as in CI logs: nothing cut ("…"), no rich boxes 80 columns wide
    cut, tbs, rcs, t0 = 0, 0, [], time.perf_counter()
    for path in _commands():
        r, _ = _cli(*path, "--help")
        cut += r.stdout.count("…")
        tbs += "Traceback" in r.stderr
        rcs.append(r.returncode)
    n = len(rcs)
    rows.append({"case": f"`--help` piped, {n} commands", "rc": max(rcs), "want_rc": 0, "tracebacks": tbs,
                 "lost": None, "seconds": round(time.perf_counter() - t0, 1),
                 "checks": {f"{cut} places cut with \"…\"": cut == 0}, "ok": max(rcs) == 0 and not tbs and not cut})
    from fincprg.version import __version__

    r, s = _cli("--version")
    rows.append(_row("`--version`", r, s, 0, {"prints the version": r.stdout.strip() == f"fincprg {__version__}"}))

    build = work / "build"
    b = cli_build(build, [*BASE])
    assert b.returncode == 0, b.stderr
    dataset = build / "dataset"

    # eval: one retriever fails to load; the other's results must still be printed and written
    ev = work / "eval"
    r, s = _cli("eval", str(dataset), "-r", "bm25", "-r", f"dense:{work / 'no-such-model'}", "-o", str(ev))
    subsets = len([f for f in (dataset / "qrels").glob("*-test.tsv") if len(f.read_text("utf-8").splitlines()) > 1])
    written = [x for x in csv.DictReader(open(ev / "results.csv", encoding="utf-8"))] if (ev / "results.csv").exists() \
        else []
    rows.append(_row("`eval -r bm25 -r dense:MISSING`", r, s, 1, {
        "stdout is the markdown only": r.stdout.startswith("Dataset: ") and "INFO" not in r.stdout,
        "says which failed": "1 retriever(s) failed: dense:" in r.stderr},
        lost=subsets - sum(x["retriever"] == "bm25" for x in written)))

    model = _tiny_model(work / "tiny", dataset)
    # default --max-seq-length 256 with a 32-position model (was: a tensor-size traceback in the first batch)
    r, s = _cli("train", str(dataset), "-m", str(model), "-o", str(work / "t1"), *TRAIN, "--no-compare")
    rows.append(_row(f"`train` a {POSITIONS}-position model at the default --max-seq-length", r, s, 0, {
        "warns": "longer than" in r.stderr, "says the length used": f"trained with {POSITIONS} tokens" in r.stdout}))

    # -o is a file (was: refused only after loading the data and the model)
    (work / "afile").write_text("x")
    r, s = _cli("train", str(dataset), "-m", str(model), "-o", str(work / "afile"), *TRAIN)
    rows.append(_row("`train -o FILE`", r, s, 2, {"says -o is a file": "is a file" in r.stderr,
                                                 "before loading anything (< 5 s)": s < 5}))

    # --subset topic without topic test queries (was: `Δ +nan`; a missing file: exit 2 after training)
    for how in ("header only", "no file"):
        ds = work / f"ds-{how.replace(' ', '-')}"
        shutil.copytree(dataset, ds)
        qrels = ds / "qrels" / "topic-test.tsv"
        if how == "no file":
            qrels.unlink(missing_ok=True)
        else:
            qrels.write_text("query-id\tcorpus-id\tscore\n", encoding="utf-8")
        r, s = _cli("train", str(ds), "-m", str(model), "-o", str(work / f"t-{how[:2]}"), "-s", "topic", *TRAIN,
                    "--max-seq-length", str(POSITIONS))
        rows.append(_row(f"`train -s topic`, topic test qrels: {how}", r, s, 0, {
            "says no test queries": "| no test queries |" in r.stdout, "no nan": "nan" not in r.stdout.lower()}))
    for row in rows:
        print(row, flush=True)
    return {"rows": rows}


def render(result: dict[str, Any]) -> str:
    rows = result["rows"]
    out = ["### CLI and train pre-checks", "",
           f"{sum(r['ok'] for r in rows)} of {len(rows)} cases pass; tracebacks: {sum(r['tracebacks'] for r in rows)}; "
           f"records lost: {sum(r['lost'] or 0 for r in rows)}. Each case is the real CLI in a subprocess; the train "
           f"cases use a 1-layer BERT with {POSITIONS} token positions on the sample dataset.", "",
           "| case | exit code (wanted) | tracebacks | lost | seconds | checks |", "|---|---|---:|---:|---:|---|"]
    out += [f"| {r['case']} | {r['rc']} ({r['want_rc']}) | {r['tracebacks']} | "
            f"{'–' if r['lost'] is None else r['lost']} | {r['seconds']} | "
            + "; ".join(f"{k}: {'yes' if ok else '**no**'}" for k, ok in r["checks"].items()) + " |" for r in rows]
    return "\n".join([*out, ""])
