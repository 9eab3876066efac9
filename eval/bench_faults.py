"""Benchmark: nothing lost, nothing corrupted, no traceback under kills, concurrent builds, bad input and LLM faults.

Run: ``.venv/bin/python eval/bench_faults.py [--sections kills,concurrent,bad-input,llm,...] [--no-readme]``

Every trial runs the real CLI (``python -m fincprg build``) in a subprocess on datasets/sample, with the
LLM backend against a local OpenAI-compatible server (``tests.llm_server``, in this process) where an
LLM is involved, so requests can be counted:

- **kills**: SIGKILL at 13 points across all six stages (``FINCPRG_KILL_AFTER``: ``stage:0`` = after the
  stage's files, before its manifest; ``chunk:N``/``generate:N``/``mine:N`` = after batch N's lines,
  before its commit; ``topics:1`` = after the clustering step), then a plain re-run. Pass: the dataset
  hash equals an uninterrupted build's, and the killed + resumed runs together sent exactly the
  reference's requests (0 repeated).
- **concurrent**: two builds started together into one OUT, with different configs; pass: one exits at
  once naming the other's pid, the other's dataset equals a clean build of its config, every JSONL
  line of every stage is whole.
- **bad-input** and **llm**: see their functions; **input-hardening**, **llm-hardening**, **fs-hardening**,
  **cli-hardening** and **misuse** (issue 41: a misbehaving server, a key inside answers, bad overrides, damaged
  checkpoints, corpus HTML in the card; issue 47: the nine defects of a blind probe, ``eval/_faults_probe.py``):
  see ``eval/_faults_*.py``.

Results replace the ``<!-- faults:start -->`` … ``<!-- faults:end -->`` section of eval/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval import _faults_cli  # noqa: E402
from eval import _faults_input  # noqa: E402
from eval import _faults_misuse  # noqa: E402
from eval import _faults_probe  # noqa: E402
from eval import _faults_fs  # noqa: E402
from eval._faults_common import (BASE, SAMPLE, cli_build, dataset_hash, llm_args,  # noqa: E402,F401
                                 torn_lines)
from eval._readme import commit, write_section  # noqa: E402
from fincprg import layout as L  # noqa: E402
from tests.llm_server import LocalLLMServer  # noqa: E402

KILLS = ["ingest:0", "chunk:1", "chunk:3", "chunk:0", "generate:1", "generate:4", "generate:0",
         "topics:1", "topics:0", "mine:1", "mine:3", "mine:0", "export:0"]


def _body(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages"), ensure_ascii=False, sort_keys=True)


def _cached_keys(out: Path) -> set[str]:
    """Keys of the answers in the build's LLM cache (``OUT/.cache/llm/responses.sqlite3``)."""
    import sqlite3

    db = out / L.CACHE_DIR / "llm" / "responses.sqlite3"
    if not db.is_file():
        return set()
    with sqlite3.connect(db) as con:
        return {k for (k,) in con.execute("SELECT key FROM responses")}


def _keys(keyer: Any, request: dict[str, Any]) -> set[str]:
    """The cache keys the client would give this request (with and without JSON mode)."""
    return {keyer.cache_key_for(request["messages"], json_mode=j) for j in (True, False)}


