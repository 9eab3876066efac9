"""bench_faults section ``misuse`` (issue 41): a misbehaving LLM server, a key inside answers, bad overrides, a
damaged checkpoint, corpus HTML in the card, a kill during a re-export and a model path that is a file.

Every case is the real CLI in a subprocess on datasets/sample. The LLM cases run against the local test server
with the key ``SECRET`` in ``OPENAI_API_KEY``; after a fault the server is healed and the same command runs again
(then ``--retry-failed`` while failures are left), and the dataset must equal a fault-free build's. Each case
counts: exit code against the one wanted, tracebacks, files under OUT (the LLM cache included) and terminal
output holding the key, records lost, and its own checks; a case passes when all of them hold.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fincprg import layout as L  # noqa: E402
from tests.llm_faults import EchoKeyInAnswer, html_page, status_everywhere  # noqa: E402
from tests.llm_server import LocalLLMServer  # noqa: E402

SECRET = "sk-bench-misuse-5b0c1e7a9f3d4e21-do-not-leak"
HOSTILE = '<script>alert("co")</script>'
DATASET = L.STAGE_DIRS[L.EXPORT]


def _files_with(root: Path, needle: str) -> list[str]:
    raw = needle.encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and raw in p.read_bytes())


def _error_lines(r: subprocess.CompletedProcess) -> list[str]:
    return [x for x in r.stderr.splitlines() if x.startswith("error:")]


def _error_text(r: subprocess.CompletedProcess) -> str:
    """The error line, with the line after it when it only opens a list (a config error's dotted path)."""
    lines = r.stderr.splitlines()
    at = [i for i, x in enumerate(lines) if x.startswith("error:")]
    if not at:
        return ""
    text = lines[at[-1]] + (" " + lines[at[-1] + 1].strip() if lines[at[-1]].endswith(":") and
                            at[-1] + 1 < len(lines) else "")
    return text[:240]


def _row(case: str, runs: list[subprocess.CompletedProcess], want_rc: int, secs: float, checks: dict[str, bool], *,
         out: Path | None = None, identical: bool | None = None, lost: int | None = None) -> dict[str, Any]:
    said = "".join(r.stdout + r.stderr for r in runs)
    keys_disk = len(_files_with(out, SECRET)) if out is not None and out.exists() else 0
    row = {"case": case, "rc": [r.returncode for r in runs], "want_rc": want_rc,
           "tracebacks": sum("Traceback" in r.stdout + r.stderr for r in runs),
           "keys_disk": keys_disk, "keys_terminal": said.count(SECRET), "lost": lost, "identical": identical,
           "seconds": round(secs, 1), "checks": checks,
           "error": _error_text(runs[0])}
    row["ok"] = (runs[0].returncode == want_rc and not row["tracebacks"] and not keys_disk and not row["keys_terminal"]
                 and not lost and identical is not False and all(checks.values()))
    print(row, flush=True)
    return row


def _cli(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k != "FINCPRG_KILL_AFTER"}, "HF_HUB_OFFLINE": "1",
           "OPENAI_API_KEY": SECRET}
    return subprocess.run([sys.executable, "-m", "fincprg", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _retryable(out: Path) -> int:
    build = L.Build(out)
    return sum((build.manifest(s) or {}).get("counts", {}).get("retryable_failures", 0)
               for s in (L.GENERATE, L.TOPICS))


def server_cases(work: Path) -> list[dict[str, Any]]:
    from eval._faults_common import BASE, cli_build, dataset_hash, llm_args

    rows: list[dict[str, Any]] = []
    server = LocalLLMServer()
    try:
        sets = [*BASE, *llm_args(server), "llm.max_retries=1"]
        env = {"OPENAI_API_KEY": SECRET}
        ref = work / "ref"
        assert cli_build(ref, sets, env=env).returncode == 0
        want, passages = dataset_hash(ref), (L.Build(ref).manifest(L.GENERATE) or {}).get("counts", {}).get("passages")
        faults: dict[str, Callable[[dict[str, Any]], Any]] = {
            "HTML page with HTTP 200 on every request": html_page(200),
            "HTML page with HTTP 502 on every request": html_page(502),
            "HTTP 500 on every request": status_everywhere(500),
            "HTTP 429 on every request": status_everywhere(429),
        }
        for name, responder in faults.items():
            out = work / f"srv-{len(rows)}"
            server.set_responder(responder)
            server.reset()
            t0 = time.perf_counter()
            faulty = cli_build(out, sets, env=env)
            sent = len(server.requests)
            server.set_responder(None)
            runs = [faulty, cli_build(out, sets, env=env)]
            while runs[-1].returncode == 0 and _retryable(out) and len(runs) < 5:
                runs.append(cli_build(out, sets, env=env, extra=("--retry-failed",)))
            got = (L.Build(out).manifest(L.GENERATE) or {}).get("counts", {}).get("passages")
            errs = _error_lines(faulty)
            rows.append(_row(name, runs, 2, time.perf_counter() - t0, {
                "one error line": len(errs) == 1, "names the server": bool(errs) and server.base_url in errs[0],
                # 8 failures in a row, plus those in flight (llm.concurrency 4), each tried twice (llm.max_retries=1)
                f"stopped early: {sent} attempts (limit (8 + 4) x 2)": sent <= (8 + 4) * 2},
                out=out, identical=dataset_hash(out) == want, lost=(passages or 0) - (got or 0)))
            shutil.rmtree(out)
        # the key, and a token shaped like one, inside the answers' text
        out = work / "echo"
        server.set_responder(EchoKeyInAnswer())
        t0 = time.perf_counter()
        r = cli_build(out, sets, env=env)
        rows.append(_row("answers echo the key (and an sk-… token) into the queries", [r], 0,
                         time.perf_counter() - t0, {
                             "other key shape on disk: 0": not _files_with(out, EchoKeyInAnswer.OTHER),
                             "masked queries exported": bool(_files_with(out / DATASET, "[REDACTED]"))}, out=out))
        # the same server through `estimate --probe` and `audit --judge llm`
        server.set_responder(html_page(200))
        t0 = time.perf_counter()
        flags = [a for s in sets for a in ("--set", s)]
        est = _cli("estimate", str(ROOT / "datasets" / "sample"), "-o", str(work / "est"), "--probe", "3", "-q",
                   *flags)
        rows.append(_row("`estimate --probe 3`, HTML page with HTTP 200", [est], 2, time.perf_counter() - t0, {
            "one error line": len(_error_lines(est)) == 1, "says not a chat completion": "chat completion" in est.stderr}))
        t0 = time.perf_counter()
        aud = _cli("audit", str(ref), "--judge", "llm", *flags)
        rows.append(_row("`audit --judge llm`, HTML page with HTTP 200", [aud], 2, time.perf_counter() - t0, {
            "one error line": len(_error_lines(aud)) == 1,
            "says not a chat completion": "chat completion" in aud.stderr}))
    finally:
        server.close()
    return rows


def config_cases(work: Path) -> list[dict[str, Any]]:
    rows = []
    pwned = work / "pwned"  # what the !!python tag would create if it were constructed
    for override in ("chunk.passage_chars=[unclosed", f"run.seed=!!python/object/apply:os.system [touch {pwned}]",
                     "run.seed=true", "llm.timeout=true", "export.test_fraction=true"):
        out = work / "cfg"
        t0 = time.perf_counter()
        r = _cli("build", str(ROOT / "datasets" / "sample"), "-o", str(out), "-q", "--set", override)
        key = override.split("=", 1)[0]
        rows.append(_row(f"`--set {override}`", [r], 2, time.perf_counter() - t0, {
            "one error line naming the key": len(_error_lines(r)) == 1 and key in r.stderr,
            "nothing written": not out.exists(), "nothing run": not pwned.exists()}))
        shutil.rmtree(out, ignore_errors=True)
    return rows


def card_case(work: Path) -> dict[str, Any]:
    from eval._faults_common import BASE, SAMPLE, cli_build

    rows = [json.loads(x) for x in (SAMPLE / "reports.jsonl").read_text("utf-8").splitlines() if x]
    for r in rows[:8]:
        r["company"] = HOSTILE
        r["title"] = "<img src=x onerror=alert(1)>" + r["title"]
    corpus = work / "hostile.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = work / "hostile"
    t0 = time.perf_counter()
    r = cli_build(out, [*BASE], corpus=corpus)
    cards = [out / DATASET / "README.md", out / DATASET / "hf" / "README.md"]
    raw = sum(p.read_text("utf-8").count("<script") + p.read_text("utf-8").count("<img") for p in cards if p.exists())
    shown = sum(p.read_text("utf-8").count("&lt;script&gt;") for p in cards if p.exists())
    return _row("corpus fields holding `<script>` / `<img onerror>`", [r], 0, time.perf_counter() - t0,
                {f"raw HTML in the two cards: {raw}": raw == 0, f"shown escaped: {shown} times": shown > 0})


def export_kill_case(work: Path) -> dict[str, Any]:
    from eval._faults_common import BASE, cli_build, dataset_hash

    out = work / "export-kill"
    t0 = time.perf_counter()
    first = cli_build(out, [*BASE])
    want = dataset_hash(out)
    # a re-export with another split fraction, killed after its files and before its manifest and swap
    killed = cli_build(out, [*BASE, "export.test_fraction=0.3"], env={"FINCPRG_KILL_AFTER": "export:0"})
    left_after_kill = (out / f".{DATASET}.new").exists()
    again = cli_build(out, [*BASE])  # the old config: export is complete, and skipped
    stale = sorted(p.name for p in out.iterdir() if p.name.startswith(f".{DATASET}."))
    return _row("kill -9 during a re-export, then the old config again", [again, first, killed], 0,
                time.perf_counter() - t0, {"the kill left .dataset.new": left_after_kill and killed.returncode == -9,
                                           f"leftovers after the re-run: {stale or 'none'}": not stale},
                out=out, identical=dataset_hash(out) == want)


def train_cases(work: Path) -> list[dict[str, Any]]:
    from eval._faults_cli import TRAIN, _tiny_model
    from eval._faults_common import BASE, cli_build

    build = work / "train-build"
    assert cli_build(build, [*BASE]).returncode == 0
    dataset = build / DATASET
    model = _tiny_model(work / "tiny", dataset)
    out = work / "trained"
    rows = []
    t0 = time.perf_counter()
    first = _cli("train", str(dataset), "-m", str(model), "-o", str(out), *TRAIN, "--no-compare", "--save-steps", "2",
                 "--max-seq-length", "32")
    cks = sorted((out / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name.rsplit("-", 1)[-1]))
    opt = cks[-1] / "optimizer.pt" if cks else out / "missing"
    if opt.exists():
        opt.write_bytes(opt.read_bytes()[: opt.stat().st_size // 2])
    r = _cli("train", str(dataset), "-m", str(model), "-o", str(out), *TRAIN, "--no-compare", "--save-steps", "2",
             "--max-seq-length", "32", "--resume")
    rows.append(_row("`train --resume`, the newest checkpoint's optimizer.pt cut in half", [r], 2,
                     time.perf_counter() - t0, {
                         "first run made checkpoints": first.returncode == 0 and len(cks) >= 1,
                         "names the file": str(opt) in r.stderr, "says the fix": "rm -r" in r.stderr}))
    weights = model / "model.safetensors"
    t0 = time.perf_counter()
    r = _cli("train", str(dataset), "-m", str(weights), "-o", str(work / "t-file"), *TRAIN, "--no-compare")
    rows.append(_row("`train -m FILE` (a weights file, not a folder)", [r], 2, time.perf_counter() - t0, {
        "says it is a file": "is a file, not a model folder" in r.stderr, "not called a folder": "is a folder" not in
        r.stderr}))
    return rows


def run(work: Path) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    rows = server_cases(work)
    rows += config_cases(work)
    rows.append(card_case(work))
    rows.append(export_kill_case(work))
    rows += train_cases(work)
    return {"rows": rows}


def render(result: dict[str, Any]) -> str:
    rows = result["rows"]
    md = ["### A misbehaving server, a key in an answer, bad overrides, damaged checkpoints, the card "
          "(`eval/_faults_misuse.py`)", "",
          f"{sum(r['ok'] for r in rows)} of {len(rows)} cases pass; tracebacks: {sum(r['tracebacks'] for r in rows)}; "
          f"files holding the key (the whole OUT, the LLM cache included): {sum(r['keys_disk'] for r in rows)}; "
          f"key on the terminal: {sum(r['keys_terminal'] for r in rows)}; records lost: "
          f"{sum(r['lost'] or 0 for r in rows)}; dataset equal to a fault-free build's after the re-run: "
          f"{sum(r['identical'] is True for r in rows)} of {sum(r['identical'] is not None for r in rows)}. "
          "Server faults: `generate` and topic intents on the LLM backend, `llm.max_retries=1`; after the fault the "
          "server is healed and the same command runs again (then `--retry-failed` while failures are left).", "",
          "| case | exit codes (first wanted) | tracebacks | key: files / terminal | lost | same dataset | checks | "
          "error line |", "|---|---|---:|---|---:|---|---|---|"]
    for r in rows:
        same = "–" if r["identical"] is None else ("yes" if r["identical"] else "**no**")
        checks = "; ".join(f"{k}: {'yes' if ok else '**no**'}" for k, ok in r["checks"].items())
        err = r["error"].replace("|", "\\|").replace(SECRET, "[KEY]")
        md.append(f"| {r['case']} | {r['rc']} ({r['want_rc']}) | {r['tracebacks']} | {r['keys_disk']} / "
                  f"{r['keys_terminal']} | {'–' if r['lost'] is None else r['lost']} | {same} | {checks} | "
                  f"{'`' + err + '`' if err else ''} |")
    return "\n".join([*md, ""])