def kills(work: Path) -> dict[str, Any]:
    server = LocalLLMServer()
    try:
        sets = BASE + llm_args(server)
        from fincprg.config import load_config
        from fincprg.llm import LLMClient

        keyer = LLMClient(load_config(overrides=sets).llm, work / "keyer-cache")  # computes cache keys only
        ref = work / "ref"
        r = cli_build(ref, sets)
        assert r.returncode == 0, r.stderr
        want, ref_requests = dataset_hash(ref), len(server.requests)
        rows = []
        for point in KILLS:
            server.reset()
            out = work / f"kill-{point.replace(':', '-')}"
            t0 = time.perf_counter()
            killed = cli_build(out, sets, env={"FINCPRG_KILL_AFTER": point})
            # a request the killed run sent whose answer is not in the cache was in flight when the process
            # died: its answer died with it, and the resumed run must ask again
            answered = _cached_keys(out)
            n_killed = len(server.requests)
            in_flight = len({_body(q) for q in server.requests}) - len(answered)
            resumed = cli_build(out, sets)
            sent = [_body(q) for q in server.requests]
            again = server.requests[n_killed:]
            rows.append({"point": point, "killed": killed.returncode == -9, "resumed_rc": resumed.returncode,
                         "identical": dataset_hash(out) == want, "requests": len(sent),
                         "repeated": sum(n - 1 for n in Counter(sent).values()), "in_flight": in_flight,
                         # asked again although the killed run had its answer: the number that must be 0
                         "answered_repeated": sum(bool(_keys(keyer, q) & answered) for q in again),
                         "traceback": "Traceback" in killed.stderr + resumed.stderr,
                         "seconds": round(time.perf_counter() - t0, 1)})
            print(rows[-1], flush=True)
            shutil.rmtree(out)
        return {"reference_requests": ref_requests, "rows": rows}
    finally:
        server.close()


def concurrent(work: Path, trials: int = 10) -> dict[str, Any]:
    """Two builds into one OUT at once (a double-click): one must refuse, the other must be whole."""
    configs = {"a": BASE, "b": [*BASE, "export.test_fraction=0.3"]}
    want = {}
    for name, sets in configs.items():
        r = cli_build(work / f"clean-{name}", sets)
        assert r.returncode == 0, r.stderr
        want[name] = dataset_hash(work / f"clean-{name}")
    rows = []
    for t in range(trials):
        out = work / f"concurrent-{t}"
        env = {**os.environ, "OPENAI_API_KEY": "bench-key", "HF_HUB_OFFLINE": "1"}
        procs = {}
        for name, sets in configs.items():
            cmd = [sys.executable, "-m", "fincprg", "build", str(SAMPLE), "-o", str(out), "-q"]
            for s in sets:
                cmd += ["--set", s]
            procs[name] = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True)
        res = {name: (p.wait(timeout=900), p.stderr.read()) for name, p in procs.items()}
        winners = [n for n, (rc, _) in res.items() if rc == 0]
        refused = [n for n, (rc, err) in res.items() if rc == 2 and "being written by another fincprg build" in err]
        whole = len(winners) == 1 and dataset_hash(out) == want[winners[0]] and torn_lines(out) == 0
        rows.append({"trial": t, "winner": winners, "refused": refused, "corrupted": not whole,
                     "traceback": any("Traceback" in err for _, err in res.values())})
        print(rows[-1], flush=True)
        shutil.rmtree(out)
    return {"rows": rows}


def bad_input(work: Path) -> dict[str, Any]:
    """A corpus of one good report per kind of bad record: every bad one is a recorded rejection."""
    good = json.loads((SAMPLE / "reports.jsonl").read_text(encoding="utf-8").splitlines()[0])
    deep = "[" * 100_000 + "]" * 100_000
    bad = {  # name -> one raw JSONL line
        "date Infinity": json.dumps({**good, "id": "b1"}, ensure_ascii=False).replace(f'"{good["date"]}"', "Infinity"),
        "date -Infinity": json.dumps({**good, "id": "b2"}, ensure_ascii=False).replace(f'"{good["date"]}"', "-Infinity"),
        "date 1e999": json.dumps({**good, "id": "b3"}, ensure_ascii=False).replace(f'"{good["date"]}"', "1e999"),
        "100k-deep JSON": '{"id": "b4", "text": ' + deep + "}",
        "not JSON": "{this is not json",
        "no text": json.dumps({"id": "b5", "title": "空报告"}, ensure_ascii=False),
        "text is a list": json.dumps({"id": "b6", "text": ["a", "b"]}, ensure_ascii=False),
        "duplicate id": json.dumps(good, ensure_ascii=False),
        "id with a tab": json.dumps({**good, "id": "b\t7"}, ensure_ascii=False),
        "lone surrogate": '{"id": "b8", "text": "\\ud800 公司营收增长"}',
        "bare text (no title, no date)": json.dumps({"id": "b9", "text": good["text"]}, ensure_ascii=False),
    }
    corpus = work / "bad.jsonl"
    corpus.write_text("\n".join([json.dumps(good, ensure_ascii=False), *bad.values()]) + "\n", encoding="utf-8")
    out = work / "out"
    r = cli_build(out, [*BASE], corpus=corpus)
    rejected = [json.loads(x) for x in L.Build(out).path(L.INGEST, L.REJECTED).read_text("utf-8").splitlines() if x]
    reports = [json.loads(x) for x in L.Build(out).path(L.INGEST, L.REPORTS).read_text("utf-8").splitlines() if x]
    lines = 1 + len(bad)
    md = ["### Bad input", "",
          f"One good report and {len(bad)} bad or unusual records in one JSONL file: exit code {r.returncode}, "
          f"tracebacks {int('Traceback' in r.stderr)}, {len(reports)} reports kept + {len(rejected)} rejections "
          f"recorded = {len(reports) + len(rejected)} of {lines} input lines.", "",
          "| record | outcome |", "|---|---|"]
    by_source = {int(x["source"].rsplit(":", 1)[1]): f"rejected: `{x['reason']}`" for x in rejected}
    by_source |= {int(x["source"].rsplit(":", 1)[1]): "kept" for x in reports}
    md += [f"| {name} | {by_source.get(i, '**lost**')} |" for i, name in enumerate(bad, 2)]
    return {"markdown": [*md, ""], "returncode": r.returncode, "lost": lines - len(reports) - len(rejected)}


def llm_faults(work: Path, rate: float = 0.3) -> dict[str, Any]:
    """30% of LLM requests fail (429, 500, timeouts, truncated, prose, misaligned); --retry-failed until none
    is left; then the dataset must equal a fault-free build's."""
    from tests.llm_faults import FaultInjector

    server = LocalLLMServer()
    try:
        sets = [*BASE, *llm_args(server), "llm.timeout=1.0", "llm.max_retries=2"]
        ref = work / "ref"
        assert cli_build(ref, sets).returncode == 0
        faults = FaultInjector(rate=rate, seed=0, timeout_s=2.0, heal_after=1)
        server.set_responder(faults)
        server.reset()
        out = work / "faulty"
        runs = [cli_build(out, sets)]
        while runs[-1].returncode == 0 and _retryable(out) and len(runs) < 5:
            runs.append(cli_build(out, sets, extra=("--retry-failed",)))
        gen = L.Build(out).manifest(L.GENERATE) or {}
        ref_items = (L.Build(ref).manifest(L.GENERATE) or {}).get("counts", {})
        lost = ref_items.get("passages", 0) - gen.get("counts", {}).get("passages", 0)
        identical = dataset_hash(out) == dataset_hash(ref)
        md = ["### LLM faults", "",
              f"{rate:.0%} of first attempts fail ({', '.join(f'{k} {n}' for k, n in sorted(faults.counts.items()))}); "
              f"`llm.max_retries=2`, `llm.timeout=1.0`; a fault heals after one attempt. Runs: 1 build + "
              f"{len(runs) - 1} `--retry-failed`; exit codes {[r.returncode for r in runs]}; tracebacks "
              f"{sum('Traceback' in r.stderr for r in runs)}. Retryable failures left: {_retryable(out)}; passages "
              f"lost: {lost}; dataset equal to the fault-free build's: {'yes' if identical else '**no**'}.", ""]
        return {"markdown": md, "identical": identical}
    finally:
        server.close()


def _retryable(out: Path) -> int:
    build = L.Build(out)
    return sum((build.manifest(s) or {}).get("counts", {}).get("retryable_failures", 0) for s in (L.GENERATE, L.TOPICS))


def render(results: dict[str, Any], secs: float) -> str:
    out = ["## Faults, kills and concurrent builds (`eval/bench_faults.py`)", "",
           f"Measured {time.strftime('%Y-%m-%d')} at commit {commit()} on 2 CPU cores, {secs:.0f} s in all. "
           "Every trial is the real CLI in a subprocess on datasets/sample.", ""]
    if "kills" in results:
        k = results["kills"]
        rows = k["rows"]
        ok = sum(r["killed"] and r["resumed_rc"] == 0 and r["identical"] for r in rows)
        out += ["### kill -9 and resume", "",
                f"LLM backend (generate and topic intents) against the local test server; the uninterrupted "
                f"reference build sent {k['reference_requests']} requests. {ok} of {len(rows)} kill points resumed "
                f"to the reference dataset hash; answered requests asked again: "
                f"{sum(r['answered_repeated'] for r in rows)}; requests in flight at the kill: "
                f"{sum(r['in_flight'] for r in rows)}; tracebacks: {sum(r['traceback'] for r in rows)}.", "",
                "A request counts as answered when its answer is in the build's LLM cache after the kill (checked "
                "by cache key for every request the resumed run sent). Requests "
                "stream across batch boundaries (issue 13), so a kill in generate finds up to `llm.concurrency` "
                "requests in flight; their answers die with the process and are asked again"
                + (". No answered request was asked twice." if not any(r["answered_repeated"] for r in rows)
                   else "; **some answered requests were asked again** (last column)."), "",
                "| kill point | killed | resumed exit | same dataset hash | requests (killed + resumed) | "
                "in flight at the kill | answered, asked again |",
                "|---|---|---:|---|---:|---:|---:|"]
        out += [f"| `{r['point']}` | {'yes' if r['killed'] else 'no'} | {r['resumed_rc']} | "
                f"{'yes' if r['identical'] else '**no**'} | {r['requests']} | {r['in_flight']} | "
                f"{r['answered_repeated']} |" for r in rows]
        out.append("")
    if "concurrent" in results:
        rows = results["concurrent"]["rows"]
        out += ["### Two builds into one OUT", "",
                f"{len(rows)} trials, two configs started together: {sum(len(r['refused']) == 1 for r in rows)} "
                f"refused one build at once (exit 2, naming the holder's pid); corrupted outputs: "
                f"{sum(r['corrupted'] for r in rows)}; tracebacks: {sum(r['traceback'] for r in rows)}. "
                "A trial counts as corrupted unless the surviving build's dataset equals a clean build of its "
                "config and every JSONL line of every stage folder is whole.", ""]
    for name in ("bad-input", "llm"):
        if name in results:
            out += results[name]["markdown"]
    if "input-hardening" in results:
        out.append(_faults_input.render(results["input-hardening"]))
    if "llm-hardening" in results:
        from eval import _faults_llm

        out.append(_faults_llm.render(results["llm-hardening"]))
    if "fs-hardening" in results:
        out.append(_faults_fs.render(results["fs-hardening"]))
    if "cli-hardening" in results:
        out.append(_faults_cli.render(results["cli-hardening"]))
    if "misuse" in results:
        out.append(_faults_misuse.render(results["misuse"]))
    return "\n".join(out)


SECTIONS = {"kills": kills, "concurrent": concurrent, "bad-input": bad_input, "llm": llm_faults,
            "input-hardening": _faults_input.run,
            "llm-hardening": lambda work: __import__("eval._faults_llm", fromlist=["run"]).run(work),
            "fs-hardening": _faults_fs.run, "cli-hardening": _faults_cli.run, "misuse": lambda work: misuse(work)}


def misuse(work: Path) -> dict[str, Any]:
    """Issue 41's misuse rows, then issue 47's probe rows (eval/_faults_probe.py), rendered as one table."""
    result = _faults_misuse.run(work / "41")
    result["rows"] += _faults_probe.run(work / "47")
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated: {', '.join(SECTIONS)}")
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    args = ap.parse_args()
    t0 = time.perf_counter()
    results = {}
    with tempfile.TemporaryDirectory(prefix="fincprg-faults-") as tmp:
        for name in args.sections.split(","):
            work = Path(tmp) / name
            work.mkdir()
            results[name] = SECTIONS[name](work)
    text = render(results, time.perf_counter() - t0)
    print("\n" + text)
    if not args.no_readme:
        write_section("faults", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
